/* SPDX-License-Identifier: BSD-2-Clause */
/* Latency loops (docs/upstream-behaviour.md §5.5), one QP, one message in flight:
 *  - send_lat: ping-pong of SENDs; the client sends first.
 *  - write_lat: ping-pong through memory; each side writes its send count
 *    into the last payload byte and spins on the last byte of its own
 *    region; the server writes first.
 *  - read_lat / atomic_lat: the client alone, one READ or atomic at a time.
 * With -e (send, read and atomic) a side with nothing to poll sleeps on the
 * completion channel instead of spinning.
 * Iteration i's post time is stamped; samples are the differences of
 * consecutive stamps (one round trip each). Duration mode counts the round
 * trips that end inside the window and records them in a histogram
 * (bounded memory, results.h). Every wait is bounded, and ends early when
 * the peer's out-of-band connection closes (see run_bw.c). SIGINT ends the
 * run with the samples taken so far (m->interrupted). */
#define PT_LOOP_VIEW_ONLY
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/clock.h"
#include "util/err.h"
#include "loop.h"
#include "lat_run.h"
#include "perftest/report/results.h"
#include "fault.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

/* a plain copy's receives posted: at most -n (<= PT_LAT_RAW_MAX) plus the
 * first --rx-depth (<= 16384, options.c) */
_Static_assert(PT_LAT_RAW_MAX + 16384 <= PT_WRID_IDX_MASK,
	       "a plain copy's receive numbers fit a wr_id's index (lat_repost)");

static void lat_start(struct lat_run *r, uint64_t now)
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

/* A READ or an atomic is never inline (post.c, use_inline): no test. */
static inline bool lat_op_may_inline(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND;
}

/* 0, or -1 when the sample storage cannot be allocated (said on stderr). */
static int lat_init(struct lat_run *r, const struct pt_loop *l, struct pt_lat_meas *m)
{
	uint64_t iters = l->opt.iters;

	memset(r, 0, sizeof(*r));
	memset(m, 0, sizeof(*m));
	r->l = l;
	r->res = l->res;
	r->events = l->res->channel != NULL;
	if (r->events)
		r->channel_poll = (struct pollfd){ .fd = l->res->channel->fd, .events = POLLIN };
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
	atomic_store_explicit(&pt_lat_until, r->duration ? UINT64_MAX : iters, memory_order_relaxed);
	if (pt_interrupted)
		atomic_store_explicit(&pt_lat_until, 0, memory_order_relaxed);
	if (r->duration || iters > PT_LAT_RAW_MAX) {
		m->hist = pt_hist_new();
		if (!m->hist) {
			fprintf(stderr, " Couldn't allocate the latency histogram\n");
			return -1;
		}
		return 0;
	}
	m->stamps = calloc(iters, sizeof(uint64_t));
	if (!m->stamps) {
		fprintf(stderr, " Couldn't allocate %llu timestamps\n", (unsigned long long)iters);
		return -1;
	}
	return 0;
}

/* Which copy of a loop runs (struct lat_plain): the general one, or a
 * plain one, spinning or (-e) sleeping on the completion channel. */
enum lat_copy { LAT_GENERAL, LAT_PLAIN, LAT_PLAIN_EVENTS };

static enum lat_copy lat_copy_of(const struct lat_run *r, enum ibv_wr_opcode op)
{
	bool plain = !r->duration && !r->m->hist && !r->res->hwts && r->l->opt.lat_gap_ns == 0 &&
		     (r->fast_op == (int)op || !r->res->qps[0].qpx) && !r->l->opt.imm &&
		     (op != IBV_WR_SEND || r->plain_repost);

	if (!plain)
		return LAT_GENERAL;
	return r->events ? LAT_PLAIN_EVENTS : LAT_PLAIN;
}

/* A plain copy's start: its local; the send WR's id and flags, the same
 * for every WR of the run, and QP 0's post count, set once (the builder
 * reads them, nothing of the run writes them again: lat_post_send). */
static inline __attribute__((always_inline)) struct lat_plain lat_plain_of(struct lat_run *r,
									   bool events)
{
	struct ibv_qp_ex *qx = r->res->qps[0].qpx;

	r->lazy = true;
	r->res->qps[0].posted = 1;   /* what every post sets (lat_post_send); nothing reads it before */
	if (qx) {
		qx->wr_id = r->wrs.send.wr_id;
		qx->wr_flags = r->wrs.send.send_flags;
	}
	return (struct lat_plain){ .stamps = r->m->stamps, .cq = { r->cq[0], r->cq[1] },
				   .poll_fn = r->cq[0]->context->ops.poll_cq,
				   .arm_fn = r->cq[0]->context->ops.req_notify_cq, .qx = qx,
				   .q = &r->res->qps[0], .iters = r->l->opt.iters, .events = events };
}

