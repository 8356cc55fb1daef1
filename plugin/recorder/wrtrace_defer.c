/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace deferred rows: per WR a post time, per run of alike WRs a
 * segment, per CQE a log entry; the rows are built from them after the
 * timed loop, as the FIFOs of wrtrace.c would have built them (struct dq in
 * wrtrace_rec.h). */
#include <stdlib.h>
#include <string.h>
#include "wrtrace_rec.h"

#define CHUNK_MAX 4096u             /* pool slots a queue takes at a time */
#define CHUNK_MIN 64u

void wrt_lazy_free(struct wrt *w)
{
	free(w->dq);
	free(w->pool);
	free(w->segs);
	free(w->log);
	w->dq = NULL;
	w->pool = NULL;
	w->segs = NULL;
	w->log = NULL;
	w->lazy = false;
}

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *r)
{
	return !__builtin_mul_overflow(a, b, r);
}

/* Room for the rows the run may keep (the cap) plus a chunk per queue; a
 * log entry per receive and per signaled send of a run of known length;
 * without the memory the run simply goes without. */
void wrt_lazy_start(struct wrt *w, const struct pt_plugin_run_info *in)
{
	uint32_t dirs = in->directions ? in->directions : PT_PLUGIN_DIR_SEND | PT_PLUGIN_DIR_RECV;
	uint32_t cq_mod = in->cq_mod ? in->cq_mod : 1;
	uint64_t nq = 2ull * w->nqp, slack, pool_b, log_b, seg_b;

	w->handover = NULL;
	if (w->cfg.nodefer || !w->rec_cap)
		return;
	w->chunk = CHUNK_MAX;
	while (w->chunk > CHUNK_MIN && w->chunk * nq > w->rec_cap)
		w->chunk >>= 1;
	slack = w->chunk * nq;
	w->pool_cap = w->rec_cap + slack;
	if (w->pool_cap < w->rec_cap)
		return;
	if (!in->iterations)
		w->log_cap = dirs == PT_PLUGIN_DIR_SEND ? w->pool_cap / cq_mod + 2 * nq + 16 : w->pool_cap;
	else
		w->log_cap = (dirs & PT_PLUGIN_DIR_SEND ? in->iterations / cq_mod * w->nqp : 0) +
			     (dirs & PT_PLUGIN_DIR_RECV ? (in->iterations + in->rx_depth) * w->nqp : 0) +
			     2 * nq + 16;
	if (w->log_cap > w->pool_cap)
		w->log_cap = w->pool_cap;
	w->seg_cap = (uint32_t)(w->pool_cap / 32 + 2 * nq + 64 < UINT32_MAX - 1 ?
				w->pool_cap / 32 + 2 * nq + 64 : UINT32_MAX - 1);
	if (!mul_ok(w->pool_cap, sizeof(*w->pool), &pool_b) ||
	    !mul_ok(w->log_cap, sizeof(*w->log), &log_b) ||
	    !mul_ok(w->seg_cap, sizeof(*w->segs), &seg_b))
		return;
	/* each queue's hot line on a line of its own */
	if (posix_memalign((void **)&w->dq, 64, nq * sizeof(*w->dq)))
		w->dq = NULL;
	w->pool = malloc(pool_b);
	w->segs = malloc(seg_b);
	w->log = malloc(log_b);
	if (!w->dq || !w->pool || !w->segs || !w->log) {
		wrt_lazy_free(w);
		return;
	}
	/* first-touch page faults now, not in the timed loop */
	memset(w->dq, 0, nq * sizeof(*w->dq));
	memset(w->pool, 0, pool_b);
	memset(w->segs, 0, seg_b);
	memset(w->log, 0, log_b);
	for (uint64_t q = 0; q < nq; q++) {
		struct dq *d = &w->dq[q];

		d->first = d->last = d->cur = WRT_NO_SEG;
		uint64_t room = q < w->nqp ? w->sq[q].mask + 1 : w->rq[q - w->nqp].mask + 1;

		d->room = room < UINT32_MAX ? (uint32_t)room : UINT32_MAX;
	}
	w->pool_next = 0;
	w->nseg = 0;
	w->nlog = 0;
	w->lazy = true;
}

/* The deferral cannot take this event: say why (the caller hands over). */
static bool cannot(struct wrt *w, const char *why)
{
	for (uint32_t q = 0; q < w->nslots; q++)   /* every WR posted so far counts */
		wrt_slots_take(w, q);
	w->handover = why;
	w->handover_wr = w->meta.wrs;
	return false;
}

static uint64_t seg_len(const struct wrt *w, const struct dq *q, uint32_t s)
{
	return s == q->last ? q->pos - w->segs[s].start : w->segs[s].n;
}

