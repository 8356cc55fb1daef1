/* SPDX-License-Identifier: BSD-2-Clause */
/* Bandwidth loops (docs/upstream-behaviour.md §5.1-5.4): the sender keeps at most tx_depth WRs in
 * flight per QP; the receiver reposts each receive it consumes. Iteration
 * mode counts every message; duration mode counts only the messages that
 * complete inside [margin, duration - margin]. Every wait is bounded: no
 * progress for the OOB timeout ends the run with an error, and so does the
 * peer's out-of-band connection closing (it died: on rxe an RC sender would
 * otherwise retry forever, as retry_cnt 7 means "no limit" there). SIGINT
 * ends the run with what was measured so far (m->interrupted). */
#define PT_LOOP_VIEW_ONLY
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/clock.h"
#include "util/err.h"
#include "util/cpustat.h"
#include "loop.h"
#include "bw_post.h"
#include "fault.h"
#include "perftest/report/bw_peak.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"

/* The poll batches, send [0] and receive [1]: grown to the largest batch
 * asked, kept for the process (one run at a time). */
static struct batch {
	struct ibv_wc *wc;
	uint64_t *hw;
	unsigned cap, n;
} batches[2];

unsigned pt_poll_batch_next(unsigned cur, int got, bool dynamic)
{
	if (!dynamic || got < 0)
		return cur;
	if ((unsigned)got == cur && cur < PT_POLL_BATCH_MAX)
		return cur * 2 > PT_POLL_BATCH_MAX ? PT_POLL_BATCH_MAX : cur * 2;
	if ((unsigned)got < cur / 2 && cur > PT_POLL_BATCH_MIN)
		return cur / 2 < PT_POLL_BATCH_MIN ? PT_POLL_BATCH_MIN : cur / 2;
	return cur;
}

/* Both batches at the run's start size, with room for the largest. */
static int batches_reset(const struct pt_loop *l)
{
	unsigned start = l->opt.poll_batch ? l->opt.poll_batch : PT_POLL_BATCH_MIN;
	unsigned need = l->opt.poll_dynamic && start < PT_POLL_BATCH_MAX ? PT_POLL_BATCH_MAX : start;

	for (int i = 0; i < 2; i++) {
		struct batch *b = &batches[i];

		if (b->cap < need) {
			struct ibv_wc *wc = realloc(b->wc, need * sizeof(*wc));
			uint64_t *hw = wc ? realloc(b->hw, need * sizeof(*hw)) : NULL;

			if (wc)
				b->wc = wc;
			if (!hw) {
				fprintf(stderr, " Couldn't allocate a poll batch of %u completions\n", need);
				return -1;
			}
			b->hw = hw;
			b->cap = need;
		}
		b->n = start;
	}
	return 0;
}

/* A sender spinning on an empty CQ runs its stop rules (stall, peer gone)
 * once per this many empty polls. */
#define SPIN_CHECK 64

/* Where a run is in time: before, inside or after the measured window.
 * --run_infinitely has no end and prints a row every period instead. */
struct window {
	bool duration, infinite;
	uint64_t t_start, t_sample, t_stop, t_end;
	uint64_t last_progress, stall_ns;
	uint64_t period_ns, t_period, period_msgs;  /* --run_infinitely */
	bool cpu;                                   /* --cpu_util */
	struct pt_cpu_sample cpu_a, cpu_b;
	bool armed;                                 /* -e: CQs armed for an event */
	bool start_on_rx;                           /* duration starts at the first receive */
};

static void window_init(struct window *w, const struct pt_loop_opts *o, uint64_t now)
{
	const uint64_t s = 1000000000ull;

	memset(w, 0, sizeof(*w));
	w->duration = o->duration;
	w->infinite = o->infinite;
	w->t_start = now;
	w->t_sample = now + (uint64_t)o->margin_s * s;
	w->t_stop = now + (uint64_t)(o->duration_s - o->margin_s) * s;
	w->t_end = now + (uint64_t)o->duration_s * s;
	if (w->infinite) {
		w->t_sample = now;
		w->t_stop = w->t_end = UINT64_MAX;
		w->period_ns = (uint64_t)o->duration_s * s;
		w->t_period = now;
	}
	w->cpu = o->cpu_util && !w->infinite;
	w->last_progress = now;
	w->stall_ns = o->stall_ns;
}

