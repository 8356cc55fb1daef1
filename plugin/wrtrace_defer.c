/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace deferred rows: a send-only run whose posts stay regular keeps a
 * post time per WR and a log entry per CQE, and builds its rows from the
 * two after the timed loop (struct lazy_q in wrtrace_rec.h). */
#include <stdlib.h>
#include <string.h>
#include "wrtrace_rec.h"

void wrt_lazy_free(struct wrt *w)
{
	free(w->lz);
	free(w->lz_times);
	free(w->log);
	w->lz = NULL;
	w->lz_times = NULL;
	w->log = NULL;
	w->lazy = false;
}

/* Deferred rows for a send-only run of known length whose rows all fit
 * under the cap; without the memory for the logs the run simply goes
 * without. */
void wrt_lazy_start(struct wrt *w, const struct pt_plugin_run_info *in)
{
	uint32_t dirs = in->directions ? in->directions : PT_PLUGIN_DIR_SEND | PT_PLUGIN_DIR_RECV;
	uint64_t per_qp = in->iterations, wrs = per_qp * w->nqp;

	if (dirs != PT_PLUGIN_DIR_SEND || !per_qp || wrs / w->nqp != per_qp || w->rec_cap < wrs)
		return;
	/* one entry per signaled WR, with room for a few more; a CQE that
	 * finds the log full ends the deferral */
	w->log_cap = wrs / (in->cq_mod ? in->cq_mod : 1) + 2ull * w->nqp + 16;
	if (w->log_cap > wrs)
		w->log_cap = wrs;
	w->lz = calloc(w->nqp, sizeof(*w->lz));
	w->lz_times = malloc(wrs * sizeof(*w->lz_times));
	w->log = malloc(w->log_cap * sizeof(*w->log));
	if (!w->lz || !w->lz_times || !w->log) {
		wrt_lazy_free(w);
		return;
	}
	memset(w->lz_times, 0, wrs * sizeof(*w->lz_times));   /* first-touch faults now */
	memset(w->log, 0, w->log_cap * sizeof(*w->log));
	for (uint32_t q = 0; q < w->nqp; q++) {
		w->lz[q].t_post = w->lz_times + (uint64_t)q * per_qp;
		w->lz[q].cap = per_qp;
		w->lz[q].last_sig = WRT_NONE;
	}
	w->nlog = 0;
	w->lazy = true;
}

/* WR seq0 + i of a deferred queue as the FIFO would have held it. */
static void lazy_ent(const struct lazy_q *q, uint64_t i, struct fifo_ent *e)
{
	uint64_t seq = q->seq0 + i;

	e->t_post = q->t_post[i];
	e->seq = seq;
	e->wr_id = q->id0 + i * q->id_step;
	e->bytes = q->bytes;
	e->opcode = q->op;
	e->signaled = (seq + 1) % q->period == 0 || seq == q->last_sig;
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

/* Build the rows the logs stand for, in CQE order, and hand the WRs still
 * outstanding to the FIFOs: from here on the run is recorded as usual. */
void wrt_lazy_rows(struct wrt *w)
{
	struct fifo_ent e;

	if (!w->lazy)
		return;
	w->lazy = false;
	for (uint64_t k = 0; k < w->nlog; k++) {
		const struct lazy_cqe *c = &w->log[k];
		struct lazy_q *q = &w->lz[c->qp];

		for (; q->replayed < c->end - c->own; q->replayed++) {
			lazy_ent(q, q->replayed, &e);
			plain_row(w, c->qp, &e, c->t_poll, c->hw ? c->hw_ns : 0,
				  WRT_DONE | WRT_POSTED | (c->hw ? WRT_HW : 0));
		}
		if (c->own) {
			struct pt_plugin_completion ev = {
				.struct_size = sizeof(ev), .qp = c->qp, .status = c->status,
				.opcode = q->op, .flags = c->hw ? PT_PLUGIN_COMP_HW_TS : 0,
				.t_poll_ns = c->t_poll, .hw_ns = c->hw_ns,
			};

			lazy_ent(q, q->replayed++, &e);
			wrt_retire_own(w, c->qp, &e, true, &ev);
		}
	}
	for (uint32_t qp = 0; qp < w->nqp; qp++) {
		const struct lazy_q *q = &w->lz[qp];
		struct fifo *f = &w->sq[qp];

		if (!q->started)
			continue;
		for (uint64_t i = q->retired; i < q->posted; i++) {
			if (f->tail - f->head > f->mask) {
				w->meta.untracked++;
				continue;
			}
			lazy_ent(q, i, &f->e[f->tail++ & f->mask]);
		}
		f->next_seq = q->seq0 + q->posted;
		resync(f, f->next_seq, q->period);
	}
	wrt_lazy_free(w);
}

/* A deferred post that is not the plain next WR: the first on its queue,
 * a post list, the last signaled WR; anything irregular ends the deferral. */
void wrt_lazy_post(struct wrt *w, const struct pt_plugin_post *ev)
{
	struct lazy_q *q = &w->lz[ev->qp];
	const uint32_t n = ev->count;

	if (ev->opcode != PT_PLUGIN_OP_RECV && ev->signal_period && n) {
		if (!q->started) {
			q->seq0 = ev->first_seq;
			q->id0 = q->id_next = ev->first_wr_id;
			q->id_step = ev->wr_id_step;
			q->bytes = ev->bytes;
			q->period = ev->signal_period;
			q->op = (uint8_t)ev->opcode;
			q->started = q->op == ev->opcode;
			q->one_ok = q->started && q->bytes == w->one_bytes && q->op == w->one_op &&
				    q->period == w->one_period;
		}
		if (q->started && ev->first_seq == q->seq0 + q->posted && ev->first_wr_id == q->id_next &&
		    (n == 1 || ev->wr_id_step == q->id_step) && ev->bytes == q->bytes &&
		    ev->opcode == q->op && ev->signal_period == q->period && n <= q->cap - q->posted &&
		    (!(ev->flags & PT_PLUGIN_POST_LAST_SIGNALED) || q->last_sig == WRT_NONE)) {
			for (uint32_t i = 0; i < n; i++)
				q->t_post[q->posted + i] = ev->t_ns;
			q->posted += n;
			q->id_next += n * q->id_step;
			if (ev->flags & PT_PLUGIN_POST_LAST_SIGNALED)
				q->last_sig = ev->first_seq + n - 1;
			w->meta.wrs += n;
			return;
		}
	}
	wrt_lazy_rows(w);
	wrt_post(w, ev);
}

/* A send CQE of a deferred run: one log entry (complete_send's rules). */
void wrt_lazy_complete(struct wrt *w, const struct pt_plugin_completion *ev)
{
	struct lazy_q *q = &w->lz[ev->qp];
	struct lazy_cqe *c;
	uint64_t i;

	if (q->retired == q->posted || ev->seq < q->seq0 + q->retired) {
		w->meta.unmatched++;
		return;
	}
	i = ev->seq - q->seq0;
	c = &w->log[w->nlog++];
	c->own = i < q->posted;
	c->end = c->own ? i + 1 : q->posted;
	c->t_poll = ev->t_poll_ns;
	c->hw = !!(ev->flags & PT_PLUGIN_COMP_HW_TS);
	c->hw_ns = ev->hw_ns;
	c->qp = ev->qp;
	c->status = (uint8_t)(ev->status > 255 ? 255 : ev->status);
	q->retired = c->end;
}
