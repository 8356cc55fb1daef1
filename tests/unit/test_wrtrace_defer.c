/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace deferred rows: the same event scripts played on the FIFO path
 * and deferred (post events, post_one, post slots, the latency loops' pair
 * slots through the real hooks), every row and count compared; the
 * hand-over causes; the limits of the post slots. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plugin/hooks/hooks.h"
#include "recorder_compare.h"
#include "recorder_plugin.h"
#include "wrtrace_harness.h"

/* One event of a script run on several recorders. */
struct ev {
	char kind;                  /* 'p' post, 'P' post with wr_id and step of its own,
				       'c' send CQE, 'r' recv post, 'R' recv CQE */
	uint32_t qp;
	uint64_t seq;
	uint32_t n, period, flags, status;   /* 'P': status is the wr_id step */
	uint64_t t, hw;                      /* 'P': hw is the first wr_id */
};

/* The tool's post slots (pt_plugin_post_slots), as hooks.h keeps them;
 * stores: post times the recorder took through them, all tests so far. */
static struct pt_plugin_post_slots tool_slots[4];
static uint64_t no_slot, slot_stores;

static void bind_slots(struct wrt *w, uint32_t qps)
{
	for (uint32_t q = 0; q < 4; q++)
		tool_slots[q] = (struct pt_plugin_post_slots){ .pos = &no_slot, .lim = &no_slot };
	wrt_bind_post_slots(w, tool_slots, qps);
}

/* post_one as pt_hook_post_one makes it: a store into the slots lent, else
 * the call (with slots: the tool's wr_id_base set first). */
static void post_one(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t t, bool slots)
{
	if (slots) {
		struct pt_plugin_post_slots *s = &tool_slots[qp];

		if (s->pos < s->lim && seq == s->next_seq) {
			*s->pos++ = t;
			s->next_seq = seq + 1;
			slot_stores++;
			return;
		}
		s->wr_id_base = 1000;
	}
	wrt_post_one(w, qp, seq, 1000 + seq, t);
}

/* one_period: posts that post_one stands for (one WR, no flags, that
 * signal period) go through post_one (slots: into the tool's slots when
 * lent); 0: every post is an event. */
static void play(struct wrt *w, const struct ev *e, size_t n, uint32_t one_period, bool slots)
{
	for (size_t i = 0; i < n; i++) {
		if (e[i].kind == 'p' && one_period && e[i].n == 1 && !e[i].flags &&
		    e[i].period == one_period) {
			post_one(w, e[i].qp, e[i].seq, e[i].t, slots);
		} else if (e[i].kind == 'p') {
			post(w, e[i].qp, e[i].seq, e[i].n, e[i].period, e[i].flags, e[i].t);
		} else if (e[i].kind == 'P') {
			struct pt_plugin_post ev = {
				.struct_size = sizeof(ev), .qp = e[i].qp, .first_seq = e[i].seq,
				.count = e[i].n, .opcode = PT_PLUGIN_OP_SEND, .first_wr_id = e[i].hw,
				.wr_id_step = e[i].status, .bytes = 64, .signal_period = e[i].period,
				.flags = e[i].flags, .t_ns = e[i].t,
			};
			wrt_post(w, &ev);
		} else if (e[i].kind == 'c') {
			cqe(w, e[i].qp, e[i].seq, e[i].status, e[i].flags, e[i].t, e[i].hw);
		} else if (e[i].kind == 'r') {
			post_recv(w, e[i].qp, e[i].seq, e[i].t);
		} else {
			cqe(w, e[i].qp, e[i].seq, e[i].status, PT_PLUGIN_COMP_RECV, e[i].t, 0);
		}
	}
}

