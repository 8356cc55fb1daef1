/* SPDX-License-Identifier: BSD-2-Clause */
/* pt_sort_u64 (perftest/report/sort_u64.c) against qsort, the oracle: every
 * shape the latency report can hand it (ns round trips, equal values, one
 * outlier that adds digits, the full 64-bit range, sorted and reversed
 * input), at sizes around the insertion-sort threshold, with and without
 * caller scratch. Then the latency statistics (results.c) against the
 * computation they replace: qsort, then the sum and the squared deviations
 * as long doubles in sorted order; equal to the bit. pt_select_u64
 * (select_u64.c) against the same sorted arrays at random ranks, and the
 * statistics without a sort (pt_lat_stats_compute_ranks): the same, the
 * stdev within 1e-12 (exact integers against the oracle's long doubles). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <setjmp.h>
#include <cmocka.h>
#include "perftest/report/results.h"
#include "perftest/report/select_u64.h"
#include "perftest/report/sort_u64.h"

static uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: all 64 bits vary */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

enum shape { NS_RTT, EQUAL, OUTLIER, FULL, SORTED, REVERSED, FEW_VALUES, SHAPES };

static void fill(uint64_t *a, size_t n, enum shape sh, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++) {
		switch (sh) {
		case NS_RTT:
			a[i] = 90000 + rnd(seed) % 400000;
			break;
		case EQUAL:
			a[i] = 123456;
			break;
		case OUTLIER:
			a[i] = i == n / 2 ? (1ull << 40) + 7 : 2000 + rnd(seed) % 50;
			break;
		case FULL:
			a[i] = rnd(seed);
			break;
		case SORTED:
			a[i] = i * 3;
			break;
		case REVERSED:
			a[i] = (n - i) * 1000003ull;
			break;
		default:
			a[i] = (rnd(seed) % 4) << 33;   /* only a high digit differs */
		}
	}
}

static void check(size_t n, enum shape sh, uint64_t seed, bool own_scratch)
{
	uint64_t *a = malloc((n ? n : 1) * sizeof(*a));
	uint64_t *want = malloc((n ? n : 1) * sizeof(*a));
	uint64_t *scratch = own_scratch ? malloc((n ? n : 1) * sizeof(*a)) : NULL;

	assert_non_null(a);
	assert_non_null(want);
	fill(a, n, sh, &seed);
	memcpy(want, a, n * sizeof(*a));
	qsort(want, n, sizeof(*want), cmp);
	pt_sort_u64(a, n, scratch);
	for (size_t i = 0; i < n; i++)
		if (a[i] != want[i])
			fail_msg("n %zu shape %d: a[%zu] = %llu, qsort has %llu", n, (int)sh, i,
				 (unsigned long long)a[i], (unsigned long long)want[i]);
	free(a);
	free(want);
	free(scratch);
}

static void test_against_qsort(void **state)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 63, 64, 65, 100, 1000, 2047, 2048, 2049, 50000 };

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int sh = 0; sh < SHAPES; sh++) {
			check(sizes[k], (enum shape)sh, 0x9e3779b97f4a7c15ull + k * 31 + (uint64_t)sh, false);
			check(sizes[k], (enum shape)sh, 0xdeadbeefcafef00dull + k * 17 + (uint64_t)sh, true);
		}
}

/* Random sizes and shapes: the property, many times. */
static void test_random_runs(void **state)
{
	uint64_t seed = 42;

	(void)state;
	for (int run = 0; run < 300; run++) {
		size_t n = (size_t)(rnd(&seed) % 5000);

		check(n, (enum shape)(rnd(&seed) % SHAPES), rnd(&seed) | 1, run % 2);
	}
}

/* The latency report's case: scratch is the stamps array, untouched values
 * beyond n stay as they were. */
static void test_scratch_bounds(void **state)
{
	uint64_t a[300], scratch[301], seed = 7;

	(void)state;
	fill(a, 300, FULL, &seed);
	scratch[300] = 0x5a5a5a5a5a5a5a5aull;
	pt_sort_u64(a, 300, scratch);
	for (int i = 1; i < 300; i++)
		assert_true(a[i - 1] <= a[i]);
	assert_int_equal(scratch[300], 0x5a5a5a5a5a5a5a5aull);
}