/* Iteration i posts now: stamp it; in duration mode only the round trips
 * that end inside the window count. */
static inline __attribute__((always_inline)) void lat_stamp(struct lat_run *r, uint64_t i, uint64_t now,
							    const struct lat_plain *p)
{
	struct pt_lat_meas *m = r->m;
	bool keep = !r->duration;

	if (p) {   /* r->i and r->last_progress: lat_sync */
		p->stamps[i] = now;
		m->n = i + 1;
		return;
	}
	r->i = i;
	/* a post follows a completion (or the peer's write): progress enough
	 * for the stall rule, without a clock read per CQE */
	r->last_progress = now;
	if (r->duration) {
		if (!r->started)
			lat_start(r, now);
		keep = now >= r->t_sample && now < r->t_stop;
		m->iters += keep;
	}
	if (m->hist) {
		if (i && keep)
			pt_hist_record(m->hist, now - m->t_prev);
		m->t_prev = now;
	} else {
		m->stamps[i] = now;
	}
	m->n = i + 1;
}

/* How an iteration tells the hooks: not at all (hooks off), as pairs into
 * the slots it holds, or through the hooks' calls (events, or pairs the
 * hooks check). Each loop is built twice from one always-inline body, with
 * the hooks off (no test of them per WR) and on; the hooks' copy runs an
 * iteration as LAT_HELD when it holds QP 0's pair slots (hooks.h, struct
 * pt_hook_pairs, a local that stays in registers) with room for its pairs,
 * else as LAT_EVENTS: the first iterations, a full buffer, CQs with NIC
 * times. Held, a WR is a pair's stores. Send WRs are wr_id pt_wrid(0, 0)
 * and sequence i; send_lat's reposts are numbered by recv_posted.
 * Apart from the hooks, an iteration is watched or not (lat_watched): a
 * watched one tests each USDT probe's semaphore and makes the fault-test
 * stop; a plain copy's iterations past its first are not watched while no
 * tracer raised a per-WR probe's semaphore (one load per iteration). */
enum lat_hooks { LAT_OFF, LAT_HELD, LAT_EVENTS };

/* -e in a plain copy, the steady state inline: the CQ armed since its
 * last poll, one sleep, its event, the arming for the next CQE and one
 * poll that finds this one (1, the CQE in *wc). Anything else (the CQ not
 * armed, 100 ms without an event (idle: the stop rules' turn), another
 * CQ's event, an empty poll) goes the whole way, pt_lat_wait_events; a
 * failure is said (-1). */
static inline __attribute__((always_inline)) int wait_event_plain(struct lat_run *r, bool recv,
								  struct ibv_wc *wc, uint64_t *hw_ns,
								  const struct lat_plain *p)
{
	struct ibv_cq *ev_cq;
	bool idle = false;
	void *ev_ctx;
	int n;

	if (__builtin_expect(r->armed[recv], 1) &&
	    !(idle = __builtin_expect(poll(&r->channel_poll, 1, 100) != 1, 0))) {
		if (__builtin_expect(ibv_get_cq_event(r->res->channel, &ev_cq, &ev_ctx) != 0, 0))
			return pt_lat_event_failed();
		if (__builtin_expect(ev_cq != p->cq[recv], 0)) {
			pt_lat_event_count(r, ev_cq);
		} else {
			/* its event disarmed it: armed again at once (r->armed stays) */
			if (__builtin_expect(++r->unacked[recv] >= LAT_ACK_BATCH, 0))
				pt_lat_ack(r, recv);
			n = p->arm_fn(p->cq[recv], 0);
			if (__builtin_expect(n != 0, 0)) {
				r->armed[recv] = false;
				return pt_lat_arm_failed(n);
			}
			n = p->poll_fn(p->cq[recv], 1, wc);
			if (__builtin_expect(n == 1, 1))
				return 1;
			if (n < 0)
				return pt_lat_poll_failed(n);
		}
	}
	return pt_lat_wait_events(r, recv, wc, hw_ns, idle);
}

/* Poll the send or receive CQ (with -e: sleep between polls) until a
 * completion (1), the end of the run (0) or an error (-1). *hw_ns gets the
 * completion's NIC time when the CQ stamps them (pt_hw_ns); *t its poll
 * time with the hooks on (the out-of-line waits pass it in r->t_cqe). The
 * spinning case's first LAT_SPINS_PER_CHECK polls are inline: on a fast
 * link the completion comes within them, and the wait costs no call. */
