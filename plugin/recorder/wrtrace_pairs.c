/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace pair slots (perftest_plugin.h, ABI 1.3): a latency loop stores a
 * send WR's post and CQE times, or a receive CQE's and its repost's, as one
 * pair in a buffer the recorder lends; at the recorder's next call the
 * pairs are played as the events they stand for, through the same paths as
 * events, so the rows are those the events would have made. Lent only for
 * one QP with one WR in flight (the latency tools), where pairs are all the
 * loop makes: a BW run keeps its post slots and pays no memory here. */
#include <stdlib.h>
#include <string.h>
#include "wrtrace_rec.h"

#define PAIRS_UNKNOWN_RUN (1u << 16)   /* pairs lent at a time in duration mode */

void wrt_pairs_free(struct wrt *w)
{
	if (w->pairs)   /* nothing lent any more */
		w->pairs->pos = w->pairs->lim = w->pairs->open = NULL;
	free(w->pair_mem);
	w->pair_mem = NULL;
	w->pairs = NULL;
	w->pair_cap = 0;
}

static void pairs_lend(struct wrt *w)
{
	w->pairs->pos = w->pair_mem;
	w->pairs->lim = w->pair_mem + w->pair_cap;
	w->pairs->open = NULL;
}

/* A run of known length gets room for all its pairs (a send and a receive
 * per iteration), up to twice the row cap: then the pairs are played after
 * the timed loop, at run end. Otherwise (duration mode, or a cap far below
 * the iterations) a full buffer is played at the call the tool makes when
 * it finds no slot. Without the memory the run simply goes without. */
void wrt_bind_pair_slots(struct wrt *w, struct pt_plugin_pair_slots *slots, uint32_t n)
{
	uint64_t want = w->meta.iterations ? 2 * w->meta.iterations + 16 : PAIRS_UNKNOWN_RUN;
	uint64_t most = 2 * w->rec_cap + 64 > PAIRS_UNKNOWN_RUN ? 2 * w->rec_cap + 64 :
		       PAIRS_UNKNOWN_RUN;

	wrt_pairs_free(w);
	if (!w->in_run || w->cfg.nodefer || !slots || n < 1 || w->nqp != 1 || w->meta.tx_depth > 1)
		return;
	w->pair_cap = want < most ? want : most;
	if (w->cfg.pairs_max && w->pair_cap > w->cfg.pairs_max)
		w->pair_cap = w->cfg.pairs_max;
	w->pair_mem = malloc(w->pair_cap * sizeof(*w->pair_mem));
	if (!w->pair_mem) {
		w->pair_cap = 0;
		return;
	}
	memset(w->pair_mem, 0, w->pair_cap * sizeof(*w->pair_mem));   /* page faults now */
	w->pairs = &slots[0];
	pairs_lend(w);
}

void wrt_pairs_drain(struct wrt *w, void (*post)(struct wrt *, const struct pt_plugin_post *),
		     void (*complete)(struct wrt *, const struct pt_plugin_completion *))
{
	struct pt_plugin_pair_slots *s = w->pairs;
	const struct pt_plugin_pair *p, *end = s->pos;
	uint64_t nsend = 0, nrecv = 0, nrepost = 0, seq, rid, rseq;

	for (p = w->pair_mem; p < end; p++) {
		if (p->t_first_ns & PT_PLUGIN_PAIR_RECV) {
			nrecv++;
			nrepost += p->t_second_ns != 0;
		} else {
			nsend++;
		}
	}
	/* the tool's counters stand after the last pair: count back */
	seq = s->send_seq - nsend;
	rid = s->recv_wr_id - nrecv;
	rseq = s->repost_seq - nrepost;
	/* taken back first: the calls below find no pairs to play */
	s->pos = s->lim = w->pair_mem;
	s->open = NULL;
	for (p = w->pair_mem; p < end; p++) {
		if (!(p->t_first_ns & PT_PLUGIN_PAIR_RECV)) {
			struct pt_plugin_post pe = {
				.struct_size = sizeof(pe), .qp = 0, .first_seq = seq, .count = 1,
				.opcode = w->one_op, .first_wr_id = s->send_wr_id, .wr_id_step = 1,
				.bytes = w->one_bytes, .signal_period = 1,
				.flags = PT_PLUGIN_POST_LAST_SIGNALED, .t_ns = p->t_first_ns,
			};
			struct pt_plugin_completion ce = {
				.struct_size = sizeof(ce), .qp = 0, .wr_id = s->send_wr_id, .seq = seq,
				.opcode = w->one_op, .bytes = w->one_bytes, .t_poll_ns = p->t_second_ns,
			};

			post(w, &pe);
			complete(w, &ce);
			seq++;
			continue;
		}
		struct pt_plugin_completion rc = {
			.struct_size = sizeof(rc), .qp = 0, .wr_id = rid++, .seq = PT_PLUGIN_SEQ_UNKNOWN,
			.opcode = PT_PLUGIN_OP_RECV, .bytes = s->recv_bytes, .flags = PT_PLUGIN_COMP_RECV,
			.t_poll_ns = p->t_first_ns & ~PT_PLUGIN_PAIR_RECV,
		};

		complete(w, &rc);
		if (p->t_second_ns) {
			struct pt_plugin_post rp = {
				.struct_size = sizeof(rp), .qp = 0, .first_seq = rseq, .count = 1,
				.opcode = PT_PLUGIN_OP_RECV, .first_wr_id = s->repost_wr_id_base + rseq,
				.wr_id_step = 1, .bytes = s->repost_bytes, .t_ns = p->t_second_ns,
			};

			post(w, &rp);
			rseq++;
		}
	}
	/* lent slots read 0 (perftest_plugin.h) */
	memset(w->pair_mem, 0, (size_t)(end - w->pair_mem) * sizeof(*w->pair_mem));
	pairs_lend(w);
}
