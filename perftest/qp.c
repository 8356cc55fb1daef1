/* SPDX-License-Identifier: BSD-2-Clause */
/* QP state transitions, address handles and the two post paths. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"

#define WRID_QP_SHIFT 48
#define WRID_IDX_MASK ((1ull << WRID_QP_SHIFT) - 1)

void pt_key_fill(struct pt_ctx *c, int i, struct pt_key *k)
{
	memset(k, 0, sizeof(*k));
	k->lid = c->port_attr.lid;
	k->out_reads = 1;
	k->qpn = c->qps[i].qp->qp_num;
	k->psn = c->qps[i].psn;
	k->rkey = c->mr->rkey;
	k->vaddr = (uint64_t)(uintptr_t)c->qps[i].recv_buf;
	if (c->gid_index >= 0)
		memcpy(k->gid, c->gid.raw, 16);
}

static void fill_ah_attr(struct pt_ctx *c, const struct pt_key *rem, struct ibv_ah_attr *ah)
{
	const struct pt_params *p = c->p;

	memset(ah, 0, sizeof(*ah));
	ah->dlid = rem->lid;
	ah->sl = (uint8_t)p->dev.sl;
	ah->port_num = (uint8_t)p->dev.ib_port;
	if (c->gid_index >= 0) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, rem->gid, 16);
		ah->grh.sgid_index = (uint8_t)c->gid_index;
		ah->grh.hop_limit = 0xff;
		ah->grh.traffic_class = (uint8_t)p->dev.tclass;
	}
}

static int to_rtr_rts(struct pt_ctx *c, int i, bool will_send)
{
	const struct pt_params *p = c->p;
	const struct pt_key *rem = &c->rem_keys[i];
	struct pt_qp *q = &c->qps[i];
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (p->conn.type != PT_CONN_UD) {
		a.path_mtu = c->mtu;
		a.dest_qp_num = rem->qpn;
		a.rq_psn = rem->psn;
		fill_ah_attr(c, rem, &a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
		if (p->conn.type == PT_CONN_RC) {
			a.max_dest_rd_atomic = 1;
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
	for (int i = 0; i < c->num_qps; i++) {
		if (to_rtr_rts(c, i, will_send))
			return -1;
		c->qps[i].remote_qpn = c->rem_keys[i].qpn;
		/* UD senders need an AH before any WR is built (facts 4.2). */
		if (c->p->conn.type == PT_CONN_UD && will_send) {
			struct ibv_ah_attr ah;

			fill_ah_attr(c, &c->rem_keys[i], &ah);
			c->qps[i].ah = ibv_create_ah(c->pd, &ah);
			if (!c->qps[i].ah) {
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
	uint64_t cycle = (uint64_t)c->page_size, step;

	if (c->size > cycle / 2)
		return 0;
	step = (c->size + (uint64_t)c->cache_line - 1) / (uint64_t)c->cache_line * (uint64_t)c->cache_line;
	if (step < (uint64_t)c->cache_line)
		step = (uint64_t)c->cache_line;
	return (size_t)((k % (cycle / step)) * step);
}

int pt_post_recv(struct pt_ctx *c, int i, uint64_t n)
{
	struct pt_qp *q = &c->qps[i];
	bool ud = c->p->conn.type == PT_CONN_UD;
	/* UD: the 40-byte GRH lands first; keep the payload cache-line aligned. */
	size_t base = ud ? (size_t)c->cache_line - PT_UD_GRH : 0;

	for (uint64_t j = 0; j < n; j++) {
		uint64_t k = q->recv_posted;
		struct ibv_sge sge = {
			.addr = (uintptr_t)(q->recv_buf + base + (ud ? 0 : cycle_offset(c, k))),
			.length = (uint32_t)(c->size + (ud ? PT_UD_GRH : 0)),
			.lkey = c->mr->lkey,
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
		q->recv_posted++;
	}
	return 0;
}

/* WR k of a run is signaled every cq_mod-th and at the last one, so a
 * completion retires every earlier WR of its QP (FIFO). */
static bool signaled(const struct pt_ctx *c, uint64_t k, uint64_t iters)
{
	return (k + 1) % (uint64_t)c->cq_mod == 0 || (iters && k + 1 == iters);
}

static int post_send_new(struct pt_ctx *c, int i, unsigned n, uint64_t iters)
{
	struct pt_qp *q = &c->qps[i];
	struct ibv_qp_ex *qx = q->qpx;
	bool ud = c->p->conn.type == PT_CONN_UD;
	bool inl = c->size <= (uint64_t)c->inline_size;

	ibv_wr_start(qx);
	for (unsigned j = 0; j < n; j++) {
		uint64_t k = q->posted + j;
		void *addr = q->send_buf + cycle_offset(c, k);

		qx->wr_id = ((uint64_t)i << WRID_QP_SHIFT) | (k & WRID_IDX_MASK);
		qx->wr_flags = (signaled(c, k, iters) ? IBV_SEND_SIGNALED : 0) |
			       (inl ? IBV_SEND_INLINE : 0);
		ibv_wr_send(qx);
		/* Setters patch the WR the builder just started: builder first. */
		if (ud)
			ibv_wr_set_ud_addr(qx, q->ah, q->remote_qpn, PT_QKEY);
		if (inl)
			ibv_wr_set_inline_data(qx, addr, (size_t)c->size);
		else
			ibv_wr_set_sge(qx, c->mr->lkey, (uintptr_t)addr, (uint32_t)c->size);
	}
	return ibv_wr_complete(qx);
}

static int post_send_old(struct pt_ctx *c, int i, unsigned n, uint64_t iters)
{
	enum { MAX_CHAIN = 64 };
	struct pt_qp *q = &c->qps[i];
	struct ibv_send_wr wr[MAX_CHAIN], *bad;
	struct ibv_sge sge[MAX_CHAIN];
	bool inl = c->size <= (uint64_t)c->inline_size;
	unsigned done = 0;

	while (done < n) {
		unsigned m = n - done > MAX_CHAIN ? MAX_CHAIN : n - done;
		int rc;

		for (unsigned j = 0; j < m; j++) {
			uint64_t k = q->posted + done + j;

			sge[j] = (struct ibv_sge){
				.addr = (uintptr_t)(q->send_buf + cycle_offset(c, k)),
				.length = (uint32_t)c->size,
				.lkey = c->mr->lkey,
			};
			wr[j] = (struct ibv_send_wr){
				.wr_id = ((uint64_t)i << WRID_QP_SHIFT) | (k & WRID_IDX_MASK),
				.next = j + 1 < m ? &wr[j + 1] : NULL,
				.sg_list = &sge[j],
				.num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = (signaled(c, k, iters) ? IBV_SEND_SIGNALED : 0) |
					      (inl ? IBV_SEND_INLINE : 0),
			};
			if (c->p->conn.type == PT_CONN_UD) {
				wr[j].wr.ud.ah = q->ah;
				wr[j].wr.ud.remote_qpn = q->remote_qpn;
				wr[j].wr.ud.remote_qkey = PT_QKEY;
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
	int rc = c->qps[i].qpx ? post_send_new(c, i, n, iters) : post_send_old(c, i, n, iters);

	if (rc) {
		fprintf(stderr, " Couldn't post send on QP %d: %s (posted %llu)\n", i, strerror(rc),
			(unsigned long long)c->qps[i].posted);
		return -1;
	}
	c->qps[i].posted += n;
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
