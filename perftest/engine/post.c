/* SPDX-License-Identifier: BSD-2-Clause */
/* The two post paths (ibv_wr_* and the old ibv_post_send) and the receive
 * post, over the loop view alone (loop.h). */
#define PT_LOOP_VIEW_ONLY
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "loop.h"
#include "send_wr.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

/* Small messages walk through the region one cache-line-rounded step at a
 * time, wrapping after a page (cycle buffer), as upstream does. */
static size_t cycle_offset(const struct pt_loop *l, uint64_t k)
{
	const struct pt_run *run = l->run;
	uint64_t cycle = (uint64_t)run->page_size, line = (uint64_t)run->cache_line, step;

	/* latency tests keep one address: write_lat polls its last byte */
	if (run->size > cycle / 2 || l->opt.lat)
		return 0;
	step = (run->size + line - 1) / line * line;
	if (step < line)
		step = line;
	return (size_t)((k % (cycle / step)) * step);
}

/* Post c receives on QP i as one chain (one ibv_post_recv call). */
static int post_recv_chain(const struct pt_loop *l, int i, unsigned c, struct ibv_recv_wr *wr,
			   struct ibv_sge *sge)
{
	struct pt_qp *q = &l->res->qps[i];
	bool ud = l->opt.ud;
	/* UD: the 40-byte GRH lands first; keep the payload cache-line aligned. */
	size_t base = ud ? (size_t)l->run->cache_line - PT_UD_GRH : 0;
	struct ibv_recv_wr *bad = NULL;
	int rc;

	for (unsigned j = 0; j < c; j++) {
		uint64_t k = q->recv_posted + j;

		sge[j] = (struct ibv_sge){
			.addr = (uintptr_t)(q->recv_buf + base + (ud ? 0 : cycle_offset(l, k))),
			.length = (uint32_t)(l->run->size + (ud ? PT_UD_GRH : 0)),
			.lkey = pt_qp_lkey(l->res, q),
		};
		wr[j] = (struct ibv_recv_wr){
			.wr_id = pt_wrid(i, k), .sg_list = &sge[j], .num_sge = 1,
			.next = j + 1 < c ? &wr[j + 1] : NULL,
		};
	}
	/* with an SRQ, wr_id still names QP i: its share of the receives */
	rc = l->res->srq ? ibv_post_srq_recv(l->res->srq, wr, &bad) : ibv_post_recv(q->qp, wr, &bad);
	if (rc) {
		fprintf(stderr, " Couldn't post receive %llu on QP %d: %s\n",
			(unsigned long long)(bad ? pt_wrid_index(bad->wr_id) : q->recv_posted), i,
			strerror(rc));
		return -1;
	}
	PT_PROBE_POST_RECV(i, q->qp->qp_num, q->recv_posted, c, wr[0].wr_id, pt_now_ns());
	for (unsigned j = 0; j < c; j++) {
		pt_hook_post((uint32_t)i, q->recv_posted, 1, PT_PLUGIN_OP_RECV, wr[j].wr_id, 1,
			     sge[j].length, 0, 0, PT_HOOK_NOW);
		q->recv_posted++;
	}
	return 0;
}

int pt_post_recv(const struct pt_loop *l, int i, uint64_t n)
{
	unsigned list = l->opt.recv_post_list > 1 ? l->opt.recv_post_list : 1;
	struct ibv_recv_wr one_wr, *wr = &one_wr;
	struct ibv_sge one_sge, *sge = &one_sge;
	int rc = 0;

	if (l->res->qps[i].recv_posted == 0)
		l->res->qps[i].recv_owed = 0;  /* a run's first receives */
	if (list > 1 && n > 1) {
		wr = calloc(list, sizeof(*wr));
		sge = calloc(list, sizeof(*sge));
		if (!wr || !sge) {
			fprintf(stderr, " Couldn't allocate a receive list of %u\n", list);
			rc = -1;
		}
	} else {
		list = 1;
	}
	/* --recv_post_list: whole lists of N WRs per call, the rest last */
	while (!rc && n) {
		unsigned c = n < list ? (unsigned)n : list;

		rc = post_recv_chain(l, i, c, wr, sge);
		n -= c;
	}
	if (wr != &one_wr) {
		free(wr);
		free(sge);
	}
	return rc;
}

