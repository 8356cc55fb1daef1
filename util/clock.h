/* SPDX-License-Identifier: BSD-2-Clause */
/* One clock for every tool: CLOCK_MONOTONIC_RAW in nanoseconds.
 * No CPU-MHz guesses, so results never print 0.00 in a VM. */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H
#include <stdint.h>
#include <time.h>

static inline uint64_t pt_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Cost of one pt_now_ns() call, median of a short burst (for reports). */
double pt_clock_overhead_ns(void);
/* Resolution reported by clock_getres() for CLOCK_MONOTONIC_RAW. */
uint64_t pt_clock_resolution_ns(void);
/* Convert a nanosecond interval to microseconds / seconds. */
static inline double pt_ns_to_usec(uint64_t ns) { return (double)ns / 1e3; }
static inline double pt_ns_to_sec(uint64_t ns) { return (double)ns / 1e9; }

#endif