static inline __attribute__((always_inline)) int wait_cq(struct lat_run *r, bool recv,
							 enum lat_hooks how, bool watched,
							 const char *side, struct ibv_wc *wc,
							 uint64_t *hw_ns, uint64_t *t,
							 const struct lat_plain *p)
{
	const bool hooks = how != LAT_OFF;
	int n;

	if (p ? p->events : __builtin_expect(r->events, 0)) {
		n = p ? wait_event_plain(r, recv, wc, hw_ns, p) :
			pt_lat_wait_events(r, recv, wc, hw_ns, false);
		if (__builtin_expect(n == 1, 1))
			return cqe_taken(r, recv, hooks, watched, side, wc, t);
		return n;
	} else {
		/* the hooks' copy polls once inline (the spin's registers would
		 * push its pair slots out of theirs), then spins out of line */
		const unsigned turns = hooks ? 1 : LAT_SPINS_PER_CHECK;

		n = poll_turns(r, recv, wc, hw_ns, turns, p);
		if (__builtin_expect(n == 1, 1))
			return cqe_taken(r, recv, hooks, watched, side, wc, t);
		n = pt_lat_wait_spin(r, recv, hooks, side, wc, hw_ns, n, turns);
	}
	*t = r->t_cqe;
	return n;
}

/* The next iteration is due: below the run's bound (-n, or 0 once a
 * signal came: pt_lat_until), and in duration mode inside the window. */
static inline __attribute__((always_inline)) bool more(const struct lat_run *r, uint64_t i,
							 const struct lat_plain *p)
{
	if (i >= atomic_load_explicit(&pt_lat_until, memory_order_relaxed))
		return false;
	return p || !r->duration || !(r->started && pt_now_ns() >= r->t_end);
}

static int lat_end(struct lat_run *r)
{
	if (r->duration)
		r->m->elapsed_ns = r->t_stop - r->t_sample;
	return 0;
}