/* A cursor on a queue's WRs: segment s, offset k in it; k at the end of a
 * segment moves to the start of the next, once there is one. */
struct cursor {
	uint32_t s;
	uint64_t k;
};

static void cursor_norm(const struct wrt *w, const struct dq *q, struct cursor *c)
{
	while (c->k == seg_len(w, q, c->s) && w->segs[c->s].next != WRT_NO_SEG) {
		c->s = w->segs[c->s].next;
		c->k = 0;
	}
}

/* The first WR from index i (at cursor c) on whose sequence is >= upto,
 * as the FIFO finds it walking from its head; c ends there. */
static uint64_t find_ge(const struct wrt *w, const struct dq *q, uint64_t i, struct cursor *c,
			uint64_t upto)
{
	while (i < q->posted) {
		const struct dseg *g;
		uint64_t len, seq;

		cursor_norm(w, q, c);
		g = &w->segs[c->s];
		len = seg_len(w, q, c->s);
		seq = g->seq0 + c->k;
		if (upto <= seq)
			return i;
		if (upto < g->seq0 + len) {
			i += upto - seq;
			c->k += upto - seq;
			return i;
		}
		i += len - c->k;
		c->k = len;
	}
	return i;
}

static bool send_signaled(const struct dseg *g, uint64_t seq)
{
	return (g->period && (seq + 1) % g->period == 0) || seq == g->last_sig;
}

/* The oldest signaled send WR from index i (at cursor c), or posted. */
static uint64_t find_signaled(const struct wrt *w, const struct dq *q, uint64_t i, struct cursor *c)
{
	while (i < q->posted) {
		const struct dseg *g;
		uint64_t len, seq, best;

		cursor_norm(w, q, c);
		g = &w->segs[c->s];
		len = seg_len(w, q, c->s);
		seq = g->seq0 + c->k;
		best = len;
		if (g->period)
			best = c->k + (g->period - 1 - seq % g->period);
		if (g->last_sig != WRT_NONE && g->last_sig >= seq && g->last_sig - g->seq0 < best)
			best = g->last_sig - g->seq0;
		if (best < len) {
			i += best - c->k;
			c->k = best;
			return i;
		}
		i += len - c->k;
		c->k = len;
	}
	return i;
}

/* The WR at cursor c as the FIFO would have held it. */
static void cursor_ent(const struct wrt *w, const struct dq *q, struct cursor *c, bool recv,
		       struct fifo_ent *e)
{
	const struct dseg *g;

	cursor_norm(w, q, c);
	g = &w->segs[c->s];
	e->t_post = w->pool[g->start + c->k];
	e->seq = g->seq0 + c->k;
	e->wr_id = g->id0 + c->k * g->id_step;
	e->bytes = g->bytes;
	e->opcode = g->op;
	e->signaled = recv || send_signaled(g, e->seq);
	c->k++;
}

/* That row, or over the cap the histograms (complete_send's loop). */
static void plain_row(struct wrt *w, uint32_t qp, const struct fifo_ent *e, uint64_t t,
		      uint64_t hw_ns, uint8_t base)
{
	if (w->nrec == w->rec_cap) {
		w->meta.dropped++;
		wrt_hist_add(w->ov.send_lat, t - e->t_post);
		return;
	}
	fill_row(&w->recs[w->nrec++], qp, e, t, hw_ns, base);
}

/* Build the rows the log stands for, in CQE order, and hand the WRs still
 * outstanding to the FIFOs: from here on the run is recorded as usual. */
