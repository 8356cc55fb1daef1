/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdlib.h>
#include "clock.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

double pt_clock_overhead_ns(void)
{
	enum { N = 101 };
	uint64_t d[N];

	for (int i = 0; i < N; i++) {
		uint64_t t0 = pt_now_ns();
		uint64_t t1 = pt_now_ns();

		d[i] = t1 - t0;
	}
	qsort(d, N, sizeof(d[0]), cmp_u64);
	return (double)d[N / 2];
}

uint64_t pt_clock_resolution_ns(void)
{
	struct timespec res;

	if (clock_getres(CLOCK_MONOTONIC_RAW, &res))
		return 0;
	return (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
}