/* -O: 0 for a QP of port 1, 1 for port 2 (--report-per-port's counts). */
static int port_of(const struct pt_loop *l, int qp)
{
	return l->opt.port2_first_qp > 0 && qp >= l->opt.port2_first_qp;
}

static bool in_sample(const struct window *w, uint64_t now)
{
	return !w->duration || (now >= w->t_sample && now < w->t_stop);
}

/* Once per loop turn: CPU samples at the window's edges, and the periodic
 * row of --run_infinitely. */
static void window_tick(const struct pt_loop *l, struct window *w, struct pt_bw_meas *m,
			uint64_t now)
{
	if (w->cpu && !w->cpu_a.valid && now >= w->t_sample)
		pt_cpu_read(NULL, &w->cpu_a);
	if (w->cpu && !w->cpu_b.valid && now >= w->t_stop) {
		pt_cpu_read(NULL, &w->cpu_b);
		m->cpu_util = pt_cpu_util(&w->cpu_a, &w->cpu_b);
	}
	if (w->infinite && now - w->t_period >= w->period_ns) {
		if (l->period_row)
			l->period_row(l->period_arg, m->msgs - w->period_msgs, now - w->t_period);
		w->period_msgs = m->msgs;
		w->t_period = now;
	}
}

/* -e: nothing to poll, so sleep on the completion channel. The CQs are
 * armed first and polled once more (a completion may have slipped in before
 * the arming); the waker ends a sleep without an event within
 * 2 * PT_CHAN_WAKE_MS (chan_wait.h), so the window and stall checks still run. */
static int wait_event(const struct pt_loop *l, struct window *w, struct ibv_cq *a, struct ibv_cq *b)
{
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got;

	if (!w->armed) {
		int rc = a ? ibv_req_notify_cq(a, 0) : 0;

		if (!rc && b)
			rc = ibv_req_notify_cq(b, 0);
		if (rc) {
			pt_err_call("ibv_req_notify_cq", pt_err_code(rc), "Couldn't request CQ notification");
			return -1;
		}
		w->armed = true;
		return 0;
	}
	got = pt_chan_sleep(&l->res->waker, l->res->channel, &ev_cq, &ev_ctx);
	if (got < 0) {
		pt_err_call("ibv_get_cq_event", pt_err_code(0), "Failed to get a CQ event");
		return -1;
	}
	if (got)
		ibv_ack_cq_events(ev_cq, 1);
	w->armed = false;
	return 0;
}

static int meas_alloc(const struct pt_loop *l, struct pt_bw_meas *m, bool peak)
{
	uint64_t n = l->opt.iters * (uint64_t)l->res->num_qps;

	memset(m, 0, sizeof(*m));
	m->cpu_util = -1;
	if (!peak || !l->opt.peak || !n)
		return 0;
	/* a few KiB whatever n (perftest/report/bw_peak.h) */
	m->peak = malloc(sizeof(*m->peak));
	if (!m->peak || pt_bw_peak_init(m->peak, n, l->opt.post_list, (unsigned)l->run->cq_mod)) {
		fprintf(stderr, " Couldn't set up the BW peak of %llu messages\n", (unsigned long long)n);
		free(m->peak);
		m->peak = NULL;
		return -1;
	}
	return 0;
}

void pt_bw_meas_free(struct pt_bw_meas *m)
{
	pt_bw_peak_free(m->peak);
	free(m->peak);
	memset(m, 0, sizeof(*m));
}

/* No progress lately: -1 once the peer has gone or the run stalled (said on
 * stderr), else 0. what/got/want describe how far the run got. */
static int stalled(const struct pt_loop *l, const struct window *w, uint64_t now, const char *what,
		   uint64_t got, uint64_t want)
{
	switch (pt_run_idle(&l->peer, now, w->last_progress, w->stall_ns)) {
	case PT_RUN_PEER_GONE:
		pt_say_peer_gone("Total %s=%llu, Total Iters Required=%llu", what,
				 (unsigned long long)got, (unsigned long long)want);
		return -1;
	case PT_RUN_STALLED:
		fprintf(stderr, " No %s for %llu seconds, exiting.\n Total %s=%llu, Total Iters Required=%llu\n",
			what, (unsigned long long)(w->stall_ns / 1000000000ull), what,
			(unsigned long long)got, (unsigned long long)want);
		return -1;
	default:
		return 0;
	}
}

/* SIGINT: the time the messages counted so far took (from: the start of
 * an iteration run). */