static __attribute__((noinline)) struct pt_hook_pairs lat_pairs_retake(const struct lat_run *r,
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

/* The hooks' copy, at the top of iteration i: LAT_HELD with room for need
 * pairs, else LAT_EVENTS. reposts: the loop reposts receives (send_lat). */
static inline __attribute__((always_inline)) enum lat_hooks lat_pairs_ready(const struct lat_run *r,
									    struct pt_hook_pairs *h,
									    uint64_t i, unsigned need,
									    bool reposts)
{
	if (__builtin_expect(h->pos < h->lim, 1))
		return LAT_HELD;
	*h = lat_pairs_retake(r, *h, i, need, reposts);
	return h->held ? LAT_HELD : LAT_EVENTS;
}

/* The run's send WR. The loop's verb op (a constant in each loop) with the
 * new post API, when the run posts it plainly (lat_fast_op): inline, the
 * builder after wr_start and the setter after the builder
 * (docs/upstream-behaviour.md §10). The old post API inline (one call).
 * The rest, and a failed post (said), in post.c. */
static inline __attribute__((always_inline)) int lat_post_send(struct lat_run *r, enum ibv_wr_opcode op,
								const struct lat_plain *p)
{
	struct pt_qp *q = p ? p->q : &r->res->qps[0];
	const struct pt_lat_wrs *w = &r->wrs;
	struct ibv_send_wr *bad;
	int rc;

	if (p ? p->qx != NULL : __builtin_expect(r->fast_op == (int)op, 1)) {
		struct ibv_qp_ex *qx = p ? p->qx : q->qpx;

		ibv_wr_start(qx);
		if (!p) {   /* the plain copy set them (lat_plain_of) */
			qx->wr_id = w->send.wr_id;
			qx->wr_flags = w->send.send_flags;
		}
		/* the operands as post.c's builder gives them (send_wr.h) */
		if (op == IBV_WR_RDMA_READ)
			ibv_wr_rdma_read(qx, w->rkey, w->raddr);
		else if (op == IBV_WR_RDMA_WRITE)
			ibv_wr_rdma_write(qx, w->rkey, w->raddr);
		else if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
			ibv_wr_atomic_fetch_add(qx, w->rkey, w->raddr, 1);
		else if (op == IBV_WR_ATOMIC_CMP_AND_SWP)
			ibv_wr_atomic_cmp_swp(qx, w->rkey, w->raddr, 0, 0);
		else
			ibv_wr_send(qx);
		if (lat_op_may_inline(op) && w->inl)
			ibv_wr_set_inline_data(qx, (void *)(uintptr_t)w->send_sge.addr,
					       w->send_sge.length);
		else
			ibv_wr_set_sge(qx, w->send_sge.lkey, w->send_sge.addr, w->send_sge.length);
		rc = ibv_wr_complete(qx);
		if (__builtin_expect(rc != 0, 0))
			return pt_lat_post_failed(rc);
	} else if (q->qpx || __builtin_expect(ibv_post_send(q->qp, &r->wrs.send, &bad) != 0, 0)) {
		return pt_lat_post_send(r->l, &r->wrs);   /* or again, to say why */
	}
	if (!p)   /* the plain copy set it once (lat_plain_of) */
		q->posted = 1;   /* as pt_lat_post_send: the signaling rule restarts */
	return 0;
}

/* Post one send-queue WR (the tool's verb) at time now (the iteration's
 * stamp: the hook reads no clock of its own) and wait for its completion. */
static inline __attribute__((always_inline)) int post_one(struct lat_run *r, uint64_t i, uint64_t now,
							  const char *side, enum lat_hooks how, bool watched,
							  struct pt_hook_pairs *h, enum ibv_wr_opcode op,
							  const struct lat_plain *p, uint64_t *t_done)
{
	struct ibv_wc wc;
	uint64_t hw_ns, t_cqe = 0;
	int rc;

	if (lat_post_send(r, op, p))
		return -1;
	if (how == LAT_HELD)
		h->pos->t_first_ns = now;
	else if (how == LAT_EVENTS)
		pt_hook_pair_post(0, i, pt_wrid(0, 0), now);
	/* wr_id is pt_wrid(0, 0) every iteration: the sequence is i */
	if (watched)
		PT_PROBE_POST(0, r->l->res->qps[0].qp->qp_num, i, 1, pt_wrid(0, 0), pt_now_ns());
	rc = wait_cq(r, false, how, watched, side, &wc, &hw_ns, &t_cqe, p);
	if (rc != 1)
		return rc;
	if (how == LAT_HELD) {   /* held: no NIC times, and the CQE succeeded (rc 1) */
		h->pos->t_second_ns = t_cqe;
		h->pos++;
	} else if (how == LAT_EVENTS) {
		pt_hook_pair_wc(0, i, &wc, false, t_cqe, pt_hw_ns(r->l->res, &hw_ns, 0));
	}
	if (watched)
		PT_PROBE_COMPLETE(0, wc.qp_num, i, wc.wr_id, wc.status,
				  how != LAT_OFF ? t_cqe : pt_now_ns());
	if (t_done)
		*t_done = t_cqe;
	return rc;
}

/* send_lat's receive consumed (recv_one): repost it at time now, while
 * more are due. The plain case (one receive per call, no SRQ, no USDT
 * tracer) inline; pt_lat_repost the rest. Held, the time goes into the
 * receive pair just stored. */
static inline __attribute__((always_inline)) int lat_repost(struct lat_run *r, uint64_t now,
							    uint64_t i, enum lat_hooks how, bool watched,
							    struct pt_hook_pairs *h,
							    const struct lat_plain *p)
{
	struct pt_qp *q = p ? p->q : &r->res->qps[0];
	struct ibv_recv_wr *bad;

	if ((p || !r->duration) && q->recv_posted >= (p ? p->iters : r->l->opt.iters))
		return 0;   /* none due: the receive pair keeps no repost */
	if (__builtin_expect((!p && !r->plain_repost) || (watched && PT_PROBE_ON(post_recv)), 0))
		goto general;
	/* a plain copy's run is at most PT_LAT_RAW_MAX long: its receive
	 * numbers are their own wr_ids on QP 0, no mask */
	r->wrs.recv.wr_id = p ? q->recv_posted : pt_wrid(0, q->recv_posted);
	if (__builtin_expect(ibv_post_recv(q->qp, &r->wrs.recv, &bad) != 0, 0))
		goto general;   /* again, to say why */
	if (how == LAT_HELD)
		h->pos[-1].t_second_ns = now;
	else if (how == LAT_EVENTS)
		pt_hook_post(0, q->recv_posted, 1, PT_PLUGIN_OP_RECV, r->wrs.recv.wr_id, 1,
			     r->wrs.recv_sge.length, 0, 0, now);
	q->recv_posted++;
	return 0;
general:
	if (how == LAT_HELD)   /* the hooks may still store it into the receive pair */
		pt_hook_pairs_give(h, i, true, q->recv_posted, true);
	return pt_lat_repost(r->l, &r->wrs, r->duration);
}

/* send_lat: wait for the peer's message (iteration i's) and record it: 1,
 * or 2 when held and it went through the hooks instead (not the receive
 * the slots expect: the slots are given back, the rest of the iteration
 * tells the hooks); 0 at the end of the run, -1 on error. */
static inline __attribute__((always_inline)) int recv_one(struct lat_run *r, uint64_t i,
							  const char *side, enum lat_hooks how, bool watched,
							  struct pt_hook_pairs *h, uint64_t *t,
							  const struct lat_plain *p)
{
	const struct pt_loop *l = r->l;
	struct ibv_wc wc;
	uint64_t hw_ns;
	int rc = wait_cq(r, true, how, watched, side, &wc, &hw_ns, t, p);

	if (rc <= 0)
		return rc;
	if (how == LAT_HELD) {
		if (!pt_hook_pairs_recv(h, wc.wr_id, wc.byte_len, *t)) {
			pt_hook_pairs_give(h, i, true, l->res->qps[0].recv_posted, false);
			rc = 2;
		}
	}
	if (how == LAT_EVENTS || (how == LAT_HELD && rc == 2))   /* 2 is held's only */
		pt_hook_pair_wc(0, PT_PLUGIN_SEQ_UNKNOWN, &wc, true, *t, pt_hw_ns(l->res, &hw_ns, 0));
	if (watched)
		PT_PROBE_COMPLETE_RECV(0, wc.qp_num, pt_wrid_index(wc.wr_id), wc.wr_id, wc.status,
				       how != LAT_OFF ? *t : pt_now_ns());
	if (!p && __builtin_expect(l->opt.imm, 0) && pt_check_imm(l, &wc))
		return -1;
	return rc;
}

/* A run of one of the loops below: set up, loop, every event acked.
 * Inlined into each pt_run_lat_*, so the loop is a direct call. */
static inline __attribute__((always_inline)) int lat_run(const struct pt_loop *l, struct pt_lat_meas *m,
							 int (*loop)(struct lat_run *))
{
	struct lat_run r;

	if (lat_init(&r, l, m))
		return -1;
	return pt_lat_done(&r, loop(&r));
}

/* The end of a loop's copy: the pair slots given back (i: the next send
 * not completed; reposts: send_lat's), rc as the loop returns it. */
static inline __attribute__((always_inline)) int lat_out(struct lat_run *r, int rc, uint64_t i,
							 bool hooks, bool reposts, struct pt_hook_pairs *h)
{
	if (hooks)
		pt_hook_pairs_give(h, i, reposts, r->res->qps[0].recv_posted, false);
	if (rc > 0 && pt_interrupted)   /* the bound ended the loop (more) */
		rc = pt_lat_wait_ended(r, pt_now_ns());
	return rc < 0 ? -1 : lat_end(r);
}

/* send_lat's iteration i past its receive (recv: there was one, polled at
 * t_recv with the hooks on): the gap, the stamp, the repost, the send and
 * its CQE. */
static inline __attribute__((always_inline)) int lat_send_rest(struct lat_run *r, uint64_t i, bool recv,
							       const char *side, enum lat_hooks how, bool watched,
							       struct pt_hook_pairs *h,
							       const struct lat_plain *p, uint64_t t_recv)
{
	const struct pt_loop *l = r->l;
	uint64_t now;

	/* with the hooks on, the receive CQE's poll time, just read, is the
	 * stamp too (no gap between them): one clock read less per iteration */
	if (how != LAT_OFF && recv && (p || __builtin_expect(l->opt.lat_gap_ns == 0, 1))) {
		now = t_recv;
	} else {
		if (!p && __builtin_expect(l->opt.lat_gap_ns != 0, 0))
			pt_lat_gap(l->opt.lat_gap_ns);
		now = pt_now_ns();
	}
	/* the receive is reposted at the iteration's stamp, before its send:
	 * the peer's next message can come only after that */
	if (recv && lat_repost(r, now, i, how, watched, h, p))
		return -1;
	lat_stamp(r, i, now, p);
	return post_one(r, i, now, side, how, watched, h, IBV_WR_SEND, p, NULL);
}

/* send_lat's iteration i: the receive (recv: one is due), the rest. */
static inline __attribute__((always_inline)) int lat_send_iter(struct lat_run *r, uint64_t i, bool recv,
							       const char *side, enum lat_hooks how, bool watched,
							       struct pt_hook_pairs *h,
							       const struct lat_plain *p)
{
	uint64_t t_recv = 0;
	int rc;

	if (!recv)
		return lat_send_rest(r, i, false, side, how, watched, h, p, 0);
	rc = recv_one(r, i, side, how, watched, h, &t_recv, p);
	if (rc <= 0)
		return rc;
	if (how == LAT_HELD && rc == 2)   /* given back: the rest through the hooks */
		return lat_send_rest(r, i, true, side, LAT_EVENTS, watched, h, p, t_recv);
	return lat_send_rest(r, i, true, side, how, watched, h, p, t_recv);
}

/* An iteration is watched (enum lat_hooks) in the general copies, in a
 * plain copy's first (first: where a run's first CQE comes, for the
 * fault-test stop), and while a tracer raised a per-WR probe's semaphore. */
static inline __attribute__((always_inline)) bool lat_watched(const struct lat_plain *p, bool first)
{
	return !p || first || PT_PROBES_WR_ON();
}

/* send_lat's iteration i in the loop's copy: hooks off, or held or not. */
static inline __attribute__((always_inline)) int lat_send_hooks(struct lat_run *r, uint64_t i, bool recv,
								const char *side, bool hooks, bool watched,
								struct pt_hook_pairs *h,
								const struct lat_plain *p)
{
	if (!hooks)
		return lat_send_iter(r, i, recv, side, LAT_OFF, watched, h, p);
	if (lat_pairs_ready(r, h, i, 2, true) == LAT_HELD)
		return lat_send_iter(r, i, recv, side, LAT_HELD, watched, h, p);
	return lat_send_iter(r, i, recv, side, LAT_EVENTS, watched, h, p);
}

/* The same, watched or not (first: the loop's first iteration). */
static inline __attribute__((always_inline)) int lat_send_step(struct lat_run *r, uint64_t i, bool recv,
							       const char *side, bool hooks, bool first,
							       struct pt_hook_pairs *h,
							       const struct lat_plain *p)
{
	if (lat_watched(p, first))
		return lat_send_hooks(r, i, recv, side, hooks, true, h, p);
	return lat_send_hooks(r, i, recv, side, hooks, false, h, p);
}

static inline __attribute__((always_inline)) int lat_send_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy)
{
	const struct lat_plain pl = copy != LAT_GENERAL ? lat_plain_of(r, copy == LAT_PLAIN_EVENTS) :
							  (struct lat_plain){ 0 };
	const struct lat_plain *p = copy != LAT_GENERAL ? &pl : NULL;
	const struct pt_loop *l = r->l;
	bool client = l->opt.is_client;
	const char *side = client ? "client" : "server";
	struct pt_hook_pairs h = { 0 };
	uint64_t i;
	int rc = 1;

	/* the first iteration apart (watched): the client's first ping has no
	 * pong before it, so the loop's iterations all receive (no test of
	 * which per iteration), and none of them needs the fault-test stop */
	i = 0;
	if (more(r, 0, p) && (rc = lat_send_step(r, 0, !client, side, hooks, true, &h, p)) > 0)
		for (i = 1; more(r, i, p); i++)
			if ((rc = lat_send_step(r, i, true, side, hooks, false, &h, p)) <= 0)
				break;
	/* the client's last ping comes back once more (no repost due) */
	if (rc > 0 && client && !r->duration && !pt_interrupted) {
		enum lat_hooks how = hooks ? lat_pairs_ready(r, &h, i, 1, true) : LAT_OFF;
		uint64_t t_recv = 0;

		if (recv_one(r, i, side, how, true, &h, &t_recv, p) <= 0)
			rc = -1;
	}
	return lat_out(r, rc, i, hooks, true, &h);
}

