/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW sender's posting (run_bw.c's loops): each QP's window filled as
 * far as tx_depth allows, per WR the post time for the peak tracker and the
 * hooks. Two paths: post_burst, the tools' default (one WR per post, no
 * pacer, not UD; either post API), built here with the send plan in
 * locals; post_general, pt_post_send per post (post lists, UD, the
 * pacer). Each is built with the hooks off and on, so no loop tests them
 * per WR. */
#define PT_LOOP_VIEW_ONLY
#include <stdio.h>
#include "util/clock.h"
#include "loop.h"
#include "bw_post.h"
#include "send_wr.h"
#include "perftest/report/bw_peak.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

/* The peak's state outgrew memory (it holds the WRs in flight and a
 * convex hull: never in practice). */
int pt_bw_peak_nomem(void)
{
	fprintf(stderr, " Out of memory for the BW peak\n");
	return -1;
}

/* The post event of what pt_hook_post_one does not stand for: a post list
 * or the last WR (out of line, so the loop keeps its registers). */
static __attribute__((noinline, cold)) void hook_post_list(const struct pt_loop *l, int i,
							    uint64_t first, uint64_t iters, uint64_t t)
{
	unsigned pl = l->opt.post_list;
	bool last = iters && first + pl == iters;

	pt_hook_post((uint32_t)i, first, pl, pt_plugin_op_of_wr(l->opt.opcode), pt_wrid(i, first), 1,
		     (uint32_t)l->run->size, (uint32_t)l->run->cq_mod,
		     last ? PT_PLUGIN_POST_LAST_SIGNALED : 0, t);
}

/* post_window's WRs on QP i when each goes alone (no post list), not UD,
 * and no pacer, the send plan set, up to the window's
 * end and before the run's last WR (post_burst posts that one as the other
 * cases do: it is signaled and the hooks' post_one does not stand for it):
 * the plan's walk (send_wr.h) in locals, the QP's place written back once;
 * the next signaled WR a compare, not a countdown. op and inl (1 inline, 0
 * an SGE, -1 the plan's flag says) are constants of each copy, so the
 * builder and the payload are one call each. With the old post API (old),
 * one WR built once (pt_send_wr_old), its addresses, wr_id and flags
 * stored per WR. As pt_post_send posts them, without its call, loop and
 * loads per WR. */
static inline __attribute__((always_inline)) int post_burst_as(const struct pt_loop *l,
							       struct pt_bw_meas *m, int i,
							       uint64_t end, uint64_t *posted_total,
							       uint64_t **slot,
							       const enum ibv_wr_opcode op, const int inl,
							       const bool old)
{
	struct pt_qp *q = &l->res->qps[i];
	const bool hooks = slot != NULL;
	uint64_t *pos = hooks ? *slot : NULL;
	struct ibv_qp_ex *qx = q->qpx;
	struct pt_bw_peak *peak = m->peak;
	const struct pt_send_plan *plan = &l->res->send_plan;
	const uint64_t cq_mod = (uint64_t)l->run->cq_mod;
	uint64_t k = q->posted, first = k;
	uint64_t sig_at = k + q->send_unsig;    /* the cq_mod rule's next signaled WR */
	uint8_t *const buf = q->send_buf;
	const uint64_t raddr = q->remote_addr;
	size_t off = q->send_off;
	const size_t step = plan->step, wrap = plan->wrap;
	const unsigned flags0 = plan->flags;
	struct pt_wr_target t = { .len = plan->len, .rkey = q->remote_rkey, .lkey = q->send_lkey };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int rc = 0;

	if (old)
		pt_send_wr_old(l, i, &wr, &sge);

	for (; k < end; k++) {
		uint64_t now = PT_HOOK_NOW;
		unsigned flags = flags0;

		if (peak || hooks) {   /* one clock read for the peak and the hooks */
			now = pt_now_ns();
			if (peak && pt_bw_peak_post(peak, now)) {
				rc = pt_bw_peak_nomem();
				break;
			}
		}
		if (k == sig_at) {
			sig_at = k + cq_mod;
			flags |= IBV_SEND_SIGNALED;
		}
		t.local = buf + off;
		t.raddr = raddr + off;
		if (old) {   /* an atomic's remote address is where RDMA's is */
			sge.addr = (uintptr_t)t.local;
			if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM)
				wr.wr.rdma.remote_addr = t.raddr;
			wr.wr_id = pt_wrid(i, k);
			wr.send_flags = flags;
			rc = ibv_post_send(q->qp, &wr, &bad);
		} else {
			ibv_wr_start(qx);
			qx->wr_flags = flags;
			qx->wr_id = pt_wrid(i, k);
			pt_wr_build(op, qx, &t);
			if (inl < 0)
				pt_wr_payload(qx, flags, &t);
			else if (inl)
				ibv_wr_set_inline_data(qx, t.local, t.len);
			else
				ibv_wr_set_sge(qx, t.lkey, (uintptr_t)t.local, t.len);
			rc = ibv_wr_complete(qx);
		}
		if (__builtin_expect(rc != 0, 0)) {
			rc = pt_post_send_failed(l, i, rc);
			break;
		}
		off += step;
		if (off == wrap)
			off = 0;
		PT_PROBE_POST(i, q->qp->qp_num, k, 1, pt_wrid(i, k), now ? now : pt_now_ns());
		if (hooks)   /* the slots lent hold [first, end) (post_burst) */
			*pos++ = now;
	}
	if (hooks)
		*slot = pos;
	q->posted = k;
	q->send_off = off;
	q->send_unsig = (uint32_t)(sig_at - k);
	*posted_total += k - first;
	return rc;
}