static uint64_t partial_ns(const struct window *w, uint64_t from, uint64_t now)
{
	if (w->duration)
		return now > w->t_sample ? (now < w->t_stop ? now : w->t_stop) - w->t_sample : 0;
	return now > from ? now - from : 0;
}

/* A failed completion: said on stderr (which QP and WR, the cause), -1. */
static int wc_failed(const struct pt_loop *l, const struct ibv_wc *wc, bool recv)
{
	struct pt_wc_where at = {
		.side = l->opt.is_client ? "client" : "server", .recv = recv,
		.qp = pt_wrid_qp(wc->wr_id), .seq = pt_wrid_index(wc->wr_id), .counts = true,
	};

	return pt_wc_error(l->res, wc, &at, &l->peer);
}

/* Retire send completions; each retires every earlier WR of its QP.
 * spins > 1 (a plain poll: no NIC times): poll up to spins times while the
 * CQ is empty, the CQ and the provider's poll function in registers (the
 * inline ibv_poll_cq reloads both through the CQ's context at every call),
 * so a wait for the link costs a call and two tests a poll. A dynamic
 * batch shrinks after each empty poll as pt_poll_batch_next says, down to
 * its least size, then stays. */
static int poll_send(const struct pt_loop *l, struct pt_bw_meas *m, struct window *w,
		     uint64_t *done_total, unsigned spins)
{
	struct batch *b = &batches[0];
	struct ibv_wc *wc = b->wc;
	uint64_t *hw = b->hw, now;      /* NIC CQE times, with hardware timestamps */
	int n;

	if (spins > 1) {
		struct ibv_cq *cq = l->res->send_cq;
		pt_poll_fn poll_fn = cq->context->ops.poll_cq;
		const bool dyn = l->opt.poll_dynamic;
		unsigned want = b->n;

		for (;;) {
			n = poll_fn(cq, (int)want, wc);
			if (n != 0 || !--spins)
				break;
			if (!dyn || want <= PT_POLL_BATCH_MIN) {   /* the size stays */
				n = pt_spin_poll(poll_fn, cq, (int)want, wc, spins);
				break;
			}
			want = pt_poll_batch_next(want, 0, true);
		}
		b->n = pt_poll_batch_next(want, n, dyn);
	} else {
		n = pt_poll_cq(l->res, false, (int)b->n, wc, hw);
		b->n = pt_poll_batch_next(b->n, n, l->opt.poll_dynamic);
	}

	if (n < 0) {
		pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll on the send CQ failed");
		return -1;
	}
	if (n == 0)
		return 0;
	now = pt_now_ns();
	w->last_progress = now;
	for (int k = 0; k < n; k++) {
		struct pt_qp *q;
		uint64_t upto, credit;

		pt_hook_wc((uint32_t)pt_wrid_qp(wc[k].wr_id), pt_wrid_index(wc[k].wr_id), &wc[k], false,
			   now, pt_hw_ns(l->res, hw, k));
		PT_PROBE_COMPLETE(pt_wrid_qp(wc[k].wr_id), wc[k].qp_num, pt_wrid_index(wc[k].wr_id),
				  wc[k].wr_id, wc[k].status, now);
		if (wc[k].status != IBV_WC_SUCCESS)
			return wc_failed(l, &wc[k], false);
		q = &l->res->qps[pt_wrid_qp(wc[k].wr_id)];
		upto = pt_wrid_index(wc[k].wr_id) + 1;
		credit = upto - q->completed;
		q->completed = upto;
		if (m->peak && pt_bw_peak_complete(m->peak, credit, now))
			return pt_bw_peak_nomem();
		*done_total += credit;
		if (in_sample(w, now)) {
			m->msgs += credit;
			m->msgs_port[port_of(l, pt_wrid_qp(wc[k].wr_id))] += credit;
		}
	}
	PT_TEST_STOP(PT_STAGE_RUN);
	return n;
}

static bool sender_done(const struct pt_loop *l, const struct window *w, uint64_t now);

/* The SW rate limiter of this run: *pace = pc, or NULL when off. */
static int pace_init(const struct pt_loop *l, struct pt_pacer *pc, struct pt_pacer **pace, uint64_t now)
{
	double pps = pt_pace_rate_pps(l->opt.pace_pps, l->opt.pace_bytes_ps, l->run->size);

	*pace = NULL;
	if (pps <= 0)
		return 0;
	if (pt_pacer_init(pc, pps, l->opt.pace_burst, now)) {
		fprintf(stderr, " The SW rate limiter needs a burst size above 0 (--burst_size)\n");
		return -1;
	}
	*pace = pc;
	return 0;
}