int pt_recv_repost(const struct pt_loop *l, int i, bool unlimited)
{
	struct pt_qp *q = &l->res->qps[i];
	uint64_t list = l->opt.recv_post_list > 1 ? l->opt.recv_post_list : 1;
	uint64_t left = unlimited ? UINT64_MAX : l->opt.iters - q->recv_posted;
	uint64_t n;

	if (!unlimited && q->recv_posted >= l->opt.iters)
		return 0;
	q->recv_owed++;
	if (q->recv_owed < (list < left ? list : left))
		return 0;
	n = q->recv_owed < left ? q->recv_owed : left;
	q->recv_owed = 0;
	return pt_post_recv(l, i, n);
}

static bool is_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

static void wr_target(const struct pt_loop *l, int i, uint64_t k, struct pt_wr_target *t)
{
	const struct pt_qp *q = &l->res->qps[i];
	size_t off = cycle_offset(l, k);

	t->local = q->send_buf + off;
	t->len = is_atomic(l->opt.opcode) ? 8 : (uint32_t)l->run->size;
	t->raddr = q->remote_addr + off;
	t->rkey = q->remote_rkey;
	t->lkey = pt_qp_send_lkey(l->res, q);
}

/* SEND and WRITE carry their payload inline up to the inline size. */
static bool use_inline(const struct pt_loop *l)
{
	enum ibv_wr_opcode op = l->opt.opcode;

	return (op == IBV_WR_SEND || op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND_WITH_IMM ||
		op == IBV_WR_RDMA_WRITE_WITH_IMM) &&
	       l->run->size <= (uint64_t)l->run->inline_size;
}

/* A run's first post on QP i: the shared plan (the same for every QP of
 * the run) and the QP's place. The cycle walk and the signaling rule then
 * cost an add and a countdown per WR, not two divisions and a modulo. */
void pt_send_plan_start(const struct pt_loop *l, struct pt_qp *q)
{
	struct pt_send_plan *p = &l->res->send_plan;
	const struct pt_run *run = l->run;
	size_t step = cycle_offset(l, 1);

	p->step = step;
	/* WR k's offset is (k % slots) * step (cycle_offset) */
	p->wrap = step ? (size_t)run->page_size / step * step : 0;
	p->len = is_atomic(l->opt.opcode) ? 8 : (uint32_t)run->size;
	p->flags = use_inline(l) ? IBV_SEND_INLINE : 0;
	q->send_off = 0;
	q->send_unsig = (uint32_t)run->cq_mod - 1;
	q->send_lkey = pt_qp_send_lkey(l->res, q);
}

static int post_send_new(const struct pt_loop *l, int i, unsigned n, uint64_t iters)
{
	struct pt_qp *q = &l->res->qps[i];
	struct ibv_qp_ex *qx = q->qpx;

	ibv_wr_start(qx);
	for (unsigned j = 0; j < n; j++) {
		uint64_t k = q->posted + j;
		struct pt_wr_target t;
		unsigned flags = pt_send_next(l, q, k, iters, &t);

		qx->wr_flags = flags;
		qx->wr_id = pt_wrid(i, k);
		pt_wr_build(l->opt.opcode, qx, &t);
		if (l->opt.ud)
			ibv_wr_set_ud_addr(qx, q->ah, q->remote_qpn, q->remote_qkey);
		pt_wr_payload(qx, flags, &t);
	}
	return ibv_wr_complete(qx);
}

/* The old API: the remote part of WR j (UD address, RDMA or atomic target). */
static void old_remote(const struct pt_loop *l, const struct pt_qp *q, const struct pt_wr_target *t,
		       struct ibv_send_wr *wr)
{
	enum ibv_wr_opcode op = l->opt.opcode;

	if (l->opt.ud) {
		wr->wr.ud.ah = q->ah;
		wr->wr.ud.remote_qpn = q->remote_qpn;
		wr->wr.ud.remote_qkey = q->remote_qkey;
	} else if (op == IBV_WR_RDMA_WRITE || op == IBV_WR_RDMA_WRITE_WITH_IMM ||
		   op == IBV_WR_RDMA_READ) {
		wr->wr.rdma.remote_addr = t->raddr;
		wr->wr.rdma.rkey = t->rkey;
	} else if (is_atomic(op)) {
		wr->wr.atomic.remote_addr = t->raddr;
		wr->wr.atomic.rkey = t->rkey;
		wr->wr.atomic.compare_add = op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0;
		wr->wr.atomic.swap = 0;
	}
}

