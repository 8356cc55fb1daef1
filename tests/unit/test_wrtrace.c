/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace recorder: FIFO retirement (cq_mod > 1, post lists, several QPs,
 * unknown sequence numbers), receives, drops over the cap, counting of
 * everything that does not match, the HW split, histogram bounds, options,
 * and no allocation on the hot path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "plugin/recorder/wrtrace.h"

/* Allocation counter over the objects linked statically (--wrap). */
static bool counting;
static unsigned allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocs += counting; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocs += counting; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocs += counting; return __real_realloc(p, n); }

static const uint32_t qpns[4] = { 0x11, 0x12, 0x13, 0x14 };

static struct pt_plugin_run_info info_for(uint32_t qps, uint64_t iters, uint32_t cq_mod,
					  uint32_t post_list)
{
	return (struct pt_plugin_run_info){
		.struct_size = sizeof(struct pt_plugin_run_info), .tool = "test", .device = "mock0",
		.role = PT_PLUGIN_ROLE_CLIENT, .conn = PT_PLUGIN_CONN_RC,
		.directions = PT_PLUGIN_DIR_SEND | PT_PLUGIN_DIR_RECV, .num_qps = qps,
		.qp_nums = qpns, .msg_size = 64, .iterations = iters, .tx_depth = 16, .rx_depth = 4,
		.cq_mod = cq_mod, .post_list = post_list, .hw_ts = PT_PLUGIN_HW_TS_NONE,
		.hw_clock_domain = "none", .sw_clock = "CLOCK_MONOTONIC_RAW",
		.send_opcode = PT_PLUGIN_OP_SEND,
	};
}

static struct wrt *recorder(const char *args, const struct pt_plugin_run_info *in)
{
	struct wrt_config cfg;
	char err[256];
	struct wrt *w;

	assert_int_equal(wrt_config_parse(args, &cfg, err, sizeof(err)), 0);
	cfg.path[0] = '\0'; /* no file: these tests look at memory */
	cfg.quiet = true;
	w = wrt_new(&cfg);
	assert_non_null(w);
	assert_int_equal(wrt_run_start(w, in, err, sizeof(err)), 0);
	return w;
}

static void post(struct wrt *w, uint32_t qp, uint64_t seq, uint32_t n, uint32_t period,
		 uint32_t flags, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = n,
		.opcode = PT_PLUGIN_OP_SEND, .first_wr_id = 1000 + seq, .wr_id_step = 1,
		.bytes = 64, .signal_period = period, .flags = flags, .t_ns = t,
	};
	wrt_post(w, &ev);
}

static void post_recv(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = 1,
		.opcode = PT_PLUGIN_OP_RECV, .first_wr_id = qp, .bytes = 64, .t_ns = t,
	};
	wrt_post(w, &ev);
}

static void cqe(struct wrt *w, uint32_t qp, uint64_t seq, uint32_t status, uint32_t flags,
		uint64_t t, uint64_t hw)
{
	struct pt_plugin_completion ev = {
		.struct_size = sizeof(ev), .qp = qp, .wr_id = 7, .seq = seq, .status = status,
		.opcode = (flags & PT_PLUGIN_COMP_RECV) ? PT_PLUGIN_OP_RECV : PT_PLUGIN_OP_SEND,
		.bytes = 64, .flags = flags, .t_poll_ns = t, .hw_ns = hw,
	};
	wrt_complete(w, &ev);
}

static void end(struct wrt *w)
{
	struct pt_plugin_run_end e = { .struct_size = sizeof(e) };
	char err[256];

	assert_int_equal(wrt_run_end(w, &e, err, sizeof(err)), 0);
}

/* cq_mod 4, one WR per post, the last one forced signaled: each CQE stamps
 * every older WR of the queue. */