/* The copies of the loop (see enum lat_hooks and struct lat_plain); the
 * plain one with the hooks off inline. */
static __attribute__((noinline)) int lat_send_hooked_plain(struct lat_run *r)
{
	return lat_send_as(r, true, LAT_PLAIN);
}

static __attribute__((noinline)) int lat_send_hooked(struct lat_run *r)
{
	return lat_send_as(r, true, LAT_GENERAL);
}

static __attribute__((noinline)) int lat_send_general(struct lat_run *r)
{
	return lat_send_as(r, false, LAT_GENERAL);
}

static __attribute__((noinline)) int lat_send_plain_events(struct lat_run *r)
{
	return lat_send_as(r, false, LAT_PLAIN_EVENTS);
}

static int lat_send(struct lat_run *r)
{
	enum lat_copy copy = lat_copy_of(r, IBV_WR_SEND);

	if (pt_hooks_on)   /* -e with the hooks: the general copy */
		return copy == LAT_PLAIN ? lat_send_hooked_plain(r) : lat_send_hooked(r);
	if (copy == LAT_PLAIN)
		return lat_send_as(r, false, LAT_PLAIN);
	return copy == LAT_PLAIN_EVENTS ? lat_send_plain_events(r) : lat_send_general(r);
}

int pt_run_lat_send(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_send);
}

