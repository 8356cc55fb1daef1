/* SPDX-License-Identifier: BSD-2-Clause */
/* ib_write_bw, ib_read_bw and ib_atomic_bw on the wire (docs/wire-protocol.md §6.4): keys,
 * connect, keys again, K0. Only the client moves data; the server waits in
 * a barrier for the client's whole run, receives its report and prints the
 * client's numbers. With -b both sides run, with a K0 before each run and
 * the report exchange after it. With --write_with_imm the server is a
 * receiver instead (docs/wire-protocol.md §6.4): it posts receives before the
 * run's K0, counts one receive completion per write and prints its own row;
 * the report exchange after the run carries its numbers, which we ignore. */
#include <stdio.h>
#include <string.h>
#include "perftest/engine/engine.h"
#include "perftest/engine/fault.h"
#include "perftest/engine/memory.h"
#include "tool.h"

/* posted: the first size's receives went before the K0 after the keys. */
static int run_one_size(struct pt_ctx *c, bool sender, bool receiver, bool duplex,
			bool posted, struct pt_bw_result *last)
{
	const struct pt_params *p = c->p;
	struct pt_loop l;
	bool warm_recv = receiver && p->traffic.warm_up;   /* the peer's warm-up writes */

	pt_bw_loop_view(c, &l);
	/* with the peer's warm-up writes coming, our receives go first (with
	 * -b both sides warm up: neither may wait for the other's receives) */
	if (warm_recv && !posted) {
		if (pt_bw_post_receives(c, &l))
			return -1;
		posted = true;
	}
	/* before the trace: the warm-up is neither measured nor recorded */
	if (sender && p->traffic.warm_up && pt_run_bw_warm_up(&l))
		return -1;
	if (warm_recv && pt_run_bw_warm_up_recv(&l, pt_recv_prepost(c)))
		return -1;
	if (pt_trace_begin(c, sender, receiver) ||
	    (receiver && !posted && pt_bw_post_receives(c, &l)) || (duplex && pt_session_barrier(c)))
		return -1;
	/* Debian's 6.06 has no barrier after a duplex run: the report follows. */
	return pt_bw_run_one(c, &l, sender, receiver, duplex, last);
}

/* The non-duplex server: wait for the client, then print its numbers. */
static int server_flow(struct pt_ctx *c)
{
	struct pt_bw_report mine, theirs;
	struct pt_bw_result r;
	int bad_data = 0;

	memset(&mine, 0, sizeof(mine));  /* the client ignores what we send */
	mine.per_port = c->p->addr.report_per_port;
	fflush(stdout);
	if (pt_session_wait_peer_run(c))
		return PT_EXIT_FAIL;
	/* the client's writes are all placed once it says it is done */
	if (c->p->mem.data_validation && c->p->tool->verb == PT_VERB_WRITE)
		bad_data = pt_mem_validate(c, true);
	PT_TEST_STOP(PT_STAGE_REPORT);
	if (pt_oob_xchg_bw_report(&c->peer.oob, &mine, &theirs)) {
		fprintf(stderr, " Failed to receive the client's report: %s\n", pt_oob_strerror(&c->peer.oob));
		return PT_EXIT_FAIL;
	}
	/* a receiving peer sends zeros: both sides receive (one gave --reversed) */
	if (!theirs.size && !theirs.iters) {
		fprintf(stderr, " The peer sent no report: it did not send either"
			" (--reversed given on one side only?)\n");
		return PT_EXIT_FAIL;
	}
	r = (struct pt_bw_result){
		.size = theirs.size, .iters = theirs.iters, .bw_peak = theirs.bw_peak,
		.bw_avg = theirs.bw_avg, .msg_rate = theirs.msg_rate, .gbits = c->p->report.gbits,
		.per_port = theirs.per_port,
		.bw_avg_port = { theirs.bw_avg_port[0], theirs.bw_avg_port[1] },
		.msg_rate_port = { theirs.msg_rate_port[0], theirs.msg_rate_port[1] },
	};
	pt_session_bw_row(c, &r);
	pt_bw_check_limits(c, &r);
	if (c->p->report.output == PT_OUTPUT_FULL)
		printf(PT_RESULT_LINE);
	if (pt_session_barrier(c) || pt_session_finish(c) || bad_data)
		return PT_EXIT_FAIL;
	return 0;
}

/* --data_validation after the last run (docs/option-parity.md): WRITE
 * checks what the peer wrote into us, READ what we fetched. */
static int validate(struct pt_ctx *c, bool sender, bool receiver_side)
{
	const struct pt_params *p = c->p;

	if (!p->mem.data_validation)
		return 0;
	if (p->tool->verb == PT_VERB_READ)
		return sender ? pt_mem_validate(c, false) : 0;
	return receiver_side ? pt_mem_validate(c, true) : 0;
}

int pt_rdma_bw_flow(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	/* client: the BW sender (the server with --reversed); the OOB roles stay */
	bool client = pt_bw_sender_side(p), duplex = p->traffic.bidirectional;
	bool imm = p->traffic.with_imm, sender = client || duplex, receiver = imm && (!client || duplex);
	bool posted = false;
	int bad_data;
	struct pt_bw_result last;
	struct pt_loop l;

	memset(&last, 0, sizeof(last));
	if (pt_tool_prepare(c) || pt_session_print_header(c) || pt_session_xchg_keys(c, false) ||
	    pt_qps_connect(c, sender) || pt_session_xchg_keys(c, true))
		return PT_EXIT_FAIL;
	/* a duplex run has a K0 of its own before it; else this one guards the receives */
	if (receiver && !duplex) {
		pt_bw_loop_view(c, &l);
		if (pt_bw_post_receives(c, &l))
			return PT_EXIT_FAIL;
		posted = true;
	}
	if (pt_session_barrier(c))
		return PT_EXIT_FAIL;
	if (p->report.output == PT_OUTPUT_FULL) {
		printf(PT_RESULT_LINE);
		pt_report_bw_header(stdout, p->report.gbits, p->report.cpu_util);
	}
	if (!client && !duplex && !imm)
		return server_flow(c);
	for (uint64_t s = p->traffic.all_sizes ? 2 : c->run.size; s; s = pt_next_size(c, s)) {
		c->run.size = s;
		if (run_one_size(c, sender, receiver, duplex, posted, &last))
			return PT_EXIT_FAIL;
		posted = false;
	}
	if (p->report.output == PT_OUTPUT_FULL)
		printf(PT_RESULT_LINE);
	/* a duplex run's reports come after the peer's run: its writes are in */
	bad_data = validate(c, sender, !client || duplex);
	if (!duplex) {
		struct pt_bw_report mine = { last.size, last.iters, last.bw_peak, last.bw_avg,
					     last.msg_rate, last.per_port,
					     { last.bw_avg_port[0], last.bw_avg_port[1] },
					     { last.msg_rate_port[0], last.msg_rate_port[1] } };

		if (pt_session_barrier(c))
			return PT_EXIT_FAIL;
		PT_TEST_STOP(PT_STAGE_REPORT);
		/* the server's half is bytes it never filled (6.29: NaN), or
		 * with --write_with_imm its own numbers: dropped either way */
		if (pt_oob_xchg_bw_report(&c->peer.oob, &mine, NULL)) {
			fprintf(stderr, " Failed to send the report to the server: %s\n",
				pt_oob_strerror(&c->peer.oob));
			return PT_EXIT_FAIL;
		}
	}
	if (pt_session_barrier(c) || pt_session_finish(c) || bad_data)
		return PT_EXIT_FAIL;
	return 0;
}
