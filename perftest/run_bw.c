/* SPDX-License-Identifier: BSD-2-Clause */
/* Bandwidth loops (facts 5.2-5.5): the sender keeps at most tx_depth WRs in
 * flight per QP; the receiver reposts each receive it consumes. Iteration
 * mode counts every message; duration mode counts only the messages that
 * complete inside [margin, duration - margin]. Every wait is bounded: no
 * progress for the OOB timeout ends the run with an error. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "engine.h"

#define POLL_BATCH 16

int pt_wrid_qp(uint64_t wr_id);
uint64_t pt_wrid_index(uint64_t wr_id);

/* Where a run is in time: before, inside or after the measured window. */
struct window {
	bool duration;
	uint64_t t_start, t_sample, t_stop, t_end;
	uint64_t last_progress, stall_ns;
};

static void window_init(struct window *w, const struct pt_params *p, uint64_t now)
{
	const uint64_t s = 1000000000ull;

	memset(w, 0, sizeof(*w));
	w->duration = p->traffic.test_type == PT_TEST_DURATION;
	w->t_start = now;
	w->t_sample = now + (uint64_t)p->traffic.margin * s;
	w->t_stop = now + (uint64_t)(p->traffic.duration - p->traffic.margin) * s;
	w->t_end = now + (uint64_t)p->traffic.duration * s;
	w->last_progress = now;
	w->stall_ns = p->oob.timeout_sec ? (uint64_t)p->oob.timeout_sec * s : UINT64_MAX;
}

static bool in_sample(const struct window *w, uint64_t now)
{
	return !w->duration || (now >= w->t_sample && now < w->t_stop);
}

static int meas_alloc(const struct pt_ctx *c, struct pt_bw_meas *m, bool peak)
{
	uint64_t n = c->p->traffic.iters * (uint64_t)c->num_qps;

	memset(m, 0, sizeof(*m));
	if (!peak || c->p->report.no_peak || c->p->traffic.test_type == PT_TEST_DURATION)
		return 0;
	m->tposted = calloc(n, sizeof(uint64_t));
	m->tcompleted = calloc(n, sizeof(uint64_t));
	if (!m->tposted || !m->tcompleted) {
		fprintf(stderr, " Couldn't allocate %llu timestamps for the BW peak\n",
			(unsigned long long)n);
		return -1;
	}
	return 0;
}

void pt_bw_meas_free(struct pt_bw_meas *m)
{
	free(m->tposted);
	free(m->tcompleted);
	memset(m, 0, sizeof(*m));
}

static int wc_error(const struct ibv_wc *wc, const char *side, const struct pt_ctx *c)
{
	int q = pt_wrid_qp(wc->wr_id);

	fprintf(stderr, " Completion with error at %s\n Failed status %d: %s (wr_id 0x%llx, vendor_err 0x%x)\n",
		side, wc->status, ibv_wc_status_str(wc->status), (unsigned long long)wc->wr_id,
		wc->vendor_err);
	if (q >= 0 && q < c->num_qps)
		fprintf(stderr, " scnt=%llu, ccnt=%llu\n", (unsigned long long)c->qps[q].posted,
			(unsigned long long)c->qps[q].completed);
	return -1;
}

static int stalled(struct window *w, uint64_t now, const char *what, uint64_t got, uint64_t want)
{
	if (pt_interrupted)
		return -1;
	/* now may predate the last progress (it was read before the poll) */
	if (now <= w->last_progress || now - w->last_progress < w->stall_ns)
		return 0;
	fprintf(stderr, " No %s for %llu seconds, exiting.\n Total %s=%llu, Total Iters Required=%llu\n",
		what, (unsigned long long)(w->stall_ns / 1000000000ull), what,
		(unsigned long long)got, (unsigned long long)want);
	return -1;
}

/* Post on every QP as far as its window allows. */
static int post_window(struct pt_ctx *c, struct pt_bw_meas *m, uint64_t iters, uint64_t *posted_total)
{
	unsigned pl = (unsigned)c->p->traffic.post_list;

	for (int i = 0; i < c->num_qps; i++) {
		struct pt_qp *q = &c->qps[i];

		while ((!iters || q->posted < iters) &&
		       q->posted + pl <= (uint64_t)c->tx_depth + q->completed) {
			if (m->tposted) {
				uint64_t t = pt_now_ns();

				for (unsigned j = 0; j < pl; j++)
					m->tposted[*posted_total + j] = t;
			}
			if (pt_post_send(c, i, pl, iters))
				return -1;
			*posted_total += pl;
		}
	}
	return 0;
}

/* Retire send completions; each retires every earlier WR of its QP. */
static int poll_send(struct pt_ctx *c, struct pt_bw_meas *m, struct window *w, uint64_t *done_total)
{
	struct ibv_wc wc[POLL_BATCH];
	int n = ibv_poll_cq(c->send_cq, POLL_BATCH, wc);
	uint64_t now;

	if (n < 0) {
		fprintf(stderr, " Poll on the send CQ failed\n");
		return -1;
	}
	if (n == 0)
		return 0;
	now = pt_now_ns();
	w->last_progress = now;
	for (int k = 0; k < n; k++) {
		struct pt_qp *q;
		uint64_t upto, credit;

		if (wc[k].status != IBV_WC_SUCCESS)
			return wc_error(&wc[k], "client", c);
		q = &c->qps[pt_wrid_qp(wc[k].wr_id)];
		upto = pt_wrid_index(wc[k].wr_id) + 1;
		credit = upto - q->completed;
		q->completed = upto;
		if (m->tcompleted)
			for (uint64_t j = 0; j < credit; j++)
				m->tcompleted[*done_total + j] = now;
		*done_total += credit;
		if (in_sample(w, now))
			m->msgs += credit;
	}
	return 0;
}

