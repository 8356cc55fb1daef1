/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops' run state, shared by the loops (run_lat.c) and their
 * waits (lat_wait.c): the ways a wait ends (the stop rules, -e's
 * completion channel, the spin past its inline polls, write_lat's memory
 * spin), all out of line but the first polls and a CQE's bookkeeping,
 * which the loops inline. */
#ifndef PT_LAT_RUN_H
#define PT_LAT_RUN_H
#include <stdbool.h>
#include <stdint.h>
#include "util/clock.h"
#include "loop.h"
#include "fault.h"

struct lat_run {
	const struct pt_loop *l;
	struct pt_res *res;         /* l->res */
	struct pt_lat_meas *m;
	bool duration, started;
	bool events;                /* -e: sleep on the completion channel */
	bool failed;                /* a wait gave up: peer gone or stalled (said) */
	uint64_t i;                 /* the iteration under way */
	uint64_t t_sample, t_stop, t_end;
	uint64_t last_progress, stall_ns;
	uint64_t t_cqe;             /* the last CQE's poll time, read with the hooks on */
	/* -e, per CQ (0 send, 1 receive): armed for an event and not yet
	 * fired (lat_sleep); events taken and not yet acked (lat_ack) */
	bool armed[2];
	unsigned unacked[2];
	struct pt_lat_wrs wrs;      /* the run's send WR and receive, built once */
	bool plain_repost;          /* one receive per post call, no SRQ (lat_repost) */
	bool plain_poll;            /* spinning on ibv_poll_cq: no -e, no NIC times */
	struct ibv_cq *cq[2];       /* QP 0's send (0) and receive (1) CQ */
	int fast_op;                /* the opcode lat_post_send builds inline, or -1 */
	bool lazy;                  /* a plain copy runs: i and last_progress follow m->n (lat_sync) */
	bool raw;                   /* a hooks-off plain copy runs: m->stamps hold pt_now_raw()
				     * times (m->raw once the loop ends: pt_lat_meas_ns) */
	bool ts;                    /* with raw: the stamps are struct timespec (m->ts) */
	uint64_t stamped;           /* a plain copy's stamps counted last (lat_stamped) */
	/* a spinning plain copy's iterations test no probe: the stop rules'
	 * looks test the probes' word instead (lat_waiting), and when a tracer
	 * raised it they lower the loop's bound to 1 (probes_rose), so that
	 * the loop's own end test leaves it for the watched iterations
	 * (pt_lat_watch_resume) */
	bool unwatched, probes_rose;
	uint64_t bound;             /* pt_lat_until as the loop set it: -n, or an address
				     * (pt_lat_bound_at); what a look may lower */
	struct lat_spin *spin;      /* a spinning plain copy's, while it runs */
};

/* How a plain copy posts its send WR (lat_post_send): the old post API,
 * or the new one with the payload in an SGE or inline. The spinning plain
 * copies (hooks on or off) and -e's (hooks off) are built once per form,
 * where it is a constant (pt_lat_form_of chooses). */
enum lat_form { LAT_FORM_OLD, LAT_FORM_SGE, LAT_FORM_INLINE };

/* A READ or an atomic is never inline (post.c, use_inline): no test. */
static inline bool lat_op_may_inline(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_WRITE || op == IBV_WR_SEND;
}

/* send_lat's reposts in a plain copy (lat_repost): tested per iteration
 * (fewer than -n posted), or known: due in every iteration of the loop's
 * first part, in none of its last (lat_send_as splits the loop there). */
enum lat_reposts { LAT_REPOSTS_TEST, LAT_REPOSTS_DUE, LAT_REPOSTS_NONE };

/* A plain copy's calls into the provider: the poll function and the CQs,
 * the old post API's post function, QP and WR, and the empty polls left
 * before the stop rules' next look while spinning with the hooks off
 * (LAT_SPINS_PER_CHECK across waits: a CQE leaves the rest to the next
 * wait, so a wait sets no count). The copy keeps it in memory (its
 * address escapes, lat_plain_of): a call reads it with its operands (from
 * memory at the cost of from a register), and the registers it would take
 * hold the loop's index and stamps. */