static void test_fifo_cq_mod(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 10, 4, 1);
	struct wrt *w = recorder("x.csv", &in);
	struct wrt_gaps gaps = { 0 };
	struct wrt_derived d;
	const struct wrt_rec *r;
	uint64_t n;

	(void)state;
	for (uint64_t i = 0; i < 10; i++)
		post(w, 0, i, 1, 4, i == 9 ? PT_PLUGIN_POST_LAST_SIGNALED : 0, 100 + 10 * i);
	cqe(w, 0, 3, 0, 0, 1000, 0);
	cqe(w, 0, 7, 0, 0, 2000, 0);
	cqe(w, 0, 9, 0, 0, 3500, 0);
	end(w);
	r = wrt_records(w, &n);
	assert_int_equal(n, 10);
	for (uint64_t i = 0; i < 10; i++) {
		uint64_t want = i <= 3 ? 1000 : i <= 7 ? 2000 : 3500;

		assert_int_equal(r[i].seq, i);
		assert_int_equal(r[i].wr_id, 1000 + i);
		assert_int_equal(r[i].t_post, 100 + 10 * i);
		assert_int_equal(r[i].t_comp, want);
		assert_true(r[i].flags & WRT_DONE);
		assert_int_equal(!!(r[i].flags & WRT_SIGNALED), i == 3 || i == 7 || i == 9);
		/* only the WR that owns a CQE carries it; gaps from the second on */
		assert_int_equal(!!(r[i].flags & WRT_CQE), i == 3 || i == 7 || i == 9);
		wrt_derive(&r[i], wrt_meta(w), &gaps, &d);
		assert_int_equal(d.has_gap_sw, i == 7 || i == 9);
		assert_int_equal(d.gap_sw_ns, i == 7 ? 1000 : i == 9 ? 1500 : 0);
		assert_int_equal(d.lat_ns, (int64_t)want - (int64_t)(100 + 10 * i));
	}
	assert_int_equal(wrt_meta(w)->incomplete, 0);
	assert_int_equal(wrt_meta(w)->unmatched, 0);
	assert_int_equal(wrt_meta(w)->wrs, 10);
	wrt_free(w);
}

/* Post lists of 4 with a signal every 6th WR (mid-list), two QPs, CQEs whose
 * sequence the tool does not know: the oldest signaled WR is the match. */
static void test_fifo_post_list_unknown_seq(void **state)
{
	struct pt_plugin_run_info in = info_for(2, 12, 6, 4);
	struct wrt *w = recorder("x.csv", &in);
	const struct wrt_rec *r;
	uint64_t n, u = PT_PLUGIN_SEQ_UNKNOWN;

	(void)state;
	for (uint64_t s = 0; s < 12; s += 4)
		for (uint32_t q = 0; q < 2; q++)
			post(w, q, s, 4, 6, s == 8 ? PT_PLUGIN_POST_LAST_SIGNALED : 0, 10 * s + q);
	cqe(w, 1, u, 0, 0, 500, 0);  /* QP 1 seq 5 */
	cqe(w, 0, u, 0, 0, 600, 0);  /* QP 0 seq 5 */
	cqe(w, 0, u, 0, 0, 700, 0);  /* QP 0 seq 11 (both rules) */
	end(w);
	r = wrt_records(w, &n);
	assert_int_equal(n, 24);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t s = r[i].seq;

		assert_int_equal(!!(r[i].flags & WRT_SIGNALED), s == 5 || s == 11);
		if (r[i].qp == 0)
			assert_int_equal(r[i].t_comp, s <= 5 ? 600 : 700);
		else if (s <= 5)
			assert_int_equal(r[i].t_comp, 500);
		else
			assert_false(r[i].flags & WRT_DONE);
	}
	/* QP 1 seq 6..11 never completed: counted, not lost */
	assert_int_equal(wrt_meta(w)->incomplete, 6);
	assert_int_equal(wrt_meta(w)->unmatched, 0);
	wrt_free(w);
}

/* A sequence jump (tool restarted numbering) re-derives the signal phase. */
static void test_signal_phase_resync(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 0, 3, 1);
	struct wrt *w = recorder("x.csv", &in);
	const struct wrt_rec *r;
	uint64_t n;

	(void)state;
	post(w, 0, 0, 2, 3, 0, 1);  /* 0 1 */
	post(w, 0, 7, 3, 3, 0, 2);  /* 7 8(sig) 9 */
	end(w);                     /* none completed: rows in post order */
	r = wrt_records(w, &n);
	assert_int_equal(n, 5);
	assert_false(r[0].flags & WRT_SIGNALED);
	assert_false(r[1].flags & WRT_SIGNALED);
	assert_false(r[2].flags & WRT_SIGNALED);
	assert_true(r[3].flags & WRT_SIGNALED);
	assert_false(r[4].flags & WRT_SIGNALED);
	assert_int_equal(wrt_meta(w)->incomplete, 5);
	wrt_free(w);
}

