/* SPDX-License-Identifier: BSD-2-Clause */
/* `rdmamon wr`'s readings and its report: a snapshot of the USDT counters
 * (per process and QP, summed over CPUs by wr_run.c) and the JSON line or
 * text of one interval (names: rdmamon.8, "The wr view"). No BPF here, so
 * the unit tests build it without the BPF tool chain. */
#ifndef MONITOR_WR_REPORT_H
#define MONITOR_WR_REPORT_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "wr.h"

struct rm_wr_qp {
	struct rm_wr_qp_key k;
	struct rm_wr_qp_val v;
};

struct rm_wr_proc {
	uint32_t pid;
	int has_runs;          /* a run_start or run_end was seen */
	struct rm_wr_run_val r;   /* comm filled either way ("" unknown) */
};

struct rm_wr_snap {
	uint64_t mono_ns;
	struct rm_wr_qp *qps;
	size_t nqps;
	struct rm_wr_proc *procs;
	size_t nprocs;
	uint64_t lost[WR_LOST_NSLOTS];
};

/* Adds one CPU's copy of a QP's counters: summed into the QP's entry. */
int rm_wr_snap_add_qp(struct rm_wr_snap *s, const struct rm_wr_qp_key *k, const struct rm_wr_qp_val *v);
int rm_wr_snap_add_proc(struct rm_wr_snap *s, uint32_t pid, const struct rm_wr_run_val *r, int has_runs);
/* The process entry of pid, or NULL. */
struct rm_wr_proc *rm_wr_snap_proc(struct rm_wr_snap *s, uint32_t pid);
void rm_wr_snap_clear(struct rm_wr_snap *s);

/* One interval (prev NULL: everything counts as new) as
 * {"type":"wr", ...}; final marks the summary since start. */
json_t *rm_wr_report_json(const struct rm_wr_snap *now, const struct rm_wr_snap *prev, double interval_s,
			  int final);
void rm_wr_report_text(FILE *f, const json_t *r);

#endif
