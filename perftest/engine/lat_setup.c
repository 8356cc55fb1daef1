/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops' set-up and end (lat_loop.h): the run state, the
 * sample storage, which copy of a loop runs, the hooks' pair slots taken
 * again; out of the loops' files, none of it per iteration. */
#define PT_LOOP_VIEW_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lat_loop.h"

void pt_lat_start(struct lat_run *r, uint64_t now)
{
	const struct pt_loop_opts *o = &r->l->opt;
	const uint64_t s = 1000000000ull;

	r->started = true;
	r->t_sample = now + (uint64_t)o->margin_s * s;
	r->t_stop = now + (uint64_t)(o->duration_s - o->margin_s) * s;
	r->t_end = now + (uint64_t)o->duration_s * s;
}

/* The new post API's verbs that lat_post_send builds inline (no UD, no
 * immediate data); -1 when the run posts otherwise. */
static int lat_fast_op(const struct pt_loop *l)
{
	enum ibv_wr_opcode op = l->opt.opcode;

	if (!l->res->qps[0].qpx || l->opt.ud)
		return -1;
	return op == IBV_WR_RDMA_READ || op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND ||
		       op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP ?
		       (int)op :
		       -1;
}

/* 0, or -1 when the sample storage cannot be allocated (said on stderr). */
int pt_lat_init(struct lat_run *r, const struct pt_loop *l, struct pt_lat_meas *m)
{
	uint64_t iters = l->opt.iters;

	memset(r, 0, sizeof(*r));
	memset(m, 0, sizeof(*m));
	r->l = l;
	r->res = l->res;
	r->events = l->res->channel != NULL;
	r->m = m;
	r->duration = l->opt.duration;
	r->last_progress = pt_now_ns();
	r->stall_ns = l->opt.stall_ns;
	pt_lat_wrs_init(l, &r->wrs);
	r->plain_repost = l->opt.recv_post_list <= 1 && !l->res->srq;
	r->plain_poll = !r->events && !l->res->hwts;
	r->cq[0] = l->res->send_cq;
	r->cq[1] = l->res->recv_cq;
	r->fast_op = lat_fast_op(l);
	/* stored, then the flag read: a signal before the store is seen here,
	 * one after it stores 0 (pt_interrupt) */
	r->bound = r->duration ? UINT64_MAX : iters;
	__atomic_store_n(&pt_lat_until, r->bound, __ATOMIC_RELAXED);
	if (pt_interrupted)
		__atomic_store_n(&pt_lat_until, 0, __ATOMIC_RELAXED);
	if (r->duration || iters > PT_LAT_RAW_MAX) {
		m->hist = pt_hist_new();
		if (!m->hist) {
			fprintf(stderr, " Couldn't allocate the latency histogram\n");
			return -1;
		}
		return 0;
	}
	/* without the TSC a plain copy's stamp is a struct timespec (m->ts) */
	m->stamps = calloc(pt_now_raw_fixed_ok() ? iters : 2 * iters, sizeof(uint64_t));
	if (!m->stamps) {
		fprintf(stderr, " Couldn't allocate %llu timestamps\n", (unsigned long long)iters);
		return -1;
	}
	return 0;
}

enum lat_copy pt_lat_copy_of(const struct lat_run *r, enum ibv_wr_opcode op)
{
	bool plain = !r->duration && !r->m->hist && !r->res->hwts && r->l->opt.lat_gap_ns == 0 &&
		     (r->fast_op == (int)op || !r->res->qps[0].qpx) && !r->l->opt.imm &&
		     (op != IBV_WR_SEND || r->plain_repost);

	if (!plain)
		return LAT_GENERAL;
	return r->events ? LAT_PLAIN_EVENTS : LAT_PLAIN;
}

enum lat_form pt_lat_form_of(const struct lat_run *r, enum ibv_wr_opcode op)
{
	if (!r->res->qps[0].qpx)
		return LAT_FORM_OLD;
	return lat_op_may_inline(op) && r->wrs.inl ? LAT_FORM_INLINE : LAT_FORM_SGE;
}

void pt_lat_meas_ns(struct pt_lat_meas *m)
{
	if (!m->raw)
		return;
	if (m->ts)   /* in place: word k is written once stamp k (words 2k, 2k + 1) is read */
		for (uint64_t k = 0; k < m->n; k++)
			m->stamps[k] = pt_timespec_ns((const struct timespec *)(const void *)m->stamps + k);
	else
		for (uint64_t k = 0; k < m->n; k++)
			m->stamps[k] = pt_raw_to_ns(m->stamps[k]);
	m->raw = m->ts = false;
}

int pt_lat_end(struct lat_run *r)
{
	if (r->duration)
		r->m->elapsed_ns = r->t_stop - r->t_sample;
	return 0;
}


struct pt_hook_pairs pt_lat_pairs_retake(const struct lat_run *r,
									struct pt_hook_pairs h,
									uint64_t i, unsigned need,
									bool reposts)
{
	const struct pt_qp *q = &r->res->qps[0];

	pt_hook_pairs_give(&h, i, reposts, q->recv_posted, false);
	if (!r->res->hwts && (!reposts || r->plain_repost))
		pt_hook_pairs_take(&h, need, i, pt_wrid(0, 0), reposts, q->recv_posted, pt_wrid(0, 0),
				   r->wrs.recv_sge.length);
	return h;
}

void pt_lat_meas_free(struct pt_lat_meas *m)
{
	free(m->stamps);
	pt_hist_free(m->hist);
	memset(m, 0, sizeof(*m));
}