/* One iteration of write_lat (the peer's count waited for) or read_lat:
 * the gap, the stamp, the post and its CQE. */
static inline __attribute__((always_inline)) int lat_post_iter(struct lat_run *r, uint64_t i,
							       const char *side, enum lat_hooks how, bool watched,
							       struct pt_hook_pairs *h,
							       const struct lat_plain *p, enum ibv_wr_opcode op,
							       uint64_t *t_last)
{
	const struct pt_loop *l = r->l;
	uint64_t now;

	/* read_lat (t_last) with the hooks on: the last CQE's poll time, just
	 * read, is this post's stamp too (no gap, no wait between them), as
	 * send_lat does: one clock read less per iteration */
	if (t_last && how != LAT_OFF && *t_last && (p || __builtin_expect(l->opt.lat_gap_ns == 0, 1))) {
		now = *t_last;
	} else {
		if (!p && __builtin_expect(l->opt.lat_gap_ns != 0, 0))
			pt_lat_gap(l->opt.lat_gap_ns);
		now = pt_now_ns();
	}
	lat_stamp(r, i, now, p);
	return post_one(r, i, now, side, how, watched, h, op, p, t_last);
}

/* The same, in the loop's copy: hooks off, or held or not; watched or
 * not (first: the loop's first iteration; lat_watched). */