static int reset_counters(const struct pt_loop *l)
{
	for (int i = 0; i < l->res->num_qps; i++) {
		l->res->qps[i].posted = l->res->qps[i].completed = 0;
		l->res->qps[i].received = 0;
	}
	return batches_reset(l);
}

int pt_run_bw_send(const struct pt_loop *l, struct pt_bw_meas *m)
{
	uint64_t iters = l->opt.iters, want = iters * (uint64_t)l->res->num_qps;
	uint64_t posted = 0, done = 0, now;
	struct pt_pacer pacer, *pace;
	struct window w;
	int n;

	if (meas_alloc(l, m, true))
		return -1;
	if (reset_counters(l)) {
		pt_bw_meas_free(m);
		return -1;
	}
	window_init(&w, &l->opt, pt_now_ns());
	if (pace_init(l, &pacer, &pace, w.t_start)) {
		pt_bw_meas_free(m);
		return -1;
	}
	/* A turn that finds no completion is the spin of a sender waiting for
	 * the link, so it does little: the windows only open when completions
	 * retire WRs (post_window then, or every turn with the pacer), and a
	 * plain run of -n iterations reads the clock and runs the stop rules
	 * every SPIN_CHECK empty turns (a run in time, -e or --cpu_util every
	 * turn). Such a run with a plain poll (no pacer, no NIC times) spins
	 * in poll_send: up to SPIN_CHECK polls a turn while the CQ is empty. bench/README.md ("Spinning tools: the fit"): one more
	 * empty poll of ib_write_bw cost 218 own instructions, then 77 (6.06:
	 * 77), now the spin's call and two tests. */
	const bool timed = w.duration || w.infinite || w.cpu || l->res->channel;
	const unsigned spin = !timed && !pace && !l->res->hwts ? SPIN_CHECK : 1;
	bool open = true;
	unsigned idle = 0;

	now = w.t_start;
	for (;;) {
		if (timed) {
			now = pt_now_ns();
			if (w.duration ? now >= w.t_end : done >= want)
				break;
			window_tick(l, &w, m, now);
		} else if (done >= want) {
			now = pt_now_ns();
			break;
		}
		if ((open || pace) && pt_bw_post_window(l, m, iters, &posted, pace))
			return -1;
		open = false;
		if ((n = poll_send(l, m, &w, &done, spin)) < 0)
			return -1;
		if (n > 0)
			open = true;
		else if (l->res->channel && wait_event(l, &w, l->res->send_cq, NULL))
			return -1;
		if (pt_interrupted) {
			now = timed ? now : pt_now_ns();
			m->interrupted = !w.infinite;
			break;
		}
		if (!timed) {   /* spinning, an empty turn was SPIN_CHECK polls */
			if (n > 0 || (spin == 1 && ++idle % SPIN_CHECK))
				continue;
			now = pt_now_ns();
		}
		if (w.infinite && sender_done(l, &w, now))
			break;
		if (stalled(l, &w, now, "send completion", done, want))
			return -1;
	}
	if (m->interrupted) {
		m->elapsed_ns = partial_ns(&w, w.t_start, now);
		return -1;
	}
	m->elapsed_ns = w.duration ? w.t_stop - w.t_sample : now - w.t_start;
	if (m->peak)
		m->elapsed_ns = m->peak->last_done_t - m->peak->first_post_t;
	return 0;
}

/* Retire receive completions and repost while more are needed: at most
 * left of them, so a pass of known length (the warm-up's receives) leaves
 * the next pass's completions in the CQ (a batch that took them hung the
 * run after it, lab 42 write_bw warm-up: 346 of 400 received). */
