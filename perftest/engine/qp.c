/* SPDX-License-Identifier: BSD-2-Clause */
/* QP state transitions, address handles and the two post paths. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "plugin/hooks/hooks.h"

#define WRID_QP_SHIFT 48
#define WRID_IDX_MASK ((1ull << WRID_QP_SHIFT) - 1)

void pt_key_fill(struct pt_ctx *c, int i, struct pt_key *k)
{
	memset(k, 0, sizeof(*k));
	k->lid = c->dev.port_attr.lid;
	k->out_reads = (uint16_t)c->run.out_reads;
	k->qpn = c->res.qps[i].qp->qp_num;
	k->psn = c->res.qps[i].psn;
	k->rkey = c->res.mr->rkey;
	k->vaddr = (uint64_t)(uintptr_t)c->res.qps[i].recv_buf;
	k->gid_index = c->dev.gid_index;
	if (c->dev.gid_index >= 0)
		memcpy(k->gid, c->dev.gid.raw, 16);
}

static void fill_ah_attr(struct pt_ctx *c, const struct pt_key *rem, struct ibv_ah_attr *ah)
{
	const struct pt_params *p = c->p;

	memset(ah, 0, sizeof(*ah));
	ah->dlid = rem->lid;
	ah->sl = (uint8_t)p->dev.sl;
	ah->port_num = (uint8_t)p->dev.ib_port;
	if (c->dev.gid_index >= 0) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, rem->gid, 16);
		ah->grh.sgid_index = (uint8_t)c->dev.gid_index;
		ah->grh.hop_limit = 0xff;
		ah->grh.traffic_class = (uint8_t)p->dev.tclass;
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
		fill_ah_attr(c, rem, &a.ah_attr);
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
	return 0;
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

			fill_ah_attr(c, &c->peer.rem_keys[i], &ah);
			c->res.qps[i].ah = ibv_create_ah(c->res.pd, &ah);
			if (!c->res.qps[i].ah) {
				fprintf(stderr, " Failed to create AH for QP %d: %s\n", i, strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* Small messages walk through the region one cache-line-rounded step at a
 * time, wrapping after a page (cycle buffer), as upstream does. */
static size_t cycle_offset(const struct pt_ctx *c, uint64_t k)
{
	uint64_t cycle = (uint64_t)c->run.page_size, step;

	/* latency tests keep one address: write_lat polls its last byte */
	if (c->run.size > cycle / 2 || c->p->tool->kind == PT_KIND_LAT)
		return 0;
	step = (c->run.size + (uint64_t)c->run.cache_line - 1) / (uint64_t)c->run.cache_line * (uint64_t)c->run.cache_line;
	if (step < (uint64_t)c->run.cache_line)
		step = (uint64_t)c->run.cache_line;
	return (size_t)((k % (cycle / step)) * step);
}

int pt_post_recv(struct pt_ctx *c, int i, uint64_t n)
{
	struct pt_qp *q = &c->res.qps[i];
	bool ud = c->p->conn.type == PT_CONN_UD;
	/* UD: the 40-byte GRH lands first; keep the payload cache-line aligned. */
	size_t base = ud ? (size_t)c->run.cache_line - PT_UD_GRH : 0;

	for (uint64_t j = 0; j < n; j++) {
		uint64_t k = q->recv_posted;
		struct ibv_sge sge = {
			.addr = (uintptr_t)(q->recv_buf + base + (ud ? 0 : cycle_offset(c, k))),
			.length = (uint32_t)(c->run.size + (ud ? PT_UD_GRH : 0)),
			.lkey = c->res.mr->lkey,
		};
		struct ibv_recv_wr wr = {
			.wr_id = ((uint64_t)i << WRID_QP_SHIFT) | (k & WRID_IDX_MASK),
			.sg_list = &sge,
			.num_sge = 1,
		}, *bad;
		int rc = ibv_post_recv(q->qp, &wr, &bad);

		if (rc) {
			fprintf(stderr, " Couldn't post receive %llu on QP %d: %s\n",
				(unsigned long long)k, i, strerror(rc));
			return -1;
		}
		pt_hook_post((uint32_t)i, k, 1, PT_PLUGIN_OP_RECV, wr.wr_id, 1, sge.length, 0, 0,
			     PT_HOOK_NOW);
		q->recv_posted++;
	}
	return 0;
}

/* WR k of a run is signaled every cq_mod-th and at the last one, so a
 * completion retires every earlier WR of its QP (FIFO). */
static bool signaled(const struct pt_ctx *c, uint64_t k, uint64_t iters)
{
	return (k + 1) % (uint64_t)c->run.cq_mod == 0 || (iters && k + 1 == iters);
}

/* What WR k of QP i moves: the local buffer, its length, and for RDMA
 * verbs the peer's address (its advertised region, cycled like ours). */
struct wr_target {
	void *local;
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
};

static void wr_target(const struct pt_ctx *c, int i, uint64_t k, struct wr_target *t)
{
	const struct pt_qp *q = &c->res.qps[i];
	size_t off = cycle_offset(c, k);

	t->local = q->send_buf + off;
	t->len = c->p->tool->verb == PT_VERB_ATOMIC ? 8 : (uint32_t)c->run.size;
	t->raddr = c->peer.rem_keys[i].vaddr + off;
	t->rkey = c->peer.rem_keys[i].rkey;
}

static bool use_inline(const struct pt_ctx *c)
{
	enum pt_verb v = c->p->tool->verb;

	return (v == PT_VERB_SEND || v == PT_VERB_WRITE) && c->run.size <= (uint64_t)c->run.inline_size;
}

