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
#include "wrtrace_harness.h"

/* Allocation counter over the objects linked statically (--wrap). */
static bool counting;
static unsigned allocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n) { allocs += counting; return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { allocs += counting; return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { allocs += counting; return __real_realloc(p, n); }


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
		cmocka_unit_test(test_post_one_kind),
	};
	return cmocka_run_group_tests_name("wrtrace", tests, NULL, NULL);
}