static int poll_recv(const struct pt_loop *l, struct pt_bw_meas *m, struct window *w, uint64_t *got,
		     uint64_t *t_first, uint64_t *t_last, uint64_t left)
{
	struct batch *b = &batches[1];
	struct ibv_wc *wc = b->wc;
	uint64_t now, *hw = b->hw;
	int n;

	if (left == 0)   /* -b: this side's receives are done, its sends not yet */
		return 0;
	n = pt_poll_cq(l->res, true, left < b->n ? (int)left : (int)b->n, wc, hw);

	b->n = pt_poll_batch_next(b->n, n, l->opt.poll_dynamic);

	if (n < 0) {
		pt_err_call("ibv_poll_cq", pt_err_code(n), "Poll on the receive CQ failed");
		return -1;
	}
	if (n == 0)
		return 0;
	now = pt_now_ns();
	w->last_progress = now;
	if (!*t_first) {
		*t_first = now;
		if (w->duration && w->start_on_rx) /* a receiver's clock starts with its first message */
			window_init(w, &l->opt, now);
	}
	*t_last = now;
	for (int k = 0; k < n; k++) {
		int i;

		pt_hook_wc((uint32_t)pt_wrid_qp(wc[k].wr_id), PT_PLUGIN_SEQ_UNKNOWN, &wc[k], true, now,
			   pt_hw_ns(l->res, hw, k));
		PT_PROBE_COMPLETE_RECV(pt_wrid_qp(wc[k].wr_id), wc[k].qp_num, pt_wrid_index(wc[k].wr_id),
				       wc[k].wr_id, wc[k].status, now);
		if (wc[k].status != IBV_WC_SUCCESS)
			return wc_failed(l, &wc[k], true);
		if (pt_check_imm(l, &wc[k]))
			return -1;
		i = pt_wrid_qp(wc[k].wr_id);
		l->res->qps[i].received++;
		(*got)++;
		if (in_sample(w, now)) {
			m->msgs++;
			m->msgs_port[port_of(l, i)]++;
		}
		if (pt_recv_repost(l, i, w->duration))
			return -1;
	}
	PT_TEST_STOP(PT_STAGE_RUN);
	return n;
}

/* The sender has finished: UD messages still missing are lost, not late
 * (its next OOB message is waiting, or for a peerless receiver a quiet
 * second); --run_infinitely ends when the peer stops. Checked only after
 * 200 ms without a completion. A UD sender whose connection closed did not
 * finish: it went away (stalled() says so). */
static bool sender_done(const struct pt_loop *l, const struct window *w, uint64_t now)
{
	if (now <= w->last_progress || now - w->last_progress < PT_PEER_PROBE_NS)
		return false;
	if (w->infinite)
		return pt_peer_finished(&l->peer);
	if (w->duration || !l->opt.ud)
		return false;
	if (l->opt.connectionless)
		return now - w->last_progress >= 1000000000ull;
	return pt_peer_finished(&l->peer) && !pt_peer_closed(&l->peer);
}

int pt_run_bw_recv(const struct pt_loop *l, struct pt_bw_meas *m)
{
	uint64_t want = l->opt.iters * (uint64_t)l->res->num_qps;
	uint64_t got = 0, t_first = 0, t_last = 0, now;
	struct window w;
	int n;

	meas_alloc(l, m, false);
	if (reset_counters(l)) {
		pt_bw_meas_free(m);
		return -1;
	}
	window_init(&w, &l->opt, pt_now_ns());
	w.start_on_rx = true;
	for (;;) {
		now = pt_now_ns();
		if (w.duration ? (t_first && now >= w.t_end) : got >= want)
			break;
		if (t_first)
			window_tick(l, &w, m, now);
		if ((n = poll_recv(l, m, &w, &got, &t_first, &t_last,
				   w.duration || w.infinite ? UINT64_MAX : want - got)) < 0)
			return -1;
		if (n == 0 && l->res->channel && wait_event(l, &w, l->res->recv_cq, NULL))
			return -1;
		if (pt_interrupted) {
			m->interrupted = !w.infinite;
			break;
		}
		if (got && sender_done(l, &w, now)) {
			if (w.infinite)
				break;
			m->lost = want - got;
			fprintf(stderr, " UD: %llu of %llu messages lost (received %llu)\n",
				(unsigned long long)m->lost, (unsigned long long)want,
				(unsigned long long)got);
			break;
		}
		if (stalled(l, &w, now, "message received", got, want))
			return -1;
	}
	if (m->interrupted) {
		m->elapsed_ns = partial_ns(&w, t_first, t_last);
		return -1;
	}
	/* Up to the end of the last batch: never 0, even when one poll returned
	 * every message. */
	m->elapsed_ns = w.duration ? w.t_stop - w.t_sample :
		       (m->lost ? t_last : pt_now_ns()) - t_first;
	if (!m->elapsed_ns)
		m->elapsed_ns = 1;
	return 0;
}

