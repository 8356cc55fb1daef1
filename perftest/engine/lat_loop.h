/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops' body, always inline, for their files (run_lat.c:
 * write_lat, read_lat, atomic_lat; run_lat_send.c: send_lat): a plain
 * copy's local, the stamp, the waits for a CQE (spinning or -e), the post
 * of the run's one send WR and its CQE, the hooks' pair slots, the
 * watched iterations (USDT probes, the fault-test stop), a run's start
 * and end. Each loop is compiled into a few copies of these (enum
 * lat_copy, enum lat_hooks), each with no test per WR of what it is not.
 * The set-up and end out of line: lat_setup.c. */
#ifndef PT_LAT_LOOP_H
#define PT_LAT_LOOP_H
#include <stdbool.h>
#include <stdint.h>
#include "util/clock.h"
#include "perftest/report/results.h"
#include "loop.h"
#include "lat_run.h"
#include "fault.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

/* Which copy of a loop runs (struct lat_plain): the general one, or a
 * plain one, spinning or (-e) sleeping on the completion channel. A
 * spinning one reads the clock it is built for, untested per read
 * (lat_now, lat_now_ns): LAT_PLAIN with the TSC (or a build without one),
 * LAT_PLAIN_RAW with clock_gettime where the TSC is off (no invariant TSC,
 * as in the lab's guests, or PERFTEST_CLOCK=raw; lat_spin_copy). */
enum lat_copy { LAT_GENERAL, LAT_PLAIN, LAT_PLAIN_RAW, LAT_PLAIN_EVENTS };

/* lat_setup.c */
void pt_lat_start(struct lat_run *r, uint64_t now);
/* 0, or -1 when the sample storage cannot be allocated (said on stderr). */
int pt_lat_init(struct lat_run *r, const struct pt_loop *l, struct pt_lat_meas *m);
enum lat_copy pt_lat_copy_of(const struct lat_run *r, enum ibv_wr_opcode op);
/* A plain copy's post form for verb op (struct lat_plain). */
enum lat_form pt_lat_form_of(const struct lat_run *r, enum ibv_wr_opcode op);
int pt_lat_end(struct lat_run *r);
struct pt_hook_pairs pt_lat_pairs_retake(const struct lat_run *r, struct pt_hook_pairs h,
					 uint64_t i, unsigned need, bool reposts);

/* A plain copy's start: its local (form and reposts: constants where the
 * copy is built for them); the send WR's id and flags, the same for every
 * WR of the run, and QP 0's post count, set once (the builder reads them,
 * nothing of the run writes them again: lat_post_send). */
static inline __attribute__((always_inline)) struct lat_plain lat_plain_of(struct lat_run *r,
									   struct lat_spin *spin,
									   enum lat_copy copy, bool hooks,
									   enum lat_form form,
									   enum lat_reposts reposts)
{
	struct ibv_qp_ex *qx = r->res->qps[0].qpx;

	r->lazy = true;
	r->raw = !hooks;   /* nothing but the stamps takes its times: lat_now */
	r->ts = !hooks && copy == LAT_PLAIN_RAW;   /* clock_gettime writes them: lat_stamp_now */
	r->res->qps[0].posted = 1;   /* what every post sets (lat_post_send); nothing reads it before */
	if (qx) {
		qx->wr_id = r->wrs.send.wr_id;
		qx->wr_flags = r->wrs.send.send_flags;
	}
	*spin = (struct lat_spin){ .poll_fn = r->cq[0]->context->ops.poll_cq,
				   .cq = { r->cq[0], r->cq[1] },
				   .post_fn = r->res->qps[0].qp->context->ops.post_send,
				   .qp = r->res->qps[0].qp, .wr = &r->wrs.send,
				   .polls_left = LAT_SPINS_PER_CHECK, .gettime = clock_gettime };
	r->spin = copy != LAT_PLAIN_EVENTS ? spin : NULL;
	/* the calls' local escapes: kept in memory, read again after each call */
	__asm__ volatile("" : : "r"(spin) : "memory");
	return (struct lat_plain){ .stamps = r->m->stamps, .spin = spin,
				   .arm_fn = r->cq[0]->context->ops.req_notify_cq,
				   .waker = &r->res->waker, .channel = r->res->channel, .qx = qx,
				   .q = &r->res->qps[0], .iters = r->l->opt.iters,
				   .events = copy == LAT_PLAIN_EVENTS, .clock_raw = copy == LAT_PLAIN_RAW,
				   .form = form, .reposts = reposts };
}

