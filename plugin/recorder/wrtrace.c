/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace recorder: run set-up, the FIFO path and run end (wrtrace.h); the
 * deferred rows are in wrtrace_defer.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "wrtrace_rec.h"

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
	w->ov.send_lat = malloc(sizeof(struct wrt_hist));
	w->ov.recv_lat = malloc(sizeof(struct wrt_hist));
	w->ov.gap_sw = malloc(sizeof(struct wrt_hist));
	w->ov.gap_hw = malloc(sizeof(struct wrt_hist));
	if (!w->ov.send_lat || !w->ov.recv_lat || !w->ov.gap_sw || !w->ov.gap_hw) {
		wrt_free(w);
		return NULL;
	}
	return w;
}

static void run_free(struct wrt *w)
{
	wrt_lazy_free(w);
	wrt_pairs_free(w);
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
	free(w->ov.send_lat);
	free(w->ov.recv_lat);
	free(w->ov.gap_sw);
	free(w->ov.gap_hw);
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

	if (!in || !PT_PLUGIN_HAS(in, struct pt_plugin_run_info, sw_clock))
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
	wrt_hist_reset(w->ov.send_lat);
	wrt_hist_reset(w->ov.recv_lat);
	wrt_hist_reset(w->ov.gap_sw);
	wrt_hist_reset(w->ov.gap_hw);
	w->ov.gap_hw_negative = 0;
	w->have_sw = w->have_hw = false;
	w->one_op = (uint8_t)(PT_PLUGIN_HAS(in, struct pt_plugin_run_info, send_opcode) ?
			      in->send_opcode : PT_PLUGIN_OP_OTHER);
	w->one_bytes = (uint32_t)in->msg_size;
	w->one_period = in->cq_mod;
	w->slots = NULL;
	w->nslots = 0;
	wrt_pairs_free(w);
	wrt_lazy_start(w, in);
	w->in_run = true;
	return 0;
}

static void post_recv(struct wrt *w, struct fifo *f, const struct pt_plugin_post *ev, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct fifo_ent *e = &f->e[f->tail++ & f->mask];

		e->t_post = ev->t_ns;
		e->seq = ev->first_seq + i;
		e->wr_id = ev->first_wr_id + i * ev->wr_id_step;
		e->bytes = ev->bytes;
		e->opcode = PT_PLUGIN_OP_RECV;
		e->signaled = 1;
	}
	(void)w;
}

/* Any post: several WRs, receives, a jump in sequence, a full FIFO. Values
 * live in locals so the compiler need not reload them after every store
 * (the event, the FIFO and the recorder could alias). */
static __attribute__((noinline)) void post_any(struct wrt *w, const struct pt_plugin_post *ev)
{
	const uint32_t period = ev->signal_period, count = ev->count, bytes = ev->bytes;
	const uint64_t t = ev->t_ns, seq0 = ev->first_seq, id0 = ev->first_wr_id;
	const uint64_t step = ev->wr_id_step;
	const uint8_t op = (uint8_t)ev->opcode;
	uint32_t n = count;
	struct fifo *f;
	struct fifo_ent *ring;
	uint64_t room, tail, mask, left;

	w->meta.wrs += n;
	if (!w->in_run || ev->qp >= w->nqp) {
		w->meta.untracked += n;
		return;
	}
	f = op == PT_PLUGIN_OP_RECV ? &w->rq[ev->qp] : &w->sq[ev->qp];
	ring = f->e;
	tail = f->tail;
	mask = f->mask;
	room = mask + 1 - (tail - f->head);
	if (__builtin_expect(n > room, 0)) {
		/* the tool stopped reporting completions: count, do not guess */
		w->meta.untracked += n - room;
		n = (uint32_t)room;
	}
	if (op == PT_PLUGIN_OP_RECV) {
		post_recv(w, f, ev, n);
		return;
	}
	if (period && (seq0 != f->next_seq || period != f->period))
		resync(f, seq0, period);
	if (!period)
		f->period = 0;   /* the next post with a period resyncs */
	left = f->sig_left;
	for (uint32_t i = 0; i < n; i++) {
		struct fifo_ent *e = &ring[tail++ & mask];
		bool sig = false;

		if (period) {
			sig = left == 0;
			left = sig ? period - 1 : left - 1;
		}
		e->t_post = t;
		e->seq = seq0 + i;
		e->wr_id = id0 + i * step;
		e->bytes = bytes;
		e->opcode = op;
		e->signaled = sig;
	}
	if ((ev->flags & PT_PLUGIN_POST_LAST_SIGNALED) && n && n == count)
		ring[(tail - 1) & mask].signaled = 1;
	f->tail = tail;
	f->sig_left = left;
	f->next_seq = seq0 + n;
}

