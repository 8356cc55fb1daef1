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
 * run with the samples taken so far (m->interrupted).
 * This file: write_lat, read_lat and atomic_lat; send_lat's loop is
 * run_lat_send.c, the body's parts lat_loop.h, set-up lat_setup.c. */
#define PT_LOOP_VIEW_ONLY
#include "lat_loop.h"

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
		now = lat_stamp_now(i, p, how);
	}
	lat_stamp(r, i, now, p, how);
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

/* A hooks-off plain copy's watched iteration, out of line (struct
 * lat_plain's copies): one body for every such copy of write_lat, read_lat
 * and atomic_lat (op read too). No hooks: no time carried, no pair slots;
 * p by value, so that the copy's own local is never address-taken. */
static __attribute__((noinline)) int lat_post_watched(struct lat_run *r, uint64_t i,
						      const char *side, struct lat_plain p,
						      enum ibv_wr_opcode op)
{
	return lat_post_iter(r, i, side, LAT_OFF, true, NULL, &p, op, NULL);
}

static inline __attribute__((always_inline)) int lat_post_iter_as(struct lat_run *r, uint64_t i,
								  const char *side, bool hooks,
								  bool first, bool unwatched,
								  struct pt_hook_pairs *h,
								  const struct lat_plain *p,
								  enum ibv_wr_opcode op, uint64_t *t_last)
{
	if (lat_watched(p, first, unwatched)) {
		if (p && !hooks)
			return lat_post_watched(r, i, side, *p, op);
		return lat_post_hooks(r, i, side, hooks, true, h, p, op, t_last);
	}
	return lat_post_hooks(r, i, side, hooks, false, h, p, op, t_last);
}

/* write_lat's iteration i: the server writes first, the client answers
 * each write (its count in the last payload byte). */
static inline __attribute__((always_inline)) int lat_write_iter(struct lat_run *r, uint64_t i, bool client,
								bool hooks, bool first, bool unwatched,
								struct pt_hook_pairs *h,
								const struct lat_plain *p,
								uint8_t *payload_last,
								const volatile uint8_t *peer_last,
								const char *side)
{
	const uint8_t want = (uint8_t)(i + client);
	int rc;

	/* only the server's first write waits for nothing (first: i == 0); a
	 * count already there costs no call */
	if ((client || !first) && *peer_last != want && (rc = pt_lat_wait_byte(r, want)) <= 0)
		return rc;
	*payload_last = (uint8_t)(i + 1);
	return lat_post_iter_as(r, i, side, hooks, first, unwatched, h, p, IBV_WR_RDMA_WRITE, NULL);
}

/* write_lat's copy (hooks, copy; form: the post form, a constant where
 * the copy is built for one). */
static inline __attribute__((always_inline)) int lat_write_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy, enum lat_form form)
{
	struct lat_spin spin;   /* a plain copy's (lat_plain_of) */
	const struct lat_plain pl = copy != LAT_GENERAL ?
					    lat_plain_of(r, &spin, copy, hooks, form,
							 LAT_REPOSTS_NONE) :
					    (struct lat_plain){ 0 };
	const struct lat_plain *p = copy != LAT_GENERAL ? &pl : NULL;
	const struct pt_loop *l = r->l;
	bool client = l->opt.is_client;
	const char *side = client ? "client" : "server";
	uint8_t *payload_last = l->res->qps[0].send_buf + l->run->size - 1;
	/* where the peer's write ends: the byte its count is in */
	const volatile uint8_t *peer_last = l->res->qps[0].recv_buf + l->run->size - 1;
	struct pt_hook_pairs h = { 0 };
	uint64_t i;
	int rc = 1;

	/* the first iteration apart (watched: lat_watched); the rest as
	 * lat_read_as's */
	i = 0;
	if (more(r, 0, p) && (rc = lat_write_iter(r, 0, client, hooks, true, false, &h, p,
						  payload_last, peer_last, side)) > 0 &&
	    more(r, ++i, p)) {
		if (lat_watch_off(r, p)) {
			do
				if ((rc = lat_write_iter(r, i, client, hooks, false, true, &h, p,
							 payload_last, peer_last, side)) <= 0)
					goto out;
			while (__builtin_expect(more(r, ++i, p), 1));
			rc = 1;
			if (!pt_lat_watch_resume(r) || !more(r, i, p))
				goto out;
		}
		do
			if ((rc = lat_write_iter(r, i, client, hooks, false, false, &h, p, payload_last,
						 peer_last, side)) <= 0)
				goto out;
		while (more(r, ++i, p));
		rc = 1;
	}
out:
	/* the server's last write is answered once more */
	if (rc > 0 && !client && !r->duration && !pt_interrupted && pt_lat_wait_byte(r, (uint8_t)i) <= 0)
		rc = -1;
	return lat_out(r, rc, i, hooks, false, &h);
}