void pt_send_wr_old(const struct pt_loop *l, int i, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	const struct pt_send_plan *p = &l->res->send_plan;
	struct pt_qp *q = &l->res->qps[i];
	struct pt_wr_target t = {
		.local = q->send_buf + q->send_off, .len = p->len, .raddr = q->remote_addr + q->send_off,
		.rkey = q->remote_rkey, .lkey = q->send_lkey,
	};

	*sge = (struct ibv_sge){ .addr = (uintptr_t)t.local, .length = t.len, .lkey = t.lkey };
	*wr = (struct ibv_send_wr){
		.wr_id = pt_wrid(i, q->posted), .sg_list = sge, .num_sge = 1,
		.opcode = l->opt.opcode, .send_flags = p->flags,
	};
	old_remote(l, q, &t, wr);
	if (l->opt.imm)
		wr->imm_data = htobe32(PT_IMM_DATA);
}

static int post_send_old(const struct pt_loop *l, int i, unsigned n, uint64_t iters)
{
	enum { MAX_CHAIN = 64 };
	struct pt_qp *q = &l->res->qps[i];
	struct ibv_send_wr wr[MAX_CHAIN], *bad;
	struct ibv_sge sge[MAX_CHAIN];
	unsigned done = 0;

	while (done < n) {
		unsigned m = n - done > MAX_CHAIN ? MAX_CHAIN : n - done;
		int rc;

		for (unsigned j = 0; j < m; j++) {
			uint64_t k = q->posted + done + j;
			struct pt_wr_target t;
			unsigned flags = pt_send_next(l, q, k, iters, &t);

			sge[j] = (struct ibv_sge){
				.addr = (uintptr_t)t.local, .length = t.len, .lkey = t.lkey,
			};
			wr[j] = (struct ibv_send_wr){
				.wr_id = pt_wrid(i, k),
				.next = j + 1 < m ? &wr[j + 1] : NULL,
				.sg_list = &sge[j],
				.num_sge = 1,
				.opcode = l->opt.opcode,
				.send_flags = flags,
			};
			old_remote(l, q, &t, &wr[j]);
			if (l->opt.imm)
				wr[j].imm_data = htobe32(PT_IMM_DATA);
		}
		rc = ibv_post_send(q->qp, wr, &bad);
		if (rc)
			return rc;
		done += m;
	}
	return 0;
}

int pt_post_send(const struct pt_loop *l, int i, unsigned n, uint64_t iters)
{
	struct pt_qp *q = &l->res->qps[i];
	int rc;

	if (q->posted == 0)
		pt_send_plan_start(l, q);
	rc = q->qpx ? post_send_new(l, i, n, iters) : post_send_old(l, i, n, iters);

	if (rc)
		return pt_post_send_failed(l, i, rc);
	q->posted += n;
	return 0;
}

int pt_post_send_failed(const struct pt_loop *l, int i, int rc)
{
	fprintf(stderr, " Couldn't post send on QP %d: %s (posted %llu)\n", i, strerror(rc),
		(unsigned long long)l->res->qps[i].posted);
	return -1;
}

/* ------------------------------------------------ the latency loops' WRs -- */

