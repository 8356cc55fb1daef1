/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace recorder: run set-up, the hot path and run end (wrtrace.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "wrtrace.h"

/* A WR in flight on one queue. */
struct fifo_ent {
	uint64_t t_post, seq;
	uint64_t rec;               /* index in recs, WRT_NONE when dropped */
	uint64_t signaled;
};

/* One send or receive queue: entries head..tail-1 are outstanding. */
struct fifo {
	struct fifo_ent *e;
	uint64_t head, tail, mask;
	uint64_t next_seq;          /* expected first_seq of the next post */
	uint64_t sig_left;          /* WRs from next_seq to the next signaled one */
	uint32_t period;            /* signal_period sig_left was computed for */
	uint64_t done;              /* receive CQEs so far (their FIFO sequence) */
};

struct wrt {
	struct wrt_config cfg;
	struct wrt_meta meta;
	struct wrt_rec *recs;
	uint64_t nrec, rec_cap;
	uint32_t nqp;
	struct fifo *sq, *rq;
	struct fifo_ent *fifo_mem;
	size_t fifo_bytes;
	struct wrt_overflow ov;
	uint64_t last_sw, last_hw;
	bool have_sw, have_hw, in_run, file_started;
};

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -1;
}

struct wrt *wrt_new(const struct wrt_config *cfg)
{
	struct wrt *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->cfg = *cfg;
	w->ov.send_lat = pt_hist_new();
	w->ov.recv_lat = pt_hist_new();
	w->ov.gap_sw = pt_hist_new();
	w->ov.gap_hw = pt_hist_new();
	if (!w->ov.send_lat || !w->ov.recv_lat || !w->ov.gap_sw || !w->ov.gap_hw) {
		wrt_free(w);
		return NULL;
	}
	return w;
}

static void run_free(struct wrt *w)
{
	free(w->recs);
	free(w->sq);
	free(w->rq);
	free(w->fifo_mem);
	w->recs = NULL;
	w->sq = w->rq = NULL;
	w->fifo_mem = NULL;
}

