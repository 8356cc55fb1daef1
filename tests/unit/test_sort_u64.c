/* SPDX-License-Identifier: BSD-2-Clause */
/* pt_sort_u64 (perftest/report/sort_u64.c) against qsort, the oracle: every
 * shape the latency report can hand it (ns round trips, equal values, one
 * outlier that adds digits, the full 64-bit range, sorted and reversed
 * input), at sizes around the insertion-sort threshold, with and without
 * caller scratch. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_qsort),
		cmocka_unit_test(test_random_runs),
		cmocka_unit_test(test_scratch_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
