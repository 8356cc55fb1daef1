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
#include "perftest/report/results.h"
#include "fault.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

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
	uint64_t t_cqe;             /* the last CQE's poll time, read only when observed */
	/* -e, per CQ (0 send, 1 receive): armed for an event and not yet
	 * fired (lat_sleep); events taken and not yet acked (lat_ack) */
	bool armed[2];
	unsigned unacked[2];
	struct pt_lat_wrs wrs;      /* the run's send WR and receive, built once */
	bool plain_repost;          /* one receive per post call, no SRQ (lat_repost) */
};

static void lat_start(struct lat_run *r, uint64_t now)
{
	const struct pt_loop_opts *o = &r->l->opt;
	const uint64_t s = 1000000000ull;

	r->started = true;
	r->t_sample = now + (uint64_t)o->margin_s * s;
	r->t_stop = now + (uint64_t)(o->duration_s - o->margin_s) * s;
	r->t_end = now + (uint64_t)o->duration_s * s;
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
	r->m = m;
	r->duration = l->opt.duration;
	r->last_progress = pt_now_ns();
	r->stall_ns = l->opt.stall_ns;
	pt_lat_wrs_init(l, &r->wrs);
	r->plain_repost = l->opt.recv_post_list <= 1 && !l->res->srq;
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

/* A wait that lat_waiting() ended: -1 for an interruption (what was
 * measured so far is kept), the peer gone or a stall; 0 when the duration
 * is over (a normal end). */
static int wait_ended(struct lat_run *r, uint64_t now)
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
	if (pt_interrupted)
		return false;
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

/* Iteration i posts now: stamp it; in duration mode only the round trips
 * that end inside the window count. */
static inline __attribute__((always_inline)) void lat_stamp(struct lat_run *r, uint64_t i, uint64_t now)
{
	struct pt_lat_meas *m = r->m;
	bool keep = !r->duration;

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

/* A failed completion on QP 0: said on stderr, -1. Sends restart their
 * numbering every iteration (post_one): the iteration is the WR's number. */
static int wc_failed(const struct lat_run *r, const struct ibv_wc *wc, bool recv, const char *side)
{
	struct pt_wc_where at = {
		.side = side, .recv = recv, .qp = 0, .seq = recv ? pt_wrid_index(wc->wr_id) : r->i,
	};

	return pt_wc_error(r->l->res, wc, &at, &r->l->peer);
}

/* -e: events taken and not yet acked, per CQ: acked LAT_ACK_BATCH at a
 * time (each ibv_ack_cq_events takes the CQ's lock) and all of them when
 * the run ends (lat_done), before the tool can destroy the CQs. */
#define LAT_ACK_BATCH 64u

static void lat_ack(struct lat_run *r, bool recv)
{
	if (r->unacked[recv])
		ibv_ack_cq_events(recv ? r->res->recv_cq : r->res->send_cq, r->unacked[recv]);
	r->unacked[recv] = 0;
}

/* Every loop's way out: the events acked; rc as the loop returned it. */
static int lat_done(struct lat_run *r, int rc)
{
	lat_ack(r, false);
	lat_ack(r, true);
	return rc;
}

/* Does anyone look at a CQE's time (a plugin, a USDT probe)? */
static inline bool cqe_observed(bool recv)
{
	return pt_hooks_on || (recv ? PT_PROBE_ON(complete_recv) : PT_PROBE_ON(complete));
}

/* Empty polls between two looks at the stop rules when spinning. */
#define LAT_SPINS_PER_CHECK 64u

/* A CQE taken: its poll time when observed, the fault-test stop; 1, or
 * -1 for a failed one (said). */
static inline int cqe_taken(struct lat_run *r, bool recv, const char *side, const struct ibv_wc *wc)
{
	r->t_cqe = cqe_observed(recv) ? pt_now_ns() : 0;
	if (r->t_cqe)
		r->last_progress = r->t_cqe;
	if (__builtin_expect(wc->status != IBV_WC_SUCCESS, 0))
		return wc_failed(r, wc, recv, side);
	PT_TEST_STOP(PT_STAGE_RUN);
	return 1;
}

/* -e: CQ `recv` was armed before its CQE can come (a latency loop has at
 * most one CQE due per CQ), so its event cannot be missed: one arming, one
 * event and one poll per CQE, as 6.06 does. Sleep until the event (1), 100
 * ms (0: the stop rules run, the CQ is polled anyway), or an error (-1).
 * An event of the other CQ disarms that one, which its own wait polls. */
static int lat_sleep(struct lat_run *r, bool recv)
{
	struct pt_res *res = r->res;
	struct pollfd pfd = { .fd = res->channel->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	bool which;

	while (r->armed[recv]) {
		if (poll(&pfd, 1, 100) != 1)
			return 0;
		if (ibv_get_cq_event(res->channel, &ev_cq, &ev_ctx)) {
			pt_err_call("ibv_get_cq_event", pt_err_code(0), "Failed to get a CQ event");
			return -1;
		}
		which = ev_cq == res->recv_cq;
		if (!which && ev_cq != res->send_cq) {
			ibv_ack_cq_events(ev_cq, 1);    /* not ours: never expected */
			continue;
		}
		if (++r->unacked[which] >= LAT_ACK_BATCH)
			lat_ack(r, which);
		r->armed[which] = false;
	}
	return 1;
}

/* wait_cq with -e. */
static __attribute__((noinline)) int wait_cq_events(struct lat_run *r, bool recv, const char *side,
						    struct ibv_wc *wc, uint64_t *hw_ns)
{
	uint64_t now;
	int n, rc;

	for (;;) {
		if (!r->armed[recv]) {
			/* armed before the poll: a CQE after it raises an event */
			rc = ibv_req_notify_cq(recv ? r->res->recv_cq : r->res->send_cq, 0);
			if (rc) {
				pt_err_call("ibv_req_notify_cq", pt_err_code(rc),
					    "Couldn't request CQ notification");
				return -1;
			}
			r->armed[recv] = true;
			n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
			if (n)
				break;
		}
		rc = lat_sleep(r, recv);
		if (rc < 0)
			return -1;
		if (rc == 0) {
			n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
			if (n)
				break;
			now = pt_now_ns();
			if (!lat_waiting(r, now, "completion"))
				return wait_ended(r, now);
		}
	}
	if (n == 1)
		return cqe_taken(r, recv, side, wc);
	pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll CQ failed");
	return -1;
}

/* wait_cq spinning, past a first poll that found nothing. */
static __attribute__((noinline)) int wait_cq_spin(struct lat_run *r, bool recv, const char *side,
						  struct ibv_wc *wc, uint64_t *hw_ns, int n)
{
	unsigned spins = 0;
	uint64_t now;

	for (;;) {
		if (n == 1)
			return cqe_taken(r, recv, side, wc);
		if (n < 0) {
			pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll CQ failed");
			return -1;
		}
		if (++spins % LAT_SPINS_PER_CHECK == 0) {
			now = pt_now_ns();
			if (!lat_waiting(r, now, "completion"))
				return wait_ended(r, now);
		}
		n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
	}
}

/* Poll the send or receive CQ (with -e: sleep between polls) until a
 * completion (1), the end of the run (0) or an error (-1). *hw_ns gets the
 * completion's NIC time when the CQ stamps them (pt_hw_ns); r->t_cqe its
 * poll time when observed, else 0 (the hooks then read the clock). The
 * spinning case's first poll is inline: on a fast link it is the only one. */
static inline __attribute__((always_inline)) int wait_cq(struct lat_run *r, bool recv, const char *side, struct ibv_wc *wc,
			  uint64_t *hw_ns)
{
	int n;

	if (r->events)
		return wait_cq_events(r, recv, side, wc, hw_ns);
	n = pt_poll_cq(r->res, recv, 1, wc, hw_ns);
	if (__builtin_expect(n == 1, 1))
		return cqe_taken(r, recv, side, wc);
	return wait_cq_spin(r, recv, side, wc, hw_ns, n);
}

static bool more(const struct lat_run *r, uint64_t i)
{
	return r->duration ? !(r->started && pt_now_ns() >= r->t_end) : i < r->l->opt.iters;
}

static int lat_end(struct lat_run *r)
{
	if (r->duration)
		r->m->elapsed_ns = r->t_stop - r->t_sample;
	return 0;
}

/* Post one send-queue WR (the tool's verb) at time now (the iteration's
 * stamp: the hook reads no clock of its own) and wait for its completion. */
static inline __attribute__((always_inline)) int post_one(struct lat_run *r, uint64_t i, uint64_t now, const char *side)
{
	struct ibv_wc wc;
	uint64_t hw_ns;
	int rc;

	if (pt_lat_post_send(r->l, &r->wrs))
		return -1;
	pt_hook_pair_post(0, i, 0, now);
	/* wr_id is pt_wrid(0, 0) every iteration: the sequence is i */
	PT_PROBE_POST(0, r->l->res->qps[0].qp->qp_num, i, 1, pt_wrid(0, 0), pt_now_ns());
	rc = wait_cq(r, false, side, &wc, &hw_ns);
	if (rc == 1) {
		pt_hook_pair_wc(0, i, &wc, false, r->t_cqe, pt_hw_ns(r->l->res, &hw_ns, 0));
		PT_PROBE_COMPLETE(0, wc.qp_num, i, wc.wr_id, wc.status, r->t_cqe);
	}
	return rc;
}


/* What pt_lat_repost tells the hooks of receive seq (the pair slots take
 * it), out of line: inline, its registers cost the hooks-off loop. */
static __attribute__((noinline)) void lat_repost_hook(const struct lat_run *r, uint64_t seq)
{
	pt_hook_post(0, seq, 1, PT_PLUGIN_OP_RECV, r->wrs.recv.wr_id, 1, r->wrs.recv_sge.length, 0, 0,
		     PT_HOOK_NOW);
}

/* send_lat's receive consumed: repost it. The plain case (one receive per
 * call, no SRQ, no USDT tracer, more due) inline; pt_lat_repost the rest. */
static inline int lat_repost(struct lat_run *r)
{
	struct pt_qp *q = &r->res->qps[0];
	struct ibv_recv_wr *bad;

	if (__builtin_expect(!r->plain_repost || PT_PROBE_ON(post_recv) ||
			     (!r->duration && q->recv_posted >= r->l->opt.iters), 0))
		return pt_lat_repost(r->l, &r->wrs, r->duration);
	r->wrs.recv.wr_id = pt_wrid(0, q->recv_posted);
	if (__builtin_expect(ibv_post_recv(q->qp, &r->wrs.recv, &bad) != 0, 0))
		return pt_lat_repost(r->l, &r->wrs, r->duration);   /* again, to say why */
	if (__builtin_expect(pt_hooks_on, 0))
		lat_repost_hook(r, q->recv_posted);
	q->recv_posted++;
	return 0;
}

/* send_lat: wait for the peer's message, record it, repost while more are due. */
static inline __attribute__((always_inline)) int recv_one(struct lat_run *r, const char *side)
{
	const struct pt_loop *l = r->l;
	struct ibv_wc wc;
	uint64_t hw_ns;
	int rc = wait_cq(r, true, side, &wc, &hw_ns);

	if (rc <= 0)
		return rc;
	pt_hook_pair_wc(0, PT_PLUGIN_SEQ_UNKNOWN, &wc, true, r->t_cqe, pt_hw_ns(l->res, &hw_ns, 0));
	PT_PROBE_COMPLETE_RECV(0, wc.qp_num, pt_wrid_index(wc.wr_id), wc.wr_id, wc.status, r->t_cqe);
	if (__builtin_expect(l->opt.imm, 0) && pt_check_imm(l, &wc))
		return -1;
	return lat_repost(r) ? -1 : 1;
}

/* A run of one of the loops below: set up, loop, every event acked.
 * Inlined into each pt_run_lat_*, so the loop is a direct call. */
static inline __attribute__((always_inline)) int lat_run(const struct pt_loop *l, struct pt_lat_meas *m,
							 int (*loop)(struct lat_run *))
{
	struct lat_run r;

	if (lat_init(&r, l, m))
		return -1;
	return lat_done(&r, loop(&r));
}

static int lat_send(struct lat_run *r)
{
	const struct pt_loop *l = r->l;
	bool client = l->opt.is_client;
	const char *side = client ? "client" : "server";
	uint64_t i, now;
	int rc;

	for (i = 0; more(r, i); i++) {
		if ((!client || i > 0) && (rc = recv_one(r, side)) <= 0)
			return rc < 0 ? -1 : lat_end(r);
		if (__builtin_expect(l->opt.lat_gap_ns != 0, 0))
			pt_lat_gap(l->opt.lat_gap_ns);
		now = pt_now_ns();
		lat_stamp(r, i, now);
		if ((rc = post_one(r, i, now, side)) <= 0)
			return rc < 0 ? -1 : lat_end(r);
	}
	/* the client's last ping comes back once more */
	if (client && !r->duration && recv_one(r, side) <= 0)
		return -1;
	return lat_end(r);
}

int pt_run_lat_send(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_send);
}

/* write_lat: wait until the peer's count (the last byte it wrote into our
 * region) reaches want. */
static int wait_byte(struct lat_run *r, uint8_t want)
{
	volatile uint8_t *last = r->l->res->qps[0].recv_buf + r->l->run->size - 1;
	unsigned spins = 0;

	/* progress is the next post's stamp (lat_stamp) */
	while (*last != want) {
		uint64_t now;

		if (++spins % LAT_SPINS_PER_CHECK)
			continue;
		now = pt_now_ns();
		if (!lat_waiting(r, now, "write from the peer"))
			return wait_ended(r, now);
	}
	return 1;
}

static int lat_write(struct lat_run *r)
{
	const struct pt_loop *l = r->l;
	bool client = l->opt.is_client;
	const char *side = client ? "client" : "server";
	uint8_t *payload_last = l->res->qps[0].send_buf + l->run->size - 1;
	uint64_t i, now;
	int rc;

	for (i = 0; more(r, i); i++) {
		/* the server writes first; the client answers each write */
		if ((client || i > 0) && (rc = wait_byte(r, (uint8_t)(client ? i + 1 : i))) <= 0)
			return rc < 0 ? -1 : lat_end(r);
		*payload_last = (uint8_t)(i + 1);
		if (__builtin_expect(l->opt.lat_gap_ns != 0, 0))
			pt_lat_gap(l->opt.lat_gap_ns);
		now = pt_now_ns();
		lat_stamp(r, i, now);
		if ((rc = post_one(r, i, now, side)) <= 0)
			return rc < 0 ? -1 : lat_end(r);
	}
	/* the server's last write is answered once more */
	if (!client && !r->duration && wait_byte(r, (uint8_t)i) <= 0)
		return -1;
	return lat_end(r);
}

int pt_run_lat_write(const struct pt_loop *l, struct pt_lat_meas *m)
{
	return lat_run(l, m, lat_write);
}

static int lat_read(struct lat_run *r)
{
	const struct pt_loop *l = r->l;
	uint64_t i, now;
	int rc;

	for (i = 0; more(r, i); i++) {
		if (__builtin_expect(l->opt.lat_gap_ns != 0, 0))
			pt_lat_gap(l->opt.lat_gap_ns);
		now = pt_now_ns();
		lat_stamp(r, i, now);
		if ((rc = post_one(r, i, now, "client")) <= 0)
			return rc < 0 ? -1 : lat_end(r);
	}
	return lat_end(r);
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
