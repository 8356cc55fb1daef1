/* SPDX-License-Identifier: BSD-2-Clause */
/* Pass/fail thresholds of the BW tools: -w/--limit_bw (average bandwidth, in
 * the unit of the printed row: MiB/s, or Gb/s with --report_gbits) and
 * -y/--limit_msgrate (Mpps). Every final row of a run is compared; one row
 * below a limit fails the run (docs/upstream-behaviour.md §12). Upstream 6.29
 * has no latency limits, so the latency tools have none either. */
#ifndef PT_VERDICT_H
#define PT_VERDICT_H
#include <stdbool.h>
#include <stdio.h>
#include "results.h"

enum pt_limit_bits {
	PT_LIMIT_BW = 1u << 0,
	PT_LIMIT_MSGRATE = 1u << 1,
};

struct pt_verdict {
	double limit_bw;       /* < 0: not set */
	double limit_msgrate;  /* < 0: not set */
	unsigned rows;         /* rows compared */
	unsigned failed;       /* enum pt_limit_bits, over all rows */
	double min_bw;         /* the lowest compared values */
	double min_msgrate;
};

/* Limits < 0 are off. */
void pt_verdict_init(struct pt_verdict *v, double limit_bw, double limit_msgrate);
/* At least one limit is set. */
bool pt_verdict_active(const struct pt_verdict *v);
/* Compare one row; each limit it misses is named on err (may be NULL) as
 * upstream words it ("Error: BW result is below bw limit") with both values.
 * A NaN fails. Returns the limits this row missed. */
unsigned pt_verdict_add_bw(struct pt_verdict *v, const struct pt_bw_result *r, FILE *err);
/* No row missed a limit (also true with no limits or no rows). */
bool pt_verdict_pass(const struct pt_verdict *v);

#endif