static __attribute__((noinline)) int lat_write_hooked(struct lat_run *r)
{
	return lat_write_as(r, true, LAT_GENERAL, LAT_FORM_OLD);   /* no form: p is NULL */
}

static __attribute__((noinline)) int lat_write_general(struct lat_run *r)
{
	return lat_write_as(r, false, LAT_GENERAL, LAT_FORM_OLD);
}

/* the plain copies: the hooks' per clock (enum lat_copy), each with its
 * post forms (as run_lat_send.c's: apart from the hooks-off ones, the
 * compiler keeps their registers); the hooks-off ones one function per
 * post form, each per clock */
static __attribute__((noinline)) int lat_write_hooks_tsc(struct lat_run *r, enum lat_form form)
{
	if (form == LAT_FORM_OLD)
		return lat_write_as(r, true, LAT_PLAIN, LAT_FORM_OLD);
	return form == LAT_FORM_SGE ? lat_write_as(r, true, LAT_PLAIN, LAT_FORM_SGE) :
				      lat_write_as(r, true, LAT_PLAIN, LAT_FORM_INLINE);
}

static __attribute__((noinline)) int lat_write_hooks_raw(struct lat_run *r, enum lat_form form)
{
	if (form == LAT_FORM_OLD)
		return lat_write_as(r, true, LAT_PLAIN_RAW, LAT_FORM_OLD);
	return form == LAT_FORM_SGE ? lat_write_as(r, true, LAT_PLAIN_RAW, LAT_FORM_SGE) :
				      lat_write_as(r, true, LAT_PLAIN_RAW, LAT_FORM_INLINE);
}

static __attribute__((noinline)) int lat_write_old(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_write_as(r, false, LAT_PLAIN, LAT_FORM_OLD) :
					       lat_write_as(r, false, LAT_PLAIN_RAW, LAT_FORM_OLD);
}

static __attribute__((noinline)) int lat_write_sge(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_write_as(r, false, LAT_PLAIN, LAT_FORM_SGE) :
					       lat_write_as(r, false, LAT_PLAIN_RAW, LAT_FORM_SGE);
}

static __attribute__((noinline)) int lat_write_inline(struct lat_run *r)
{
	return lat_spin_copy() == LAT_PLAIN ? lat_write_as(r, false, LAT_PLAIN, LAT_FORM_INLINE) :
					       lat_write_as(r, false, LAT_PLAIN_RAW, LAT_FORM_INLINE);
}

/* write_lat waits on memory: no plain copy sleeps on the channel */
static int lat_write(struct lat_run *r)
{
	enum lat_form form = pt_lat_form_of(r, IBV_WR_RDMA_WRITE);
	bool hooks = pt_hooks_on;

	if (pt_lat_copy_of(r, IBV_WR_RDMA_WRITE) != LAT_PLAIN)
		return hooks ? lat_write_hooked(r) : lat_write_general(r);
	if (hooks)
		return lat_spin_copy() == LAT_PLAIN ? lat_write_hooks_tsc(r, form) :
						       lat_write_hooks_raw(r, form);
	if (form == LAT_FORM_OLD)
		return lat_write_old(r);
	return form == LAT_FORM_SGE ? lat_write_sge(r) : lat_write_inline(r);
}

int pt_run_lat_write(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_write);
}

/* The unwatched iterations of read_lat's and atomic_lat's hooks-off copy,
 * from *at, two a bound test: the loop's step, test and branch cost 1.5
 * instructions an iteration, where one a test costs 3. A signal or a look
 * then ends the loop after at most one iteration more. Its counter is the
 * pair's first stamp's address, its bound the last stamp's
 * (pt_lat_bound_at): one register steps through the stamps and the loop
 * keeps no index apart. ts: the stamps are struct timespec
 * (lat_stamps_ts), else 64-bit (of t and u, only the copy's is kept). An
 * odd count runs one alone first. *at the iteration it ended at; rc as
 * lat_read_as's loop (at an error the run ends, its count its stamps':
 * lat_sync). */
