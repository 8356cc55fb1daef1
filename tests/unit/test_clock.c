/* SPDX-License-Identifier: BSD-2-Clause */
/* The clock (util/clock.h): PERFTEST_CLOCK, the invariant-TSC test, the
 * fallback, and on a CPU with an invariant TSC: the converted times agree
 * with CLOCK_MONOTONIC_RAW within what the calibration states, the end
 * check sees a wrong slope, and times never go backwards. Bounds come from
 * the clock's own figures and each sample's bracket, not from how fast the
 * host is: a descheduled read widens its bracket, and with it the bound. */
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/clock.h"
#include "util/tsc.h"

#define SPIN_NS 40000000ull   /* the agreement test's spin: 40 ms */

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
	assert_true(pt_clock_raw_overhead_ns() < 100000.0);
}

static void test_parse(void **state)
{
	enum pt_clock_mode m = PT_CLOCK_RAW;
	char err[128];
	(void)state;

	assert_int_equal(pt_clock_parse(NULL, &m, err, sizeof(err)), 0);
	assert_int_equal(m, PT_CLOCK_AUTO);
	assert_int_equal(pt_clock_parse("", &m, err, sizeof(err)), 0);
	assert_int_equal(m, PT_CLOCK_AUTO);
	assert_int_equal(pt_clock_parse("tsc", &m, err, sizeof(err)), 0);
	assert_int_equal(m, PT_CLOCK_TSC);
	assert_int_equal(pt_clock_parse("raw", &m, err, sizeof(err)), 0);
	assert_int_equal(m, PT_CLOCK_RAW);
	assert_int_equal(pt_clock_parse("auto", &m, err, sizeof(err)), 0);
	assert_int_equal(m, PT_CLOCK_AUTO);
	const char *bad[] = { "TSC", "tsc ", " raw", "rdtsc", "1", "raw,tsc", "auto\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(pt_clock_parse(bad[i], &m, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "PERFTEST_CLOCK="));
		assert_non_null(strstr(err, "expected auto, tsc or raw"));
	}
	/* a long value is cut, the message stays whole */
	char longv[300];
	memset(longv, 'x', sizeof(longv) - 1);
	longv[sizeof(longv) - 1] = 0;
	assert_int_equal(pt_clock_parse(longv, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "...: expected auto, tsc or raw"));
}

/* The tools' entry: garbage in the environment is an error, said on stderr,
 * and leaves clock_gettime. */
static void test_init_rejects_garbage(void **state)
{
	(void)state;
	setenv(PT_CLOCK_ENV, "fast", 1);
	assert_int_equal(pt_clock_init(), -1);
	assert_string_equal(pt_clock_sw_name(), PT_CLOCK_NAME_RAW);
	setenv(PT_CLOCK_ENV, "raw", 1);
	assert_int_equal(pt_clock_init(), 0);
	assert_string_equal(pt_clock_sw_name(), PT_CLOCK_NAME_RAW);
	unsetenv(PT_CLOCK_ENV);
	pt_clock_reset();
}

