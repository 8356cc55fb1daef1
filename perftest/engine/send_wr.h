/* SPDX-License-Identifier: BSD-2-Clause */
/* A send WR of a run, step by step: what WR k moves and its flags (the
 * run's send plan, set at a QP's first post: post.c) and the new post API's
 * builder for the tool's verb. Inline, for post.c's general path and the
 * BW loop's one-WR posts (run_bw.c), which build it in the loop. */
#ifndef PT_SEND_WR_H
#define PT_SEND_WR_H
#include "loop.h"

/* What WR k of QP i moves: the local buffer, its length, and for RDMA
 * verbs the peer's address (its advertised region, cycled like ours). */
struct pt_wr_target {
	void *local;
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t lkey;              /* the null MR's with --use-null-mr */
};

/* WR k of QP q (the next one, k > 0 or the plan set): its target, and its
 * flags. WR k of a run is signaled every cq_mod-th and at the last one, so
 * a completion retires every earlier WR of its QP (FIFO). */
static inline __attribute__((always_inline)) unsigned pt_send_next(const struct pt_loop *l,
								    struct pt_qp *q, uint64_t k,
								    uint64_t iters,
								    struct pt_wr_target *t)
{
	const struct pt_send_plan *p = &l->res->send_plan;
	size_t off = q->send_off;
	unsigned flags = p->flags;

	t->local = q->send_buf + off;
	t->len = p->len;
	t->raddr = q->remote_addr + off;
	t->rkey = q->remote_rkey;
	t->lkey = q->send_lkey;
	off += p->step;
	q->send_off = off == p->wrap ? 0 : off;
	if (q->send_unsig == 0) {
		q->send_unsig = (uint32_t)l->run->cq_mod - 1;
		flags |= IBV_SEND_SIGNALED;
	} else {
		q->send_unsig--;
		if (k + 1 == iters)
			flags |= IBV_SEND_SIGNALED;
	}
	return flags;
}

/* The builder for the tool's verb (docs/upstream-behaviour.md §10: setters
 * follow the builder). */
static inline __attribute__((always_inline)) void pt_wr_build(enum ibv_wr_opcode op,
							       struct ibv_qp_ex *qx,
							       const struct pt_wr_target *t)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(qx, t->rkey, t->raddr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(qx, t->rkey, t->raddr, PT_IMM_DATA);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(qx, PT_IMM_DATA);
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(qx, t->rkey, t->raddr);
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		ibv_wr_atomic_cmp_swp(qx, t->rkey, t->raddr, 0, 0);
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		ibv_wr_atomic_fetch_add(qx, t->rkey, t->raddr, 1);
		break;
	default:
		ibv_wr_send(qx);
	}
}

/* The payload: inline (the plan's flag) or the SGE. */
static inline __attribute__((always_inline)) void pt_wr_payload(struct ibv_qp_ex *qx, unsigned flags,
								 const struct pt_wr_target *t)
{
	if (flags & IBV_SEND_INLINE)
		ibv_wr_set_inline_data(qx, t->local, t->len);
	else
		ibv_wr_set_sge(qx, t->lkey, (uintptr_t)t->local, t->len);
}

#endif
