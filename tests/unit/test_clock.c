/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/clock.h"

/* The clock advances, and a 20 ms sleep measures as 20..500 ms. */
static void test_monotonic_and_scaled(void **state)
{
	(void)state;
	uint64_t a = pt_now_ns();
	usleep(20000);
	uint64_t b = pt_now_ns();

	assert_true(b > a);
	assert_in_range(b - a, 20000000ull, 500000000ull);
}

static void test_resolution_and_overhead(void **state)
{
	(void)state;
	uint64_t res = pt_clock_resolution_ns();

	assert_in_range(res, 1, 1000000);
	assert_true(pt_clock_overhead_ns() < 100000.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic_and_scaled),
		cmocka_unit_test(test_resolution_and_overhead),
	};
	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
