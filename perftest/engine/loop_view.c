/* SPDX-License-Identifier: BSD-2-Clause */
/* The one place that turns the context into the loops' view (loop.h):
 * everything a loop reads of the options is chosen here. */
#include <string.h>
#include "engine.h"

void pt_loop_view(struct pt_ctx *c, struct pt_loop *l)
{
	const struct pt_params *p = c->p;
	const uint64_t s = 1000000000ull;
	bool duration = p->traffic.test_type == PT_TEST_DURATION;

	memset(l, 0, sizeof(*l));
	l->res = &c->res;
	l->run = &c->run;
	l->opt = (struct pt_loop_opts){
		.iters = p->traffic.iters,
		.post_list = (unsigned)p->traffic.post_list,
		.duration = duration,
		.infinite = p->traffic.run_infinitely,
		.duration_s = (unsigned)p->traffic.duration,
		.margin_s = (unsigned)p->traffic.margin,
		.stall_ns = p->oob.timeout_sec ? (uint64_t)p->oob.timeout_sec * s : UINT64_MAX,
		.peak = !p->report.no_peak && !duration,
		.cpu_util = p->report.cpu_util,
		.ud = p->conn.type == PT_CONN_UD,
		.connectionless = p->mcast.connectionless,
		.is_client = p->oob.is_client,
		.lat = p->tool->kind == PT_KIND_LAT,
		.opcode = pt_wr_opcode(c),
		.imm = p->traffic.with_imm,
		.recv_post_list = (unsigned)p->traffic.recv_post_list,
		/* --cqe_poll fixes the batch, as does --disable_dynamic_polling */
		.poll_batch = p->traffic.cqe_poll ? (unsigned)p->traffic.cqe_poll : PT_POLL_BATCH_MIN,
		.poll_dynamic = !p->traffic.cqe_poll && !p->traffic.no_dynamic_poll,
		/* -O: the second half of the QPs is port 2's (pt_qp_port) */
		.port2_first_qp = p->addr.dualport ? c->res.num_qps / 2 : 0,
		/* pace: only the SW limiter is the loop's; HW is set on the QPs */
		.pace_pps = p->pace.limit_type == PT_RATE_LIMIT_SW &&
			    p->pace.rate_units == PT_RATE_PPS ? p->pace.rate_limit : 0,
		.pace_bytes_ps = p->pace.limit_type == PT_RATE_LIMIT_SW ? pt_pace_bytes_ps(&p->pace) : 0,
		.pace_burst = (unsigned)p->pace.burst_size,
		.lat_gap_ns = (uint64_t)p->pace.latency_gap_us * 1000u,
	};
	pt_peer_watch_oob(&l->peer, &c->peer.oob);
	/* RDMA verbs target the peer's region: from its latest key message */
	for (int i = 0; c->peer.rem_keys && i < c->res.num_qps; i++) {
		c->res.qps[i].remote_addr = c->peer.rem_keys[i].vaddr;
		c->res.qps[i].remote_rkey = c->peer.rem_keys[i].rkey;
	}
}