/* The builder for the tool's verb (docs/upstream-behaviour.md §10: setters follow the builder). */
static void wr_build(const struct pt_ctx *c, struct ibv_qp_ex *qx, const struct wr_target *t)
{
	switch (c->p->tool->verb) {
	case PT_VERB_WRITE:
		ibv_wr_rdma_write(qx, t->rkey, t->raddr);
		break;
	case PT_VERB_READ:
		ibv_wr_rdma_read(qx, t->rkey, t->raddr);
		break;
	case PT_VERB_ATOMIC:
		if (c->p->traffic.atomic_type == PT_ATOMIC_CMP_AND_SWAP)
			ibv_wr_atomic_cmp_swp(qx, t->rkey, t->raddr, 0, 0);
		else
			ibv_wr_atomic_fetch_add(qx, t->rkey, t->raddr, 1);
		break;
	default:
		ibv_wr_send(qx);
	}
}

static int post_send_new(struct pt_ctx *c, int i, unsigned n, uint64_t iters)
{
	struct pt_qp *q = &c->res.qps[i];
	struct ibv_qp_ex *qx = q->qpx;
	bool ud = c->p->conn.type == PT_CONN_UD;
	bool inl = use_inline(c);

	ibv_wr_start(qx);
	for (unsigned j = 0; j < n; j++) {
		uint64_t k = q->posted + j;
		struct wr_target t;

		wr_target(c, i, k, &t);
		qx->wr_id = ((uint64_t)i << WRID_QP_SHIFT) | (k & WRID_IDX_MASK);
		qx->wr_flags = (signaled(c, k, iters) ? IBV_SEND_SIGNALED : 0) |
			       (inl ? IBV_SEND_INLINE : 0);
		wr_build(c, qx, &t);
		if (ud)
			ibv_wr_set_ud_addr(qx, q->ah, q->remote_qpn, q->remote_qkey);
		if (inl)
			ibv_wr_set_inline_data(qx, t.local, t.len);
		else
			ibv_wr_set_sge(qx, c->res.mr->lkey, (uintptr_t)t.local, t.len);
	}
	return ibv_wr_complete(qx);
}

static enum ibv_wr_opcode old_opcode(const struct pt_ctx *c)
{
	switch (c->p->tool->verb) {
	case PT_VERB_WRITE: return IBV_WR_RDMA_WRITE;
	case PT_VERB_READ: return IBV_WR_RDMA_READ;
	case PT_VERB_ATOMIC:
		return c->p->traffic.atomic_type == PT_ATOMIC_CMP_AND_SWAP ?
		       IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
	default: return IBV_WR_SEND;
	}
}

uint32_t pt_wr_plugin_opcode(const struct pt_ctx *c)
{
	return pt_plugin_op_of_wr(old_opcode(c));
}

static int post_send_old(struct pt_ctx *c, int i, unsigned n, uint64_t iters)
{
	enum { MAX_CHAIN = 64 };
	struct pt_qp *q = &c->res.qps[i];
	struct ibv_send_wr wr[MAX_CHAIN], *bad;
	struct ibv_sge sge[MAX_CHAIN];
	enum ibv_wr_opcode op = old_opcode(c);
	bool inl = use_inline(c);
	unsigned done = 0;

	while (done < n) {
		unsigned m = n - done > MAX_CHAIN ? MAX_CHAIN : n - done;
		int rc;

		for (unsigned j = 0; j < m; j++) {
			uint64_t k = q->posted + done + j;
			struct wr_target t;

			wr_target(c, i, k, &t);
			sge[j] = (struct ibv_sge){
				.addr = (uintptr_t)t.local, .length = t.len, .lkey = c->res.mr->lkey,
			};
			wr[j] = (struct ibv_send_wr){
				.wr_id = ((uint64_t)i << WRID_QP_SHIFT) | (k & WRID_IDX_MASK),
				.next = j + 1 < m ? &wr[j + 1] : NULL,
				.sg_list = &sge[j],
				.num_sge = 1,
				.opcode = op,
				.send_flags = (signaled(c, k, iters) ? IBV_SEND_SIGNALED : 0) |
					      (inl ? IBV_SEND_INLINE : 0),
			};
			if (c->p->conn.type == PT_CONN_UD) {
				wr[j].wr.ud.ah = q->ah;
				wr[j].wr.ud.remote_qpn = q->remote_qpn;
				wr[j].wr.ud.remote_qkey = q->remote_qkey;
			} else if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_READ) {
				wr[j].wr.rdma.remote_addr = t.raddr;
				wr[j].wr.rdma.rkey = t.rkey;
			} else if (op != IBV_WR_SEND) {
				wr[j].wr.atomic.remote_addr = t.raddr;
				wr[j].wr.atomic.rkey = t.rkey;
				wr[j].wr.atomic.compare_add = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0;
				wr[j].wr.atomic.swap = 0;
			}
		}
		rc = ibv_post_send(q->qp, wr, &bad);
		if (rc)
			return rc;
		done += m;
	}
	return 0;
}

int pt_post_send(struct pt_ctx *c, int i, unsigned n, uint64_t iters)
{
	int rc = c->res.qps[i].qpx ? post_send_new(c, i, n, iters) : post_send_old(c, i, n, iters);

	if (rc) {
		fprintf(stderr, " Couldn't post send on QP %d: %s (posted %llu)\n", i, strerror(rc),
			(unsigned long long)c->res.qps[i].posted);
		return -1;
	}
	c->res.qps[i].posted += n;
	return 0;
}

/* Decode a completion's wr_id (set above). */
int pt_wrid_qp(uint64_t wr_id)
{
	return (int)(wr_id >> WRID_QP_SHIFT);
}

uint64_t pt_wrid_index(uint64_t wr_id)
{
	return wr_id & WRID_IDX_MASK;
}