/* post_burst_as's copies: the tools' verbs (WRITE and SEND, inline or not;
 * READ; the two atomics) with their builder a constant, the rest (the
 * immediate-data verbs) as the run says. */
static inline __attribute__((always_inline)) int post_burst_op(const struct pt_loop *l,
							       struct pt_bw_meas *m, int i,
							       uint64_t end, uint64_t *posted_total,
							       uint64_t **slot)
{
	bool inl = l->res->send_plan.flags & IBV_SEND_INLINE;

	if (!l->res->qps[i].qpx) {   /* the old API: the plan's flags carry inline */
		switch (l->opt.opcode) {
		case IBV_WR_SEND:
			return post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_SEND, 0, true);
		case IBV_WR_RDMA_WRITE:
		case IBV_WR_RDMA_READ:
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
		case IBV_WR_ATOMIC_CMP_AND_SWP:   /* the same stores: one copy */
			return post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_RDMA_WRITE, 0, true);
		default:
			return post_burst_as(l, m, i, end, posted_total, slot, l->opt.opcode, 0, true);
		}
	}
	switch (l->opt.opcode) {
	case IBV_WR_RDMA_WRITE:
		return inl ? post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_RDMA_WRITE, 1, false) :
			     post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_RDMA_WRITE, 0, false);
	case IBV_WR_SEND:
		return inl ? post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_SEND, 1, false) :
			     post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_SEND, 0, false);
	case IBV_WR_RDMA_READ:
		return post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_RDMA_READ, 0, false);
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, false);
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		return post_burst_as(l, m, i, end, posted_total, slot, IBV_WR_ATOMIC_CMP_AND_SWP, 0, false);
	default:
		return post_burst_as(l, m, i, end, posted_total, slot, l->opt.opcode, -1, false);
	}
}

static inline __attribute__((always_inline)) int post_general(const struct pt_loop *l,
							      struct pt_bw_meas *m, int i,
							      uint64_t iters, uint64_t *posted_total,
							      struct pt_pacer *pace, const bool hooks,
							      unsigned pl, uint64_t one_until, uint64_t stop);

/* post_window's case for post_burst_as: its WRs up to the window's end, the
 * run's last WR through post_general. With the hooks on, each burst goes
 * as far as the post slots lent for it (their time a store per WR, no test);
 * where none are lent, one WR goes through post_general, whose hook call
 * may lend more. */
static inline __attribute__((always_inline)) int post_burst(const struct pt_loop *l,
							    struct pt_bw_meas *m, int i,
							    uint64_t iters, uint64_t *posted_total,
							    const bool hooks, uint64_t one_until)
{
	struct pt_qp *q = &l->res->qps[i];
	uint64_t end = q->completed + (uint64_t)l->run->tx_depth;
	uint64_t last = iters ? iters - 1 : UINT64_MAX;
	uint64_t stop = end < last ? end : last;
	int rc = 0;

	if (q->posted >= end || (iters && q->posted >= iters))
		return 0;
	if (q->posted == 0)
		pt_send_plan_start(l, q);
	if (!hooks) {
		if (q->posted < stop)
			rc = post_burst_op(l, m, i, stop, posted_total, NULL);
	} else {
		struct pt_plugin_post_slots *s = &pt_hooks_post_slots[i];

		while (!rc && q->posted < stop) {
			uint64_t k = q->posted;
			uint64_t room = s->next_seq == k && s->pos < s->lim ? (uint64_t)(s->lim - s->pos) : 0;

			if (room) {
				uint64_t *pos = s->pos;

				rc = post_burst_op(l, m, i, stop - k < room ? stop : k + room, posted_total,
						   &pos);
				s->pos = pos;   /* the slots given back: the tool moves pos and next_seq */
				s->next_seq = q->posted;
			} else {
				rc = post_general(l, m, i, iters, posted_total, NULL, true, 1, one_until, k + 1);
			}
		}
	}
	if (rc || q->posted < stop || q->posted >= end)
		return rc < 0 ? -1 : 0;
	return post_general(l, m, i, iters, posted_total, NULL, hooks, 1, one_until, UINT64_MAX);
}