/* The statistics as they were computed before the fused pass: the oracle. */
static void oracle_stats(const uint64_t *samples, size_t n, size_t drop, struct pt_lat_stats *o)
{
	uint64_t *a = malloc(n * sizeof(*a));
	long double sum = 0, sq = 0;
	size_t k = n - drop;
	double mean;

	assert_non_null(a);
	memcpy(a, samples, n * sizeof(*a));
	qsort(a, n, sizeof(*a), cmp);
	memset(o, 0, sizeof(*o));
	o->count = k;
	o->min = a[0];
	o->max = a[k - 1];
	o->max_all = a[n - 1];
	o->median = k % 2 ? (double)a[k / 2] :
		    (double)a[k / 2 - 1] + ((double)a[k / 2] - (double)a[k / 2 - 1]) / 2.0;
	for (size_t i = 0; i < k; i++)
		sum += a[i];
	mean = (double)(sum / k);
	for (size_t i = 0; i < k; i++) {
		long double d = (long double)a[i] - mean;
		sq += d * d;
	}
	o->avg = mean;
	o->stdev = sqrt((double)(sq / k));
	o->p50 = a[pt_percentile_rank(k, PT_P50) - 1];
	o->p90 = a[pt_percentile_rank(k, PT_P90) - 1];
	o->p99 = a[pt_percentile_rank(k, PT_P99) - 1];
	o->p99_9 = a[pt_percentile_rank(k, PT_P99_9) - 1];
	o->p99_99 = a[pt_percentile_rank(k, PT_P99_99) - 1];
	o->p99_999 = a[pt_percentile_rank(k, PT_P99_999) - 1];
	free(a);
}

/* stdev_rel: 0, equal to the bit; else within that relative difference */
static void same_stats(const struct pt_lat_stats *a, const struct pt_lat_stats *b, const char *what,
		       double stdev_rel)
{
	bool stdev_ok = stdev_rel == 0 ? a->stdev == b->stdev :
			fabs(a->stdev - b->stdev) <= stdev_rel * fabs(a->stdev);

	if (a->count != b->count || a->min != b->min || a->max != b->max ||
	    a->max_all != b->max_all || a->median != b->median || a->avg != b->avg ||
	    !stdev_ok || a->p50 != b->p50 || a->p90 != b->p90 || a->p99 != b->p99 ||
	    a->p99_9 != b->p99_9 || a->p99_99 != b->p99_99 || a->p99_999 != b->p99_999)
		fail_msg("%s: avg %.17g / %.17g, stdev %.17g / %.17g, median %.17g / %.17g, "
			 "p99 %llu / %llu, max %llu / %llu", what, a->avg, b->avg, a->stdev, b->stdev,
			 a->median, b->median, (unsigned long long)a->p99, (unsigned long long)b->p99,
			 (unsigned long long)a->max, (unsigned long long)b->max);
}

/* Stamps whose gaps have a shape (FULL: the sum wraps, values past
 * INT64_MAX), through pt_lat_samples + pt_lat_stats_compute_sum as the
 * tools do, and the samples through pt_lat_stats_compute_in. */
static void check_stats(size_t n, enum shape sh, uint64_t seed)
{
	uint64_t *gaps = malloc(n * sizeof(*gaps)), *stamps = malloc((n + 1) * sizeof(*stamps));
	uint64_t *d = malloc(n * sizeof(*d)), *d2 = malloc(n * sizeof(*d2)), *d3 = malloc(n * sizeof(*d3));
	struct pt_lat_stats want, got;
	struct pt_lat_sum sum;
	const uint64_t *sorted;
	char what[64];

	assert_true(gaps && stamps && d && d2 && d3);
	fill(gaps, n, sh, &seed);
	stamps[0] = rnd(&seed);
	for (size_t i = 0; i < n; i++)
		stamps[i + 1] = stamps[i] + gaps[i];
	oracle_stats(gaps, n, 2, &want);
	pt_lat_samples(stamps, n + 1, d, &sum);
	assert_memory_equal(d, gaps, n * sizeof(*d));
	memcpy(d2, d, n * sizeof(*d));
	assert_int_equal(pt_lat_stats_compute_sum(d, n, 2, &got, stamps, &sum, &sorted), 0);
	snprintf(what, sizeof(what), "n %zu shape %d, from the stamps", n, (int)sh);
	same_stats(&want, &got, what, 0);
	assert_true(sorted == d || sorted == stamps);   /* wherever the sort left them */
	for (size_t i = 1; i < n; i++)
		assert_true(sorted[i - 1] <= sorted[i]);
	assert_int_equal(sorted[0], want.min);
	assert_int_equal(sorted[n - 1], want.max_all);
	memcpy(d3, d2, n * sizeof(*d));
	assert_int_equal(pt_lat_stats_compute_in(d2, n, 2, &got, n % 2 ? stamps : NULL), 0);
	snprintf(what, sizeof(what), "n %zu shape %d, from the samples", n, (int)sh);
	same_stats(&want, &got, what, 0);
	for (size_t i = 1; i < n; i++)   /* in place */
		assert_true(d2[i - 1] <= d2[i]);
	/* no sort: FULL (a sum that wraps) does not fit and takes the sort */
	assert_int_equal(pt_lat_stats_compute_ranks(d3, n, 2, &got, n % 2 ? stamps : NULL, &sum), 0);
	snprintf(what, sizeof(what), "n %zu shape %d, by rank", n, (int)sh);
	same_stats(&want, &got, what, sh == FULL ? 0 : 1e-12);
	if (sh == NS_RTT && n >= 999) {   /* the select ran: it sorts nothing */
		size_t i = 1;

		while (i < n && d3[i - 1] <= d3[i])
			i++;
		assert_true(i < n);
	}
	free(gaps);
	free(stamps);
	free(d);
	free(d2);
	free(d3);
}

