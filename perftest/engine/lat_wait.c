/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops' waits past their inline part (lat_run.h): the stop
 * rules (duration, SIGINT, the peer gone, a stall), -e's sleep on the
 * completion channel, the spin past LAT_SPINS_PER_CHECK polls, write_lat's
 * memory spin, and what a failed CQE says. */
#define PT_LOOP_VIEW_ONLY
#include <stdio.h>
#include "util/clock.h"
#include "util/err.h"
#include "lat_run.h"
#include "plugin/hooks/probes.h"

/* A wait that lat_waiting() ended: -1 for an interruption (what was
 * measured so far is kept), the peer gone or a stall; 0 when the duration
 * is over (a normal end). */
int pt_lat_wait_ended(struct lat_run *r, uint64_t now)
{
	if (pt_interrupted) {
		r->m->interrupted = true;
		if (r->duration)
			r->m->elapsed_ns = r->started && now > r->t_sample ?
				(now < r->t_stop ? now : r->t_stop) - r->t_sample : 0;
		return -1;
	}
	return r->failed ? -1 : 0;
}

/* false once the run must stop: duration over, interrupted, the peer gone
 * or stalled. */
static bool lat_waiting(struct lat_run *r, uint64_t now, const char *what)
{
	lat_sync(r);
	if (pt_interrupted)
		return false;
	if (r->unwatched && PT_PROBES_WR_ON()) {
		/* the loop's next end test leaves its unwatched iterations; a
		 * signal's 0 stays (the exchange fails) */
		uint64_t bound = r->bound;

		if (__atomic_compare_exchange_n(&pt_lat_until, &bound, 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			r->unwatched = false;
			r->probes_rose = true;
		}
	}
	if (r->duration && r->started && now >= r->t_end)
		return false;
	switch (pt_run_idle(&r->l->peer, now, r->last_progress, r->stall_ns)) {
	case PT_RUN_PEER_GONE:
		pt_say_peer_gone("%llu of %llu iterations done", (unsigned long long)r->i,
				 (unsigned long long)r->l->opt.iters);
		break;
	case PT_RUN_STALLED:
		fprintf(stderr, " No %s for %llu seconds, exiting.\n", what,
			(unsigned long long)(r->stall_ns / 1000000000ull));
		break;
	default:
		return true;
	}
	r->failed = true;
	return false;
}

/* -e: events taken and not yet acked, per CQ, are acked LAT_ACK_BATCH at
 * a time (each ibv_ack_cq_events takes the CQ's lock) and all of them when
 * the run ends (pt_lat_done), before the tool can destroy the CQs. */
void pt_lat_ack(struct lat_run *r, bool recv)
{
	if (r->unacked[recv])
		ibv_ack_cq_events(recv ? r->res->recv_cq : r->res->send_cq, r->unacked[recv]);
	r->unacked[recv] = 0;
}

/* Every loop's way out: the events acked; rc as the loop returned it. */
int pt_lat_done(struct lat_run *r, int rc)
{
	pt_lat_ack(r, false);
	pt_lat_ack(r, true);
	return rc;
}

int pt_lat_event_failed(void)
{
	pt_err_call("ibv_get_cq_event", pt_err_code(0), "Failed to get a CQ event");
	return -1;
}

int pt_lat_arm_failed(int rc)
{
	pt_err_call("ibv_req_notify_cq", pt_err_code(rc), "Couldn't request CQ notification");
	return -1;
}

int pt_lat_poll_failed(int n)
{
	pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll CQ failed");
	return -1;
}

/* An event taken: counted for its CQ, which it disarmed (a latency loop has
 * at most one CQE due per CQ, so none is missed); an event of a CQ not the
 * run's, never expected, is acked at once. */
void pt_lat_event_count(struct lat_run *r, struct ibv_cq *ev_cq)
{
	bool which = ev_cq == r->cq[1];

	if (!which && ev_cq != r->cq[0]) {
		ibv_ack_cq_events(ev_cq, 1);
		return;
	}
	if (++r->unacked[which] >= LAT_ACK_BATCH)
		pt_lat_ack(r, which);
	r->armed[which] = false;
}

/* -e: CQ `recv` was armed before its CQE can come, so its event cannot be
 * missed: one arming, one event and one poll per CQE, as 6.06 does. Sleep
 * until the event (1), the waker (0, within 2 * PT_CHAN_WAKE_MS: the stop
 * rules run, the CQ is polled anyway), or an error (-1). An event of the
 * other CQ disarms that one, which its own wait polls. */
static int lat_sleep(struct lat_run *r, bool recv)
{
	struct pt_res *res = r->res;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int rc;

	while (r->armed[recv]) {
		rc = pt_chan_sleep(&res->waker, res->channel, &ev_cq, &ev_ctx);
		if (__builtin_expect(rc <= 0, 0))
			return rc ? pt_lat_event_failed() : 0;
		pt_lat_event_count(r, ev_cq);
	}
	return 1;
}

static __attribute__((noinline)) int lat_events_idle(struct lat_run *r)
{
	uint64_t now = pt_now_ns();

	return lat_waiting(r, now, "completion") ? 1 : pt_lat_wait_ended(r, now);
}

/* wait_cq with -e: 1 with the CQE in *wc (its status is the caller's:
 * cqe_taken), 0 at the end of the run, -1 on an error (said). Per CQE in
 * the steady state: the CQ is still armed from the last wait, so one
 * sleep, one event, one arming and one poll. idle: the caller's sleep
 * (wait_event_plain) ended without an event: the CQ is polled and the stop
 * rules run first, so that an idle wait looks at them every 100 ms. */
int pt_lat_wait_events(struct lat_run *r, bool recv, struct ibv_wc *wc, uint64_t *hw_ns, bool idle)
{
	int n, rc = 0;

	for (;;) {
		if (!idle) {
			if (!r->armed[recv]) {
				/* armed before the poll: a CQE after it raises an event */
				rc = ibv_req_notify_cq(r->cq[recv], 0);
				if (__builtin_expect(rc != 0, 0))
					return pt_lat_arm_failed(rc);
				r->armed[recv] = true;
				n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
				if (n)
					break;
			}
			rc = lat_sleep(r, recv);
		}
		idle = false;
		if (__builtin_expect(rc == 0, 0)) {
			n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
			if (n)
				break;
			rc = lat_events_idle(r);
		}
		if (rc <= 0)
			return rc;
	}
	return __builtin_expect(n == 1, 1) ? 1 : pt_lat_poll_failed(n);
}

/* wait_cq spinning, past `polled` polls (at most LAT_SPINS_PER_CHECK) whose
 * last gave n: nothing (0), a completion (1) or an error (< 0). The stop
 * rules run every LAT_SPINS_PER_CHECK empty polls, however the inline
 * part split them. */
int pt_lat_wait_spin(struct lat_run *r, bool recv, bool hooks, const char *side,
		     struct ibv_wc *wc, uint64_t *hw_ns, int n, unsigned polled)
{
	uint64_t now;

	for (;;) {
		if (n == 1)
			return cqe_taken(r, recv, hooks, true, side, wc, &r->t_cqe, NULL, false);
		if (n < 0) {
			pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll CQ failed");
			return -1;
		}
		if (polled >= LAT_SPINS_PER_CHECK) {
			if (r->spin && __builtin_expect(r->spin->post_rc != 0, 0))
				return pt_lat_post_failed(r->spin->post_rc);   /* no CQE comes */
			now = pt_now_ns();
			if (!lat_waiting(r, now, "completion"))
				return pt_lat_wait_ended(r, now);
			polled = 0;
		}
		n = poll_turns(r, recv, wc, hw_ns, LAT_SPINS_PER_CHECK - polled, NULL);
		polled = LAT_SPINS_PER_CHECK;
	}
}

bool pt_lat_watch_resume(struct lat_run *r)
{
	uint64_t lowered = 1, bound = r->bound;
	bool rose = r->probes_rose;

	r->unwatched = r->probes_rose = false;
	r->bound = r->l->opt.iters;
	if (rose)
		return __atomic_compare_exchange_n(&pt_lat_until, &lowered, r->bound, false,
						   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	if (bound != r->bound)   /* an address (pt_lat_bound_at): -n again */
		__atomic_compare_exchange_n(&pt_lat_until, &bound, r->bound, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
	return false;
}

void pt_lat_bound_at(struct lat_run *r, uint64_t end)
{
	uint64_t bound = r->bound;

	if (__atomic_compare_exchange_n(&pt_lat_until, &bound, end, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		r->bound = end;
}

/* write_lat: wait until the peer's count (the last byte it wrote into our
 * region) reaches want; the loop looked once already (lat_write_iter). */
int pt_lat_wait_byte(struct lat_run *r, uint8_t want)
{
	volatile uint8_t *last = r->l->res->qps[0].recv_buf + r->l->run->size - 1;
	unsigned spins = 0;

	/* progress is the next post's stamp (lat_stamp) */
	while (*last != want) {
		uint64_t now;

		if (++spins % LAT_BYTE_SPINS_PER_CHECK)
			continue;
		now = pt_now_ns();
		if (!lat_waiting(r, now, "write from the peer"))
			return pt_lat_wait_ended(r, now);
	}
	return 1;
}
