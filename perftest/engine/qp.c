/* SPDX-License-Identifier: BSD-2-Clause */
/* QP state transitions and address handles (the post paths: post.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "fault.h"

void pt_key_fill(struct pt_ctx *c, int i, struct pt_key *k)
{
	memset(k, 0, sizeof(*k));
	k->lid = pt_qp_lid(c, i);
	k->out_reads = (uint16_t)c->run.out_reads;
	k->qpn = c->res.qps[i].qp->qp_num;
	k->psn = c->res.qps[i].psn;
	k->rkey = (c->res.qps[i].mr ? c->res.qps[i].mr : c->res.mr)->rkey ^ (pt_test_break_rkey ? 0x5a5a00u : 0);
	k->vaddr = (uint64_t)(uintptr_t)c->res.qps[i].recv_buf;
	k->gid_index = pt_qp_gid_index(c, i);
	if (k->gid_index >= 0)
		memcpy(k->gid, pt_qp_gid(c, i)->raw, 16);
}

/* The GRH flow label of QP i: --flow_label's list, cycled over the QPs. */
static uint32_t flow_label_of(const struct pt_params *p, int i)
{
	int n = p->addr.num_flow_labels;

	return n ? (uint32_t)p->addr.flow_labels[i % n] : 0;
}

void pt_ah_attr_fill(const struct pt_ctx *c, int i, const struct pt_key *rem,
		     struct ibv_ah_attr *ah)
{
	const struct pt_params *p = c->p;

	memset(ah, 0, sizeof(*ah));
	ah->dlid = rem->lid;
	ah->sl = (uint8_t)p->dev.sl;
	ah->port_num = (uint8_t)pt_qp_port(c, i);
	if (pt_qp_gid_index(c, i) >= 0) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, rem->gid, 16);
		ah->grh.sgid_index = (uint8_t)pt_qp_gid_index(c, i);
		ah->grh.hop_limit = 0xff;
		ah->grh.traffic_class = (uint8_t)p->dev.tclass;
		ah->grh.flow_label = flow_label_of(p, i);
	}
}

static int to_rtr_rts(struct pt_ctx *c, int i, bool will_send)
{
	const struct pt_params *p = c->p;
	const struct pt_key *rem = &c->peer.rem_keys[i];
	struct pt_qp *q = &c->res.qps[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (p->conn.type != PT_CONN_UD) {
		a.path_mtu = c->run.mtu;
		a.dest_qp_num = rem->qpn;
		a.rq_psn = rem->psn;
		pt_ah_attr_fill(c, i, rem, &a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (p->conn.type == PT_CONN_RC) {
			a.max_dest_rd_atomic = (uint8_t)c->run.out_reads;
			a.min_rnr_timer = 12;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(q->qp, &a, mask)) {
		fprintf(stderr, " Failed to modify QP %d to RTR: %s\n", i, strerror(errno));
		return -1;
	}
	if (!will_send)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (p->conn.type == PT_CONN_RC) {
		a.timeout = (uint8_t)p->dev.qp_timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = (uint8_t)(rem->out_reads ? rem->out_reads : 1);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(q->qp, &a, mask)) {
		fprintf(stderr, " Failed to modify QP %d to RTS: %s\n", i, strerror(errno));
		return -1;
	}
	return pt_pace_hw_apply(p, q->qp, i);
}

int pt_qps_connect(struct pt_ctx *c, bool will_send)
{
	/* -R: rdma_cm connected them, with the peer's QPN and AH (cm_qps.c) */
	if (c->p->conn.rdma_cm_qps)
		return 0;
	for (int i = 0; i < c->res.num_qps; i++) {
		if (to_rtr_rts(c, i, will_send))
			return -1;
		c->res.qps[i].remote_qpn = c->peer.rem_keys[i].qpn;
		/* UD senders need an AH before any WR is built (docs/upstream-behaviour.md §10). */
		if (c->p->conn.type == PT_CONN_UD && will_send) {
			struct ibv_ah_attr ah;

			pt_ah_attr_fill(c, i, &c->peer.rem_keys[i], &ah);
			c->res.qps[i].ah = ibv_create_ah(c->res.pd, &ah);
			if (!c->res.qps[i].ah) {
				fprintf(stderr, " Failed to create AH for QP %d: %s\n", i, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* The tool's verb as the old post API's opcode; the loops and the hooks
 * take it from the view (pt_loop_view), trace.c for the run info. */
enum ibv_wr_opcode pt_wr_opcode(const struct pt_ctx *c)
{
	switch (c->p->tool->verb) {
	case PT_VERB_WRITE:
		return c->p->traffic.with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	case PT_VERB_READ: return IBV_WR_RDMA_READ;
	case PT_VERB_ATOMIC:
		return c->p->traffic.atomic_type == PT_ATOMIC_CMP_AND_SWAP ?
		       IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	default: return c->p->traffic.with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	}
}

uint64_t pt_recv_prepost(const struct pt_ctx *c)
{
	uint64_t iters = c->p->traffic.iters, rx = (uint64_t)c->run.rx_depth;

	if (c->res.srq)
		rx /= (uint64_t)c->res.num_qps;
	return iters && iters < rx ? iters : rx;
}