static inline __attribute__((always_inline)) int lat_post_hooks(struct lat_run *r, uint64_t i,
								const char *side, bool hooks,
								bool watched, struct pt_hook_pairs *h,
								const struct lat_plain *p,
								enum ibv_wr_opcode op, uint64_t *t_last)
{
	if (!hooks)
		return lat_post_iter(r, i, side, LAT_OFF, watched, h, p, op, t_last);
	if (lat_pairs_ready(r, h, i, 1, false) == LAT_EVENTS)
		return lat_post_iter(r, i, side, LAT_EVENTS, watched, h, p, op, t_last);
	return lat_post_iter(r, i, side, LAT_HELD, watched, h, p, op, t_last);
}

static inline __attribute__((always_inline)) int lat_post_iter_as(struct lat_run *r, uint64_t i,
								  const char *side, bool hooks,
								  bool first, struct pt_hook_pairs *h,
								  const struct lat_plain *p,
								  enum ibv_wr_opcode op, uint64_t *t_last)
{
	if (lat_watched(p, first))
		return lat_post_hooks(r, i, side, hooks, true, h, p, op, t_last);
	return lat_post_hooks(r, i, side, hooks, false, h, p, op, t_last);
}

/* write_lat's iteration i: the server writes first, the client answers
 * each write (its count in the last payload byte). */
static inline __attribute__((always_inline)) int lat_write_iter(struct lat_run *r, uint64_t i, bool client,
								bool hooks, bool first,
								struct pt_hook_pairs *h,
								const struct lat_plain *p,
								uint8_t *payload_last)
{
	int rc;

	if ((client || i > 0) && (rc = pt_lat_wait_byte(r, (uint8_t)(client ? i + 1 : i))) <= 0)
		return rc;
	*payload_last = (uint8_t)(i + 1);
	return lat_post_iter_as(r, i, client ? "client" : "server", hooks, first, h, p,
				IBV_WR_RDMA_WRITE, NULL);
}

static inline __attribute__((always_inline)) int lat_write_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy)
{
	const struct lat_plain pl = copy != LAT_GENERAL ? lat_plain_of(r, copy == LAT_PLAIN_EVENTS) :
							  (struct lat_plain){ 0 };
	const struct lat_plain *p = copy != LAT_GENERAL ? &pl : NULL;
	const struct pt_loop *l = r->l;
	bool client = l->opt.is_client;
	uint8_t *payload_last = l->res->qps[0].send_buf + l->run->size - 1;
	struct pt_hook_pairs h = { 0 };
	uint64_t i;
	int rc = 1;

	/* the first iteration apart (watched: lat_watched) */
	i = 0;
	if (more(r, 0, p) && (rc = lat_write_iter(r, 0, client, hooks, true, &h, p, payload_last)) > 0)
		for (i = 1; more(r, i, p); i++)
			if ((rc = lat_write_iter(r, i, client, hooks, false, &h, p, payload_last)) <= 0)
				break;
	/* the server's last write is answered once more */
	if (rc > 0 && !client && !r->duration && !pt_interrupted && pt_lat_wait_byte(r, (uint8_t)i) <= 0)
		rc = -1;
	return lat_out(r, rc, i, hooks, false, &h);
}

static __attribute__((noinline)) int lat_write_hooked_plain(struct lat_run *r)
{
	return lat_write_as(r, true, LAT_PLAIN);
}

static __attribute__((noinline)) int lat_write_hooked(struct lat_run *r)
{
	return lat_write_as(r, true, LAT_GENERAL);
}