void wrt_lazy_rows(struct wrt *w)
{
	const uint32_t nq = 2 * w->nqp;
	struct fifo_ent e;

	if (!w->lazy)
		return;
	for (uint32_t i = 0; i < w->nslots; i++)
		wrt_slots_take(w, i);
	w->lazy = false;
	/* the CQE-time cursors are done with: replay from each queue's start */
	for (uint32_t i = 0; i < nq; i++) {
		w->dq[i].cur = w->dq[i].first;
		w->dq[i].cur_k = 0;
		w->dq[i].retired = 0;
	}
	for (uint64_t k = 0; k < w->nlog; k++) {
		const struct lazy_cqe *c = &w->log[k];
		struct dq *q = &w->dq[c->q];
		const bool recv = c->q >= w->nqp;
		const uint32_t qp = recv ? c->q - w->nqp : c->q;
		struct cursor at = { q->cur, q->cur_k };

		for (; q->retired < c->end - c->own; q->retired++) {
			cursor_ent(w, q, &at, recv, &e);
			if (!recv)   /* receives the queue moved past have no row */
				plain_row(w, qp, &e, c->t_poll, c->hw ? c->hw_ns : 0,
					  WRT_DONE | WRT_POSTED | (c->hw ? WRT_HW : 0));
		}
		if (c->own) {
			struct pt_plugin_completion ev = {
				.struct_size = sizeof(ev), .qp = qp, .status = c->status,
				.bytes = c->bytes, .t_poll_ns = c->t_poll, .hw_ns = c->hw_ns,
				.flags = (c->hw ? PT_PLUGIN_COMP_HW_TS : 0) | (recv ? PT_PLUGIN_COMP_RECV : 0),
			};

			cursor_ent(w, q, &at, recv, &e);
			q->retired++;
			wrt_retire_own(w, qp, &e, true, &ev);
		}
		q->cur = at.s;
		q->cur_k = at.k;
	}
	for (uint32_t i = 0; i < nq; i++) {
		struct dq *q = &w->dq[i];
		const bool recv = i >= w->nqp;
		struct fifo *f = recv ? &w->rq[i - w->nqp] : &w->sq[i];
		struct cursor at = { q->cur, q->cur_k };

		if (q->first == WRT_NO_SEG)
			continue;
		/* posted - retired <= room: the FIFO takes them all */
		for (; q->retired < q->posted; q->retired++)
			cursor_ent(w, q, &at, recv, &f->e[f->tail++ & f->mask]);
		if (recv) {
			f->done = q->done;
		} else {
			f->next_seq = q->next_seq;
			f->period = q->period;
			if (q->period)
				resync(f, q->next_seq, q->period);
		}
	}
	wrt_lazy_free(w);
}

/* A new segment for the post ev on q, in its chunk or a new one. */
static bool open_seg(struct wrt *w, struct dq *q, const struct pt_plugin_post *ev, bool recv)
{
	struct dseg *g;
	uint32_t s;

	if (w->nseg == w->seg_cap)
		return cannot(w, "segment table full: posts too irregular");
	if (q->pos + ev->count > q->end) {
		if (w->pool_next + w->chunk > w->pool_cap)
			return cannot(w, "pool full: more WRs than the row cap");
		if (q->last != WRT_NO_SEG)
			w->segs[q->last].n = (uint32_t)(q->pos - w->segs[q->last].start);
		q->pos = w->pool_next;
		q->end = q->pos + w->chunk;
		w->pool_next += w->chunk;
	} else if (q->last != WRT_NO_SEG) {
		w->segs[q->last].n = (uint32_t)(q->pos - w->segs[q->last].start);
	}
	s = w->nseg++;
	g = &w->segs[s];
	*g = (struct dseg){
		.start = q->pos, .seq0 = ev->first_seq, .id0 = ev->first_wr_id,
		.id_step = ev->wr_id_step, .last_sig = WRT_NONE, .next = WRT_NO_SEG,
		.bytes = ev->bytes, .period = recv ? 0 : ev->signal_period, .op = (uint8_t)ev->opcode,
	};
	if (q->last == WRT_NO_SEG) {
		q->first = q->cur = s;
		q->cur_k = 0;
	} else {
		w->segs[q->last].next = s;
	}
	q->last = s;
	q->next_seq = g->seq0;
	q->id_next = g->id0;
	q->id_step = g->id_step;
	q->bytes = g->bytes;
	q->period = g->period;
	q->op = g->op;
	q->open = true;
	q->one_ok = !recv && q->bytes == w->one_bytes && q->op == w->one_op &&
		    q->period == w->one_period;
	return true;
}

/* A post the fast path did not take: it continues the last segment or
 * opens one. Receives know no signal period or LAST_SIGNALED (the FIFO
 * ignores both for them); a LAST_SIGNALED WR that its period does not
 * signal ends its segment. */