/* The script on eight recorders: the FIFO path (nodefer) with post events
 * only, the reference; the FIFO path with post_one for the plain WRs; and
 * deferred rows on a send+receive run and on a send-only run, each with
 * post events only, with post_one and with post_one into the tool's post
 * slots. The same rows, in the same order,
 * and the same counts. The send+receive runs have half the iterations and
 * no receive depth, so all get the same row cap. handover: NULL when the
 * deferred recorders still defer at the end of the script, else the words
 * their reason for handing over must hold. */
static void same_as_fifo(const struct ev *e, size_t n, uint32_t qps, uint64_t iters,
			 uint32_t cq_mod, const char *handover)
{
	const bool still_deferred = !handover;
	struct pt_plugin_run_info both = info_for(qps, iters / 2, cq_mod, 1);
	struct pt_plugin_run_info send = info_for(qps, iters, cq_mod, 1);
	static const struct { const char *args; bool send_only, one, slots; } v[] = {
		{ "x.csv:nodefer", false, false, false }, { "x.csv:nodefer", false, true, false },
		{ "x.csv", false, false, false }, { "x.csv", false, true, false },
		{ "x.csv", true, false, false }, { "x.csv", true, true, false },
		{ "x.csv", false, true, true }, { "x.csv", true, true, true },
	};
	enum { NV = sizeof(v) / sizeof(v[0]) };
	struct wrt *w[NV];

	assert_true(iters % 2 == 0);
	both.rx_depth = 0;
	both.hw_ts = send.hw_ts = PT_PLUGIN_HW_TS_ON;
	send.directions = PT_PLUGIN_DIR_SEND;
	for (int k = 0; k < NV; k++) {
		w[k] = recorder(v[k].args, v[k].send_only ? &send : &both);
		assert_int_equal(wrt_rows_deferred(w[k]), k >= 2);
		if (v[k].slots)
			bind_slots(w[k], qps);
		play(w[k], e, n, v[k].one ? cq_mod : 0, v[k].slots);
		if (k >= 2 && wrt_rows_deferred(w[k]) != still_deferred)
			fail_msg("recorder %d (%s, %s run, %s) %s deferring", k, v[k].args,
				 v[k].send_only ? "send-only" : "send+receive",
				 v[k].one ? "post_one" : "events", still_deferred ? "stopped" : "kept");
		if (k >= 2 && handover && !strstr(wrt_handover(w[k]), handover))
			fail_msg("recorder %d handed over for '%s', not '%s'", k, wrt_handover(w[k]),
				 handover);
		if (k >= 2 && !handover)
			assert_null(wrt_handover(w[k]));
		end(w[k]);
	}
	for (int k = 1; k < NV; k++)
		recorders_agree(w[0], w[k], true);
	for (int k = 0; k < NV; k++)
		wrt_free(w[k]);
}

#define HW PT_PLUGIN_COMP_HW_TS
#define LAST PT_PLUGIN_POST_LAST_SIGNALED

/* Regular posts to the end: two QPs, cq_mod 3, the last WR forced
 * signaled, NIC times, an error status, a CQE past the last post, an old
 * CQE again (unmatched), WRs never completed. */
static void test_deferred_regular(void **state)
{
	struct ev e[64];
	size_t n = 0;

	(void)state;
	for (uint64_t s = 0; s < 8; s++)
		for (uint32_t q = 0; q < 2; q++) {
			e[n++] = (struct ev){ 'p', q, s, 1, 3, s == 7 ? LAST : 0, 0, 100 + 10 * s + q, 0 };
			if (s % 3 == 2)
				e[n++] = (struct ev){ 'c', q, s, 0, 0, q ? 0 : HW, s == 5 && q ? 12 : 0,
						      200 + 10 * s + q, 9000 + s };
		}
	e[n++] = (struct ev){ 'c', 0, 2, 0, 0, 0, 0, 400, 0 };           /* already retired */
	e[n++] = (struct ev){ 'c', 1, 7, 0, 0, HW, 0, 410, 9100 };        /* its own CQE, last */
	e[n++] = (struct ev){ 'c', 0, 30, 0, 0, 0, 0, 420, 0 };           /* past the last post */
	e[n++] = (struct ev){ 'p', 0, 8, 1, 3, 0, 0, 430, 0 };            /* never completes */
	slot_stores = 0;
	same_as_fifo(e, n, 2, 12, 3, NULL);
	/* the slots were used, not only lent: 2 recorders, 2 QPs, seq 1..6 */
	assert_int_equal(slot_stores, 2 * 2 * 6);
}

