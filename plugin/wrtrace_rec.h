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

/* Deferred rows. A send-only run whose posts are regular (each next in
 * sequence with the same size, opcode, signal period and wr_id step) keeps
 * per WR only its post time, and per CQE one log entry; the rows are built
 * from the two at run end, outside the timed loop. The first event that
 * does not fit builds the rows so far and hands the run to the FIFOs. */
struct lazy_q {
	uint64_t *t_post;           /* post time of WR seq0 + i */
	uint64_t seq0, posted, retired, cap;   /* counts from seq0 */
	uint64_t id0, id_next, id_step;  /* wr_id of WR seq0, of the next post; per WR */
	uint64_t last_sig;          /* WR posted with LAST_SIGNALED, or WRT_NONE */
	uint64_t replayed;          /* rows built so far (lazy_rows) */
	uint32_t bytes, period;
	uint8_t op;
	bool started;
	bool one_ok;                /* started, with the kind of WR post_one stands for */
};

struct lazy_cqe {
	uint64_t end;               /* WRs of its QP retired after it (counts from seq0) */
	uint64_t t_poll, hw_ns;
	uint32_t qp;
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
	bool lazy;                  /* deferred rows (struct lazy_q) */
	struct lazy_q *lz;
	uint64_t *lz_times;
	struct lazy_cqe *log;
	uint64_t nlog, log_cap;
	/* what wrt_post_one stands for (run info: send_opcode, msg_size, cq_mod) */
	uint32_t one_bytes, one_period;
	uint8_t one_op;
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

/* WR e retired by the CQE that is its own (wrtrace.c). */
void wrt_retire_own(struct wrt *w, uint32_t qp, const struct fifo_ent *e, bool posted,
		    const struct pt_plugin_completion *ev);

/* Deferred rows (wrtrace_defer.c). start: at run start, when the run
 * qualifies; rows: build the rows so far and hand over to the FIFOs (at run
 * end or at the first event that does not fit); post: a post of a deferred
 * run that is not the plain next WR; complete: a send CQE of known
 * sequence while the log has room. */
void wrt_lazy_start(struct wrt *w, const struct pt_plugin_run_info *in);
void wrt_lazy_free(struct wrt *w);
void wrt_lazy_rows(struct wrt *w);
void wrt_lazy_post(struct wrt *w, const struct pt_plugin_post *ev);
void wrt_lazy_complete(struct wrt *w, const struct pt_plugin_completion *ev);

#endif
