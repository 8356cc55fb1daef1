/* SPDX-License-Identifier: BSD-2-Clause */
/* What every tool's main shares: parse, open the device (before any network
 * traffic, so bad input fails early), run the tool's flow, clean up. */
#ifndef PT_TOOL_H
#define PT_TOOL_H
#include <signal.h>
#include "perftest/engine/engine.h"

#define PT_EXIT_FAIL 1
#define PT_EXIT_INTERRUPTED 130

typedef int (*pt_flow_fn)(struct pt_ctx *c);

/* main() of a tool: returns the process exit code. */
int pt_tool_main(const struct pt_tool *tool, pt_flow_fn flow, int argc, char **argv);
/* Session preamble, message size rules for the peer's MTU, resources. */
int pt_tool_prepare(struct pt_ctx *c);

/* -a: the size after s (powers of two up to c->run.max_size), 0 when done or
 * without -a. */
uint64_t pt_next_size(const struct pt_ctx *c, uint64_t s);

/* bw_report.c: print a BW row for measurement m (peak from its arrays when
 * peak); xchg: swap reports with the peer and print the sum (-b). *local
 * (may be NULL) gets the local row. */
int pt_bw_report(struct pt_ctx *c, const struct pt_bw_meas *m, bool peak, bool xchg,
		 struct pt_bw_result *local);
/* -w/-y: compare a final row with the limits, name a miss on stderr and
 * keep the verdict (also in --out_json's "limits"). */
void pt_bw_check_limits(struct pt_ctx *c, const struct pt_bw_result *r);
/* A row of this process missed a limit: the exit status is 1. */
bool pt_bw_limits_failed(void);
/* The loops' view of a BW run (pt_loop_view) with --run_infinitely's
 * periodic row (one per period, from that period's messages). */
void pt_bw_loop_view(struct pt_ctx *c, struct pt_loop *l);
/* An interrupted run (m->interrupted): what was measured, marked partial. */
void pt_bw_partial(struct pt_ctx *c, const struct pt_bw_meas *m);
/* Each QP's receives for one run (pt_recv_prepost), its count restarted;
 * 0 or -1. */
int pt_bw_post_receives(struct pt_ctx *c, const struct pt_loop *l);
/* One size's timed run in the directions given (both: -b), then its row
 * (pt_bw_report, peak when sending, with xchg and local) or the partial row
 * of an interrupted run; the trace ends either way. 0 or -1. */
int pt_bw_run_one(struct pt_ctx *c, const struct pt_loop *l, bool sender, bool receiver,
		  bool xchg, struct pt_bw_result *local);

int pt_send_bw_flow(struct pt_ctx *c);
int pt_send_lat_flow(struct pt_ctx *c);
int pt_write_lat_flow(struct pt_ctx *c);
int pt_read_lat_flow(struct pt_ctx *c);     /* ib_read_lat and ib_atomic_lat */
int pt_rdma_bw_flow(struct pt_ctx *c);      /* ib_write_bw, ib_read_bw, ib_atomic_bw */

#endif