/* post_window's WRs on QP i in the other cases (post lists, UD, the
 * pacer): pt_post_send per post. 0 when the window is full or the
 * run posted, 1 when the pacer says wait (nothing more this window), -1 on
 * error (said). The hooks' post slots are held across the window. */
static inline __attribute__((always_inline)) int post_general(const struct pt_loop *l,
							      struct pt_bw_meas *m, int i,
							      uint64_t iters, uint64_t *posted_total,
							      struct pt_pacer *pace, const bool hooks,
							      unsigned pl, uint64_t one_until, uint64_t stop)
{
	struct pt_qp *q = &l->res->qps[i];
	struct pt_plugin_post_slots *slots = hooks ? &pt_hooks_post_slots[i] : NULL;
	struct pt_hook_post_run hr = { NULL, NULL };
	int rc = 0;

	if (hooks)
		hr = pt_hook_post_run_take(slots, q->posted);
	while ((!iters || q->posted < iters) && q->posted < stop &&
	       q->posted + pl <= (uint64_t)l->run->tx_depth + q->completed) {
		uint64_t t = PT_HOOK_NOW, first = q->posted;

		/* the SW rate limiter; off, a NULL test that always goes one
		 * way. Its time is the post's stamp: a stamp read apart could
		 * fall a descheduling later than the pacer's decision and
		 * shorten the paced run's measured span (test_pace). */
		if (__builtin_expect(pace != NULL, 0)) {
			t = pt_now_ns();
			if (!pt_pacer_allow(pace, pl, t)) {
				rc = 1;
				break;
			}
		} else if (m->peak || hooks) {   /* one clock read for the peak and the hooks */
			t = pt_now_ns();
		}
		if (m->peak && pt_bw_peak_post(m->peak, t)) {
			rc = pt_bw_peak_nomem();
			break;
		}
		if (pt_post_send(l, i, pl, iters)) {
			rc = -1;
			break;
		}
		PT_PROBE_POST(i, q->qp->qp_num, first, pl, pt_wrid(i, first), t ? t : pt_now_ns());
		/* a plain WR, the bulk of the run, takes the cheaper hook */
		if (hooks) {
			if (first < one_until) {
				pt_hook_post_run_one(&hr, slots, (uint32_t)i, first, pt_wrid(i, first), t);
			} else {
				pt_hook_post_run_give(&hr, slots, first);
				hr = (struct pt_hook_post_run){ NULL, NULL };
				hook_post_list(l, i, first, iters, t);
			}
		}
		*posted_total += pl;
	}
	if (hooks)
		pt_hook_post_run_give(&hr, slots, q->posted);
	return rc;
}

/* Post on every QP as far as its window allows; hooks: the hooks are on;
 * one: post_burst's case. post_window below builds it four times, so no
 * loop tests either per WR. */
static inline __attribute__((always_inline)) int post_window_as(const struct pt_loop *l,
								struct pt_bw_meas *m,
								uint64_t iters,
								uint64_t *posted_total,
								struct pt_pacer *pace,
								const bool hooks, const bool one)
{
	unsigned pl = one ? 1 : l->opt.post_list;
	/* WRs below it take pt_hook_post_one: one per post, not the last (it
	 * is forced signaled); one compare per post */
	const uint64_t one_until = pl != 1 ? 0 : iters ? iters - 1 : UINT64_MAX;

	for (int i = 0; i < l->res->num_qps; i++) {
		int rc = one ? post_burst(l, m, i, iters, posted_total, hooks, one_until) :
			       post_general(l, m, i, iters, posted_total, pace, hooks, pl, one_until,
					    UINT64_MAX);

		if (rc)
			return rc > 0 ? 0 : -1;
	}
	return 0;
}

int pt_bw_post_window(const struct pt_loop *l, struct pt_bw_meas *m, uint64_t iters,
		      uint64_t *posted_total, struct pt_pacer *pace)
{
	const bool one = l->opt.post_list == 1 && !l->opt.ud && !pace;

	if (__builtin_expect(pt_hooks_on, 0))
		return one ? post_window_as(l, m, iters, posted_total, pace, true, true) :
			     post_window_as(l, m, iters, posted_total, pace, true, false);
	return one ? post_window_as(l, m, iters, posted_total, pace, false, true) :
		     post_window_as(l, m, iters, posted_total, pace, false, false);
}
