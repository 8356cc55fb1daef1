/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "perftest/report/results.h"

#define MIB 1048576.0

/* Relative comparison for doubles. */
static void assert_rel(double got, double want, double tol)
{
	double d = fabs(got - want), s = fabs(want) > 0 ? fabs(want) : 1.0;

	if (d / s > tol)
		fail_msg("got %.12g want %.12g (rel %.3g > %.3g)", got, want,
			 d / s, tol);
}

/* Deterministic pseudo-random numbers (no global state). */
static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return *s >> 11;
}

static void shuffle(uint64_t *a, size_t n, uint64_t seed)
{
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = (size_t)(lcg(&seed) % (i + 1));
		uint64_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

/* ----------------------------------------------------------- bandwidth -- */

static void test_bw_average(void **state)
{
	(void)state;
	struct pt_bw_input in = { .size = 65536, .iters = 1000, .msgs = 1000,
				  .elapsed_ns = 1000000000ull };
	struct pt_bw_result r;

	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_true(r.bw_avg == 62.5); /* exact in binary */
	assert_rel(r.msg_rate, 0.001, 1e-12);
	assert_true(r.bw_peak == 0.0);
	assert_int_equal(r.size, 65536);
	assert_int_equal(r.iters, 1000);
	assert_false(r.gbits);

	in.gbits = true; /* 65536*1000*8 bits in 1 s = 0.524288 Gb/s */
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_rel(r.bw_avg, 0.524288, 1e-12);
	assert_true(r.gbits);

	in.gbits = false; /* 4 QPs x 1000 in 0.5 s: 8x the rate, iters kept */
	in.msgs = 4000;
	in.elapsed_ns = 500000000ull;
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_true(r.bw_avg == 500.0);
	assert_rel(r.msg_rate, 0.008, 1e-12);
	assert_int_equal(r.iters, 1000);
}

/* No negative bandwidth (users-asks.md: upstream printed one when its cycle
 * difference wrapped): elapsed times are unsigned nanoseconds, so even the
 * largest one, as a wrapped difference would give, is a small positive
 * rate, never a negative one. */
static void test_bw_never_negative(void **state)
{
	(void)state;
	static const uint64_t elapsed[] = { 1, 1000, UINT64_MAX / 2, UINT64_MAX / 2 + 1, UINT64_MAX };
	struct pt_bw_result r;

	for (size_t i = 0; i < sizeof(elapsed) / sizeof(elapsed[0]); i++) {
		struct pt_bw_input in = { .size = 65536, .iters = 1000, .msgs = 1000,
					  .elapsed_ns = elapsed[i] };

		assert_int_equal(pt_bw_compute(&in, &r), 0);
		if (!(r.bw_avg > 0 && r.msg_rate > 0 && isfinite(r.bw_avg)))
			fail_msg("elapsed %llu ns: BW %g, rate %g", (unsigned long long)elapsed[i],
				 r.bw_avg, r.msg_rate);
	}
}

static void test_bw_zero_elapsed(void **state)
{
	(void)state;
	struct pt_bw_input in = { .size = 65536, .iters = 1000, .msgs = 1000 };
	struct pt_bw_result r = { .bw_avg = -1 };

	assert_int_equal(pt_bw_compute(&in, &r), -EDOM);
	assert_non_null(strstr(pt_results_strerror(-EDOM), "zero"));
	assert_int_equal(pt_bw_compute(NULL, &r), -EINVAL);
	/* Zero messages in a non-zero time is a real (zero) result. */
	in.msgs = 0;
	in.elapsed_ns = 1000;
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_true(r.bw_avg == 0.0 && r.msg_rate == 0.0);
}

/* 10 WRs posted every 100 ns, each completing 1000 ns after its post:
 * (tc[j] - tp[i]) / (j-i+1) = 100 + 900/k for k = j-i+1, best k = 10. */
static void test_bw_sum(void **state)
{
	(void)state;
	struct pt_bw_result a = { .size = 64, .iters = 100, .bw_peak = 10,
				  .bw_avg = 8, .msg_rate = 0.5 };
	struct pt_bw_result b = { .size = 64, .iters = 100, .bw_peak = 12,
				  .bw_avg = 9, .msg_rate = 0.25 };
	struct pt_bw_result s;

	assert_int_equal(pt_bw_sum(&a, &b, &s), 0);
	assert_true(s.bw_peak == 22 && s.bw_avg == 17 && s.msg_rate == 0.75);
	assert_int_equal(s.size, 64);
	assert_int_equal(s.iters, 100);
	b.gbits = true;
	assert_int_equal(pt_bw_sum(&a, &b, &s), -EINVAL);
}

/* ------------------------------------------------------------- latency -- */

static void test_percentile_rank(void **state)
{
	(void)state;
	assert_int_equal(pt_percentile_rank(1000, PT_P99_9), 999);
	assert_int_equal(pt_percentile_rank(1000, PT_P99_99), 1000);
	assert_int_equal(pt_percentile_rank(100, PT_P99_9), 100);
	assert_int_equal(pt_percentile_rank(10, 0), 1);
	assert_int_equal(pt_percentile_rank(10, 2000000), 10);
	assert_true(pt_percentile_rank(UINT64_MAX, 1000000) == UINT64_MAX);
	assert_true(pt_percentile_rank(UINT64_MAX, PT_P50) ==
		    UINT64_MAX / 2 + 1);
}

static void test_lat_1_to_100(void **state)
{
	(void)state;
	uint64_t a[100];
	struct pt_lat_stats s;

	for (unsigned i = 0; i < 100; i++)
		a[i] = i + 1;
	shuffle(a, 100, 7);
	assert_int_equal(pt_lat_stats_compute(a, 100, 0, &s), 0);
	assert_int_equal(s.count, 100);
	assert_int_equal(s.min, 1);
	assert_int_equal(s.max, 100);
	assert_int_equal(s.max_all, 100);
	assert_true(s.median == 50.5);
	assert_true(s.avg == 50.5);
	assert_rel(s.stdev, sqrt((100.0 * 100.0 - 1) / 12.0), 1e-12);
	assert_int_equal(s.p50, 50);
	assert_int_equal(s.p90, 90);
	assert_int_equal(s.p99, 99);
	assert_int_equal(s.p99_9, 100);
	assert_int_equal(s.p99_99, 100);
	assert_int_equal(s.p99_999, 100);
	for (unsigned i = 0; i < 100; i++) /* sorted in place */
		assert_int_equal(a[i], i + 1);

	/* Upstream-style tail drop of the 2 largest. */
	shuffle(a, 100, 9);
	assert_int_equal(pt_lat_stats_compute(a, 100, 2, &s), 0);
	assert_int_equal(s.count, 98);
	assert_int_equal(s.max, 98);
	assert_int_equal(s.max_all, 100);
	assert_int_equal(s.p50, 49);
	assert_true(s.median == 49.5);
	assert_true(s.avg == 49.5);
}

static void test_lat_1_to_1000(void **state)
{
	(void)state;
	uint64_t *a = malloc(1000 * sizeof(*a));
	struct pt_lat_stats s;

	assert_non_null(a);
	for (unsigned i = 0; i < 1000; i++)
		a[i] = i + 1;
	shuffle(a, 1000, 3);
	assert_int_equal(pt_lat_stats_compute(a, 1000, 0, &s), 0);
	assert_int_equal(s.p50, 500);
	assert_int_equal(s.p90, 900);
	assert_int_equal(s.p99, 990);
	assert_int_equal(s.p99_9, 999);
	assert_int_equal(s.p99_99, 1000);
	assert_int_equal(s.p99_999, 1000);
	assert_true(s.median == 500.5);
	assert_true(s.avg == 500.5);
	free(a);
}

static void test_lat_small_sets(void **state)
{
	(void)state;
	uint64_t c[50], one[1] = { 42 }, even[4] = { 10, 3, 1, 2 },
		 odd[3] = { 5, 1, 3 };
	struct pt_lat_stats s;

	for (unsigned i = 0; i < 50; i++)
		c[i] = 7;
	assert_int_equal(pt_lat_stats_compute(c, 50, 0, &s), 0);
	assert_true(s.min == 7 && s.max == 7 && s.p99_999 == 7 && s.p50 == 7);
	assert_true(s.median == 7.0 && s.avg == 7.0 && s.stdev == 0.0);

	assert_int_equal(pt_lat_stats_compute(one, 1, 0, &s), 0);
	assert_true(s.count == 1 && s.min == 42 && s.max == 42);
	assert_true(s.p50 == 42 && s.p90 == 42 && s.p99_999 == 42);
	assert_true(s.median == 42.0 && s.avg == 42.0 && s.stdev == 0.0);

	assert_int_equal(pt_lat_stats_compute(even, 4, 0, &s), 0);
	assert_true(s.median == 2.5); /* mean of the two middle ones */
	assert_int_equal(s.p50, 2);   /* nearest rank: rank 2 */
	assert_true(s.avg == 4.0);

	assert_int_equal(pt_lat_stats_compute(odd, 3, 0, &s), 0);
	assert_true(s.median == 3.0);
	assert_int_equal(s.p50, 3);

	assert_int_equal(pt_lat_stats_compute(c, 0, 0, &s), -EDOM);
	assert_int_equal(pt_lat_stats_compute(c, 2, 2, &s), -EINVAL);
	assert_int_equal(pt_lat_stats_compute(NULL, 2, 0, &s), -EINVAL);
}

static void test_lat_rows(void **state)
{
	(void)state;
	uint64_t a[4] = { 2000, 4000, 6000, 8000 };
	struct pt_lat_stats s;
	struct pt_lat_result r;
	struct pt_lat_dur_result d;

	assert_int_equal(pt_lat_stats_compute(a, 4, 0, &s), 0);
	/* SEND/WRITE report half the round trip: ns / 1000 / 2. */
	assert_int_equal(pt_lat_result_from_stats(&s, 2, 1000, 2, &r), 0);
	assert_int_equal(r.size, 2);
	assert_int_equal(r.iters, 1000);
	assert_true(r.t_min == 1.0 && r.t_max == 4.0 && r.max_all == 4.0);
	assert_true(r.t_typical == 2.5 && r.t_avg == 2.5);
	assert_true(r.p50 == 2.0 && r.p99 == 4.0);
	assert_int_equal(pt_lat_result_from_stats(&s, 2, 1000, 1, &r), 0);
	assert_true(r.t_min == 2.0 && r.t_avg == 5.0);
	assert_int_equal(pt_lat_result_from_stats(&s, 2, 1000, 0, &r), -EINVAL);

	/* 1000 ping-pongs in 1 s: 1 ms round trip -> 500 usec, 1000 tps. */
	assert_int_equal(pt_lat_duration_compute(2, 1000, 1000000000ull, 2, &d), 0);
	assert_true(d.t_avg == 500.0 && d.tps == 1000.0);
	assert_int_equal(d.iters, 1000);
	assert_int_equal(pt_lat_duration_compute(2, 1000, 0, 2, &d), -EDOM);
	assert_int_equal(pt_lat_duration_compute(2, 0, 1000, 2, &d), -EDOM);
}

/* Duration mode: percentiles of the window's round trips from a histogram,
 * in usec and halved for SEND/WRITE like the iteration-mode row. */
static void test_lat_duration_percentiles(void **state)
{
	(void)state;
	struct pt_hist *h = pt_hist_new();
	struct pt_lat_dur_result d = { 0 };

	assert_non_null(h);
	assert_int_equal(pt_lat_duration_compute(2, 1000, 1000000000ull, 2, &d), 0);
	/* empty window: no percentiles, the row untouched */
	assert_int_equal(pt_lat_duration_percentiles(h, 2, &d), -EDOM);
	assert_false(d.has_pct);
	assert_true(d.t_avg == 500.0 && d.tps == 1000.0);
	assert_int_equal(pt_lat_duration_percentiles(NULL, 2, &d), -EINVAL);
	assert_int_equal(pt_lat_duration_percentiles(h, 0, &d), -EINVAL);

	/* 1..100000 ns, each once: nearest rank gives exactly k * 1000 ppm */
	for (uint64_t v = 1; v <= 100000; v++)
		pt_hist_record(h, v);
	assert_int_equal(pt_lat_duration_percentiles(h, 2, &d), 0);
	assert_true(d.has_pct);
	assert_int_equal(d.samples, 100000);
	assert_int_equal(d.iters, 1000); /* the row's own fields are kept */
	assert_true(d.t_avg == 500.0);
	assert_true(d.t_min == 0.0005); /* 1 ns / 1000 / 2 */
	assert_true(d.max == 50.0);     /* exact maximum: 100000 ns / 2 */
	/* within the histogram's bound of the true ranks 50000, 90000, ... */
	assert_rel(d.p50, 25.0, pt_hist_max_rel_error());
	assert_rel(d.p90, 45.0, pt_hist_max_rel_error());
	assert_rel(d.p99, 49.5, pt_hist_max_rel_error());
	assert_rel(d.p99_9, 49.95, pt_hist_max_rel_error());
	assert_rel(d.p99_99, 49.995, pt_hist_max_rel_error());
	assert_rel(d.p99_999, 49.9995, pt_hist_max_rel_error());
	assert_true(d.p50 <= d.p90 && d.p90 <= d.p99 && d.p99 <= d.p99_9 &&
		    d.p99_9 <= d.p99_99 && d.p99_99 <= d.p99_999 && d.p99_999 <= d.max);

	/* READ/ATOMIC (factor 1), small exact values: 10 x 100 ns + 1 x 120 ns */
	pt_hist_reset(h);
	for (int i = 0; i < 10; i++)
		pt_hist_record(h, 100);
	pt_hist_record(h, 120);
	assert_int_equal(pt_lat_duration_percentiles(h, 1, &d), 0);
	assert_int_equal(d.samples, 11);
	assert_true(d.t_min == 0.1 && d.p50 == 0.1 && d.p90 == 0.1);
	assert_true(d.p99 == 0.12 && d.p99_999 == 0.12 && d.max == 0.12);
	pt_hist_free(h);
}

/* ----------------------------------------------------------- histogram -- */

static void check_quantize(uint64_t v, double bound)
{
	double q = (double)pt_hist_quantize(v);
	double e = fabs(q - (double)v) / (double)v;

	if (e > bound)
		fail_msg("v=%llu q=%.0f rel=%.5g > %.5g",
			 (unsigned long long)v, q, e, bound);
}

static void test_hist_error_bound(void **state)
{
	(void)state;
	double bound = pt_hist_max_rel_error();

	assert_true(bound > 0.0 && bound <= 0.01);
	for (uint64_t v = 1; v < 128; v++)
		assert_int_equal(pt_hist_quantize(v), v); /* exact */
	/* 1 ns .. 10 s in 0.1% steps, plus both sides of every power of 2. */
	for (double x = 1.0; x <= 1e10; x *= 1.001)
		check_quantize((uint64_t)x, bound);
	for (unsigned b = 1; b < 64; b++) {
		uint64_t p = 1ull << b;
		check_quantize(p - 1, bound);
		check_quantize(p, bound);
		check_quantize(p + 1, bound);
	}
	check_quantize(UINT64_MAX, bound);
	/* The bound is attained (tight), so the check above is meaningful. */
	assert_rel(fabs((double)pt_hist_quantize(128) - 128.0) / 128.0, bound,
		   1e-12);
}

/* Log-uniform 100 ns .. 10 ms, so every octave is exercised. */
static void test_hist_stats_vs_exact(void **state)
{
	(void)state;
	const size_t n = 200001;
	uint64_t *a = malloc(n * sizeof(*a)), seed = 12345;
	struct pt_hist *h = pt_hist_new();
	struct pt_lat_stats ex, hs;

	assert_non_null(a);
	assert_non_null(h);
	for (size_t i = 0; i < n; i++) {
		double u = (double)(lcg(&seed) & 0xffffffu) / 16777216.0;
		a[i] = (uint64_t)(100.0 * exp(u * log(1e5)));
		pt_hist_record(h, a[i]);
	}
	assert_int_equal(pt_hist_count(h), n);
	assert_int_equal(pt_hist_stats(h, &hs), 0);
	assert_int_equal(pt_lat_stats_compute(a, n, 0, &ex), 0);
	assert_int_equal(hs.count, ex.count);
	assert_int_equal(hs.min, ex.min);
	assert_int_equal(hs.max, ex.max);
	assert_rel(hs.avg, ex.avg, 1e-9);
	assert_rel(hs.stdev, ex.stdev, 1e-9);
	assert_rel(hs.median, ex.median, 0.01);
	assert_rel((double)hs.p50, (double)ex.p50, 0.01);
	assert_rel((double)hs.p90, (double)ex.p90, 0.01);
	assert_rel((double)hs.p99, (double)ex.p99, 0.01);
	assert_rel((double)hs.p99_9, (double)ex.p99_9, 0.01);
	assert_rel((double)hs.p99_99, (double)ex.p99_99, 0.01);
	assert_rel((double)hs.p99_999, (double)ex.p99_999, 0.01);
	/* The spread is real: the quantiles are far apart. */
	assert_true(ex.p99 > 100 * ex.p50);
	free(a);
	pt_hist_free(h);
}

static void test_hist_merge_and_small(void **state)
{
	(void)state;
	struct pt_hist *a = pt_hist_new(), *b = pt_hist_new(),
		       *all = pt_hist_new();
	struct pt_lat_stats s1, s2;

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(all);
	assert_int_equal(pt_hist_stats(a, &s1), -EDOM);
	for (uint64_t v = 1; v <= 1000; v++) {
		pt_hist_record(v % 2 ? a : b, v * 37);
		pt_hist_record(all, v * 37);
	}
	pt_hist_merge(a, b);
	assert_int_equal(pt_hist_count(a), 1000);
	assert_int_equal(pt_hist_stats(a, &s1), 0);
	assert_int_equal(pt_hist_stats(all, &s2), 0);
	assert_int_equal(s1.min, 37);
	assert_int_equal(s1.max, 37000);
	assert_true(s1.p50 == s2.p50 && s1.p99 == s2.p99 &&
		    s1.median == s2.median);
	assert_rel(s1.avg, 500.5 * 37, 1e-12);
	assert_rel(s1.stdev, s2.stdev, 1e-9);

	/* Small exact values: the histogram is exact below 128 ns. */
	pt_hist_reset(b);
	for (uint64_t v = 1; v <= 100; v++)
		pt_hist_record(b, v);
	assert_int_equal(pt_hist_stats(b, &s1), 0);
	assert_true(s1.p50 == 50 && s1.p90 == 90 && s1.p99_9 == 100);
	assert_true(s1.median == 50.5);
	pt_hist_free(a);
	pt_hist_free(b);
	pt_hist_free(all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_average),
		cmocka_unit_test(test_bw_zero_elapsed),
		cmocka_unit_test(test_bw_never_negative),
		cmocka_unit_test(test_bw_sum),
		cmocka_unit_test(test_percentile_rank),
		cmocka_unit_test(test_lat_1_to_100),
		cmocka_unit_test(test_lat_1_to_1000),
		cmocka_unit_test(test_lat_small_sets),
		cmocka_unit_test(test_lat_rows),
		cmocka_unit_test(test_lat_duration_percentiles),
		cmocka_unit_test(test_hist_error_bound),
		cmocka_unit_test(test_hist_stats_vs_exact),
		cmocka_unit_test(test_hist_merge_and_small),
	};
	return cmocka_run_group_tests_name("results", tests, NULL, NULL);
}