/* What the deferral takes without handing over: sequence jumps forward
 * and back, post lists, a new signal period, posts without one and with
 * LAST_SIGNALED (the interposer's kind), wr_ids of step 0 and 5, CQEs of
 * unknown sequence, receives (one the queue moved past, CQEs of known and
 * unknown sequence, still posted at the end), enough WRs to cross
 * the pool's chunks; a latency loop's posts (one wr_id, LAST_SIGNALED on
 * period 1) and a wr_id step other than declared, each too many for a
 * segment per post. */
static void test_deferred_irregular(void **state)
{
	static struct ev e[2048];
	size_t n = 0;
	uint64_t t = 100, s;

	(void)state;
	for (s = 0; s < 300; s++, t += 3) {             /* 300 plain WRs: 3 chunks of 128 */
		e[n++] = (struct ev){ 'p', s % 2, s / 2, 1, 4, 0, 0, t, 0 };
		if ((s / 2 + 1) % 4 == 0)
			e[n++] = (struct ev){ 'c', s % 2, s / 2, 0, 0, HW, 0, t + 1, 5000 + s };
	}
	e[n++] = (struct ev){ 'p', 0, 200, 1, 4, 0, 0, t++, 0 };         /* jump forward */
	e[n++] = (struct ev){ 'p', 0, 201, 3, 4, 0, 0, t++, 0 };         /* post list */
	e[n++] = (struct ev){ 'c', 0, 203, 0, 0, 0, 0, t++, 0 };
	e[n++] = (struct ev){ 'p', 0, 50, 2, 5, 0, 0, t++, 0 };          /* back, new period */
	e[n++] = (struct ev){ 'c', 0, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, 0, 0, t++, 0 };
	e[n++] = (struct ev){ 'P', 1, 150, 1, 0, LAST, 0, t++, 77 };     /* interposer: step 0 */
	e[n++] = (struct ev){ 'P', 1, 151, 1, 0, 0, 0, t++, 77 };
	e[n++] = (struct ev){ 'P', 1, 152, 1, 0, LAST, 0, t++, 77 };
	e[n++] = (struct ev){ 'c', 1, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, 0, 0, t++, 0 };
	e[n++] = (struct ev){ 'c', 1, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, HW, 0, t++, 6000 };
	e[n++] = (struct ev){ 'P', 1, 153, 4, 2, 0, 5, t++, 500 };       /* wr_id step 5 */
	e[n++] = (struct ev){ 'c', 1, 155, 0, 0, 0, 0, t++, 0 };
	for (s = 0; s < 6; s++)
		e[n++] = (struct ev){ 'r', 1, s, 1, 0, 0, 0, t++, 0 };
	e[n++] = (struct ev){ 'R', 1, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, 0, 0, t++, 0 };
	e[n++] = (struct ev){ 'R', 1, 2, 0, 0, 0, 3, t++, 0 };           /* 1 passed over */
	e[n++] = (struct ev){ 'R', 1, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, 0, 0, t++, 0 };
	for (s = 0; s < 200; s++) {   /* as run_lat.c: wr_id 0 with step 1, LAST on period 1 */
		e[n++] = (struct ev){ 'P', 0, 60 + s, 1, 1, LAST, 1, t++, 0 };
		e[n++] = (struct ev){ 'c', 0, 60 + s, 0, 0, 0, 0, t++, 0 };
	}
	for (s = 0; s < 100; s++) {   /* wr_id step 7, declared 0 */
		e[n++] = (struct ev){ 'P', 1, 157 + s, 1, 2, 0, 0, t++, 900 + 7 * s };
		if (s % 2)
			e[n++] = (struct ev){ 'c', 1, 157 + s, 0, 0, 0, 0, t++, 0 };
	}
	e[n++] = (struct ev){ 'p', 0, 52, 1, 5, 0, 0, t++, 0 };          /* never completes */
	assert_true(n <= sizeof(e) / sizeof(e[0]));
	slot_stores = 0;
	same_as_fifo(e, n, 2, 1000, 4, NULL);
	assert_true(slot_stores > 2 * 250);   /* most plain WRs, across chunks */
}