void pt_lat_wrs_init(const struct pt_loop *l, struct pt_lat_wrs *w)
{
	const struct pt_qp *q = &l->res->qps[0];
	size_t base = l->opt.ud ? (size_t)l->run->cache_line - PT_UD_GRH : 0;
	struct pt_wr_target t;

	memset(w, 0, sizeof(*w));
	/* WR 0 of a one-WR run: what pt_post_send(l, 0, 1, 1) builds each time */
	wr_target(l, 0, 0, &t);
	w->inl = use_inline(l);
	w->raddr = t.raddr;
	w->rkey = t.rkey;
	w->send_sge = (struct ibv_sge){ .addr = (uintptr_t)t.local, .length = t.len, .lkey = t.lkey };
	w->send = (struct ibv_send_wr){
		.wr_id = pt_wrid(0, 0), .sg_list = &w->send_sge, .num_sge = 1,
		.opcode = l->opt.opcode,
		.send_flags = IBV_SEND_SIGNALED | (w->inl ? IBV_SEND_INLINE : 0),
	};
	old_remote(l, q, &t, &w->send);
	if (l->opt.imm)
		w->send.imm_data = htobe32(PT_IMM_DATA);
	/* what post_recv_chain builds for one receive (one address: cycle_offset) */
	w->recv_sge = (struct ibv_sge){
		.addr = (uintptr_t)(q->recv_buf + base),
		.length = (uint32_t)(l->run->size + (l->opt.ud ? PT_UD_GRH : 0)),
		.lkey = pt_qp_lkey(l->res, q),
	};
	w->recv = (struct ibv_recv_wr){ .sg_list = &w->recv_sge, .num_sge = 1 };
}

int pt_lat_post_failed(int rc)
{
	fprintf(stderr, " Couldn't post send on QP 0: %s (posted 0)\n", strerror(rc));
	return -1;
}

int pt_lat_post_send(const struct pt_loop *l, const struct pt_lat_wrs *w)
{
	struct pt_qp *q = &l->res->qps[0];
	struct ibv_send_wr *bad;
	int rc;

	if (q->qpx) {
		struct ibv_qp_ex *qx = q->qpx;
		const struct pt_wr_target t = { .raddr = w->raddr, .rkey = w->rkey };

		ibv_wr_start(qx);
		qx->wr_id = w->send.wr_id;
		qx->wr_flags = w->send.send_flags;
		pt_wr_build(l->opt.opcode, qx, &t);
		if (l->opt.ud)
			ibv_wr_set_ud_addr(qx, q->ah, q->remote_qpn, q->remote_qkey);
		if (w->inl)
			ibv_wr_set_inline_data(qx, (void *)(uintptr_t)w->send_sge.addr, w->send_sge.length);
		else
			ibv_wr_set_sge(qx, w->send_sge.lkey, w->send_sge.addr, w->send_sge.length);
		rc = ibv_wr_complete(qx);
	} else {
		rc = ibv_post_send(q->qp, (struct ibv_send_wr *)&w->send, &bad);
	}
	if (rc)
		return pt_lat_post_failed(rc);
	/* per-iteration numbering: the signaling rule restarts every WR */
	q->posted = 1;
	return 0;
}

int pt_lat_repost(const struct pt_loop *l, struct pt_lat_wrs *w, bool unlimited)
{
	struct pt_qp *q = &l->res->qps[0];
	struct ibv_recv_wr *bad = NULL;
	int rc;

	if (l->opt.recv_post_list > 1)
		return pt_recv_repost(l, 0, unlimited);
	if (!unlimited && q->recv_posted >= l->opt.iters)
		return 0;
	w->recv.wr_id = pt_wrid(0, q->recv_posted);
	rc = l->res->srq ? ibv_post_srq_recv(l->res->srq, &w->recv, &bad) :
			   ibv_post_recv(q->qp, &w->recv, &bad);
	if (rc) {
		fprintf(stderr, " Couldn't post receive %llu on QP 0: %s\n",
			(unsigned long long)q->recv_posted, strerror(rc));
		return -1;
	}
	PT_PROBE_POST_RECV(0, q->qp->qp_num, q->recv_posted, 1, w->recv.wr_id, pt_now_ns());
	pt_hook_post(0, q->recv_posted, 1, PT_PLUGIN_OP_RECV, w->recv.wr_id, 1, w->recv_sge.length, 0,
		     0, PT_HOOK_NOW);
	q->recv_posted++;
	return 0;
}

int pt_check_imm(const struct pt_loop *l, const struct ibv_wc *wc)
{
	if (!l->opt.imm || (wc->wc_flags & IBV_WC_WITH_IMM))
		return 0;
	fprintf(stderr, " Completion without immediate data on QP %d (wr_id %llu, opcode %d):"
		" the peer must send with immediate data too\n", pt_wrid_qp(wc->wr_id),
		(unsigned long long)pt_wrid_index(wc->wr_id), (int)wc->opcode);
	return -1;
}