struct lat_spin {
	pt_poll_fn poll_fn;
	struct ibv_cq *cq[2];
	int (*post_fn)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
	struct ibv_qp *qp;
	struct ibv_send_wr *wr;
	unsigned polls_left;
	/* an unwatched iteration's post, not tested where it is made: a
	 * failed one brings no CQE, so the wait's next look at the stop rules
	 * says it (pt_lat_wait_spin), LAT_SPINS_PER_CHECK polls on */
	int post_rc;
	/* clock_gettime, for the copies that stamp with it (LAT_PLAIN_RAW):
	 * called through here, one instruction where a call through the PLT
	 * is two */
	int (*gettime)(clockid_t, struct timespec *);
};

/* A loop's copy for the plain case: a run of known length into the stamps
 * array (no duration, no histogram), no gap, no NIC times, spinning on
 * ibv_poll_cq or (events, -e) sleeping on the completion channel, the
 * loop's verb built inline (lat_fast_op) or the old post API, no immediate
 * data, send_lat's receives one per call on the QP: no test of those per
 * iteration; the array, the polls (struct lat_spin), the provider's arming
 * function and the new API's QP (NULL: the old API) in a local (registers,
 * or one load each). NULL: the general case. */
struct lat_plain {
	uint64_t *stamps;
	struct lat_spin *spin;
	int (*arm_fn)(struct ibv_cq *, int);   /* the provider's req_notify_cq */
	struct pt_chan_waker *waker;           /* -e: the channel's (chan_wait.h) */
	struct ibv_comp_channel *channel;
	struct ibv_qp_ex *qx;
	struct pt_qp *q;   /* QP 0 */
	uint64_t iters;    /* -n: send_lat reposts while fewer are posted */
	bool events;   /* a constant in each copy */
	bool clock_raw;   /* a constant: the stamps by clock_gettime (LAT_PLAIN_RAW) */
	enum lat_form form;         /* a constant in each copy */
	enum lat_reposts reposts;   /* a constant in each of send_lat's copies */
};

/* Empty polls between two looks at the stop rules when spinning, and
 * write_lat's looks at its byte. A poll is ~40 instructions (a call into
 * the provider), a look at the byte ~6, a look at the rules ~80 with a
 * clock read: ~1 % of the spin either way. At 64 of each, bench/instructions
 * measured the looks at the rules costing more than the loop's own work
 * per WR. A look every few microseconds still ends a run within a hair of
 * its duration, and a stall long before its timeout. */
#define LAT_SPINS_PER_CHECK 256u
#define LAT_BYTE_SPINS_PER_CHECK 1024u

/* -e: events taken are acked this many at a time (pt_lat_ack). */
#define LAT_ACK_BATCH 64u

/* lat_wait.c: the run's end (the -e events acked), rc; wait_cq's slow ways
 * (see there); write_lat's wait for the peer's count. */
int pt_lat_done(struct lat_run *r, int rc);
void pt_lat_ack(struct lat_run *r, bool recv);
/* -e's rare ways, out of line: a failed event, arming or poll (said, -1);
 * an event counted for its CQ, which it disarmed (the plain copies' inline
 * wait counts its own CQ's itself). */
int pt_lat_event_failed(void) __attribute__((noinline, cold));
int pt_lat_arm_failed(int rc) __attribute__((noinline, cold));
int pt_lat_poll_failed(int n) __attribute__((noinline, cold));
void pt_lat_event_count(struct lat_run *r, struct ibv_cq *ev_cq) __attribute__((noinline));
/* A wait or a loop that the stop rules ended (lat_waiting false): -1 for
 * a signal (what was measured so far is kept, m->interrupted), the peer
 * gone or a stall; 0 when the duration is over. */
int pt_lat_wait_ended(struct lat_run *r, uint64_t now);
int pt_lat_wait_events(struct lat_run *r, bool recv, struct ibv_wc *wc, uint64_t *hw_ns,
		       bool idle);
