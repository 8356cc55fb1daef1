/* SPDX-License-Identifier: BSD-2-Clause */
/* The SW rate limiter's arithmetic (--rate_limit_type SW, --burst_size) and
 * --latency_gap, over the loop view alone (loop.h); the man page
 * (perftest/tools/ib_send_bw.1)
 * says what each option does. The HW limiter is pace_hw.c. */
#define PT_LOOP_VIEW_ONLY
#include <string.h>
#include "util/clock.h"
#include "loop.h"

double pt_pace_rate_pps(double pps, double bytes_ps, uint64_t size)
{
	if (pps > 0)
		return pps;
	if (bytes_ps > 0 && size)
		return bytes_ps / (double)size;
	return 0;
}

int pt_pacer_init(struct pt_pacer *pc, double pps, unsigned burst, uint64_t now)
{
	double gap;

	memset(pc, 0, sizeof(*pc));
	if (!(pps > 0) || !burst)
		return -1;
	/* one burst per gap: burst / pps seconds; at least 1 ns */
	gap = 1e9 * (double)burst / pps;
	pc->gap_ns = gap < 1 ? 1 : gap > 1e18 ? (uint64_t)1e18 : (uint64_t)gap;
	pc->burst = burst;
	pc->next_t = now;
	return 0;
}

void pt_lat_gap(uint64_t ns)
{
	uint64_t end = pt_now_ns() + ns;

	/* busy, as upstream: a sleep would let the CPU idle and slow the next post */
	while (pt_now_ns() < end && !pt_interrupted)
		;
}
