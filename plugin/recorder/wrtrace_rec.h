/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace recorder internals: the state of a run, shared by the FIFO path
 * (wrtrace.c) and the deferred rows (wrtrace_defer.c). */
#ifndef PT_WRTRACE_REC_H
#define PT_WRTRACE_REC_H
#include "wrtrace.h"

/* A WR in flight on one queue: what its record will need (32 bytes, so
 * the FIFO stays in cache; the record is written once, when it retires). */
struct fifo_ent {
	uint64_t t_post, seq, wr_id;
	uint32_t bytes;
	uint8_t opcode, signaled;
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

/* Deferred rows. Every queue (send and receive queue of each QP) keeps per
 * WR only its post time, in a pool shared in chunks; WRs posted alike
 * (sequence and wr_id rising by a fixed step, same size, opcode and signal
 * period) form one segment that holds the rest. Each CQE adds one log
 * entry. The rows are built from the three at run end, outside the timed
 * loop, exactly as the FIFOs would have built them one CQE at a time; an
 * event the deferral cannot take (a full pool, log or segment table, a
 * receive CQE for a WR posted before the run, a queue fuller than its
 * FIFO) builds the rows so far and hands the run to the FIFOs. */
#define WRT_NO_SEG UINT32_MAX

struct dseg {
	uint64_t start;             /* pool slot of its first WR */
	uint64_t seq0, id0, id_step;/* WR k: sequence seq0 + k, wr_id id0 + k * id_step */
	uint64_t last_sig;          /* its WR posted LAST_SIGNALED, or WRT_NONE */
	uint32_t n;                 /* WRs in it (the queue's last segment: pos - start) */
	uint32_t next;              /* the queue's next segment, or WRT_NO_SEG */
	uint32_t bytes, period;
	uint8_t op;
};

/* One deferred queue; queues 0..nqp-1 send, nqp..2*nqp-1 receive. What a
 * post reads and writes comes first: one cache line. */
struct dq {
	uint64_t pos, end;          /* next pool slot of the last segment, end of its chunk */
	uint64_t next_seq, id_next; /* what continues the last segment */
	uint64_t id_step;
	uint64_t posted, retired;   /* WRs so far; WRs whose CQE has come */
	uint32_t room;              /* WRs in flight at most: its FIFO's size */
	bool open;                  /* the last segment takes more WRs */
	bool one_ok;                /* ... of the kind post_one stands for */
	bool lent;                  /* the tool holds its next slots (struct wrt, slots) */
	bool base_ok;               /* the tool's wr_id_base is set (it called post_one) */
	uint8_t op;
	uint32_t bytes, period;     /* of the last segment */
	uint64_t done;              /* receive CQEs so far (the FIFO's counter) */
	uint64_t cur_k;             /* offset in segment cur of WR `retired` */
	uint32_t first, last, cur;  /* segments; WRT_NO_SEG before the first post */
};

struct lazy_cqe {
	uint64_t end;               /* WRs of its queue retired after it */
	uint64_t t_poll, hw_ns;
	uint32_t q;                 /* struct dq index */
	uint32_t bytes;             /* received length (receive CQEs) */
	uint16_t status;
	uint8_t own, hw;            /* retires a WR of its own; hw_ns is valid */
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
	bool lazy;                  /* deferred rows (struct dq) */
	struct dq *dq;
	uint64_t *pool;             /* post times */
	uint64_t pool_next, pool_cap, chunk;
	struct dseg *segs;
	uint32_t nseg, seg_cap;
	struct lazy_cqe *log;
	uint64_t nlog, log_cap;
	const char *handover;       /* why the deferral ended before run end, or NULL */
	uint64_t handover_wr;       /* WRs posted by then */
	/* what wrt_post_one stands for (run info: send_opcode, msg_size, cq_mod) */
	uint32_t one_bytes, one_period;
	uint8_t one_op;
	/* The tool's post slots (one per QP; nslots of them serve send queues
	 * 0..nslots-1): while dq[q].lent, the tool stores the post time of each
	 * next plain WR of queue q at slots[q].pos, which points at pool[pos],
	 * and does not call; the recorder counts them (wrt_slots_take) before
	 * it looks at the queue. So the post times land where lazy_post1 would
	 * have put them and the rows come out the same. */
	struct pt_plugin_post_slots *slots;
	uint32_t nslots;
	/* The tool's pair slots of QP 0 (NULL: none lent this run) and the
	 * buffer lent from its start each time (wrtrace_pairs.c). */
	struct pt_plugin_pair_slots *pairs;
	struct pt_plugin_pair *pair_mem;
	uint64_t pair_cap;
};

/* Re-derive the signal phase after a jump in sequence numbers or a new
 * period: WR s is signaled when (s + 1) % period == 0. The countdown keeps a
 * division off the per-WR path. */
static inline void resync(struct fifo *f, uint64_t seq, uint32_t period)
{
	f->period = period;
	f->sig_left = period - 1 - seq % period;
}

/* The row of send WR e, retired by a later CQE polled at t (flags base). */
static inline void fill_row(struct wrt_rec *r, uint32_t qp, const struct fifo_ent *e, uint64_t t,
			    uint64_t hw_ns, uint8_t base)
{
	r->wr_id = e->wr_id;
	r->seq = e->seq;
	r->t_post = e->t_post;
	r->t_comp = t;
	r->hw_ns = hw_ns;
	r->qp = qp;
	r->bytes = e->bytes;
	r->opcode = e->opcode;
	r->status = 0;
	r->flags = base | (e->signaled ? WRT_SIGNALED : 0);
}

/* WR e retired by the CQE that is its own: its row (or, over the cap, the
 * histograms), and the CQE timeline the gaps are measured on. !posted: a
 * receive posted before the run, no post time. Here, not in wrtrace.c, so
 * the FIFO path and the deferred rows (wrtrace_defer.c) share it without
 * using each other. */
static inline void wrt_retire_own(struct wrt *w, uint32_t qp, const struct fifo_ent *e,
				  bool posted, const struct pt_plugin_completion *ev)
{
	bool hw = ev->flags & PT_PLUGIN_COMP_HW_TS, recv = ev->flags & PT_PLUGIN_COMP_RECV;
	uint64_t t = ev->t_poll_ns;

	if (__builtin_expect(w->nrec < w->rec_cap, 1)) {
		struct wrt_rec *r = &w->recs[w->nrec++];

		r->wr_id = e->wr_id;
		r->seq = e->seq;
		r->t_post = e->t_post;
		r->t_comp = t;
		r->hw_ns = hw ? ev->hw_ns : 0;
		r->qp = qp;
		r->bytes = recv && ev->bytes ? ev->bytes : e->bytes; /* received length */
		r->opcode = e->opcode;
		r->status = (uint8_t)(ev->status > 255 ? 255 : ev->status);
		r->flags = WRT_DONE | WRT_CQE | (posted ? WRT_POSTED : 0) | (recv ? WRT_RECV : 0) |
			   (e->signaled ? WRT_SIGNALED : 0) | (hw ? WRT_HW : 0);
	} else {
		w->meta.dropped++;
		if (posted && ev->status == 0)
			wrt_hist_add(recv ? w->ov.recv_lat : w->ov.send_lat, t - e->t_post);
		if (w->have_sw)
			wrt_hist_add(w->ov.gap_sw, t >= w->last_sw ? t - w->last_sw : 0);
		if (hw && w->have_hw) {
			if ((int64_t)(ev->hw_ns - w->last_hw) >= 0)
				wrt_hist_add(w->ov.gap_hw, ev->hw_ns - w->last_hw);
			else
				w->ov.gap_hw_negative++;
		}
	}
	w->last_sw = t;
	w->have_sw = true;
	if (hw) {
		w->last_hw = ev->hw_ns;
		w->have_hw = true;
	}
}


/* Count the WRs the tool stored in send queue qp's slots as posted, and
 * take the slots back (nothing lent afterwards). */
static inline void wrt_slots_take_lent(struct wrt *w, uint32_t qp, struct dq *q)
{
	/* lent implies qp < w->nslots (wrt_slots_lend) */
	struct pt_plugin_post_slots *s = &w->slots[qp];
	uint64_t n = (uint64_t)(s->pos - &w->pool[q->pos]);

	q->pos += n;
	q->posted += n;
	q->next_seq += n;
	q->id_next += n;        /* lent only with wr_id step 1 */
	w->meta.wrs += n;
	s->lim = s->pos;
	q->lent = false;
}

static inline void wrt_slots_take(struct wrt *w, uint32_t qp)
{
	if (w->lazy && qp < w->nslots && w->dq[qp].lent)
		wrt_slots_take_lent(w, qp, &w->dq[qp]);
}

/* Log a CQE that retired the queue's WRs up to end (own: one of its own). */
static inline void wrt_log_cqe(struct wrt *w, const struct pt_plugin_completion *ev, uint32_t qi,
			       uint64_t end, bool own)
{
	struct lazy_cqe *c = &w->log[w->nlog++];

	c->end = end;
	c->own = own;
	c->t_poll = ev->t_poll_ns;
	c->hw = !!(ev->flags & PT_PLUGIN_COMP_HW_TS);
	c->hw_ns = ev->hw_ns;
	c->q = qi;
	c->bytes = ev->bytes;
	c->status = (uint16_t)(ev->status > 255 ? 255 : ev->status);
}

/* A latency loop's CQE, the shortest case of wrt_lazy_cqe: the queue's
 * oldest outstanding WR, no slots lent or to lend on the queue (q: its
 * queue, qi its index). */
static inline bool wrt_lazy_own_cqe(struct wrt *w, const struct pt_plugin_completion *ev,
				    struct dq *q, uint32_t qi, bool recv)
{
	const struct dseg *g;
	uint64_t seq;