int pt_lat_wait_spin(struct lat_run *r, bool recv, bool hooks, const char *side,
		     struct ibv_wc *wc, uint64_t *hw_ns, int n, unsigned polled);
int pt_lat_wait_byte(struct lat_run *r, uint8_t want);
/* A spinning plain copy's unwatched iterations ended (their bound): false
 * at the run's end; true when a look lowered the bound for the probes,
 * which it restored (-n) unless a signal lowered it since. Either way the
 * looks test the probes' word no more. */
bool pt_lat_watch_resume(struct lat_run *r);
/* A loop that counts its stamps' address (lat_read_pairs): the bound is
 * end, an address in its stamps, unless a signal came (0 stays). The
 * bound is -n again at pt_lat_watch_resume. */
void pt_lat_bound_at(struct lat_run *r, uint64_t end);

/* The stamps a plain copy has taken: stamps[0..n) are set and the rest
 * still 0 (pt_lat_init callocs -n of them, and no clock reads 0: TSC
 * ticks, or CLOCK_MONOTONIC_RAW since boot), so its iterations keep no
 * count. Stamps are only ever set, in order: from the count found last
 * (r->stamped), steps that double find a 0 (or the end), and halving the
 * last step finds the first. A look at the stop rules, a few iterations
 * on, costs a few loads, not a search of the whole array. */
static inline bool lat_stamp_set(const struct lat_run *r, uint64_t k)
{
	const uint64_t *s = r->m->stamps;

	return r->ts ? (s[2 * k] | s[2 * k + 1]) != 0 : s[k] != 0;
}

/* A stamp in nanoseconds, as pt_lat_meas_ns gives it. */
static inline uint64_t lat_stamp_ns(const struct lat_run *r, uint64_t k)
{
	const uint64_t *s = r->m->stamps;

	if (r->ts)
		return pt_timespec_ns((const struct timespec *)(const void *)s + k);
	return r->raw ? pt_raw_to_ns(s[k]) : s[k];
}

