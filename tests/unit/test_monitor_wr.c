// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon wr's snapshot and report (monitor/wr_report.c): per-CPU copies
 * summed (index and last sequence: the largest), deltas against the
 * previous snapshot, processes without a run named, the totals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "monitor/wr_report.h"

static json_int_t qget(json_t *r, size_t proc, size_t qp, const char *k)
{
	json_t *p = json_array_get(json_object_get(r, "processes"), proc);

	return json_integer_value(json_object_get(json_array_get(json_object_get(p, "qps"), qp), k));
}

static void cpus_summed_and_deltas(void **state)
{
	struct rm_wr_snap prev = { 0 }, now = { 0 };
	struct rm_wr_qp_key a = { .pid = 7, .qpn = 0x12 }, b = { .pid = 7, .qpn = 0x11 };
	struct rm_wr_qp_val cpu0 = { .qp_index = 1, .posted = 600, .post_calls = 600, .completed = 3,
				     .last_seq1 = 500 };
	struct rm_wr_qp_val cpu1 = { .posted = 400, .post_calls = 400, .completed = 2, .complete_errors = 1,
				     .last_seq1 = 1000 };
	struct rm_wr_qp_val other = { .posted = 5 };
	struct rm_wr_run_val run = { .started = 1, .ended = 1, .iters = 1000, .qps = 2 };
	json_t *r;

	(void)state;
	strcpy(run.comm, "ib_send_bw");
	assert_int_equal(rm_wr_snap_add_qp(&prev, &a, &(struct rm_wr_qp_val){ .qp_index = 1, .posted = 100 }), 0);
	assert_int_equal(rm_wr_snap_add_qp(&now, &a, &cpu0), 0);
	assert_int_equal(rm_wr_snap_add_qp(&now, &a, &cpu1), 0);
	assert_int_equal(rm_wr_snap_add_qp(&now, &b, &other), 0);
	assert_int_equal(rm_wr_snap_add_proc(&now, 7, &run, 1), 0);
	assert_int_equal(now.nqps, 2);
	r = rm_wr_report_json(&now, &prev, 1.0, 0);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "type")), "wr");
	/* sorted by QPN within the process: 0x11 first */
	assert_int_equal(qget(r, 0, 0, "qpn"), 0x11);
	assert_int_equal(qget(r, 0, 1, "posted"), 1000);
	assert_int_equal(qget(r, 0, 1, "posted_delta"), 900);
	assert_int_equal(qget(r, 0, 1, "completed"), 5);
	assert_int_equal(qget(r, 0, 1, "complete_errors"), 1);
	assert_int_equal(qget(r, 0, 1, "qp_index"), 1);
	assert_int_equal(qget(r, 0, 1, "last_seq"), 999);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(r, "processes"), 0), "qps"), 0), "last_seq")));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "totals"), "posted")), 1005);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "totals"), "posted_delta")), 905);
	json_t *p = json_array_get(json_object_get(r, "processes"), 0);

	assert_string_equal(json_string_value(json_object_get(p, "comm")), "ib_send_bw");
	assert_int_equal(json_integer_value(json_object_get(p, "runs_started_delta")), 1);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(p, "last_run"), "iterations")), 1000);
	json_decref(r);
	rm_wr_snap_clear(&prev);
	rm_wr_snap_clear(&now);
}

static void process_without_qps_listed(void **state)
{
	struct rm_wr_snap now = { 0 };
	struct rm_wr_run_val run = { .started = 1 };
	json_t *r;

	(void)state;
	assert_int_equal(rm_wr_snap_add_proc(&now, 9, &run, 1), 0);
	now.lost[WR_LOST_QP_MAP] = 3;
	r = rm_wr_report_json(&now, NULL, 1.0, 1);
	assert_int_equal(json_array_size(json_object_get(r, "processes")), 1);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(r, "processes"), 0), "comm")));
	assert_int_equal(json_integer_value(json_object_get(r, "lost_qp_map")), 3);
	assert_true(json_is_true(json_object_get(r, "final")));
	json_decref(r);
	rm_wr_snap_clear(&now);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cpus_summed_and_deltas),
		cmocka_unit_test(process_without_qps_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