static void reset_counters(struct pt_ctx *c)
{
	for (int i = 0; i < c->num_qps; i++) {
		c->qps[i].posted = c->qps[i].completed = 0;
		c->qps[i].received = 0;
	}
}

int pt_run_bw_send(struct pt_ctx *c, struct pt_bw_meas *m)
{
	uint64_t iters = c->p->traffic.iters, want = iters * (uint64_t)c->num_qps;
	uint64_t posted = 0, done = 0, now;
	struct window w;

	if (meas_alloc(c, m, true))
		return -1;
	reset_counters(c);
	window_init(&w, c->p, pt_now_ns());
	for (;;) {
		now = pt_now_ns();
		if (w.duration ? now >= w.t_end : done >= want)
			break;
		if (post_window(c, m, iters, &posted) || poll_send(c, m, &w, &done))
			return -1;
		if (stalled(&w, now, "send completion", done, want))
			return -1;
	}
	m->elapsed_ns = w.duration ? w.t_stop - w.t_sample : now - w.t_start;
	if (m->tposted)
		m->elapsed_ns = m->tcompleted[want - 1] - m->tposted[0];
	return 0;
}

/* Retire receive completions and repost while more are needed. */
static int poll_recv(struct pt_ctx *c, struct pt_bw_meas *m, struct window *w, uint64_t *got,
		     uint64_t *t_first, uint64_t *t_last)
{
	struct ibv_wc wc[POLL_BATCH];
	uint64_t iters = c->p->traffic.iters, now;
	int n = ibv_poll_cq(c->recv_cq, POLL_BATCH, wc);

	if (n < 0) {
		fprintf(stderr, " Poll on the receive CQ failed\n");
		return -1;
	}
	if (n == 0)
		return 0;
	now = pt_now_ns();
	w->last_progress = now;
	if (!*t_first) {
		*t_first = now;
		if (w->duration) /* the receiver's clock starts with its first message */
			window_init(w, c->p, now);
	}
	*t_last = now;
	for (int k = 0; k < n; k++) {
		int i;

		if (wc[k].status != IBV_WC_SUCCESS)
			return wc_error(&wc[k], "server", c);
		i = pt_wrid_qp(wc[k].wr_id);
		c->qps[i].received++;
		(*got)++;
		if (in_sample(w, now))
			m->msgs++;
		if ((w->duration || c->qps[i].recv_posted < iters) && pt_post_recv(c, i, 1))
			return -1;
	}
	return 0;
}

/* UD is unreliable: once the sender is done (its next OOB message is waiting,
 * or for a peerless receiver a quiet second) the missing messages are lost,
 * not late. Checked only when a poll came back empty. */
static bool ud_sender_done(struct pt_ctx *c, uint64_t now, uint64_t last_progress)
{
	struct pollfd pfd = { .fd = c->oob.fd, .events = POLLIN };

	if (c->p->conn.type != PT_CONN_UD || now - last_progress < 200000000ull)
		return false;
	if (c->p->mcast.connectionless)
		return now - last_progress >= 1000000000ull;
	return c->oob.fd >= 0 && poll(&pfd, 1, 0) == 1;
}

int pt_run_bw_recv(struct pt_ctx *c, struct pt_bw_meas *m)
{
	uint64_t want = c->p->traffic.iters * (uint64_t)c->num_qps;
	uint64_t got = 0, t_first = 0, t_last = 0, now;
	struct window w;

	meas_alloc(c, m, false);
	reset_counters(c);
	window_init(&w, c->p, pt_now_ns());
	for (;;) {
		now = pt_now_ns();
		if (w.duration ? (t_first && now >= w.t_end) : got >= want)
			break;
		if (poll_recv(c, m, &w, &got, &t_first, &t_last))
			return -1;
		if (!w.duration && got && now > w.last_progress &&
		    ud_sender_done(c, now, w.last_progress)) {
			m->lost = want - got;
			fprintf(stderr, " UD: %llu of %llu messages lost (received %llu)\n",
				(unsigned long long)m->lost, (unsigned long long)want,
				(unsigned long long)got);
			break;
		}
		if (stalled(&w, now, "message received", got, want))
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

/* -b: both directions at once; the server starts sending on its first receive. */
int pt_run_bw_bidir(struct pt_ctx *c, struct pt_bw_meas *m)
{
	uint64_t iters = c->p->traffic.iters, want = iters * (uint64_t)c->num_qps;
	uint64_t posted = 0, done = 0, got = 0, t_first = 0, t_last = 0, now;
	struct pt_bw_meas rx = { 0 };
	bool client = c->p->oob.is_client;
	struct window w;

	if (meas_alloc(c, m, false))
		return -1;
	reset_counters(c);
	window_init(&w, c->p, pt_now_ns());
	for (;;) {
		now = pt_now_ns();
		if (w.duration ? now >= w.t_end : (done >= want && got >= want))
			break;
		if ((client || t_first) && post_window(c, m, iters, &posted))
			return -1;
		if (poll_send(c, m, &w, &done) || poll_recv(c, &rx, &w, &got, &t_first, &t_last))
			return -1;
		if (stalled(&w, now, "completion", done + got, 2 * want))
			return -1;
	}
	m->elapsed_ns = w.duration ? w.t_stop - w.t_sample : now - w.t_start;
	return 0;
}
