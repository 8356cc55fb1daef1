/* SPDX-License-Identifier: BSD-2-Clause */
/* send_lat's loop (docs/upstream-behaviour.md §5.5): a ping-pong of SENDs
 * on one QP, the client first; each side takes the peer's message, posts
 * its receive again, stamps the iteration and sends. With -e a side with
 * nothing to poll sleeps on the completion channel. The body's parts are
 * lat_loop.h's; run_lat.c has the other latency loops. */
#define PT_LOOP_VIEW_ONLY
#include "lat_loop.h"

/* a plain copy's receives posted: at most -n (<= PT_LAT_RAW_MAX) plus the
 * first --rx-depth (<= 16384, options.c) */
_Static_assert(PT_LAT_RAW_MAX + 16384 <= PT_WRID_IDX_MASK,
	       "a plain copy's receive numbers fit a wr_id's index (lat_repost)");

/* A plain copy's iteration reposts no receive: none is left to post in
 * the loop's last part (LAT_REPOSTS_NONE), or -n are posted already. */
static inline __attribute__((always_inline)) bool lat_plain_posted(const struct lat_plain *p,
								   const struct pt_qp *q)
{
	return p->reposts == LAT_REPOSTS_NONE ||
	       (p->reposts == LAT_REPOSTS_TEST && q->recv_posted >= p->iters);
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

	if (p ? lat_plain_posted(p, q) : !r->duration && q->recv_posted >= r->l->opt.iters)
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

/* send_lat's receive CQE wc, polled at *t, told (how) and checked: 0, or
 * -1 on error. */
static inline __attribute__((always_inline)) int recv_told(struct lat_run *r, enum lat_hooks how,
							   bool watched, const struct ibv_wc *wc,
							   uint64_t *hw_ns, const uint64_t *t,
							   const struct lat_plain *p)
{
	const struct pt_loop *l = r->l;

	if (how == LAT_EVENTS)
		pt_hook_pair_wc(0, PT_PLUGIN_SEQ_UNKNOWN, wc, true, *t, pt_hw_ns(l->res, hw_ns, 0));
	if (watched)
		PT_PROBE_COMPLETE_RECV(0, wc->qp_num, pt_wrid_index(wc->wr_id), wc->wr_id, wc->status,
				       how != LAT_OFF ? *t : pt_now_ns());
	if (!p && __builtin_expect(l->opt.imm, 0) && pt_check_imm(l, wc))
		return -1;
	return 0;
}

/* send_lat: wait for the peer's message (iteration i's) and record it: 1,
 * or 2 when held and it went through the hooks instead (not the receive
 * the slots expect: the slots are given back, the rest of the iteration
 * tells the hooks); 0 at the end of the run, -1 on error. Each way out
 * returns its own constant, so that the caller's test of it folds away. */
static inline __attribute__((always_inline)) int recv_one(struct lat_run *r, uint64_t i,
							  const char *side, enum lat_hooks how, bool watched,
							  struct pt_hook_pairs *h, uint64_t *t,
							  const struct lat_plain *p)
{
	struct ibv_wc wc;
	uint64_t hw_ns;
	int rc = wait_cq(r, true, how, watched, side, &wc, &hw_ns, t, p);

	if (rc <= 0)
		return rc;
	if (how == LAT_HELD && __builtin_expect(!pt_hook_pairs_recv(h, wc.wr_id, wc.byte_len, *t), 0)) {
		pt_hook_pairs_give(h, i, true, r->l->res->qps[0].recv_posted, false);
		return recv_told(r, LAT_EVENTS, watched, &wc, &hw_ns, t, p) < 0 ? -1 : 2;
	}
	return recv_told(r, how, watched, &wc, &hw_ns, t, p) < 0 ? -1 : 1;
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
		now = lat_stamp_now(i, p, how);
	}
	/* the receive is reposted at the iteration's stamp, before its send:
	 * the peer's next message can come only after that */
	if (recv && lat_repost(r, now, i, how, watched, h, p))
		return -1;
	lat_stamp(r, i, now, p, how);
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

/* A hooks-off plain copy's watched iteration, out of line: one body for
 * every such copy of send_lat (the form and the reposts read, not
 * constants); none in the copies' loops. p by value, so that the copy's
 * own local, whose fields are its constants, is never address-taken. */
static __attribute__((noinline)) int lat_send_watched(struct lat_run *r, uint64_t i, bool recv,
						      const char *side, struct lat_plain p)
{
	return lat_send_iter(r, i, recv, side, LAT_OFF, true, NULL, &p);
}

/* The same, watched or not (first: the loop's first iteration;
 * unwatched: lat_watch_off's loop). */
static inline __attribute__((always_inline)) int lat_send_step(struct lat_run *r, uint64_t i, bool recv,
							       const char *side, bool hooks, bool first,
							       bool unwatched, struct pt_hook_pairs *h,
							       const struct lat_plain *p)
{
	if (lat_watched(p, first, unwatched)) {
		if (p && !hooks)
			return lat_send_watched(r, i, recv, side, *p);
		return lat_send_hooks(r, i, recv, side, hooks, true, h, p);
	}
	return lat_send_hooks(r, i, recv, side, hooks, false, h, p);
}

/* The hooks-off spinning copy's unwatched iterations (lat_watch_off)
 * from *at on: those that repost their receive, then the last ones, with
 * every receive the run needs posted (enum lat_reposts); *at the
 * iteration it ended at. */
static inline __attribute__((always_inline)) int lat_send_split(struct lat_run *r, uint64_t *at,
								const char *side,
								struct pt_hook_pairs *h,
								const struct lat_plain *pl)
{
	const struct lat_plain due = lat_plain_reposting(pl, LAT_REPOSTS_DUE);
	const struct lat_plain none = lat_plain_reposting(pl, LAT_REPOSTS_NONE);
	const uint64_t posted = pl->q->recv_posted;
	/* one repost an iteration while fewer than -n are posted */
	const uint64_t end = *at + (posted < pl->iters ? pl->iters - posted : 0);
	uint64_t i = *at;
	int rc;

	/* rc is set on the way out only: no register holds it per iteration */
	for (; i < end; i++) {
		if (!more(r, i, &due))
			goto ended;
		if ((rc = lat_send_step(r, i, true, side, false, false, true, h, &due)) <= 0)
			goto out;
	}
	for (;; i++) {
		if (!more(r, i, &none))
			goto ended;
		if ((rc = lat_send_step(r, i, true, side, false, false, true, h, &none)) <= 0)
			goto out;
	}
ended:
	rc = 1;
out:
	*at = i;
	return rc;
}

/* send_lat's copy (hooks, copy; form: the post form, a constant where the
 * copy is built for one). */
static inline __attribute__((always_inline)) int lat_send_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy, enum lat_form form)
{
	struct lat_spin spin;   /* a plain copy's (lat_plain_of) */
	const struct lat_plain pl = copy != LAT_GENERAL ?
					    lat_plain_of(r, &spin, copy, hooks, form,
							 LAT_REPOSTS_TEST) :
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
	if (more(r, 0, p) && (rc = lat_send_step(r, 0, !client, side, hooks, true, false, &h, p)) > 0) {
		i = 1;
		/* a spinning plain copy's unwatched until a look saw a tracer
		 * (lat_watch_off), then watched or not */
		if (lat_watch_off(r, p)) {
			if (!hooks) {
				rc = lat_send_split(r, &i, side, &h, p);
			} else {
				for (; more(r, i, p); i++)
					if ((rc = lat_send_step(r, i, true, side, hooks, false, true, &h,
								p)) <= 0)
						break;
			}
			if (rc > 0 && !pt_lat_watch_resume(r))
				goto last;
		}
		if (rc > 0)
			for (; more(r, i, p); i++)
				if ((rc = lat_send_step(r, i, true, side, hooks, false, false, &h,
							p)) <= 0)
					break;
	}
last:
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
 * spinning plain ones once per post form. */
static __attribute__((noinline)) int lat_send_hooked(struct lat_run *r)
{
	return lat_send_as(r, true, LAT_GENERAL, LAT_FORM_OLD);   /* no form: p is NULL */
}

static __attribute__((noinline)) int lat_send_general(struct lat_run *r)
{
	return lat_send_as(r, false, LAT_GENERAL, LAT_FORM_OLD);
}

/* -e's plain copy: a body per post form, so no iteration tests it */
static __attribute__((noinline)) int lat_send_plain_events(struct lat_run *r, enum lat_form form)
{
	if (form == LAT_FORM_OLD)
		return lat_send_as(r, false, LAT_PLAIN_EVENTS, LAT_FORM_OLD);
	return form == LAT_FORM_SGE ? lat_send_as(r, false, LAT_PLAIN_EVENTS, LAT_FORM_SGE) :
				      lat_send_as(r, false, LAT_PLAIN_EVENTS, LAT_FORM_INLINE);
}

/* the spinning plain copies, one function per post form: the hooks' and
 * the hooks-off ones, one each per clock (enum lat_copy); the hooks' TSC
 * copy in a function of its own (held in one with the others, the
 * compiler spilled a register around every call: +5 instructions per WR) */
static __attribute__((noinline)) int lat_send_hooks_tsc(struct lat_run *r, enum lat_form form)
{
	if (form == LAT_FORM_OLD)
		return lat_send_as(r, true, LAT_PLAIN, LAT_FORM_OLD);
	return form == LAT_FORM_SGE ? lat_send_as(r, true, LAT_PLAIN, LAT_FORM_SGE) :
				      lat_send_as(r, true, LAT_PLAIN, LAT_FORM_INLINE);
}

static __attribute__((noinline)) int lat_send_hooks_raw(struct lat_run *r, enum lat_form form)
{
	if (form == LAT_FORM_OLD)
		return lat_send_as(r, true, LAT_PLAIN_RAW, LAT_FORM_OLD);
	return form == LAT_FORM_SGE ? lat_send_as(r, true, LAT_PLAIN_RAW, LAT_FORM_SGE) :
				      lat_send_as(r, true, LAT_PLAIN_RAW, LAT_FORM_INLINE);
}

static __attribute__((noinline)) int lat_send_old(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_send_as(r, false, LAT_PLAIN, LAT_FORM_OLD) :
					       lat_send_as(r, false, LAT_PLAIN_RAW, LAT_FORM_OLD);
}

static __attribute__((noinline)) int lat_send_sge(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_send_as(r, false, LAT_PLAIN, LAT_FORM_SGE) :
					       lat_send_as(r, false, LAT_PLAIN_RAW, LAT_FORM_SGE);
}

static __attribute__((noinline)) int lat_send_inline(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_send_as(r, false, LAT_PLAIN, LAT_FORM_INLINE) :
					       lat_send_as(r, false, LAT_PLAIN_RAW, LAT_FORM_INLINE);
}

static int lat_send(struct lat_run *r)
{
	enum lat_copy copy = pt_lat_copy_of(r, IBV_WR_SEND);
	enum lat_form form = pt_lat_form_of(r, IBV_WR_SEND);
	bool hooks = pt_hooks_on;

	if (copy == LAT_PLAIN) {
		if (hooks)
			return lat_spin_copy() == LAT_PLAIN ? lat_send_hooks_tsc(r, form) :
							       lat_send_hooks_raw(r, form);
		if (form == LAT_FORM_OLD)
			return lat_send_old(r);
		return form == LAT_FORM_SGE ? lat_send_sge(r) : lat_send_inline(r);
	}
	if (hooks)   /* -e with the hooks: the general copy */
		return lat_send_hooked(r);
	return copy == LAT_PLAIN_EVENTS ? lat_send_plain_events(r, form) : lat_send_general(r);
}

int pt_run_lat_send(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_send);
}