/* A spinning plain copy for the run's clock (enum lat_copy). */
static inline enum lat_copy lat_spin_copy(void)
{
	return pt_now_raw_fixed_ok() ? LAT_PLAIN : LAT_PLAIN_RAW;
}

/* A plain copy's local with its reposts known (enum lat_reposts). */
static inline __attribute__((always_inline)) struct lat_plain lat_plain_reposting(const struct lat_plain *p,
										  enum lat_reposts reposts)
{
	struct lat_plain c = *p;

	c.reposts = reposts;
	return c;
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
 * tracer raised a per-WR probe's semaphore (one compare per iteration). */
enum lat_hooks { LAT_OFF, LAT_HELD, LAT_EVENTS };

/* The iteration's time: raw in a hooks-off plain copy, where it goes into
 * the stamps only (post_one's probes read the clock themselves), converted
 * by the report (pt_lat_meas_ns); nanoseconds where hooks or the general
 * copy's rules read it. A spinning plain copy reads the clock it is
 * built for, with no test (enum lat_copy). */
static inline __attribute__((always_inline)) uint64_t lat_now(const struct lat_plain *p,
							    enum lat_hooks how)
{
	if (p && how == LAT_OFF) {
		if (p->events)
			return pt_now_raw();
		return p->clock_raw ? lat_clock_raw_ns(p) : pt_now_raw_fixed();
	}
	return lat_now_ns(p);
}

/* A spinning hooks-off copy on clock_gettime stamps struct timespec
 * (lat_run's ts): the call writes the stamp itself, where a conversion to
 * nanoseconds would take a multiply, an add and a store per iteration
 * (pt_lat_meas_ns converts them after the run). */
static inline __attribute__((always_inline)) bool lat_stamps_ts(const struct lat_plain *p,
								 enum lat_hooks how)
{
	return p && how == LAT_OFF && !p->events && p->clock_raw;
}

/* A copy whose clock read writes its stamp itself: lat_stamps_ts, or on
 * the TSC its two halves (pt_clock_rdtsc_to). */
static inline __attribute__((always_inline)) bool lat_stamps_direct(const struct lat_plain *p,
								     enum lat_hooks how)
{
	return p && how == LAT_OFF && !p->events && (p->clock_raw || PT_CLOCK_HAVE_TSC);
}

/* Iteration i's time for lat_stamp (lat_now), or where the stamp is a
 * struct timespec, stamped here (and 0: nothing reads the time of an
 * iteration with the hooks off but the stamp). */
static inline __attribute__((always_inline)) uint64_t lat_stamp_now(uint64_t i, const struct lat_plain *p,
								     enum lat_hooks how)
{
	if (lat_stamps_ts(p, how)) {
		p->spin->gettime(CLOCK_MONOTONIC_RAW, (struct timespec *)p->stamps + i);
		return 0;
	}
#if PT_CLOCK_HAVE_TSC
	if (lat_stamps_direct(p, how)) {
		pt_clock_rdtsc_to(&p->stamps[i]);
		return 0;
	}
#endif
	return lat_now(p, how);
}

/* Iteration i posts now: stamp it; in duration mode only the round trips
 * that end inside the window count. */
static inline __attribute__((always_inline)) void lat_stamp(struct lat_run *r, uint64_t i, uint64_t now,
							    const struct lat_plain *p, enum lat_hooks how)
{
	struct pt_lat_meas *m = r->m;
	bool keep = !r->duration;

	if (p) {   /* m->n, r->i and r->last_progress: lat_sync */
		if (!lat_stamps_direct(p, how))   /* else lat_stamp_now stored it */
			p->stamps[i] = now;
		return;
	}
	r->i = i;
	/* a post follows a completion (or the peer's write): progress enough
	 * for the stall rule, without a clock read per CQE */
	r->last_progress = now;
	if (r->duration) {
		if (!r->started)
			pt_lat_start(r, now);
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

/* -e in a plain copy, the steady state inline: the CQ armed since its
 * last poll, one sleep, its event, the arming for the next CQE and one
 * poll that finds this one (1, the CQE in *wc). Anything else (the CQ not
 * armed, the waker's end of a sleep (idle: the stop rules' turn), another
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
	    !(idle = __builtin_expect((n = pt_chan_sleep(p->waker, p->channel, &ev_cq, &ev_ctx)) != 1,
				      0))) {
		if (__builtin_expect(ev_cq != p->spin->cq[recv], 0)) {
			pt_lat_event_count(r, ev_cq);
		} else {
			/* its event disarmed it: armed again at once (r->armed stays) */
			if (__builtin_expect(++r->unacked[recv] >= LAT_ACK_BATCH, 0))
				pt_lat_ack(r, recv);
			n = p->arm_fn(p->spin->cq[recv], 0);
			if (__builtin_expect(n != 0, 0)) {
				r->armed[recv] = false;
				return pt_lat_arm_failed(n);
			}
			n = p->spin->poll_fn(p->spin->cq[recv], 1, wc);
			if (__builtin_expect(n == 1, 1))
				return 1;
			if (n < 0)
				return pt_lat_poll_failed(n);
		}
	} else if (__builtin_expect(idle && n < 0, 0)) {
		return pt_lat_event_failed();
	}
	return pt_lat_wait_events(r, recv, wc, hw_ns, idle);
}

