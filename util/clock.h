/* SPDX-License-Identifier: BSD-2-Clause */
/* One clock for every tool: nanoseconds on the CLOCK_MONOTONIC_RAW time line.
 * No CPU-MHz guesses, so results never print 0.00 in a VM.
 *
 * Two sources, one time line:
 * - clock_gettime(CLOCK_MONOTONIC_RAW) (~20 ns a read in a VM): always right,
 *   and what pt_now_ns() reads until pt_clock_init() chose otherwise, so code
 *   that never calls it (libwrtrace.so inside foreign programs) keeps it;
 * - the TSC, where the CPU has an invariant one (x86_64, constant_tsc and
 *   nonstop_tsc): rdtsc, converted with a line fitted against
 *   CLOCK_MONOTONIC_RAW at pt_clock_init() and checked by pt_clock_check()
 *   at the end of the run (the residual goes to --out_json): tsc.h.
 * PERFTEST_CLOCK=auto (default) | tsc | raw picks; tsc where the CPU has no
 * invariant TSC warns once and falls back. */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#define PT_CLOCK_HAVE_TSC 1
#else
#define PT_CLOCK_HAVE_TSC 0
#endif

#define PT_CLOCK_TSC_SHIFT 32           /* mult is ns per tick in 32.32 fixed point */
#define PT_CLOCK_TSC_MARGIN (1ull << 30) /* ticks: 0.4 s at 2.6 GHz */
#define PT_CLOCK_NAME_RAW "CLOCK_MONOTONIC_RAW"
#define PT_CLOCK_NAME_TSC "tsc->CLOCK_MONOTONIC_RAW"

/* A clock_gettime reading in nanoseconds. */
static inline uint64_t pt_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

static inline uint64_t pt_clock_raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return pt_timespec_ns(&ts);
}

/* The conversion pt_now_ns() uses: ns = ns0 + (tsc - tsc0) * mult >> SHIFT,
 * set by pt_clock_setup() (tsc.c). mult == 0: clock_gettime. Hidden: each executable or shared object has its
 * own copy, so a plugin or LD_PRELOAD library never reads the tool's line,
 * nor the tool one a library calibrated. */
struct pt_clock_line {
	uint64_t mult;
	uint64_t tsc0;
	uint64_t ns0;
} __attribute__((aligned(32)));
extern struct pt_clock_line pt_clock_line __attribute__((visibility("hidden")));

#if PT_CLOCK_HAVE_TSC
static inline uint64_t pt_clock_rdtsc(void)
{
	/* no lfence: the read may move by the out-of-order window (a few ns),
	 * well inside the fit's residual, and fencing doubles the cost */
	return __builtin_ia32_rdtsc();
}

/* pt_clock_rdtsc() stored at *to as the instruction gives it, two 32-bit
 * halves: two stores, where joining them first takes a shift and an or.
 * x86 is little-endian: *to then holds the same 64-bit count. */
static inline void pt_clock_rdtsc_to(uint64_t *to)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	memcpy(to, &lo, sizeof(lo));
	memcpy((char *)to + sizeof(lo), &hi, sizeof(hi));
}

static inline uint64_t pt_clock_tsc_to_ns(const struct pt_clock_line *l, uint64_t tsc)
{
	/* tsc0 lies PT_CLOCK_TSC_MARGIN ticks before the calibration, so a core
	 * whose TSC trails the calibrating one by a few ticks stays above it */
	__extension__ unsigned __int128 d = tsc - l->tsc0;

	return l->ns0 + (uint64_t)((d * l->mult) >> PT_CLOCK_TSC_SHIFT);
}
#endif

static inline uint64_t pt_now_ns(void)
{
#if PT_CLOCK_HAVE_TSC
	if (__builtin_expect(pt_clock_line.mult != 0, 1))
		return pt_clock_tsc_to_ns(&pt_clock_line, pt_clock_rdtsc());
#endif
	return pt_clock_raw_ns();
}

/* A time to convert later: TSC ticks where pt_now_ns() converts them, else
 * nanoseconds. A loop that only stores its times (the latency loops' plain
 * copies) keeps the conversion, ~5 instructions a read, out of its
 * iterations; pt_raw_to_ns() gives exactly what pt_now_ns() would have. */
static inline uint64_t pt_now_raw(void)
{
#if PT_CLOCK_HAVE_TSC
	if (__builtin_expect(pt_clock_line.mult != 0, 1))
		return pt_clock_rdtsc();
#endif
	return pt_clock_raw_ns();
}

/* Whether pt_now_raw_fixed() reads what pt_now_raw() would: the TSC is
 * on, or the build has none (clock_gettime either way). The line is set
 * before any run and kept (pt_clock_setup). */
static inline bool pt_now_raw_fixed_ok(void)
{
#if PT_CLOCK_HAVE_TSC
	return pt_clock_line.mult != 0;
#else
	return true;
#endif
}

/* pt_now_raw() without its test of the line, for a loop that checked
 * pt_now_raw_fixed_ok() before it started (the latency loops' spinning
 * plain copies: 2 instructions less per read). */
static inline uint64_t pt_now_raw_fixed(void)
{
#if PT_CLOCK_HAVE_TSC
	return pt_clock_rdtsc();
#else
	return pt_clock_raw_ns();
#endif
}

/* pt_now_ns() without its test of the line, on the same terms as
 * pt_now_raw_fixed(). */
static inline uint64_t pt_now_ns_fixed(void)
{
#if PT_CLOCK_HAVE_TSC
	return pt_clock_tsc_to_ns(&pt_clock_line, pt_clock_rdtsc());
#else
	return pt_clock_raw_ns();
#endif
}

static inline uint64_t pt_raw_to_ns(uint64_t raw)
{
#if PT_CLOCK_HAVE_TSC
	if (pt_clock_line.mult != 0)
		return pt_clock_tsc_to_ns(&pt_clock_line, raw);
#endif
	return raw;
}

/* run_info->sw_clock: PT_CLOCK_NAME_TSC or PT_CLOCK_NAME_RAW. */
const char *pt_clock_sw_name(void);

/* Cost of one pt_now_ns() call, median of a short burst (for reports). */
double pt_clock_overhead_ns(void);
/* The same for a clock_gettime(CLOCK_MONOTONIC_RAW) read. */
double pt_clock_raw_overhead_ns(void);
/* Resolution reported by clock_getres() for CLOCK_MONOTONIC_RAW. */
uint64_t pt_clock_resolution_ns(void);
/* Convert a nanosecond interval to microseconds / seconds. */
static inline double pt_ns_to_usec(uint64_t ns) { return (double)ns / 1e3; }
static inline double pt_ns_to_sec(uint64_t ns) { return (double)ns / 1e9; }

#endif