static __attribute__((noinline)) int lat_write_general(struct lat_run *r)
{
	return lat_write_as(r, false, LAT_GENERAL);
}

/* write_lat waits on memory: no plain copy sleeps on the channel */
static int lat_write(struct lat_run *r)
{
	bool plain = lat_copy_of(r, IBV_WR_RDMA_WRITE) == LAT_PLAIN;

	if (pt_hooks_on)
		return plain ? lat_write_hooked_plain(r) : lat_write_hooked(r);
	return plain ? lat_write_as(r, false, LAT_PLAIN) : lat_write_general(r);
}

int pt_run_lat_write(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_write);
}

/* read_lat's and atomic_lat's loop: op, the run's verb, is a constant in
 * each plain copy (lat_fast_op); the general copies pass READ and post the
 * run's verb through post.c. */
static inline __attribute__((always_inline)) int lat_read_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy, enum ibv_wr_opcode op)
{
	const struct lat_plain pl = copy != LAT_GENERAL ? lat_plain_of(r, copy == LAT_PLAIN_EVENTS) :
							  (struct lat_plain){ 0 };
	const struct lat_plain *p = copy != LAT_GENERAL ? &pl : NULL;
	struct pt_hook_pairs h = { 0 };
	uint64_t i, t_last = 0;
	int rc = 1;

	/* the first iteration apart (watched: lat_watched) */
	i = 0;
	if (more(r, 0, p) && (rc = lat_post_iter_as(r, 0, "client", hooks, true, &h, p, op,
						    &t_last)) > 0)
		for (i = 1; more(r, i, p); i++)
			if ((rc = lat_post_iter_as(r, i, "client", hooks, false, &h, p, op,
						   &t_last)) <= 0)
				break;
	return lat_out(r, rc, i, hooks, false, &h);
}

static __attribute__((noinline)) int lat_read_hooked_plain(struct lat_run *r)
{
	return lat_read_as(r, true, LAT_PLAIN, IBV_WR_RDMA_READ);
}

static __attribute__((noinline)) int lat_read_hooked(struct lat_run *r)
{
	return lat_read_as(r, true, LAT_GENERAL, IBV_WR_RDMA_READ);
}

static __attribute__((noinline)) int lat_read_general(struct lat_run *r)
{
	return lat_read_as(r, false, LAT_GENERAL, IBV_WR_RDMA_READ);
}

static __attribute__((noinline)) int lat_read_plain_events(struct lat_run *r)
{
	return lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_RDMA_READ);
}

/* atomic_lat's plain copies, hooks off (with the hooks: the general ones) */
static __attribute__((noinline)) int lat_fadd_plain(struct lat_run *r, bool events)
{
	return events ? lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_ATOMIC_FETCH_AND_ADD) :
			lat_read_as(r, false, LAT_PLAIN, IBV_WR_ATOMIC_FETCH_AND_ADD);
}

static __attribute__((noinline)) int lat_cswp_plain(struct lat_run *r, bool events)
{
	return events ? lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_ATOMIC_CMP_AND_SWP) :
			lat_read_as(r, false, LAT_PLAIN, IBV_WR_ATOMIC_CMP_AND_SWP);
}

static int lat_read(struct lat_run *r)
{
	const enum ibv_wr_opcode op = r->l->opt.opcode;
	enum lat_copy copy = lat_copy_of(r, op);

	/* atomics on the new API: their own plain copies with the hooks off;
	 * else the general ones (READ's plain copies would build a READ). On
	 * the old API READ's copies post the run's WR as it is. */
	if (op != IBV_WR_RDMA_READ && r->res->qps[0].qpx) {
		if (copy != LAT_GENERAL && !pt_hooks_on)
			return op == IBV_WR_ATOMIC_FETCH_AND_ADD ?
				       lat_fadd_plain(r, copy == LAT_PLAIN_EVENTS) :
				       lat_cswp_plain(r, copy == LAT_PLAIN_EVENTS);
		copy = LAT_GENERAL;
	}
	if (pt_hooks_on)   /* -e with the hooks: the general copy */
		return copy == LAT_PLAIN ? lat_read_hooked_plain(r) : lat_read_hooked(r);
	if (copy == LAT_PLAIN)
		return lat_read_as(r, false, LAT_PLAIN, IBV_WR_RDMA_READ);
	return copy == LAT_PLAIN_EVENTS ? lat_read_plain_events(r) : lat_read_general(r);
}

int pt_run_lat_read(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_read);
}

void pt_lat_meas_free(struct pt_lat_meas *m)
{
	free(m->stamps);
	pt_hist_free(m->hist);
	memset(m, 0, sizeof(*m));
}