static char *write_cpuinfo(const char *text)
{
	static char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_clock.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_invariant_flags(void **state)
{
	(void)state;
	const char *both = "processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\n"
			   "processor\t: 1\nflags\t\t: fpu tsc constant_tsc nonstop_tsc\n";
	const char *one_cpu_short = "flags\t\t: constant_tsc nonstop_tsc\nflags\t\t: constant_tsc\n";
	const char *substrings = "flags\t\t: xconstant_tsc nonstop_tsc_no\n";
	char *p;

	p = write_cpuinfo(both);
	assert_int_equal(pt_clock_tsc_invariant(p), PT_CLOCK_HAVE_TSC);
	unlink(p);
	p = write_cpuinfo(one_cpu_short);
	assert_false(pt_clock_tsc_invariant(p));
	unlink(p);
	p = write_cpuinfo(substrings);
	assert_false(pt_clock_tsc_invariant(p));
	unlink(p);
	assert_false(pt_clock_tsc_invariant("/nonexistent/cpuinfo"));
}

/* Forced fallbacks: raw, and tsc asked for where there is none (warned once,
 * never silently used). The times are clock_gettime's then. */
static void test_fallback(void **state)
{
	struct pt_clock_info ci;
	char *buf = NULL, *p;
	size_t len = 0;
	FILE *warn;
	(void)state;

	assert_int_equal(pt_clock_setup(PT_CLOCK_RAW, "/proc/cpuinfo", stderr), 0);
	pt_clock_check(&ci);
	assert_string_equal(ci.source, PT_CLOCK_NAME_RAW);
	assert_string_equal(pt_clock_sw_name(), PT_CLOCK_NAME_RAW);
	assert_non_null(strstr(ci.why, "PERFTEST_CLOCK=raw"));
	assert_false(ci.checked);
	assert_true(ci.ns_per_tick == 0);
	uint64_t a = pt_clock_raw_ns(), t = pt_now_ns(), b = pt_clock_raw_ns();
	assert_true(a <= t && t <= b);

	p = write_cpuinfo("flags\t\t: fpu tsc\n");
	warn = open_memstream(&buf, &len);
	assert_non_null(warn);
	assert_int_equal(pt_clock_setup(PT_CLOCK_TSC, p, warn), -1);
	assert_int_equal(pt_clock_setup(PT_CLOCK_TSC, p, warn), -1);
	assert_int_equal(pt_clock_setup(PT_CLOCK_AUTO, p, warn), 0); /* auto: silent */
	fclose(warn);
	unlink(p);
	assert_non_null(strstr(buf, "PERFTEST_CLOCK=tsc: no "));
	assert_non_null(strstr(buf, "using CLOCK_MONOTONIC_RAW"));
	assert_null(strstr(strchr(buf, '\n') + 1, "PERFTEST_CLOCK")); /* once */
	free(buf);
	pt_clock_get_info(&ci);
	assert_string_equal(ci.source, PT_CLOCK_NAME_RAW);
	a = pt_clock_raw_ns();
	t = pt_now_ns();
	b = pt_clock_raw_ns();
	assert_true(a <= t && t <= b);
	pt_clock_reset();
}

/* The TSC on, or skip where the CPU has no invariant one. */
static int tsc_on(void)
{
	struct pt_clock_info ci;

	if (!pt_clock_tsc_invariant("/proc/cpuinfo"))
		return 0;
	if (pt_clock_setup(PT_CLOCK_TSC, "/proc/cpuinfo", stderr))
		fail_msg("invariant TSC, but the calibration failed");
	pt_clock_get_info(&ci);
	assert_string_equal(ci.source, "tsc");
	assert_string_equal(pt_clock_sw_name(), PT_CLOCK_NAME_TSC);
	assert_true(ci.ns_per_tick > 0);
	assert_true(ci.slope_err_ppm <= PT_CLOCK_TSC_MAX_PPM);
	return 1;
}

/* pt_now_ns() bracketed by two clock_gettime, the tightest of a few; the
 * deviation from the bracket's middle, and the bracket's half width. */
static double deviation(uint64_t *mid, double *half)
{
	uint64_t best = UINT64_MAX;
	double dev = 0;

	for (int i = 0; i < 5; i++) {
		uint64_t a = pt_clock_raw_ns(), t = pt_now_ns(), b = pt_clock_raw_ns();

		if (b - a < best) {
			best = b - a;
			*mid = a + (b - a) / 2;
			dev = (double)(int64_t)(t - *mid);
		}
	}
	*half = (double)best / 2;
	return dev;
}

/* The stated bound at raw time t: the start fit's worst residual, the slope
 * error allowed (from the line's origin), a bracket and rounding. */
static double bound(const struct pt_clock_info *ci, uint64_t origin, uint64_t t, double half)
{
	return ci->start_residual_max_ns + PT_CLOCK_TSC_MAX_PPM * 1e-6 * (double)(t - origin) + half + 2;
}

static void test_tsc_agrees_with_raw(void **state)
{
	struct pt_clock_info ci, end;
	uint64_t origin, start, mid;
	double worst = 0, half;
	unsigned n = 0;
	(void)state;

	if (!tsc_on())
		skip();
	pt_clock_get_info(&ci);
	origin = ci.start_ns;
	start = pt_clock_raw_ns();
	do {
		double dev = deviation(&mid, &half);

		if (fabs(dev) > bound(&ci, origin, mid, half))
			fail_msg("after %.3f ms: converted TSC %+.1f ns from CLOCK_MONOTONIC_RAW, bound %.1f ns "
				 "(start residual %.1f ns, slope within %g ppm, bracket +-%.1f ns)",
				 (double)(mid - start) / 1e6, dev, bound(&ci, origin, mid, half),
				 ci.start_residual_max_ns, PT_CLOCK_TSC_MAX_PPM, half);
		worst = fabs(dev) > worst ? fabs(dev) : worst;
		n++;
	} while (mid - start < SPIN_NS);
	/* the end check says the same */
	pt_clock_check(&end);
	assert_true(end.checked);
	assert_int_equal(end.end_samples, 9);
	assert_true(end.span_ns >= SPIN_NS);
	if (end.residual_max_ns > bound(&ci, origin, pt_clock_raw_ns(), end.bracket_ns / 2))
		fail_msg("end check: residual %.1f ns", end.residual_max_ns);
	assert_true(fabs(end.drift_ppm) <= PT_CLOCK_TSC_MAX_PPM);
	print_message("      %u samples over %.0f ms: worst %.1f ns; end check %.1f ns, drift %+.3f ppm, "
		      "%.6f ns/tick, slope within %.2f ppm\n", n, SPIN_NS / 1e6, worst,
		      end.residual_max_ns, end.drift_ppm, ci.ns_per_tick, ci.slope_err_ppm);
	pt_clock_reset();
}

/* A line 100 ppm off (what a bad calibration would give): the bound above
 * fails within the spin, and the end check reports it. */
static void test_check_sees_a_wrong_slope(void **state)
{
	struct pt_clock_info ci, end;
	uint64_t origin, start, mid;
	double half, dev;
	bool caught = false;
	(void)state;

	if (!tsc_on())
		skip();
	pt_clock_get_info(&ci);
	origin = ci.start_ns;
	pt_clock_line.mult += pt_clock_line.mult / 10000;
	start = pt_clock_raw_ns();
	do {
		dev = deviation(&mid, &half);
		caught |= fabs(dev) > bound(&ci, origin, mid, half);
	} while (mid - start < SPIN_NS);
	assert_true(caught);
	pt_clock_check(&end);
	assert_true(end.residual_max_ns > 100e-6 * (double)SPIN_NS / 2);
	pt_clock_reset();
}

/* Never backwards: back-to-back reads, and across a move to every CPU the
 * process may run on (the TSCs of an invariant system are in step). */
static void test_monotonic(void **state)
{
	cpu_set_t old, one;
	uint64_t prev, t;
	(void)state;

	if (!tsc_on())
		skip();
	prev = pt_now_ns();
	for (int i = 0; i < 2000000; i++) {
		t = pt_now_ns();
		if (t < prev)
			fail_msg("read %d: %llu after %llu", i, (unsigned long long)t,
				 (unsigned long long)prev);
		prev = t;
	}
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	for (int round = 0; round < 20; round++)
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
			if (!CPU_ISSET(cpu, &old))
				continue;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			if (sched_setaffinity(0, sizeof(one), &one))
				continue;
			t = pt_now_ns();
			if (t < prev)
				fail_msg("on CPU %d: %llu after %llu", cpu, (unsigned long long)t,
					 (unsigned long long)prev);
			prev = t;
		}
	sched_setaffinity(0, sizeof(old), &old);
	pt_clock_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_monotonic_and_scaled),
		cmocka_unit_test(test_resolution_and_overhead),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_init_rejects_garbage),
		cmocka_unit_test(test_invariant_flags),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_tsc_agrees_with_raw),
		cmocka_unit_test(test_check_sees_a_wrong_slope),
		cmocka_unit_test(test_monotonic),
	};
	return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}