/* A latency loop's run, as run_lat.c makes it (the recorder's CQE fast
 * paths): send_lat's ping-pong on cq_mod 1, one wr_id (step 1 declared),
 * LAST_SIGNALED, each send's own CQE (one failed, one with a NIC time), the
 * pong's receive CQE of unknown and of known sequence and its repost;
 * then CQEs the fast paths must leave to the general rules: an old CQE
 * again, one of a WR never posted, a receive CQE that skips one. */
static void test_latency_pingpong(void **state)
{
	static struct ev e[1024];
	size_t n = 0;
	uint64_t t = 100, s;

	(void)state;
	for (s = 0; s < 4; s++)
		e[n++] = (struct ev){ 'r', 0, s, 1, 0, 0, 0, t++, 0 };
	for (s = 0; s < 150; s++) {
		e[n++] = (struct ev){ 'P', 0, s, 1, 1, LAST, 1, t++, 0 };
		e[n++] = (struct ev){ 'c', 0, s, 0, 0, s == 40 ? HW : 0, s == 70 ? 5 : 0, t++,
				      s == 40 ? 7000 : 0 };
		e[n++] = (struct ev){ 'R', 0, s % 3 ? PT_PLUGIN_SEQ_UNKNOWN : s, 0, 0, 0, 0, t++, 0 };
		e[n++] = (struct ev){ 'r', 0, s + 4, 1, 0, 0, 0, t++, 0 };
	}
	e[n++] = (struct ev){ 'c', 0, 149, 0, 0, 0, 0, t++, 0 };          /* its CQE again */
	e[n++] = (struct ev){ 'c', 0, 400, 0, 0, 0, 0, t++, 0 };          /* never posted */
	e[n++] = (struct ev){ 'R', 0, 151, 0, 0, 0, 0, t++, 0 };          /* 150 passed over */
	assert_true(n <= sizeof(e) / sizeof(e[0]));
	same_as_fifo(e, n, 1, 400, 1, NULL);
}

/* Posts without a signal period in between posts with one: the WRs after
 * them are signaled by their own sequence ((seq + 1) % period == 0), not
 * by a countdown that stood still meanwhile; on both paths. */
static void test_period_gap(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 24, 4, 1);
	struct ev e[32];
	const struct wrt_rec *r;
	struct wrt *w;
	size_t n = 0;
	uint64_t nr;

	(void)state;
	for (uint64_t s = 0; s < 13; s++)
		e[n++] = (struct ev){ 'p', 0, s, 1, s == 3 || s == 4 ? 0 : 4, 0, 0, 100 + s, 0 };
	e[n++] = (struct ev){ 'c', 0, 11, 0, 0, 0, 0, 200, 0 };
	w = recorder("x.csv:nodefer", &in);
	play(w, e, n, 0, false);
	end(w);
	r = wrt_records(w, &nr);
	assert_int_equal(nr, 13);
	for (uint64_t i = 0; i < nr; i++)
		if (!!(r[i].flags & WRT_SIGNALED) != (r[i].seq == 7 || r[i].seq == 11))
			fail_msg("seq %llu: signaled %d", (unsigned long long)r[i].seq,
				 !!(r[i].flags & WRT_SIGNALED));
	wrt_free(w);
	same_as_fifo(e, n, 1, 24, 4, NULL);
}

