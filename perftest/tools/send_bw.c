/* SPDX-License-Identifier: BSD-2-Clause */
/* ib_send_bw's sequence on the wire (docs/wire-protocol.md §6.2): preamble, header, keys,
 * connect, barrier, keys again, then per size: receives posted, barrier,
 * run, row (and with -b the report exchange), barrier with -a; a closing
 * barrier. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "perftest/engine/engine.h"
#include "tool.h"

/* send_bw swaps -b reports only in iteration mode (docs/wire-protocol.md §8). */
static bool bidir_xchg(const struct pt_ctx *c)
{
	return c->p->traffic.bidirectional && c->p->traffic.test_type != PT_TEST_DURATION;
}

static int run_one_size(struct pt_ctx *c, bool sender, bool receiver)
{
	struct pt_loop l;

	pt_bw_loop_view(c, &l);
	if (pt_trace_begin(c, sender, receiver) || (receiver && pt_bw_post_receives(c, &l)) ||
	    pt_session_barrier(c))
		return -1;
	return pt_bw_run_one(c, &l, sender, receiver, bidir_xchg(c), NULL);
}

/* --connectionless: attach, receive, report; no peer, no OOB (docs/upstream-behaviour.md §4.1). */
static int connectionless_flow(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct pt_bw_meas m = { 0 };
	struct pt_loop l;
	int rc;

	memcpy(c->mcast.mgid, p->mcast.mgid, 16);
	/* a receive-only UD QP needs RTR to accept packets; no peer data is used */
	if (pt_qps_connect(c, false) || pt_mcast_attach(c) || pt_session_print_header(c) ||
	    pt_trace_begin(c, false, true))
		return PT_EXIT_FAIL;
	pt_bw_loop_view(c, &l);
	for (int i = 0; i < c->res.num_qps; i++)
		if (pt_post_recv(&l, i, pt_recv_prepost(c)))
			return PT_EXIT_FAIL;
	if (p->report.output == PT_OUTPUT_FULL)
		pt_report_bw_header(stdout, p->report.gbits, p->report.cpu_util);
	fflush(stdout);
	rc = pt_run_bw_recv(&l, &m);
	if (!rc && !p->traffic.run_infinitely)
		rc = pt_bw_report(c, &m, false, false, NULL);
	else if (m.interrupted)
		pt_bw_partial(c, &m);
	if (pt_trace_end(rc ? -1 : 0, m.elapsed_ns))
		rc = -1;
	pt_bw_meas_free(&m);
	if (rc)
		return PT_EXIT_RUN_FAILED;
	if (p->report.output == PT_OUTPUT_FULL)
		printf(PT_RESULT_LINE);
	return pt_session_finish(c) ? PT_EXIT_FAIL : 0;
}

int pt_send_bw_flow(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	/* client: the BW sender (the server with --reversed); the OOB roles stay */
	bool client = pt_bw_sender_side(p), bidir = p->traffic.bidirectional;
	bool sender = client || bidir, receiver = !client || bidir;

	if (pt_tool_prepare(c))
		return PT_EXIT_FAIL;
	if (p->mcast.connectionless)
		return connectionless_flow(c);
	if (p->mcast.enabled && !client) {
		memcpy(c->mcast.mgid, p->mcast.mgid, 16);
		if (pt_mcast_attach(c))
			return PT_EXIT_FAIL;
	}
	if (pt_session_print_header(c) || pt_session_xchg_keys(c, false))
		return PT_EXIT_FAIL;
	if (p->mcast.enabled && client) {
		if (pt_mcast_check_route(c, c->peer.rem_keys[0].gid))
			return PT_EXIT_FAIL;
		usleep(50000);
	}
	if (pt_qps_connect(c, sender) || pt_session_barrier(c))
		return PT_EXIT_FAIL;
	if (pt_session_xchg_keys(c, true))
		return PT_EXIT_FAIL;
	if (p->report.output == PT_OUTPUT_FULL) {
		printf(PT_RESULT_LINE);
		pt_report_bw_header(stdout, p->report.gbits, p->report.cpu_util);
	}
	/* --reversed UD: the sending server's barrier after each run is what
	 * tells the receiving client that messages still missing are lost */
	c->peer.oob.write_first = sender && c->peer.oob.is_server && p->conn.type == PT_CONN_UD;
	for (uint64_t s = p->traffic.all_sizes ? 2 : c->run.size; s; s = pt_next_size(c, s)) {
		c->run.size = s;
		if (run_one_size(c, sender, receiver))
			return PT_EXIT_RUN_FAILED;
		if (p->traffic.all_sizes && pt_session_barrier(c))
			return PT_EXIT_FAIL;
	}
	if (p->report.output == PT_OUTPUT_FULL)
		printf(PT_RESULT_LINE);
	if (pt_session_barrier(c) || pt_session_finish(c))
		return PT_EXIT_FAIL;
	return 0;
}