bool wrt_lazy_post(struct wrt *w, const struct pt_plugin_post *ev)
{
	const bool recv = ev->opcode == PT_PLUGIN_OP_RECV;
	struct dq *q = &w->dq[recv ? w->nqp + ev->qp : ev->qp];
	const uint32_t n = ev->count, period = recv ? 0 : ev->signal_period;
	/* LAST_SIGNALED on a WR its period signals anyway changes nothing */
	const bool last = !recv && (ev->flags & PT_PLUGIN_POST_LAST_SIGNALED) &&
			  !(period && (ev->first_seq + n) % period == 0);

	if (n == 0)
		return cannot(w, "a post of no WR");
	if (q->posted - q->retired + n > q->room)
		return cannot(w, "more WRs in flight than the FIFO holds");
	if (n > w->chunk)
		return cannot(w, "a post list longer than a pool chunk");
	/* a segment of one WR learns its wr_id step from the second (tools
	 * that keep one wr_id declare step 1 as often as 0) */
	if (q->open && n == 1 && ev->first_seq == q->next_seq && ev->first_wr_id != q->id_next &&
	    q->pos - w->segs[q->last].start == 1) {
		q->id_step = w->segs[q->last].id_step = ev->first_wr_id - w->segs[q->last].id0;
		q->id_next = ev->first_wr_id;
	}
	if (!(q->open && ev->first_seq == q->next_seq && ev->first_wr_id == q->id_next &&
	      (n == 1 || ev->wr_id_step == q->id_step) && ev->bytes == q->bytes &&
	      ev->opcode == q->op && period == q->period && q->pos + n <= q->end) &&
	    !open_seg(w, q, ev, recv))
		return false;
	for (uint32_t i = 0; i < n; i++)
		w->pool[q->pos + i] = ev->t_ns;
	q->pos += n;
	q->posted += n;
	q->next_seq = ev->first_seq + n;
	q->id_next = ev->first_wr_id + n * q->id_step;
	if (last) {
		w->segs[q->last].last_sig = ev->first_seq + n - 1;
		q->open = q->one_ok = false;
	}
	w->meta.wrs += n;
	return true;
}

/* A send CQE: complete_send's rules, one log entry for what it retires. */
static bool lazy_send_cqe(struct wrt *w, const struct pt_plugin_completion *ev)
{
	struct dq *q = &w->dq[ev->qp];
	struct cursor c = { q->cur, q->cur_k };
	uint64_t upto = ev->seq, i;
	bool own;

	/* the common case: a WR of the segment the cursor is in */
	if (q->retired < q->posted && upto != PT_PLUGIN_SEQ_UNKNOWN) {
		const uint64_t len = seg_len(w, q, c.s), seq = w->segs[c.s].seq0 + c.k;

		if (c.k < len && upto >= seq && upto - seq < len - c.k) {
			i = q->retired + (upto - seq) + 1;
			wrt_log_cqe(w, ev, ev->qp, i, true);
			q->retired = i;
			q->cur_k = c.k + (upto - seq) + 1;
			return true;
		}
	}
	if (q->retired == q->posted) {
		w->meta.unmatched++;
		return true;
	}
	if (upto == PT_PLUGIN_SEQ_UNKNOWN) {
		struct cursor s = c;

		i = find_signaled(w, q, q->retired, &s);
		if (i == q->posted) {
			w->meta.unmatched++;
			return true;
		}
		upto = w->segs[s.s].seq0 + s.k;
	}
	cursor_norm(w, q, &c);
	if (w->segs[c.s].seq0 + c.k > upto) {
		w->meta.unmatched++;
		return true;
	}
	i = find_ge(w, q, q->retired, &c, upto);
	own = i < q->posted && (cursor_norm(w, q, &c), w->segs[c.s].seq0 + c.k == upto);
	if (own) {
		i++;
		c.k++;
	}
	wrt_log_cqe(w, ev, ev->qp, i, own);
	q->retired = i;
	q->cur = c.s;
	q->cur_k = c.k;
	return true;
}

/* A receive CQE: complete_recv's rules; one for a receive posted before
 * the run (no WR of that sequence outstanding) goes to the FIFOs. */
static bool lazy_recv_cqe(struct wrt *w, const struct pt_plugin_completion *ev)
{
	const uint32_t qi = w->nqp + ev->qp;
	struct dq *q = &w->dq[qi];
	struct cursor c = { q->cur, q->cur_k };
	uint64_t seq = ev->seq != PT_PLUGIN_SEQ_UNKNOWN ? ev->seq : q->done, i;

	if (q->first == WRT_NO_SEG)
		return cannot(w, "a receive posted before the run");
	i = find_ge(w, q, q->retired, &c, seq);
	if (i == q->posted)
		return cannot(w, "a receive posted before the run");
	cursor_norm(w, q, &c);
	if (w->segs[c.s].seq0 + c.k != seq)
		return cannot(w, "a receive posted before the run");
	w->meta.unmatched += i - q->retired;   /* the queue moved past them */
	q->done = seq + 1;
	wrt_log_cqe(w, ev, qi, i + 1, true);
	q->retired = i + 1;
	q->cur = c.s;
	q->cur_k = c.k + 1;
	return true;
}

void wrt_slots_lend(struct wrt *w, uint32_t qp)
{
	wrt_slots_lend_in(w, qp);
}

bool wrt_lazy_complete(struct wrt *w, const struct pt_plugin_completion *ev)
{
	if (w->nlog == w->log_cap)
		return cannot(w, "CQE log full");
	return ev->flags & PT_PLUGIN_COMP_RECV ? lazy_recv_cqe(w, ev) : lazy_send_cqe(w, ev);
}