	if (q->retired == q->posted || q->cur == WRT_NO_SEG)
		return false;
	g = &w->segs[q->cur];
	seq = recv ? (ev->seq != PT_PLUGIN_SEQ_UNKNOWN ? ev->seq : q->done) : ev->seq;
	if (q->cur_k >= (q->cur == q->last ? q->pos - g->start : g->n) || seq != g->seq0 + q->cur_k)
		return false;
	if (recv)
		q->done = seq + 1;
	wrt_log_cqe(w, ev, qi, ++q->retired, true);
	q->cur_k++;
	return true;
}

void wrt_slots_lend(struct wrt *w, uint32_t qp);
/* wrt_slots_lend's body, inline for wrt_lazy_cqe (a BW run's every
 * cq_mod-th CQE lends again). */
static inline void wrt_slots_lend_in(struct wrt *w, uint32_t qp)
{
	struct pt_plugin_post_slots *s;
	struct dq *q;
	uint64_t n, room;

	if (!w->lazy || qp >= w->nslots)
		return;
	q = &w->dq[qp];
	s = &w->slots[qp];
	if (q->lent || !q->base_ok || !q->open || !q->one_ok || q->id_step != 1 ||
	    q->id_next != s->wr_id_base + q->next_seq)
		return;
	/* lazy_post1's limits: the chunk's end and the WRs in flight */
	room = q->room - (q->posted - q->retired);
	n = q->end - q->pos < room ? q->end - q->pos : room;
	if (!n)
		return;
	s->pos = &w->pool[q->pos];
	s->lim = s->pos + n;
	s->next_seq = q->next_seq;
	q->lent = true;
}

/* The deferred path's common CQEs, without a call: a latency loop's own
 * CQE (wrt_lazy_own_cqe), a send CQE whose WR lies in the segment the
 * queue's cursor is in (it retires the WRs before it: lazy_send_cqe's
 * first case; a BW loop's every cq_mod-th), or a receive CQE of the
 * queue's oldest outstanding WR (lazy_recv_cqe's case with nothing
 * skipped). One log entry, as those write. Slots the tool holds on the
 * queue are counted first and lent again after (wrt_complete's order), so
 * the caller needs no other step. false: not that case, nothing logged
 * (the slots may have been counted: the general path counts them anyway). */
static inline bool wrt_lazy_cqe(struct wrt *w, const struct pt_plugin_completion *ev)
{
	const bool recv = ev->flags & PT_PLUGIN_COMP_RECV;
	const uint32_t qi = recv ? w->nqp + ev->qp : ev->qp;
	struct dq *q;
	const struct dseg *g;
	uint64_t seq, len, ahead;

	if (__builtin_expect(!w->lazy || ev->qp >= w->nqp || w->nlog == w->log_cap, 0))
		return false;
	q = &w->dq[qi];
	if (q->lent) {
		if (!recv)   /* a receive queue is never lent */
			wrt_slots_take_lent(w, ev->qp, q);
	} else if (!q->base_ok && wrt_lazy_own_cqe(w, ev, q, qi, recv)) {
		return true;
	}
	if (q->retired == q->posted || q->cur == WRT_NO_SEG)
		return false;
	g = &w->segs[q->cur];
	len = q->cur == q->last ? q->pos - g->start : g->n;
	seq = recv ? (ev->seq != PT_PLUGIN_SEQ_UNKNOWN ? ev->seq : q->done) : ev->seq;
	if (q->cur_k >= len || seq < g->seq0 + q->cur_k)
		return false;
	ahead = seq - (g->seq0 + q->cur_k);   /* WRs it retires before its own */
	if (ahead >= len - q->cur_k || (recv && ahead))
		return false;
	if (recv)
		q->done = seq + 1;
	q->retired += ahead + 1;
	q->cur_k += ahead + 1;
	wrt_log_cqe(w, ev, qi, q->retired, true);
	if (!recv && q->base_ok)
		wrt_slots_lend_in(w, ev->qp);   /* WRs retired: room for more slots */
	return true;
}

/* The pairs the tool stored since the last call, played as the events
 * they stand for (in their order, before the call's own event) through
 * post and complete (wrtrace.c's wrt_post and wrt_complete, handed over so
 * wrtrace_pairs.c does not call back into wrtrace.c), and the buffer lent
 * again (wrtrace_pairs.c). */
void wrt_pairs_drain(struct wrt *w, void (*post)(struct wrt *, const struct pt_plugin_post *),
		     void (*complete)(struct wrt *, const struct pt_plugin_completion *));
void wrt_pairs_free(struct wrt *w);
#define wrt_pairs_take(w) \
	do { \
		if (__builtin_expect((w)->pairs != NULL && (w)->pairs->pos != (w)->pair_mem, 0)) \
			wrt_pairs_drain((w), wrt_post, wrt_complete); \
	} while (0)

/* Deferred rows (wrtrace_defer.c). start: at run start, unless the
 * config says nodefer or memory is short; rows: build the rows so far and
 * hand over to the FIFOs (at run end or at the first event that does not
 * fit); post: a post the fast path does not take, complete: any CQE. Both
 * return false, having changed nothing, for an event the deferral cannot
 * take: the caller hands over and gives the event to the FIFOs. */
void wrt_lazy_start(struct wrt *w, const struct pt_plugin_run_info *in);
void wrt_lazy_free(struct wrt *w);
void wrt_lazy_rows(struct wrt *w);
bool wrt_lazy_post(struct wrt *w, const struct pt_plugin_post *ev);
bool wrt_lazy_complete(struct wrt *w, const struct pt_plugin_completion *ev);
/* Lend send queue qp (taken back) what lazy_post1 would take next; nothing
 * when its WRs are not the plain kind in order or no post_one set the
 * tool's wr_id_base. */

#endif
