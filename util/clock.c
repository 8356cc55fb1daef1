/* SPDX-License-Identifier: BSD-2-Clause */
/* The clock (clock.h): the line pt_now_ns() converts the TSC with (set by
 * tsc.c) and the cost figures. */
#include <stdlib.h>
#include "clock.h"

struct pt_clock_line pt_clock_line;

const char *pt_clock_sw_name(void)
{
	return pt_clock_line.mult ? PT_CLOCK_NAME_TSC : PT_CLOCK_NAME_RAW;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median over bursts of back-to-back reads of the wall ns per read. */
#define COST_BURSTS 21
#define COST_READS 1000
#define COST(name, read)                                                        \
	double name(void)                                                       \
	{                                                                       \
		double d[COST_BURSTS];                                          \
		volatile uint64_t sink = 0;                                     \
									        \
		for (int b = 0; b < COST_BURSTS; b++) {                         \
			uint64_t t0 = pt_clock_raw_ns(), acc = 0;               \
									        \
			for (int i = 0; i < COST_READS; i++)                    \
				acc += read();                                  \
			d[b] = (double)(pt_clock_raw_ns() - t0) / COST_READS;   \
			sink += acc;                                            \
		}                                                               \
		(void)sink;                                                     \
		qsort(d, COST_BURSTS, sizeof(d[0]), cmp_dbl);                   \
		return d[COST_BURSTS / 2];                                      \
	}
COST(pt_clock_overhead_ns, pt_now_ns)
COST(pt_clock_raw_overhead_ns, pt_clock_raw_ns)

uint64_t pt_clock_resolution_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_RAW, &res))
		return 0;
	return (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
}