static inline uint64_t lat_stamped(struct lat_run *r)
{
	const uint64_t end = r->l->opt.iters;
	uint64_t lo = r->stamped, hi = lo, step = 1;   /* stamps[0..lo) are set */

	while (hi < end && lat_stamp_set(r, hi)) {
		lo = hi + 1;
		hi = lo + step < end ? lo + step : end;
		step *= 2;
	}
	/* stamps[0..lo) set; hi is the end or a 0 */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (lat_stamp_set(r, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return r->stamped = lo;
}

/* A plain copy stamps into m->stamps only; the count (m->n), the
 * iteration under way and the last progress (its stamp) are set here, for
 * the slow paths that read them (lat_waiting, lat_wc_failed) and the
 * loop's end (lat_out). */
static inline void lat_sync(struct lat_run *r)
{
	uint64_t k;

	if (!r->lazy)
		return;
	k = r->m->n = lat_stamped(r);
	if (k) {
		r->i = k - 1;
		r->last_progress = lat_stamp_ns(r, k - 1);
	}
}

/* A failed completion on QP 0: said on stderr, -1. Sends restart their
 * numbering every iteration (post_one): the iteration is the WR's number. */
static __attribute__((noinline, cold)) int lat_wc_failed(struct lat_run *r, const struct ibv_wc *wc,
							bool recv, const char *side)
{
	struct pt_wc_where at;

	lat_sync(r);
	at = (struct pt_wc_where){
		.side = side, .recv = recv, .qp = 0, .seq = recv ? pt_wrid_index(wc->wr_id) : r->i,
	};

	return pt_wc_error(r->l->res, wc, &at, &r->l->peer);
}

/* A CQE taken: its poll time into *t with the hooks on (a USDT probe
 * reads the clock itself, only when it fires); the fault-test stop when
 * watched (a plain copy's iterations past its first are not: the stop
 * fires after a run's first CQE). 1, or -1 for a failed one (said): rc 1
 * means IBV_WC_SUCCESS, which the pair stores rely on. The stall rule needs
 * no time here: the next post's stamp is progress. */
/* The time in nanoseconds: a spinning plain copy reads the clock it is
 * built for, with no test (enum lat_copy, lat_loop.h); else pt_now_ns(). */
static inline __attribute__((always_inline)) uint64_t lat_clock_raw_ns(const struct lat_plain *p)
{
	struct timespec ts;

	p->spin->gettime(CLOCK_MONOTONIC_RAW, &ts);
	return pt_timespec_ns(&ts);
}

static inline __attribute__((always_inline)) uint64_t lat_now_ns(const struct lat_plain *p)
{
	if (p && !p->events)
		return p->clock_raw ? lat_clock_raw_ns(p) : pt_now_ns_fixed();
	return pt_now_ns();
}

/* A CQE's status is IBV_WC_SUCCESS: on x86-64 one compare of the
 * status in memory and the branch, where the compiler loads it into a
 * register and tests that (one instruction more per CQE in every loop). */
static inline __attribute__((always_inline)) bool lat_wc_success(const struct ibv_wc *wc)
{
#if defined(__x86_64__)
	_Static_assert(IBV_WC_SUCCESS == 0 && sizeof(wc->status) == 4, "cmpl $0 tests the status");
	__asm__ goto("cmpl $0, %0\n\tjne %l1" : : "m"(wc->status) : "cc" : failed);
	return true;
failed:
	return false;
#else
	return __builtin_expect(wc->status == IBV_WC_SUCCESS, 1);
#endif
}

static inline __attribute__((always_inline)) int cqe_taken(struct lat_run *r, bool recv, bool hooks,
							   bool watched, const char *side,
							   const struct ibv_wc *wc, uint64_t *t,
							   const struct lat_plain *p, bool ok)
{
	if (hooks)   /* else only a USDT probe reads the time: it reads its own */
		*t = lat_now_ns(p);
	if (!ok && !lat_wc_success(wc)) {   /* ok: known a success */
		lat_wc_failed(r, wc, recv, side);
		return -1;
	}
	if (watched)
		PT_TEST_STOP(PT_STAGE_RUN);
	return 1;
}

/* Up to `turns` polls of CQ `recv` for one completion; the last poll's
 * result. Spinning on ibv_poll_cq, the CQ and the provider's poll function
 * are at hand across the turns (the inline ibv_poll_cq reloads both
 * through the CQ's context at every call): in registers, or in a plain
 * copy's struct lat_spin, read with the call's operands. A turn is the
 * call and two tests, as the wait needs no more until the stop rules'
 * look. */
static inline __attribute__((always_inline)) int poll_turns(const struct lat_run *r, bool recv,
							    struct ibv_wc *wc, uint64_t *hw_ns,
							    unsigned turns, const struct lat_plain *p)
{
	int n;

	if (p) {
		const struct lat_spin *s = p->spin;

		do
			n = s->poll_fn(s->cq[recv], 1, wc);
		while (n == 0 && --turns);
		return n;
	}
	if (__builtin_expect(r->plain_poll, 1))
		return pt_spin_poll(r->cq[recv]->context->ops.poll_cq, r->cq[recv], 1, wc, turns);
	do
		n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
	while (n == 0 && --turns);
	return n;
}

/* A hooks-off plain copy's spin: polls of CQ recv for one completion
 * while it is empty and the spin's count of polls lasts; the last poll's
 * result (0: the count ran out, the stop rules' look is due). */
static inline __attribute__((always_inline)) int spin_polls(const struct lat_plain *p, bool recv,
							    struct ibv_wc *wc)
{
	struct lat_spin *s = p->spin;
	int n;

	/* an empty poll "unlikely": the compiler then lays the count's
	 * decrement out of line, so the post falls through to the poll and
	 * the poll to the CQE's code, and a turn still branches once */
	do
		n = s->poll_fn(s->cq[recv], 1, wc);
	while (__builtin_expect(n == 0, 0) && --s->polls_left);
	return n;
}

#endif