/* CQEs that match nothing, a QP out of range, a full FIFO: all counted. */
static void test_unmatched_untracked(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 100, 1, 1);
	struct wrt *w;
	uint64_t n;

	(void)state;
	in.tx_depth = 2;
	w = recorder("x.csv:fifo=1", &in); /* FIFO of pow2(2 * 2) = 4 entries */
	cqe(w, 0, 0, 0, 0, 10, 0);         /* nothing outstanding */
	cqe(w, 3, 0, 0, 0, 10, 0);         /* no QP 3 */
	post(w, 5, 0, 2, 1, 0, 1);         /* no QP 5 */
	post(w, 0, 0, 6, 1, 0, 1);         /* 4 fit, 2 do not */
	cqe(w, 0, 2, 0, 0, 20, 0);
	cqe(w, 0, 2, 0, 0, 21, 0);         /* already retired */
	end(w);
	wrt_records(w, &n);
	assert_int_equal(n, 4);
	assert_int_equal(wrt_meta(w)->unmatched, 3);
	assert_int_equal(wrt_meta(w)->untracked, 4);
	assert_int_equal(wrt_meta(w)->incomplete, 1);
	assert_int_equal(wrt_meta(w)->wrs, 8);
	wrt_free(w);
}

/* Over the cap rows stop but every WR still reaches the statistics. */
static void test_drops_counted(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 1000, 10, 1);
	struct wrt *w = recorder("x.csv:max=100", &in);
	struct wrt_summary s;
	const struct wrt_rec *r;
	uint64_t n;

	(void)state;
	for (uint64_t i = 0; i < 1000; i++) {
		post(w, 0, i, 1, 10, 0, 1000 * i);
		if ((i + 1) % 10 == 0)
			cqe(w, 0, i, 0, 0, 1000 * i + 5000, 0);
	}
	end(w);
	r = wrt_records(w, &n);
	assert_int_equal(n, 100);
	assert_int_equal(r[99].seq, 99);
	assert_int_equal(wrt_meta(w)->dropped, 900);
	assert_int_equal(wrt_meta(w)->recorded, 100);
	assert_int_equal(wrt_meta(w)->cap, 100);
	/* the capture-time summary covers all 1000 WRs: 5000..14000 ns */
	assert_int_equal(wrt_meta(w)->all_count, 1000);
	assert_int_equal(wrt_meta(w)->all_max, 14000);
	assert_true(wrt_meta(w)->all_p50 >= 9000 * 0.99 && wrt_meta(w)->all_p50 <= 9000 * 1.01);
	/* the rows alone: first 100 WRs */
	assert_int_equal(wrt_summarize(wrt_meta(w), r, n, NULL, &s), 0);
	assert_int_equal(s.send_lat.count, 100);
	assert_false(s.send_lat.approx);
	wrt_free(w);
}

/* Receives posted before the run have no post time; later ones pair FIFO. */
static void test_recv_fifo(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 6, 1, 1);
	struct wrt *w = recorder("x.csv", &in);
	const struct wrt_rec *r;
	uint64_t n, u = PT_PLUGIN_SEQ_UNKNOWN;

	(void)state;
	/* seq 0..1 posted before run_start; the tool reposts 2..5 during it */
	cqe(w, 0, u, 0, PT_PLUGIN_COMP_RECV, 100, 0);
	post_recv(w, 0, 2, 110);
	cqe(w, 0, u, 0, PT_PLUGIN_COMP_RECV, 200, 0);
	post_recv(w, 0, 3, 210);
	cqe(w, 0, u, 0, PT_PLUGIN_COMP_RECV, 300, 0);
	post_recv(w, 0, 4, 310);
	cqe(w, 0, u, 0, PT_PLUGIN_COMP_RECV, 400, 0);
	post_recv(w, 0, 5, 410);
	end(w);
	r = wrt_records(w, &n);
	assert_int_equal(n, 6);
	/* rows in completion order: seq 0, 1 (posted before the run), 2, 3,
	 * then 4 and 5 still posted at the end */
	for (int i = 0; i < 6; i++) {
		assert_int_equal(r[i].seq, i);
		assert_true(r[i].flags & WRT_RECV);
		assert_int_equal(!!(r[i].flags & WRT_POSTED), i >= 2);
		assert_int_equal(!!(r[i].flags & WRT_DONE), i < 4);
	}
	assert_int_equal(r[0].t_comp, 100);
	assert_int_equal(r[2].t_post, 110);
	assert_int_equal(r[2].t_comp, 300);
	assert_int_equal(r[3].t_post, 210);
	assert_int_equal(r[3].t_comp, 400);
	assert_int_equal(r[5].t_post, 410);
	assert_int_equal(wrt_meta(w)->recv_pending, 2);
	assert_int_equal(wrt_meta(w)->incomplete, 0);
	assert_int_equal(wrt_meta(w)->unmatched, 0);
	wrt_free(w);
}