void wrt_free(struct wrt *w)
{
	if (!w)
		return;
	run_free(w);
	pt_hist_free(w->ov.send_lat);
	pt_hist_free(w->ov.recv_lat);
	pt_hist_free(w->ov.gap_sw);
	pt_hist_free(w->ov.gap_hw);
	free(w);
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void meta_from_info(struct wrt_meta *m, const struct pt_plugin_run_info *in)
{
	size_t off = 0;

	memset(m, 0, sizeof(*m));
	m->run = in->run;
	copy_str(m->tool, sizeof(m->tool), in->tool);
	copy_str(m->device, sizeof(m->device), in->device);
	copy_str(m->hw_domain, sizeof(m->hw_domain), in->hw_clock_domain);
	copy_str(m->sw_clock, sizeof(m->sw_clock), in->sw_clock);
	m->role = in->role;
	m->conn = in->conn;
	m->num_qps = in->num_qps;
	m->tx_depth = in->tx_depth;
	m->rx_depth = in->rx_depth;
	m->cq_mod = in->cq_mod;
	m->post_list = in->post_list;
	m->hw_ts = in->hw_ts;
	m->msg_size = in->msg_size;
	m->iterations = in->iterations;
	m->hw_hz = in->hw_clock_hz;
	for (uint32_t i = 0; in->qp_nums && i < in->num_qps && off + 12 < sizeof(m->qpns); i++)
		off += (size_t)snprintf(m->qpns + off, sizeof(m->qpns) - off, "%s0x%x",
					i ? "," : "", in->qp_nums[i]);
}

/* Records for the run: what the run will post, up to the cap. */
static uint64_t records_wanted(const struct wrt *w, const struct pt_plugin_run_info *in)
{
	uint32_t dirs = in->directions ? in->directions : PT_PLUGIN_DIR_SEND | PT_PLUGIN_DIR_RECV;
	uint64_t per_qp = 0, n;

	if (!in->iterations)
		return w->cfg.max_records;
	if (dirs & PT_PLUGIN_DIR_SEND)
		per_qp += in->iterations;
	if (dirs & PT_PLUGIN_DIR_RECV)
		per_qp += in->iterations + in->rx_depth;
	n = per_qp * in->num_qps;
	if (per_qp && n / per_qp != in->num_qps)
		n = UINT64_MAX;
	return n < w->cfg.max_records ? n : w->cfg.max_records;
}

int wrt_run_start(struct wrt *w, const struct pt_plugin_run_info *in, char *err, size_t err_len)
{
	uint64_t sq_n, rq_n, ents;

	if (!in || !PT_PLUGIN_HAS(in, sw_clock))
		return fail(err, err_len, "run info from an older tool lacks fields this recorder needs");
	if (in->num_qps == 0 || in->num_qps > 1u << 20)
		return fail(err, err_len, "run with %u QPs: want 1..%u", in->num_qps, 1u << 20);
	run_free(w);
	meta_from_info(&w->meta, in);
	w->nqp = in->num_qps;
	w->rec_cap = records_wanted(w, in);
	w->meta.cap = w->rec_cap;
	w->nrec = 0;
	/* Room for every WR the queues can hold, twice, so a full FIFO means
	 * the tool stopped reporting completions, not a deep queue. */
	sq_n = pow2_at_least(2ull * (in->tx_depth > in->post_list ? in->tx_depth : in->post_list));
	rq_n = pow2_at_least(2ull * in->rx_depth);
	if (sq_n < w->cfg.fifo_min)
		sq_n = pow2_at_least(w->cfg.fifo_min);
	if (rq_n < w->cfg.fifo_min)
		rq_n = pow2_at_least(w->cfg.fifo_min);
	ents = (sq_n + rq_n) * w->nqp;
	w->sq = calloc(w->nqp, sizeof(*w->sq));
	w->rq = calloc(w->nqp, sizeof(*w->rq));
	w->fifo_bytes = ents * sizeof(struct fifo_ent);
	w->fifo_mem = malloc(w->fifo_bytes);
	w->recs = w->rec_cap ? malloc(w->rec_cap * sizeof(*w->recs)) : NULL;
	if (!w->sq || !w->rq || !w->fifo_mem || (w->rec_cap && !w->recs)) {
		run_free(w);
		return fail(err, err_len, "cannot allocate %llu records (%llu MiB); lower max=N or %s",
			    (unsigned long long)w->rec_cap,
			    (unsigned long long)(w->rec_cap * sizeof(struct wrt_rec) >> 20), WRT_MAX_ENV);
	}
	/* Touch every page now: a first-touch page fault costs microseconds
	 * inside the timed loop. */
	memset(w->fifo_mem, 0, w->fifo_bytes);
	if (w->recs)
		memset(w->recs, 0, w->rec_cap * sizeof(*w->recs));
	for (uint32_t q = 0; q < w->nqp; q++) {
		w->sq[q].e = w->fifo_mem + (uint64_t)q * sq_n;
		w->sq[q].mask = sq_n - 1;
		w->rq[q].e = w->fifo_mem + (uint64_t)w->nqp * sq_n + (uint64_t)q * rq_n;
		w->rq[q].mask = rq_n - 1;
	}
	pt_hist_reset(w->ov.send_lat);
	pt_hist_reset(w->ov.recv_lat);
	pt_hist_reset(w->ov.gap_sw);
	pt_hist_reset(w->ov.gap_hw);
	w->ov.gap_hw_negative = 0;
	w->have_sw = w->have_hw = false;
	w->in_run = true;
	return 0;
}

static struct wrt_rec *new_rec(struct wrt *w, uint64_t *idx)
{
	if (w->nrec == w->rec_cap) {
		w->meta.dropped++;
		*idx = WRT_NONE;
		return NULL;
	}
	*idx = w->nrec;
	return &w->recs[w->nrec++];
}

/* Signaled per the period rule, by countdown: a division per WR would cost
 * more than the rest of the hot path. */
static bool next_signaled(struct fifo *f, uint64_t seq, uint32_t period)
{
	bool sig;

	if (!period)
		return false;
	if (seq != f->next_seq || period != f->period) {
		f->period = period;
		f->sig_left = period - 1 - seq % period;
	}
	sig = f->sig_left == 0;
	f->sig_left = sig ? period - 1 : f->sig_left - 1;
	f->next_seq = seq + 1;
	return sig;
}

void wrt_post(struct wrt *w, const struct pt_plugin_post *ev)
{
	bool recv = ev->opcode == PT_PLUGIN_OP_RECV;
	struct fifo *f;

	w->meta.wrs += ev->count;
	if (!w->in_run || ev->qp >= w->nqp) {
		w->meta.untracked += ev->count;
		return;
	}
	f = recv ? &w->rq[ev->qp] : &w->sq[ev->qp];
	for (uint32_t i = 0; i < ev->count; i++) {
		uint64_t seq = ev->first_seq + i, idx;
		bool sig = recv || next_signaled(f, seq, ev->signal_period) ||
			   (i + 1 == ev->count && (ev->flags & PT_PLUGIN_POST_LAST_SIGNALED));
		struct fifo_ent *e;
		struct wrt_rec *r;

		if (f->tail - f->head > f->mask) {
			w->meta.untracked += ev->count - i;
			return;
		}
		r = new_rec(w, &idx);
		if (r) {
			r->wr_id = ev->first_wr_id + i * ev->wr_id_step;
			r->seq = seq;
			r->t_post = ev->t_ns;
			r->run = w->meta.run;
			r->qp = ev->qp;
			r->bytes = ev->bytes;
			r->opcode = (uint8_t)ev->opcode;
			r->flags = WRT_POSTED | (sig ? WRT_SIGNALED : 0) | (recv ? WRT_RECV : 0);
		}
		e = &f->e[f->tail++ & f->mask];
		e->t_post = ev->t_ns;
		e->seq = seq;
		e->rec = idx;
		e->signaled = sig;
	}
}

/* Gaps of this CQE to the previous one (software, and NIC when both have a
 * timestamp); updates the timeline. */
struct cqe_gaps {
	uint64_t sw;
	int64_t hw;
	bool has_sw, has_hw;
};

static struct cqe_gaps cqe_gaps(struct wrt *w, const struct pt_plugin_completion *ev)
{
	struct cqe_gaps g = { 0 };
	bool hw = ev->flags & PT_PLUGIN_COMP_HW_TS;

	if (w->have_sw) {
		g.has_sw = true;
		g.sw = ev->t_poll_ns >= w->last_sw ? ev->t_poll_ns - w->last_sw : 0;
	}
	if (hw && w->have_hw) {
		g.has_hw = true;
		g.hw = (int64_t)(ev->hw_ns - w->last_hw);
	}
	w->last_sw = ev->t_poll_ns;
	w->have_sw = true;
	if (hw) {
		w->last_hw = ev->hw_ns;
		w->have_hw = true;
	}
	return g;
}

/* Stamp one WR with the CQE that retired it. own: the CQE is this WR's. */
static void retire(struct wrt *w, const struct fifo_ent *e, const struct pt_plugin_completion *ev,
		   bool own, const struct cqe_gaps *g, bool recv)
{
	uint32_t status = own ? ev->status : 0;
	bool hw = ev->flags & PT_PLUGIN_COMP_HW_TS;
	struct wrt_rec *r;

	if (e->rec == WRT_NONE) {
		/* over the cap: histograms only */
		if (status == 0)
			pt_hist_record(recv ? w->ov.recv_lat : w->ov.send_lat, ev->t_poll_ns - e->t_post);
		if (own && g->has_sw)
			pt_hist_record(w->ov.gap_sw, g->sw);
		if (own && g->has_hw) {
			if (g->hw >= 0)
				pt_hist_record(w->ov.gap_hw, (uint64_t)g->hw);
			else
				w->ov.gap_hw_negative++;
		}
		return;
	}
	r = &w->recs[e->rec];
	r->t_comp = ev->t_poll_ns;
	r->status = (uint8_t)(status > 255 ? 255 : status);
	r->flags |= WRT_DONE;
	if (hw) {
		r->hw_ns = ev->hw_ns;
		r->flags |= WRT_HW;
	}
	if (own && g->has_sw) {
		r->gap_sw = g->sw;
		r->flags |= WRT_CQE;
	}
	if (own && g->has_hw) {
		r->gap_hw = g->hw;
		r->flags |= WRT_GAP_HW;
	}
	if (own && recv && ev->bytes)
		r->bytes = ev->bytes;
}

static void complete_send(struct wrt *w, struct fifo *f, const struct pt_plugin_completion *ev)
{
	uint64_t upto = ev->seq;
	struct cqe_gaps g;

	if (upto == PT_PLUGIN_SEQ_UNKNOWN) {
		/* the oldest signaled WR outstanding is the one this CQE is for */
		uint64_t i;

		for (i = f->head; i != f->tail && !f->e[i & f->mask].signaled; i++)
			;
		if (i == f->tail) {
			w->meta.unmatched++;
			return;
		}
		upto = f->e[i & f->mask].seq;
	}
	if (f->head == f->tail || f->e[f->head & f->mask].seq > upto) {
		w->meta.unmatched++;
		return;
	}
	g = cqe_gaps(w, ev);
	while (f->head != f->tail && f->e[f->head & f->mask].seq <= upto) {
		const struct fifo_ent *e = &f->e[f->head & f->mask];

		retire(w, e, ev, e->seq == upto, &g, false);
		f->head++;
	}
}

static void complete_recv(struct wrt *w, struct fifo *f, uint32_t qp,
			  const struct pt_plugin_completion *ev)
{
	uint64_t seq = ev->seq != PT_PLUGIN_SEQ_UNKNOWN ? ev->seq : f->done;
	struct fifo_ent pre = { .rec = WRT_NONE };
	struct cqe_gaps g = cqe_gaps(w, ev);
	const struct fifo_ent *e = NULL;

	f->done = seq + 1;
	/* receives of lower sequence never completed: the queue moved past them */
	while (f->head != f->tail && f->e[f->head & f->mask].seq < seq) {
		w->meta.unmatched++;
		f->head++;
	}
	if (f->head != f->tail && f->e[f->head & f->mask].seq == seq) {
		e = &f->e[f->head & f->mask];
		f->head++;
	} else {
		/* posted before the run (or untracked): a record without post time */
		struct wrt_rec *r = new_rec(w, &pre.rec);

		w->meta.wrs++;
		if (r) {
			r->wr_id = ev->wr_id;
			r->seq = seq;
			r->run = w->meta.run;
			r->qp = qp;
			r->bytes = ev->bytes;
			r->opcode = PT_PLUGIN_OP_RECV;
			r->flags = WRT_RECV | WRT_SIGNALED;
		} else if (g.has_sw) {
			pt_hist_record(w->ov.gap_sw, g.sw); /* no latency without a post time */
			g.has_sw = false;
		}
		pre.t_post = ev->t_poll_ns;
		pre.seq = seq;
		e = &pre;
		if (!r)
			return;
	}
	retire(w, e, ev, true, &g, true);
}

void wrt_complete(struct wrt *w, const struct pt_plugin_completion *ev)
{
	if (!w->in_run || ev->qp >= w->nqp) {
		w->meta.unmatched++;
		return;
	}
	if (ev->status)
		w->meta.errors++;
	if (ev->flags & PT_PLUGIN_COMP_RECV)
		complete_recv(w, &w->rq[ev->qp], ev->qp, ev);
	else
		complete_send(w, &w->sq[ev->qp], ev);
}

void wrt_clock_fit(struct wrt *w, const struct pt_plugin_clock_fit *fit)
{
	size_t n = fit->struct_size < sizeof(w->meta.fit) ? fit->struct_size : sizeof(w->meta.fit);

	memset(&w->meta.fit, 0, sizeof(w->meta.fit));
	memcpy(&w->meta.fit, fit, n);
	w->meta.fit.struct_size = sizeof(w->meta.fit);
	w->meta.has_fit = fit->samples >= 2;
}

/* Outstanding WRs at the end: sends are incomplete, receives just pending. */
static void count_outstanding(struct wrt *w)
{
	for (uint32_t q = 0; q < w->nqp; q++) {
		w->meta.incomplete += w->sq[q].tail - w->sq[q].head;
		w->meta.recv_pending += w->rq[q].tail - w->rq[q].head;
	}
}

int wrt_run_end(struct wrt *w, const struct pt_plugin_run_end *end, char *err, size_t err_len)
{
	struct wrt_summary s;
	int rc = 0;

	(void)end;
	if (!w->in_run)
		return fail(err, err_len, "run end without a run start");
	w->in_run = false;
	count_outstanding(w);
	w->meta.recorded = w->nrec;
	if (wrt_summarize(&w->meta, w->recs, w->nrec, &w->ov, &s))
		return fail(err, err_len, "out of memory computing the trace summary");
	if (w->meta.dropped && s.send_lat.count) {
		w->meta.all_count = s.send_lat.count;
		w->meta.all_p50 = (uint64_t)s.send_lat.p50;
		w->meta.all_p90 = (uint64_t)s.send_lat.p90;
		w->meta.all_p99 = (uint64_t)s.send_lat.p99;
		w->meta.all_p99_9 = (uint64_t)s.send_lat.p99_9;
		w->meta.all_p99_99 = (uint64_t)s.send_lat.p99_99;
		w->meta.all_max = (uint64_t)s.send_lat.max;
	}
	if (w->cfg.path[0]) {
		rc = wrt_write_run(w->cfg.path, w->cfg.jsonl, w->file_started, &w->meta, w->recs,
				   w->nrec, err, err_len);
		if (!rc)
			w->file_started = true;
	}
	if (w->cfg.quiet)
		return rc;
	wrt_summary_print(w->cfg.summary ? w->cfg.summary : stdout, &w->meta, &s);
	if (w->cfg.path[0] && !rc)
		fprintf(w->cfg.summary ? w->cfg.summary : stdout, " wrtrace: %llu rows written to %s\n",
			(unsigned long long)w->nrec, w->cfg.path);
	return rc;
}

const struct wrt_rec *wrt_records(const struct wrt *w, uint64_t *n)
{
	*n = w->nrec;
	return w->recs;
}

const struct wrt_meta *wrt_meta(const struct wrt *w)
{
	return &w->meta;
}