/* The deferral ends mid-run at an event it cannot take, and the rows so
 * far and the rest are what the FIFOs make of the same run. */
static void test_deferred_then_fifo(void **state)
{
	enum { PRE_RECV, TOO_MANY, EMPTY, LOG_FULL, SEGS_FULL, POOL_FULL };
	static const char *const what[] = {
		"a receive posted before the run", "more in flight than the FIFO holds",
		"a post of no WR", "a CQE for every WR: the log fills",
		"every post a sequence jump: the segment table fills",
		"far more WRs than iterations: the pool fills",
	};
	static const char *const reason[] = {
		"a receive posted before the run", "more WRs in flight than the FIFO holds",
		"a post of no WR", "CQE log full", "segment table full", "pool full",
	};

	(void)state;
	for (int b = PRE_RECV; b <= POOL_FULL; b++) {
		struct ev e[512];
		size_t n = 0;
		uint64_t s = 0, t = 100;

		print_message("break: %s\n", what[b]);
		for (; s < 6; s++) {
			e[n++] = (struct ev){ 'p', 0, s, 1, 4, 0, 0, t++, 0 };
			if (s == 3)
				e[n++] = (struct ev){ 'c', 0, 3, 0, 0, HW, 0, t++, 7000 };
		}
		if (b == PRE_RECV)
			e[n++] = (struct ev){ 'R', 0, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, 0, 0, t++, 0 };
		if (b == TOO_MANY) {
			e[n++] = (struct ev){ 'p', 0, s, 70, 4, 0, 0, t++, 0 };
			s += 70;
		}
		if (b == EMPTY)
			e[n++] = (struct ev){ 'p', 0, s, 0, 4, 0, 0, t++, 0 };
		for (uint64_t k = 0; k < (b >= LOG_FULL ? 200u : 8u); k++, s++) {
			uint64_t seq = b == SEGS_FULL ? 2 * s : s;

			e[n++] = (struct ev){ 'p', 0, seq, 1, 4, 0, 0, t++, 0 };
			if (b == LOG_FULL || (b == POOL_FULL ? (seq + 1) % 16 == 0 : (seq + 1) % 4 == 0) ||
			    (b == SEGS_FULL && k % 4 == 3))
				e[n++] = (struct ev){ 'c', 0, seq, 0, 0, HW, 0, t++, 7100 + k };
		}
		e[n++] = (struct ev){ 'R', 0, 0, 0, 0, 0, 0, t++, 0 };
		assert_true(n <= sizeof(e) / sizeof(e[0]));
		same_as_fifo(e, n, 1, b == LOG_FULL ? 240 : 40, 4, reason[b]);
	}
}

/* The post slots stop where lazy_post1 would: at the end of a pool chunk
 * (128 slots here) and at the WRs in flight the FIFO holds (64): a slot
 * more would be a post time in another queue's chunk or a WR the FIFOs
 * cannot take at a hand-over. */
static void test_slots_limits(void **state)
{
	static struct ev e[512];
	size_t n = 0;
	uint64_t t = 100, s;

	(void)state;
	for (s = 0; s < 270; s++, t += 2) {
		e[n++] = (struct ev){ 'p', 0, s, 1, 4, 0, 0, t, 0 };
		if ((s + 1) % 4 == 0)
			e[n++] = (struct ev){ 'c', 0, s, 0, 0, 0, 0, t + 1, 0 };
	}
	slot_stores = 0;
	same_as_fifo(e, n, 1, 280, 4, NULL);
	assert_true(slot_stores > 2 * 250);
	n = 0;
	for (s = 0; s < 70; s++, t += 2)          /* no CQE: 64 in flight at most */
		e[n++] = (struct ev){ 'p', 0, s, 1, 4, 0, 0, t, 0 };
	e[n++] = (struct ev){ 'c', 0, 69, 0, 0, 0, 0, t, 0 };
	same_as_fifo(e, n, 1, 280, 4, "more WRs in flight than the FIFO holds");
}