static inline __attribute__((always_inline)) int lat_read_pairs(struct lat_run *r, uint64_t *at,
								const struct lat_plain *p,
								enum ibv_wr_opcode op, bool ts)
{
	struct timespec *const tbase = (struct timespec *)p->stamps, *t = tbase + *at;
	uint64_t *const ubase = p->stamps, *u = ubase + *at;
	int rc;

	pt_lat_bound_at(r, ts ? (uint64_t)(uintptr_t)(tbase + p->iters - 1) :
				(uint64_t)(uintptr_t)(ubase + p->iters - 1));
	if ((p->iters - *at) & 1) {   /* the caller saw one due */
		if ((rc = lat_post_iter_as(r, *at, "client", false, false, true, NULL, p, op,
					   NULL)) <= 0)
			return rc;
		t++;
		u++;
	}
	while ((ts ? (uint64_t)(uintptr_t)t : (uint64_t)(uintptr_t)u) < pt_lat_until) {
		if ((rc = lat_post_iter_as(r, (uint64_t)(ts ? t - tbase : u - ubase), "client",
					   false, false, true, NULL, p, op, NULL)) <= 0 ||
		    (rc = lat_post_iter_as(r, (uint64_t)(ts ? t + 1 - tbase : u + 1 - ubase),
					   "client", false, false, true, NULL, p, op, NULL)) <= 0)
			return rc;
		t += 2;
		u += 2;
	}
	*at = (uint64_t)(ts ? t - tbase : u - ubase);
	return 1;
}

/* read_lat's and atomic_lat's loop: op, the run's verb, is a constant in
 * each plain copy (lat_fast_op); the general copies pass READ and post the
 * run's verb through post.c. form: as lat_write_as. */
static inline __attribute__((always_inline)) int lat_read_as(struct lat_run *r, bool hooks,
							    enum lat_copy copy, enum ibv_wr_opcode op,
							    enum lat_form form)
{
	struct lat_spin spin;   /* a plain copy's (lat_plain_of) */
	const struct lat_plain pl = copy != LAT_GENERAL ?
					    lat_plain_of(r, &spin, copy, hooks, form,
							 LAT_REPOSTS_NONE) :
					    (struct lat_plain){ 0 };
	const struct lat_plain *p = copy != LAT_GENERAL ? &pl : NULL;
	struct pt_hook_pairs h = { 0 };
	uint64_t i, t_last = 0;
	int rc = 1;

	/* the first iteration apart (watched: lat_watched); the rest tested
	 * at their end (a do-while: one branch back), rc set after it (not
	 * live across an iteration); a spinning plain copy's unwatched
	 * (lat_watch_off) until a look saw a tracer, then watched or not */
	i = 0;
	if (more(r, 0, p) && (rc = lat_post_iter_as(r, 0, "client", hooks, true, false, &h, p, op,
						    &t_last)) > 0 && more(r, ++i, p)) {
		if (lat_watch_off(r, p)) {
			if (!hooks) {
				if ((rc = lat_read_pairs(r, &i, p, op, lat_stamps_ts(p, LAT_OFF))) <= 0)
					goto out;
			} else {
				do
					if ((rc = lat_post_iter_as(r, i, "client", hooks, false, true,
								   &h, p, op, &t_last)) <= 0)
						goto out;
				while (more(r, ++i, p));
			}
			rc = 1;
			if (!pt_lat_watch_resume(r) || !more(r, i, p))
				goto out;
		}
		do
			if ((rc = lat_post_iter_as(r, i, "client", hooks, false, false, &h, p, op,
						   &t_last)) <= 0)
				goto out;
		while (more(r, ++i, p));
		rc = 1;
	}
out:
	return lat_out(r, rc, i, hooks, false, &h);
}

static __attribute__((noinline)) int lat_read_hooked(struct lat_run *r)
{
	return lat_read_as(r, true, LAT_GENERAL, IBV_WR_RDMA_READ, LAT_FORM_OLD);   /* p NULL */
}

static __attribute__((noinline)) int lat_read_general(struct lat_run *r)
{
	return lat_read_as(r, false, LAT_GENERAL, IBV_WR_RDMA_READ, LAT_FORM_OLD);
}