/* -b: both directions at once; the server starts sending (and its clock)
 * on its first receive. */
int pt_run_bw_bidir(const struct pt_loop *l, struct pt_bw_meas *m)
{
	uint64_t iters = l->opt.iters, want = iters * (uint64_t)l->res->num_qps;
	uint64_t posted = 0, done = 0, got = 0, t_first = 0, t_last = 0, now;
	struct pt_bw_meas rx = { 0 };
	bool client = l->opt.is_client;
	struct pt_pacer pacer, *pace;
	struct window w;
	int ns, nr;

	/* the peak of this side's sends; -b adds the peer's, as 6.06 does */
	if (meas_alloc(l, m, true))
		return -1;
	if (reset_counters(l)) {
		pt_bw_meas_free(m);
		return -1;
	}
	window_init(&w, &l->opt, pt_now_ns());
	w.start_on_rx = !client;
	if (pace_init(l, &pacer, &pace, w.t_start)) {
		pt_bw_meas_free(m);
		return -1;
	}
	for (;;) {
		now = pt_now_ns();
		if (w.duration ? now >= w.t_end : (done >= want && got >= want))
			break;
		if (client || t_first)
			window_tick(l, &w, m, now);
		if ((client || t_first) && pt_bw_post_window(l, m, iters, &posted, pace))
			return -1;
		if ((ns = poll_send(l, m, &w, &done, 1)) < 0 ||
		    (nr = poll_recv(l, &rx, &w, &got, &t_first, &t_last,
				    w.duration || w.infinite ? UINT64_MAX : want - got)) < 0)
			return -1;
		if (ns + nr == 0 && l->res->channel && wait_event(l, &w, l->res->send_cq, l->res->recv_cq))
			return -1;
		if (pt_interrupted) {
			m->interrupted = !w.infinite;
			break;
		}
		if (w.infinite && sender_done(l, &w, now))
			break;
		if (stalled(l, &w, now, "completion", done + got, 2 * want))
			return -1;
	}
	if (m->interrupted) {
		m->elapsed_ns = partial_ns(&w, w.t_start, now);
		return -1;
	}
	m->elapsed_ns = w.duration ? w.t_stop - w.t_sample : now - w.t_start;
	return 0;
}

uint64_t pt_warm_up_iters(const struct pt_loop *l)
{
	uint64_t pl = l->opt.post_list ? l->opt.post_list : 1;
	uint64_t n = (uint64_t)l->run->tx_depth / pl * pl;

	return n ? n : pl;
}

int pt_run_bw_warm_up(const struct pt_loop *l)
{
	struct pt_loop w = *l;
	struct pt_bw_meas m = { 0 };
	int rc;

	/* a plain iteration run: no window, no peak, no periodic rows */
	w.opt.iters = pt_warm_up_iters(l);
	w.opt.duration = w.opt.infinite = w.opt.peak = w.opt.cpu_util = false;
	w.opt.pace_pps = w.opt.pace_bytes_ps = 0;  /* not paced: it is not measured */
	w.period_row = NULL;
	rc = pt_run_bw_send(&w, &m);
	pt_bw_meas_free(&m);
	if (rc && !pt_interrupted)
		fprintf(stderr, " The warm-up pass (--perform_warm_up) failed\n");
	return rc;
}

int pt_run_bw_warm_up_recv(const struct pt_loop *l, uint64_t recv_prepost)
{
	struct pt_loop w = *l;
	struct pt_bw_meas m = { 0 };
	int rc;

	w.opt.iters = pt_warm_up_iters(l);
	w.opt.duration = w.opt.infinite = w.opt.peak = w.opt.cpu_util = false;
	w.period_row = NULL;
	/* counted from 0, the pass reposts exactly the warm-up's receives */
	for (int i = 0; i < l->res->num_qps; i++)
		l->res->qps[i].recv_posted = 0;
	rc = pt_run_bw_recv(&w, &m);
	pt_bw_meas_free(&m);
	/* the run's own receives are outstanding, as if just preposted */
	for (int i = 0; i < l->res->num_qps; i++) {
		l->res->qps[i].recv_posted = recv_prepost;
		l->res->qps[i].recv_owed = 0;
	}
	if (rc && !pt_interrupted)
		fprintf(stderr, " Receiving the peer's warm-up writes (--perform_warm_up) failed\n");
	return rc;
}