/* The latency loops' pair slots (ABI 1.3), through the real hooks
 * (hooks.h) and recorder_plugin.h, which hands every call to one recorder. A pair
 * script's events: 'L' a latency send post (one wr_id, LAST_SIGNALED on
 * period 1, the run's opcode), 'c' its CQE (seq, status, HW flag and hw),
 * 'R' a receive CQE of unknown sequence (n its wr_id, period its bytes,
 * 0: 64), 'K' one of known sequence, 'r' a receive post (seq, n its wr_id). */
static struct ibv_wc pair_wc(const struct ev *e, enum ibv_wc_opcode op)
{
	return (struct ibv_wc){ .wr_id = e->n, .status = (enum ibv_wc_status)e->status, .opcode = op,
				.byte_len = e->period ? e->period : 64 };
}

/* The script as run_lat.c and post.c hand it to the hooks. */
static void play_hooks(const struct ev *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ibv_wc wc;
		uint64_t hw = e[i].hw;

		switch (e[i].kind) {
		case 'L':
			pt_hook_pair_post(e[i].qp, e[i].seq, 0, e[i].t);
			break;
		case 'c':
			wc = pair_wc(&e[i], IBV_WC_SEND);
			wc.wr_id = 0;
			pt_hook_pair_wc(e[i].qp, e[i].seq, &wc, false, e[i].t,
					e[i].flags & PT_PLUGIN_COMP_HW_TS ? &hw : NULL);
			break;
		case 'R':
			wc = pair_wc(&e[i], IBV_WC_RECV);
			pt_hook_pair_wc(e[i].qp, PT_PLUGIN_SEQ_UNKNOWN, &wc, true, e[i].t,
					e[i].flags & PT_PLUGIN_COMP_HW_TS ? &hw : NULL);
			break;
		case 'K':
			wc = pair_wc(&e[i], IBV_WC_RECV);
			pt_hook_wc(e[i].qp, e[i].seq, &wc, true, e[i].t, NULL);
			break;
		default:
			pt_hook_post(e[i].qp, e[i].seq, 1, PT_PLUGIN_OP_RECV, e[i].n, 1, 64, 0, 0, e[i].t);
		}
	}
}

/* The same script as the events the hooks stand for, straight to w. */
static void play_events(struct wrt *w, const struct ev *e, size_t n, uint32_t op)
{
	for (size_t i = 0; i < n; i++) {
		const bool recv = e[i].kind == 'R' || e[i].kind == 'K';
		const bool hw = e[i].flags & PT_PLUGIN_COMP_HW_TS;
		struct pt_plugin_post p = {
			.struct_size = sizeof(p), .qp = e[i].qp, .first_seq = e[i].seq, .count = 1,
			.opcode = op, .first_wr_id = 0, .wr_id_step = 1, .bytes = 64,
			.signal_period = 1, .flags = PT_PLUGIN_POST_LAST_SIGNALED, .t_ns = e[i].t,
		};
		struct pt_plugin_completion c = {
			.struct_size = sizeof(c), .qp = e[i].qp, .wr_id = recv ? e[i].n : 0,
			.seq = e[i].kind == 'R' ? PT_PLUGIN_SEQ_UNKNOWN : e[i].seq, .status = e[i].status,
			.opcode = recv ? PT_PLUGIN_OP_RECV : op,
			.bytes = recv && e[i].period ? e[i].period : 64,
			.flags = (recv ? PT_PLUGIN_COMP_RECV : 0) | (hw ? PT_PLUGIN_COMP_HW_TS : 0),
			.t_poll_ns = e[i].t, .hw_ns = hw ? e[i].hw : 0,
		};

		if (e[i].kind == 'r') {
			p = (struct pt_plugin_post){ .struct_size = sizeof(p), .qp = e[i].qp,
						     .first_seq = e[i].seq, .count = 1,
						     .opcode = PT_PLUGIN_OP_RECV, .first_wr_id = e[i].n,
						     .wr_id_step = 1, .bytes = 64, .t_ns = e[i].t };
		}
		if (e[i].kind == 'L' || e[i].kind == 'r')
			wrt_post(w, &p);
		else
			wrt_complete(w, &c);
	}
}