/* -e's plain copy: a body per post form (a READ is never inline), so no
 * iteration tests it */
static __attribute__((noinline)) int lat_read_plain_events(struct lat_run *r, enum lat_form form)
{
	return form == LAT_FORM_OLD ?
		       lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_RDMA_READ, LAT_FORM_OLD) :
		       lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_RDMA_READ, LAT_FORM_SGE);
}

/* the spinning plain copies, one function per post form (a READ is never
 * inline): the hooks' and the hooks-off ones, one each per clock (enum
 * lat_copy); the old API's posts the run's WR as it is, atomics too */
static __attribute__((noinline)) int lat_read_old(struct lat_run *r, bool hooks)
{
	if (hooks)
		return lat_spin_copy() == LAT_PLAIN ?
			       lat_read_as(r, true, LAT_PLAIN, IBV_WR_RDMA_READ, LAT_FORM_OLD) :
			       lat_read_as(r, true, LAT_PLAIN_RAW, IBV_WR_RDMA_READ, LAT_FORM_OLD);
	return lat_spin_copy() == LAT_PLAIN ?
		       lat_read_as(r, false, LAT_PLAIN, IBV_WR_RDMA_READ, LAT_FORM_OLD) :
		       lat_read_as(r, false, LAT_PLAIN_RAW, IBV_WR_RDMA_READ, LAT_FORM_OLD);
}

static __attribute__((noinline)) int lat_read_sge(struct lat_run *r, bool hooks)
{
	if (hooks)
		return lat_spin_copy() == LAT_PLAIN ?
			       lat_read_as(r, true, LAT_PLAIN, IBV_WR_RDMA_READ, LAT_FORM_SGE) :
			       lat_read_as(r, true, LAT_PLAIN_RAW, IBV_WR_RDMA_READ, LAT_FORM_SGE);
	return lat_spin_copy() == LAT_PLAIN ?
		       lat_read_as(r, false, LAT_PLAIN, IBV_WR_RDMA_READ, LAT_FORM_SGE) :
		       lat_read_as(r, false, LAT_PLAIN_RAW, IBV_WR_RDMA_READ, LAT_FORM_SGE);
}

/* atomic_lat's plain copies, hooks off (with the hooks: the general ones),
 * on the new API only: the form is SGE */
static __attribute__((noinline)) int lat_fadd_plain(struct lat_run *r, bool events)
{
	if (events)
		return lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_ATOMIC_FETCH_AND_ADD, LAT_FORM_SGE);
	return lat_spin_copy() == LAT_PLAIN ?
		       lat_read_as(r, false, LAT_PLAIN, IBV_WR_ATOMIC_FETCH_AND_ADD, LAT_FORM_SGE) :
		       lat_read_as(r, false, LAT_PLAIN_RAW, IBV_WR_ATOMIC_FETCH_AND_ADD, LAT_FORM_SGE);
}

static __attribute__((noinline)) int lat_cswp_plain(struct lat_run *r, bool events)
{
	if (events)
		return lat_read_as(r, false, LAT_PLAIN_EVENTS, IBV_WR_ATOMIC_CMP_AND_SWP, LAT_FORM_SGE);
	return lat_spin_copy() == LAT_PLAIN ?
		       lat_read_as(r, false, LAT_PLAIN, IBV_WR_ATOMIC_CMP_AND_SWP, LAT_FORM_SGE) :
		       lat_read_as(r, false, LAT_PLAIN_RAW, IBV_WR_ATOMIC_CMP_AND_SWP, LAT_FORM_SGE);
}

static int lat_read(struct lat_run *r)
{
	const enum ibv_wr_opcode op = r->l->opt.opcode;
	enum lat_copy copy = pt_lat_copy_of(r, op);

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
	if (copy == LAT_PLAIN)
		return r->res->qps[0].qpx ? lat_read_sge(r, pt_hooks_on) : lat_read_old(r, pt_hooks_on);
	if (pt_hooks_on)   /* -e with the hooks: the general copy */
		return lat_read_hooked(r);
	return copy == LAT_PLAIN_EVENTS ? lat_read_plain_events(r, pt_lat_form_of(r, op)) :
					  lat_read_general(r);
}

int pt_run_lat_read(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_read);
}