static void test_stats_against_oracle(void **state)
{
	static const size_t sizes[] = { 3, 4, 63, 64, 65, 999, 1000, 2000, 4097, 50000 };
	uint64_t seed = 99;

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int sh = 0; sh < SHAPES; sh++)
			check_stats(sizes[k], (enum shape)sh, 0x1234567ull + k * 101 + (uint64_t)sh);
	for (int run = 0; run < 100; run++)
		check_stats(3 + (size_t)(rnd(&seed) % 3000), (enum shape)(rnd(&seed) % SHAPES),
			    rnd(&seed) | 1);
}

/* m random ranks (ascending, repeats allowed) of one shape and size: the
 * values at them equal the sorted array's, with and without scratch. */
static void check_select(size_t n, enum shape sh, size_t m, uint64_t seed)
{
	uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	uint64_t *scratch = malloc(n * sizeof(*scratch)), ranks[24], got[24], lo = UINT64_MAX, hi = 0;

	assert_true(a && b && scratch && m <= 24);
	fill(a, n, sh, &seed);
	for (size_t i = 0; i < n; i++) {
		lo = a[i] < lo ? a[i] : lo;
		hi = a[i] > hi ? a[i] : hi;
	}
	memcpy(b, a, n * sizeof(*a));
	qsort(b, n, sizeof(*b), cmp);
	for (size_t j = 0; j < m; j++)
		ranks[j] = rnd(&seed) % n;
	qsort(ranks, m, sizeof(*ranks), cmp);
	if (m > 1)
		ranks[m - 1] = n - 1;   /* the ends too */
	if (m)
		ranks[0] = 0;
	assert_int_equal(pt_select_u64(a, n, lo, hi, ranks, m, got, seed % 2 ? scratch : NULL), 0);
	for (size_t j = 0; j < m; j++)
		if (got[j] != b[ranks[j]])
			fail_msg("n %zu shape %d: rank %llu is %llu, not %llu", n, (int)sh,
				 (unsigned long long)ranks[j], (unsigned long long)got[j],
				 (unsigned long long)b[ranks[j]]);
	free(a);
	free(b);
	free(scratch);
}

static void test_select_against_sort(void **state)
{
	static const size_t sizes[] = { 1, 2, 31, 32, 33, 100, 1000, 4097, 70000 };
	uint64_t seed = 7, two[2] = { 5, 6 }, r2[2] = { 1, 0 }, out[25];

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int sh = 0; sh < SHAPES; sh++)
			check_select(sizes[k], (enum shape)sh, 1 + (size_t)(rnd(&seed) % 24), seed + k);
	for (int run = 0; run < 300; run++)
		check_select(1 + (size_t)(rnd(&seed) % 5000), (enum shape)(rnd(&seed) % SHAPES),
			     (size_t)(rnd(&seed) % 25), rnd(&seed) | 1);
	/* refused: a rank past the end, ranks out of order, too many */
	assert_int_equal(pt_select_u64(two, 1, 5, 5, r2, 1, out, NULL), -EINVAL);
	assert_int_equal(pt_select_u64(two, 2, 5, 6, r2, 2, out, NULL), -EINVAL);
	assert_int_equal(pt_select_u64(two, 2, 5, 6, r2 + 1, 1, out, NULL), 0);
	assert_int_equal(out[0], 5);
	assert_int_equal(pt_select_u64(two, 2, 5, 6, out, 25, out, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_qsort),
		cmocka_unit_test(test_random_runs),
		cmocka_unit_test(test_scratch_bounds),
		cmocka_unit_test(test_stats_against_oracle),
		cmocka_unit_test(test_select_against_sort),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