/* A recorder of args on in, pair_max pair slots lent at a time at most. */
static struct wrt *pair_recorder(const char *args, const struct pt_plugin_run_info *in,
				 uint64_t pair_max)
{
	struct wrt_config cfg;
	char err[256];
	struct wrt *w;

	assert_int_equal(wrt_config_parse(args, &cfg, err, sizeof(err)), 0);
	cfg.path[0] = '\0';
	cfg.quiet = true;
	cfg.pairs_max = pair_max;
	w = wrt_new(&cfg);
	assert_non_null(w);
	assert_int_equal(wrt_run_start(w, in, err, sizeof(err)), 0);
	return w;
}

/* The script through the hooks into a recorder; returns the plugin's calls. */
static uint64_t via_hooks(struct wrt *w, const struct pt_plugin_run_info *in, const struct ev *e,
			  size_t n)
{
	struct pt_plugin_run_end end_ev = { .struct_size = sizeof(end_ev) };
	char err[256];

	recorder_plugin_target = w;
	recorder_plugin_calls = 0;
	assert_int_equal(pt_hooks_load_builtin(&recorder_plugin_ops, "pair-test", "", err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_run_start(in, err, sizeof(err)), 0);
	play_hooks(e, n);
	assert_int_equal(pt_hooks_run_end(&end_ev, err, sizeof(err)), 0);
	pt_hooks_unload_all();
	return recorder_plugin_calls;
}

/* The script as events on the FIFO path (the reference) and deferred, and
 * through the hooks with pair slots (as many as the run wants, and few, so
 * they run out and are played at each call), and with pair slots refused
 * (nodefer): the same rows and counts. Returns the calls the hooks made
 * with all the pair slots the run wants (stored pairs make none). */
static uint64_t pairs_same(const struct ev *e, size_t n, uint32_t op, bool recvs)
{
	struct pt_plugin_run_info in = info_for(1, 400, 1, 1);
	struct wrt *ref, *w[4];
	uint64_t calls = 0;

	in.tx_depth = 1;
	in.rx_depth = recvs ? 8 : 1;
	in.send_opcode = op;
	if (!recvs)
		in.directions = PT_PLUGIN_DIR_SEND;
	ref = pair_recorder("x.csv:nodefer", &in, 0);
	play_events(ref, e, n, op);
	end(ref);
	w[0] = pair_recorder("x.csv", &in, 0);
	play_events(w[0], e, n, op);
	end(w[0]);
	w[1] = pair_recorder("x.csv", &in, 0);
	calls = via_hooks(w[1], &in, e, n);
	w[2] = pair_recorder("x.csv", &in, 5);
	via_hooks(w[2], &in, e, n);
	w[3] = pair_recorder("x.csv:nodefer", &in, 0);
	assert_int_equal(via_hooks(w[3], &in, e, n), n);   /* no pairs: every event a call */
	for (int k = 0; k < 4; k++) {
		print_message("pairs: recorder %d\n", k);
		recorders_agree(ref, w[k], true);
		wrt_free(w[k]);
	}
	wrt_free(ref);
	return calls;
}

/* send_lat's client: receives posted, then per iteration its send, the
 * send's CQE, the pong's receive CQE and its repost; in the middle a
 * failed send CQE, a NIC time on a send and on a receive CQE, a short
 * receive, a receive CQE of known sequence and one whose wr_id is not
 * the next, a repost that comes after the next send; then an old CQE
 * again, a CQE never posted, and a last send whose CQE never comes (the
 * hooks hand its post over at run end). */
static void test_pairs_send_lat(void **state)
{
	static struct ev e[1024];
	size_t n = 0;
	uint64_t t = 100, s, calls;

	(void)state;
	for (s = 0; s < 4; s++)
		e[n++] = (struct ev){ 'r', 0, s, (uint32_t)s, 0, 0, 0, t++, 0 };
	for (s = 0; s < 150; s++) {
		e[n++] = (struct ev){ 'L', 0, s, 1, 1, 0, 0, t++, 0 };
		e[n++] = (struct ev){ 'c', 0, s, 0, 0, s == 40 ? HW : 0, s == 70 ? 5 : 0, t++,
				      s == 40 ? 7000 : 0 };
		if (s == 131)   /* 130's repost after a send pair: not the open pair's */
			e[n++] = (struct ev){ 'r', 0, 134, 134, 0, 0, 0, t++, 0 };
		if (s == 100)
			e[n++] = (struct ev){ 'K', 0, s, (uint32_t)s, 0, 0, 0, t++, 0 };
		else
			e[n++] = (struct ev){ 'R', 0, 0, s == 120 ? 999 : (uint32_t)s,
					      s == 90 ? 60 : 0, s == 60 ? HW : 0, 0, t++,
					      s == 60 ? 7100 : 0 };
		if (s != 130)
			e[n++] = (struct ev){ 'r', 0, s + 4, (uint32_t)s + 4, 0, 0, 0, t++, 0 };
	}
	e[n++] = (struct ev){ 'c', 0, 149, 0, 0, 0, 0, t++, 0 };          /* its CQE again */
	e[n++] = (struct ev){ 'c', 0, 400, 0, 0, 0, 0, t++, 0 };          /* never posted */
	e[n++] = (struct ev){ 'L', 0, 150, 1, 1, 0, 0, t++, 0 };          /* never completes */
	assert_true(n <= sizeof(e) / sizeof(e[0]));
	calls = pairs_same(e, n, PT_PLUGIN_OP_SEND, true);
	/* most of the 600 events of the loop went as pairs */
	print_message("pairs: %llu calls for %zu events\n", (unsigned long long)calls, n);
	assert_true(calls < 60);
}

/* read_lat, atomic_lat and write_lat's client: a send and its CQE per
 * iteration, a failed one and one with a NIC time in the middle. */
static void test_pairs_one_sided(void **state)
{
	static const uint32_t ops[] = { PT_PLUGIN_OP_READ, PT_PLUGIN_OP_ATOMIC_FA, PT_PLUGIN_OP_WRITE };
	static struct ev e[512];

	(void)state;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t n = 0;
		uint64_t t = 100, calls;

		for (uint64_t s = 0; s < 200; s++) {
			e[n++] = (struct ev){ 'L', 0, s, 1, 1, 0, 0, t++, 0 };
			e[n++] = (struct ev){ 'c', 0, s, 0, 0, s == 33 ? HW : 0, s == 150 ? 12 : 0, t++,
					      s == 33 ? 9000 : 0 };
		}
		calls = pairs_same(e, n, ops[k], false);
		print_message("pairs: op %u, %llu calls for %zu events\n", ops[k],
			      (unsigned long long)calls, n);
		assert_true(calls < 20);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deferred_regular),
		cmocka_unit_test(test_deferred_irregular),
		cmocka_unit_test(test_latency_pingpong),
		cmocka_unit_test(test_period_gap),
		cmocka_unit_test(test_deferred_then_fifo),
		cmocka_unit_test(test_slots_limits),
		cmocka_unit_test(test_pairs_send_lat),
		cmocka_unit_test(test_pairs_one_sided),
	};
	return cmocka_run_group_tests_name("wrtrace deferred rows", tests, NULL, NULL);
}