/* The FIFO path's common case: one send WR, next in sequence, same signal
 * period, room in the FIFO (what a BW loop without a post list does for
 * every WR). false: not that case, nothing done. */
static inline bool fifo_post1(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t,
			      uint32_t bytes, uint8_t op, uint32_t period, bool last_sig)
{
	struct fifo *f;
	struct fifo_ent *e;
	uint64_t tail;
	bool sig;

	if (__builtin_expect(op == PT_PLUGIN_OP_RECV || !w->in_run || qp >= w->nqp || !period, 0))
		return false;
	f = &w->sq[qp];
	tail = f->tail;
	if (__builtin_expect(tail - f->head > f->mask || seq != f->next_seq || period != f->period, 0))
		return false;
	sig = f->sig_left == 0;
	f->sig_left = sig ? period - 1 : f->sig_left - 1;
	e = &f->e[tail & f->mask];
	e->t_post = t;
	e->seq = seq;
	e->wr_id = wr_id;
	e->bytes = bytes;
	e->opcode = op;
	e->signaled = sig || last_sig;
	f->tail = tail + 1;
	f->next_seq = seq + 1;
	w->meta.wrs++;
	return true;
}

/* The deferred path's common case: the next WR of the queue's open
 * segment, room in its chunk and in flight; only its post time is kept.
 * false: not that case, nothing done. */
static inline bool lazy_post1(struct wrt *w, struct dq *q, uint64_t seq, uint64_t wr_id, uint64_t t)
{
	if (__builtin_expect(!q->open || seq != q->next_seq || wr_id != q->id_next ||
			     q->pos == q->end || q->posted - q->retired >= q->room, 0))
		return false;
	w->pool[q->pos++] = t;
	q->posted++;
	q->next_seq = seq + 1;
	q->id_next = wr_id + q->id_step;
	w->meta.wrs++;
	return true;
}

/* Any post (out of line: the fast path of wrt_post needs no stack frame). */
static __attribute__((noinline)) void post_general(struct wrt *w, const struct pt_plugin_post *ev)
{
	if (w->lazy && ev->qp < w->nqp) {   /* lazy: only inside a run */
		const bool recv = ev->opcode == PT_PLUGIN_OP_RECV;
		struct dq *q = &w->dq[recv ? w->nqp + ev->qp : ev->qp];

		if (!recv)
			wrt_slots_take(w, ev->qp);

		/* LAST_SIGNALED on signal period 1 (a latency loop's posts) changes
		 * nothing: every WR is signaled anyway */
		if (ev->count == 1 &&
		    (!ev->flags || (ev->flags == PT_PLUGIN_POST_LAST_SIGNALED && ev->signal_period == 1)) &&
		    ev->bytes == q->bytes && ev->opcode == q->op &&
		    (recv || ev->signal_period == q->period) &&
		    lazy_post1(w, q, ev->first_seq, ev->first_wr_id, ev->t_ns))
			return;
		if (wrt_lazy_post(w, ev))
			return;
		wrt_lazy_rows(w);   /* the FIFOs take it from here */
	}
	if (ev->count == 1 &&
	    fifo_post1(w, ev->qp, ev->first_seq, ev->first_wr_id, ev->t_ns, ev->bytes,
		       (uint8_t)ev->opcode, ev->signal_period,
		       ev->flags & PT_PLUGIN_POST_LAST_SIGNALED))
		return;
	post_any(w, ev);
}

/* The deferral's one-WR post on a queue without lent slots (a latency
 * loop's send and every receive): post_general's first test, alone. */
static inline bool lazy_post_fast(struct wrt *w, const struct pt_plugin_post *ev)
{
	const bool recv = ev->opcode == PT_PLUGIN_OP_RECV;
	struct dq *q;

	if (__builtin_expect(!w->lazy || ev->qp >= w->nqp || ev->count != 1, 0))
		return false;
	q = &w->dq[recv ? w->nqp + ev->qp : ev->qp];
	/* LAST_SIGNALED on signal period 1 changes nothing (as post_general) */
	if (q->lent ||
	    !(!ev->flags || (ev->flags == PT_PLUGIN_POST_LAST_SIGNALED && ev->signal_period == 1)) ||
	    ev->bytes != q->bytes || ev->opcode != q->op || (!recv && ev->signal_period != q->period))
		return false;
	return lazy_post1(w, q, ev->first_seq, ev->first_wr_id, ev->t_ns);
}

void wrt_post(struct wrt *w, const struct pt_plugin_post *ev)
{
	wrt_pairs_take(w);
	if (!lazy_post_fast(w, ev))
		post_general(w, ev);
}