/* A poll for one CQE found one, a success: one test of both (the plain
 * copies' spin). After an empty poll *wc holds what it held, maybe never
 * set: n - 1 has every bit set then, whatever the status's bits are. */
static inline __attribute__((always_inline)) bool lat_cqe_ok(int n, const struct ibv_wc *wc)
{
	return (((unsigned)n - 1u) | (unsigned)wc->status) == 0;
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
			return cqe_taken(r, recv, hooks, watched, side, wc, t, p, false);
		return n;
	} else {
		/* the hooks' copy polls once inline (the spin's registers would
		 * push its pair slots out of theirs), then spins out of line */
		const unsigned turns = hooks ? 1 : LAT_SPINS_PER_CHECK;

		/* a poll for one CQE: 1, 0 or a failure; > 0 tests the flags
		 * the spin's own test of 0 left (no compare of its own). A
		 * hooks-off plain copy spins on its count (struct lat_spin):
		 * 0 there is LAT_SPINS_PER_CHECK empty polls since the look. */
		if (p && !hooks) {
			n = spin_polls(p, recv, wc);
			if (__builtin_expect(n > 0, 1))
				return cqe_taken(r, recv, hooks, watched, side, wc, t, p, false);
			if (n < 0)   /* said here: the wait below gets a constant 0 */
				return pt_lat_poll_failed(n);
			n = pt_lat_wait_spin(r, recv, hooks, side, wc, hw_ns, 0, turns);
			p->spin->polls_left = LAT_SPINS_PER_CHECK;   /* it looked last */
		} else {
			n = poll_turns(r, recv, wc, hw_ns, turns, p);
			if (p && __builtin_expect(lat_cqe_ok(n, wc), 1))
				return cqe_taken(r, recv, hooks, watched, side, wc, t, p, true);
			if (__builtin_expect(n > 0, !p))
				return cqe_taken(r, recv, hooks, watched, side, wc, t, p, false);
			n = pt_lat_wait_spin(r, recv, hooks, side, wc, hw_ns, n, turns);
		}
	}
	*t = r->t_cqe;
	return n;
}

/* The next iteration is due: below the run's bound (-n, or 0 once a
 * signal came: pt_lat_until), and in duration mode inside the window. */
static inline __attribute__((always_inline)) bool more(const struct lat_run *r, uint64_t i,
							 const struct lat_plain *p)
{
	if (i >= pt_lat_until)   /* a plain read: loop.h */
		return false;
	return p || !r->duration || !(r->started && pt_now_ns() >= r->t_end);
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
	*h = pt_lat_pairs_retake(r, *h, i, need, reposts);
	return h->held ? LAT_HELD : LAT_EVENTS;
}

/* The run's send WR. The loop's verb op (a constant in each loop) with the
 * new post API, when the run posts it plainly (lat_fast_op): inline, the
 * builder after wr_start and the setter after the builder
 * (docs/upstream-behaviour.md §10). The old post API inline (one call; a
 * plain copy's through its struct lat_spin).
 * A plain copy's form says which (a constant in the spinning copies: no
 * test per WR). The rest, and a failed post (said), in post.c. keep: a
 * spinning plain copy's unwatched iteration that tells the hooks nothing
 * before its CQE (hooks off, or held: a pair is stored at its CQE) keeps
 * the post's result for the stop rules' look (struct lat_spin's post_rc)
 * instead of testing it. */