/* Error CQEs are stored and counted, not averaged in. */
static void test_error_status(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 4, 2, 1);
	struct wrt *w = recorder("x.csv", &in);
	struct wrt_summary s;
	const struct wrt_rec *r;
	uint64_t n;

	(void)state;
	for (uint64_t i = 0; i < 4; i++)
		post(w, 0, i, 1, 2, 0, 10);
	cqe(w, 0, 1, 0, 0, 110, 0);
	cqe(w, 0, 3, 12, 0, 5000, 0);
	end(w);
	r = wrt_records(w, &n);
	assert_int_equal(r[3].status, 12);
	assert_int_equal(r[2].status, 0);
	assert_int_equal(wrt_meta(w)->errors, 1);
	assert_int_equal(wrt_summarize(wrt_meta(w), r, n, NULL, &s), 0);
	assert_int_equal(s.send_lat.count, 3);
	assert_int_equal(s.send_lat.max, 4990);
	wrt_free(w);
}

/* With NIC times and a fit, latency splits into post->CQE and CQE->poll. */
static void test_hw_split(void **state)
{
	struct pt_plugin_run_info in = info_for(1, 2, 1, 1);
	/* NIC clock runs 2000 ns ahead of software time, at the same rate */
	struct pt_plugin_clock_fit fit = {
		.struct_size = sizeof(fit), .samples = 8, .hw_ref_ns = 1002000, .sw_ref_ns = 1000000,
		.intercept_ns = 0, .slope = 1.0, .residual_rms_ns = 3, .residual_max_ns = 5,
	};
	struct wrt *w;
	struct wrt_summary s;
	const struct wrt_rec *r;
	struct wrt_derived d;
	struct wrt_gaps gaps = { 0 };
	uint64_t n;

	(void)state;
	in.hw_ts = PT_PLUGIN_HW_TS_ON;
	in.hw_clock_hz = 156250000;
	w = recorder("x.csv", &in);
	wrt_clock_fit(w, &fit);
	post(w, 0, 0, 1, 1, 0, 1000000);
	post(w, 0, 1, 1, 1, 0, 1000100);
	cqe(w, 0, 0, 0, PT_PLUGIN_COMP_HW_TS, 1000900, 1002700);
	cqe(w, 0, 1, 0, PT_PLUGIN_COMP_HW_TS, 1001000, 1002850);
	end(w);
	r = wrt_records(w, &n);
	wrt_derive(&r[0], wrt_meta(w), &gaps, &d);
	assert_true(d.has_split);
	assert_int_equal(d.lat_ns, 900);
	assert_int_equal(d.post_to_cqe_ns, 700);
	assert_int_equal(d.cqe_to_poll_ns, 200);
	assert_false(d.has_gap_hw); /* the first CQE */
	wrt_derive(&r[1], wrt_meta(w), &gaps, &d);
	assert_true(d.has_gap_hw);
	assert_int_equal(d.gap_hw_ns, 150);
	assert_int_equal(d.gap_sw_ns, 100);
	assert_int_equal(wrt_summarize(wrt_meta(w), r, n, NULL, &s), 0);
	assert_int_equal(s.post_to_cqe.count, 2);
	assert_int_equal(s.cqe_to_poll.max, 200);
	assert_int_equal(s.post_to_cqe.max, 750);
	wrt_free(w);
}

/* The log-linear histogram stays within 1% of every value. */
static void test_histogram_bounds(void **state)
{
	struct wrt_hist *h = malloc(sizeof(*h));
	uint64_t v = 1;

	(void)state;
	assert_true(wrt_hist_max_rel_error() <= 0.01);
	for (int i = 0; i < 4000 && v < (UINT64_MAX >> 2); i++, v = v + v / 97 + 1) {
		uint64_t q = wrt_hist_quantize(v);
		double rel = q > v ? (double)(q - v) / v : (double)(v - q) / v;

		assert_true(rel <= wrt_hist_max_rel_error());
		assert_true(v >= 128 || q == v); /* exact below 128 */
	}
	wrt_hist_reset(h);
	assert_int_equal(wrt_hist_percentile(h, 500000), 0);
	for (uint64_t x = 1; x <= 100000; x++)
		wrt_hist_add(h, x);
	assert_int_equal(h->count, 100000);
	assert_int_equal(h->min, 1);
	assert_int_equal(h->max, 100000);
	assert_true(wrt_hist_percentile(h, 990000) >= 99000 * 0.99);
	assert_true(wrt_hist_percentile(h, 990000) <= 99000 * 1.01);
	assert_true(wrt_hist_percentile(h, 1000000) >= 100000 * 0.99);
	assert_int_equal(wrt_hist_percentile(h, 0), 1);
	/* ranks: 99.9% of 1000 is rank 999, and never 0 or beyond n */
	assert_int_equal(wrt_rank(1000, 999000), 999);
	assert_int_equal(wrt_rank(1000, 0), 1);
	assert_int_equal(wrt_rank(7, 1000000), 7);
	assert_int_equal(wrt_rank(UINT64_MAX / 2, 999900), 9222449699651090330ull);
	free(h);
}