/* post_one as the post event it stands for (out of line: the fast paths
 * of wrt_post_one need no stack frame). */
static __attribute__((noinline)) void post_one_event(struct wrt *w, uint32_t qp, uint64_t seq,
						     uint64_t wr_id, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = 1,
		.opcode = w->one_op, .first_wr_id = wr_id, .wr_id_step = 1, .bytes = w->one_bytes,
		.signal_period = w->one_period, .t_ns = t,
	};

	wrt_post(w, &ev);
}

void wrt_post_one(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t)
{
	wrt_pairs_take(w);
	if (w->lazy) {
		if (qp < w->nslots) {
			/* the tool's slots ran out (or it left their order): count
			 * them, post this one, lend the next (the tool just set its
			 * wr_id_base) */
			wrt_slots_take(w, qp);
			if (!(w->dq[qp].one_ok && lazy_post1(w, &w->dq[qp], seq, wr_id, t)))
				post_one_event(w, qp, seq, wr_id, t);
			if (w->lazy) {
				w->dq[qp].base_ok = true;
				wrt_slots_lend(w, qp);
			}
			return;
		}
		if (qp < w->nqp && w->dq[qp].one_ok && lazy_post1(w, &w->dq[qp], seq, wr_id, t))
			return;
	} else if (fifo_post1(w, qp, seq, wr_id, t, w->one_bytes, w->one_op, w->one_period, false)) {
		return;
	}
	post_one_event(w, qp, seq, wr_id, t);
}

static void complete_send(struct wrt *w, uint32_t qp, const struct pt_plugin_completion *ev)
{
	struct fifo *f = &w->sq[qp];
	const bool hw = ev->flags & PT_PLUGIN_COMP_HW_TS;
	const uint8_t base = WRT_DONE | WRT_POSTED | (hw ? WRT_HW : 0);
	const uint64_t t = ev->t_poll_ns, hw_ns = hw ? ev->hw_ns : 0;
	uint64_t upto = ev->seq, head = f->head;

	if (upto == PT_PLUGIN_SEQ_UNKNOWN) {
		/* the oldest signaled WR outstanding is the one this CQE is for */
		uint64_t i;

		for (i = head; i != f->tail && !f->e[i & f->mask].signaled; i++)
			;
		if (i == f->tail) {
			w->meta.unmatched++;
			return;
		}
		upto = f->e[i & f->mask].seq;
	}
	if (head == f->tail || f->e[head & f->mask].seq > upto) {
		w->meta.unmatched++;
		return;
	}
	/* the older WRs it retires (sequences rise along the FIFO) */
	{
		const struct fifo_ent *ring = f->e;
		const uint64_t tail = f->tail, mask = f->mask, cap = w->rec_cap;
		struct wrt_rec *recs = w->recs;
		uint64_t nrec = w->nrec;

		for (; head != tail; head++) {
			const struct fifo_ent *e = &ring[head & mask];

			if (e->seq >= upto)
				break;
			if (__builtin_expect(nrec == cap, 0)) {
				w->meta.dropped++;
				wrt_hist_add(w->ov.send_lat, t - e->t_post);
				continue;
			}
			fill_row(&recs[nrec++], qp, e, t, hw_ns, base);
		}
		w->nrec = nrec;
		if (head != tail && ring[head & mask].seq == upto)
			wrt_retire_own(w, qp, &ring[head++ & mask], true, ev);
	}
	f->head = head;
}

static void complete_recv(struct wrt *w, uint32_t qp, const struct pt_plugin_completion *ev)
{
	struct fifo *f = &w->rq[qp];
	uint64_t seq = ev->seq != PT_PLUGIN_SEQ_UNKNOWN ? ev->seq : f->done;

	f->done = seq + 1;
	/* receives of lower sequence never completed: the queue moved past them */
	while (f->head != f->tail && f->e[f->head & f->mask].seq < seq) {
		w->meta.unmatched++;
		f->head++;
	}
	if (f->head != f->tail && f->e[f->head & f->mask].seq == seq) {
		wrt_retire_own(w, qp, &f->e[f->head & f->mask], true, ev);
		f->head++;
	} else {
		/* posted before the run (or untracked): a row without post time */
		struct fifo_ent pre = { .seq = seq, .wr_id = ev->wr_id, .bytes = ev->bytes,
					.opcode = PT_PLUGIN_OP_RECV, .signaled = 1 };

		w->meta.wrs++;
		wrt_retire_own(w, qp, &pre, false, ev);
	}
}

/* Any CQE: the deferral's general rules or the FIFOs (out of line: the
 * fast path of wrt_complete needs no stack frame). */