static inline __attribute__((always_inline)) int lat_post_send(struct lat_run *r, enum ibv_wr_opcode op,
								const struct lat_plain *p, bool keep)
{
	struct pt_qp *q = p ? p->q : &r->res->qps[0];
	const struct pt_lat_wrs *w = &r->wrs;
	struct ibv_send_wr *bad;
	int rc;

	if (p ? p->form != LAT_FORM_OLD : __builtin_expect(r->fast_op == (int)op, 1)) {
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
		if (lat_op_may_inline(op) && (p ? p->form == LAT_FORM_INLINE : w->inl))
			ibv_wr_set_inline_data(qx, (void *)(uintptr_t)w->send_sge.addr,
					       w->send_sge.length);
		else
			ibv_wr_set_sge(qx, w->send_sge.lkey, w->send_sge.addr, w->send_sge.length);
		rc = ibv_wr_complete(qx);
		if (keep)
			p->spin->post_rc = rc;
		else if (__builtin_expect(rc != 0, 0))
			return pt_lat_post_failed(rc);
	} else if (keep) {
		p->spin->post_rc = p->spin->post_fn(p->spin->qp, p->spin->wr, &bad);
	} else if (p ? __builtin_expect(p->spin->post_fn(p->spin->qp, p->spin->wr, &bad) != 0, 0) :
		       q->qpx || __builtin_expect(ibv_post_send(q->qp, &r->wrs.send, &bad) != 0, 0)) {
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

	if (lat_post_send(r, op, p, p && !p->events && !watched && how != LAT_EVENTS))
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
	if (t_done && how != LAT_OFF)   /* hooks off: no time read, none carried */
		*t_done = t_cqe;
	return rc;
}

/* A run of one of the loops below: set up, loop, every event acked.
 * Inlined into each pt_run_lat_*, so the loop is a direct call. */
static inline __attribute__((always_inline)) int lat_run(const struct pt_loop *l, struct pt_lat_meas *m,
							 int (*loop)(struct lat_run *))
{
	struct lat_run r;

	if (pt_lat_init(&r, l, m))
		return -1;
	return pt_lat_done(&r, loop(&r));
}

/* The end of a loop's copy: the pair slots given back (i: the next send
 * not completed; reposts: send_lat's), rc as the loop returns it. */
static inline __attribute__((always_inline)) int lat_out(struct lat_run *r, int rc, uint64_t i,
							 bool hooks, bool reposts, struct pt_hook_pairs *h)
{
	lat_sync(r);   /* a plain copy's count */
	r->unwatched = false;   /* the waits after the loop lower no bound */
	r->spin = NULL;         /* the copy's local */
	if (hooks)
		pt_hook_pairs_give(h, i, reposts, r->res->qps[0].recv_posted, false);
	if (rc > 0 && pt_interrupted)   /* the bound ended the loop (more) */
		rc = pt_lat_wait_ended(r, pt_now_ns());
	r->m->raw = r->raw;   /* on every way out: what was stamped is kept */
	r->m->ts = r->ts;
	return rc < 0 ? -1 : pt_lat_end(r);
}

/* An iteration is watched (enum lat_hooks) in the general copies, in a
 * plain copy's first (first: where a run's first CQE comes, for the
 * fault-test stop), and while a tracer raised a per-WR probe's semaphore;
 * never in a spinning plain copy's unwatched loop (unwatched:
 * lat_watch_off), which tests nothing per iteration. */
static inline __attribute__((always_inline)) bool lat_watched(const struct lat_plain *p, bool first,
							      bool unwatched)
{
	return !unwatched && (!p || first || PT_PROBES_WR_ON());
}

/* Whether a copy's iterations past its first run unwatched, as a spinning
 * plain copy's do while no tracer raised a per-WR probe's semaphore: the
 * stop rules' looks (every LAT_SPINS_PER_CHECK empty polls) test it
 * instead, and lower the loop's bound when it rises (struct lat_run's
 * unwatched; pt_lat_watch_resume). A tracer attached in mid-run sees the
 * WRs from the iteration after the next look; one attached before the
 * run, all of them. */
static inline __attribute__((always_inline)) bool lat_watch_off(struct lat_run *r,
								const struct lat_plain *p)
{
	if (!p || p->events || PT_PROBES_WR_ON())
		return false;
	r->unwatched = true;
	return true;
}

#endif