static void test_config_parse(void **state)
{
	struct wrt_config c;
	char err[256];

	(void)state;
	unsetenv(WRT_MAX_ENV);
	assert_int_equal(wrt_config_parse("t.csv", &c, err, sizeof(err)), 0);
	assert_string_equal(c.path, "t.csv");
	assert_false(c.jsonl);
	assert_int_equal(c.max_records, WRT_DEFAULT_MAX);
	assert_int_equal(wrt_config_parse("t.jsonl:max=5:quiet", &c, err, sizeof(err)), 0);
	assert_true(c.jsonl);
	assert_true(c.quiet);
	assert_false(c.nodefer);
	assert_int_equal(c.max_records, 5);
	assert_int_equal(wrt_config_parse("t.csv:nodefer", &c, err, sizeof(err)), 0);
	assert_true(c.nodefer);
	setenv(WRT_MAX_ENV, "77", 1);
	assert_int_equal(wrt_config_parse("t.csv", &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_records, 77);
	assert_int_equal(wrt_config_parse("t.csv:max=9", &c, err, sizeof(err)), 0);
	assert_int_equal(c.max_records, 9);
	setenv(WRT_MAX_ENV, "lots", 1);
	assert_int_equal(wrt_config_parse("t.csv", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, WRT_MAX_ENV));
	unsetenv(WRT_MAX_ENV);
	assert_int_equal(wrt_config_parse(":max=3", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no output file"));
	assert_int_equal(wrt_config_parse("t.csv:max=-1", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "max '-1'"));
	assert_int_equal(wrt_config_parse("t.csv:colour=red", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown option 'colour=red'"));
}

/* ------------------------------------------------------ deferred rows -- */

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

/* Two recorders kept the same rows, in the same order, and the same counts. */
static void same_records(struct wrt *x, struct wrt *y)
{
	const struct wrt_meta *ma = wrt_meta(x), *mb = wrt_meta(y);
	const struct wrt_rec *a, *b;
	uint64_t na, nb;

	a = wrt_records(x, &na);
	b = wrt_records(y, &nb);
	assert_int_equal(na, nb);
	for (uint64_t i = 0; i < na; i++) {
		assert_int_equal(a[i].qp, b[i].qp);
		assert_int_equal(a[i].seq, b[i].seq);
		assert_int_equal(a[i].wr_id, b[i].wr_id);
		assert_int_equal(a[i].t_post, b[i].t_post);
		assert_int_equal(a[i].t_comp, b[i].t_comp);
		assert_int_equal(a[i].hw_ns, b[i].hw_ns);
		assert_int_equal(a[i].bytes, b[i].bytes);
		assert_int_equal(a[i].opcode, b[i].opcode);
		assert_int_equal(a[i].status, b[i].status);
		assert_int_equal(a[i].flags, b[i].flags);
	}
	assert_int_equal(ma->wrs, mb->wrs);
	assert_int_equal(ma->recorded, mb->recorded);
	assert_int_equal(ma->dropped, mb->dropped);
	assert_int_equal(ma->untracked, mb->untracked);
	assert_int_equal(ma->unmatched, mb->unmatched);
	assert_int_equal(ma->incomplete, mb->incomplete);
	assert_int_equal(ma->recv_pending, mb->recv_pending);
	assert_int_equal(ma->errors, mb->errors);
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
		same_records(w[0], w[k]);
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

/* post_one stands for a WR of the run's kind (send_opcode, msg_size,
 * cq_mod): on a queue that started with another size or signal period it
 * opens a segment of its own and its row has the run's kind; on a QP the run does
 * not have it is counted as untracked. */
static void test_post_one_kind(void **state)
{
	static const struct { uint64_t msg_size; uint32_t first_period; } cases[] = {
		{ 128, 2 },             /* the first post has 64 bytes */
		{ 64, 4 },              /* the first post has signal period 4 */
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct pt_plugin_run_info in = info_for(1, 8, 2, 1);
		const struct wrt_rec *r;
		struct wrt *w;
		uint64_t n;

		in.directions = PT_PLUGIN_DIR_SEND;
		in.msg_size = cases[k].msg_size;
		w = recorder("x.csv", &in);
		post(w, 0, 0, 1, cases[k].first_period, 0, 100);
		assert_true(wrt_rows_deferred(w));
		wrt_post_one(w, 0, 1, 1001, 110);
		assert_true(wrt_rows_deferred(w));  /* a segment of its own */
		wrt_post_one(w, 3, 0, 0, 120);  /* no QP 3 in this run */
		cqe(w, 0, 1, 0, 0, 200, 0);
		end(w);
		r = wrt_records(w, &n);
		assert_int_equal(n, 2);
		assert_int_equal(r[0].bytes, 64);
		assert_int_equal(r[0].flags & WRT_SIGNALED, 0);
		assert_int_equal(r[1].bytes, cases[k].msg_size);
		assert_int_equal(r[1].wr_id, 1001);
		assert_int_equal(r[1].t_post, 110);
		assert_int_equal(r[1].t_comp, 200);
		assert_int_equal(r[1].opcode, PT_PLUGIN_OP_SEND);
		assert_true(r[1].flags & WRT_SIGNALED);  /* (1 + 1) % cq_mod 2 */
		assert_int_equal(wrt_meta(w)->untracked, 1);
		assert_int_equal(wrt_meta(w)->wrs, 3);
		wrt_free(w);
	}
}

/* After run_start, posting and completing allocates nothing. */
static void test_hot_path_no_alloc(void **state)
{
	struct pt_plugin_run_info in = info_for(2, 5000, 7, 3);
	struct wrt *w = recorder("x.csv:max=1000", &in); /* rows and histogram paths */

	(void)state;
	counting = true;
	allocs = 0;
	for (uint64_t i = 0; i < 4998; i += 3) {
		for (uint32_t q = 0; q < 2; q++) {
			post(w, q, i, 3, 7, 0, i);
			cqe(w, q, PT_PLUGIN_SEQ_UNKNOWN, 0, 0, i + 50, 0);
			post_recv(w, q, i, i);
			cqe(w, q, PT_PLUGIN_SEQ_UNKNOWN, 0, PT_PLUGIN_COMP_RECV, i + 60, 0);
		}
	}
	counting = false;
	assert_int_equal(allocs, 0);
	assert_true(wrt_meta(w)->dropped > 0);
	end(w);
	wrt_free(w);
	/* post_one, on a FIFO run and on a deferred one */
	for (int deferred = 0; deferred < 2; deferred++) {
		in = info_for(1, 4000, 4, 1);
		w = recorder(deferred ? "x.csv" : "x.csv:nodefer", &in);
		assert_int_equal(wrt_rows_deferred(w), deferred);
		counting = true;
		allocs = 0;
		for (uint64_t i = 0; i < 4000; i++) {
			wrt_post_one(w, 0, i, 1000 + i, i);
			if ((i + 1) % 4 == 0)
				cqe(w, 0, i, 0, 0, i + 50, 0);
		}
		counting = false;
		assert_int_equal(allocs, 0);
		assert_int_equal(wrt_rows_deferred(w), deferred);
		end(w);
		assert_int_equal(wrt_meta(w)->recorded, 4000);
		wrt_free(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_cq_mod),
		cmocka_unit_test(test_fifo_post_list_unknown_seq),
		cmocka_unit_test(test_signal_phase_resync),
		cmocka_unit_test(test_unmatched_untracked),
		cmocka_unit_test(test_drops_counted),
		cmocka_unit_test(test_recv_fifo),
		cmocka_unit_test(test_error_status),
		cmocka_unit_test(test_hw_split),
		cmocka_unit_test(test_histogram_bounds),
		cmocka_unit_test(test_config_parse),
		cmocka_unit_test(test_hot_path_no_alloc),
		cmocka_unit_test(test_deferred_regular),
		cmocka_unit_test(test_deferred_irregular),
		cmocka_unit_test(test_period_gap),
		cmocka_unit_test(test_deferred_then_fifo),
		cmocka_unit_test(test_post_one_kind),
		cmocka_unit_test(test_slots_limits),
	};
	return cmocka_run_group_tests_name("wrtrace", tests, NULL, NULL);
}