static __attribute__((noinline)) void complete_any(struct wrt *w,
						   const struct pt_plugin_completion *ev)
{
	if (!w->in_run || ev->qp >= w->nqp) {
		w->meta.unmatched++;
		return;
	}
	if (ev->status)
		w->meta.errors++;
	if (w->lazy) {
		const bool send = !(ev->flags & PT_PLUGIN_COMP_RECV);

		if (send)
			wrt_slots_take(w, ev->qp);
		if (wrt_lazy_complete(w, ev)) {
			if (send)   /* WRs retired: room for more slots */
				wrt_slots_lend(w, ev->qp);
			return;
		}
		wrt_lazy_rows(w);   /* the FIFOs take it from here */
	}
	if (ev->flags & PT_PLUGIN_COMP_RECV)
		complete_recv(w, ev->qp, ev);
	else
		complete_send(w, ev->qp, ev);
}

void wrt_complete(struct wrt *w, const struct pt_plugin_completion *ev)
{
	wrt_pairs_take(w);
	/* lazy implies in_run; errors are counted as complete_any does */
	if (wrt_lazy_cqe(w, ev)) {
		w->meta.errors += ev->status != 0;
		return;
	}
	complete_any(w, ev);
}

void wrt_bind_post_slots(struct wrt *w, struct pt_plugin_post_slots *slots, uint32_t n)
{
	/* only the deferred rows keep post times in a pool the tool can fill */
	if (!w->in_run || !w->lazy || !slots)
		return;
	w->slots = slots;
	w->nslots = n < w->nqp ? n : w->nqp;
}

void wrt_clock_fit(struct wrt *w, const struct pt_plugin_clock_fit *fit)
{
	size_t n = fit->struct_size < sizeof(w->meta.fit) ? fit->struct_size : sizeof(w->meta.fit);

	memset(&w->meta.fit, 0, sizeof(w->meta.fit));
	memcpy(&w->meta.fit, fit, n);
	w->meta.fit.struct_size = sizeof(w->meta.fit);
	w->meta.has_fit = fit->samples >= 2;
}

/* Rows for what is still in flight at the end, without completion: sends
 * are incomplete (counted), receives just still posted. */
static void flush_fifo(struct wrt *w, uint32_t qp, struct fifo *f, uint64_t *count)
{
	for (; f->head != f->tail; f->head++) {
		const struct fifo_ent *e = &f->e[f->head & f->mask];
		struct wrt_rec *r;

		(*count)++;
		if (w->nrec == w->rec_cap) {
			w->meta.dropped++;
			continue;
		}
		r = &w->recs[w->nrec++];
		memset(r, 0, sizeof(*r));
		r->wr_id = e->wr_id;
		r->seq = e->seq;
		r->t_post = e->t_post;
		r->qp = qp;
		r->bytes = e->bytes;
		r->opcode = e->opcode;
		r->flags = WRT_POSTED | (e->signaled ? WRT_SIGNALED : 0) |
			   (e->opcode == PT_PLUGIN_OP_RECV ? WRT_RECV : 0);
	}
}

static void flush_outstanding(struct wrt *w)
{
	for (uint32_t q = 0; q < w->nqp; q++) {
		flush_fifo(w, q, &w->sq[q], &w->meta.incomplete);
		flush_fifo(w, q, &w->rq[q], &w->meta.recv_pending);
	}
}

int wrt_run_end(struct wrt *w, const struct pt_plugin_run_end *end, char *err, size_t err_len)
{
	struct wrt_summary s;
	int rc = 0;

	(void)end;
	if (!w->in_run)
		return fail(err, err_len, "run end without a run start");
	wrt_pairs_take(w);
	wrt_pairs_free(w);
	w->in_run = false;
	wrt_lazy_rows(w);
	flush_outstanding(w);
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
	/* rows built in the timed loop cost more per WR: say so, and why */
	if (w->cfg.path[0] && w->handover)
		fprintf(w->cfg.summary ? w->cfg.summary : stdout,
			" wrtrace: rows built at each CQE from WR %llu on (%s)\n",
			(unsigned long long)w->handover_wr, w->handover);
	return rc;
}

const struct wrt_rec *wrt_records(const struct wrt *w, uint64_t *n)
{
	*n = w->nrec;
	return w->recs;
}

bool wrt_rows_deferred(const struct wrt *w)
{
	return w->lazy;
}

const char *wrt_handover(const struct wrt *w)
{
	return w->handover;
}

const struct wrt_meta *wrt_meta(const struct wrt *w)
{
	return &w->meta;
}

struct wrt_meta *wrt_meta_edit(struct wrt *w)
{
	return &w->meta;
}
