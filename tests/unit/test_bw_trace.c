/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW loop traced (run_bw.c's hooks copy): pt_run_bw_send over the fake
 * device (fake_verbs.h), both post APIs, through the real hooks into a
 * recorder that lends post slots (the loop stores each WR's post time in
 * them: post_burst on the new API, post_general on the old) and one that
 * takes every WR as an event (:nodefer). Both must keep the same rows but
 * for times: every WR of every QP once, in order, each completed after its
 * post and in post order. A WR stored twice, skipped, or put in the wrong
 * slot fails it. */
#define PT_LOOP_VIEW_ONLY
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "perftest/engine/loop.h"
#include "plugin/hooks/hooks.h"
#include "plugin/recorder/wrtrace.h"
#include "fake_verbs.h"
#include "recorder_compare.h"
#include "recorder_plugin.h"

#define NQP 2

struct traced {
	struct wrt *w;
	uint64_t calls;
};

/* One traced client run of a BW WRITE loop: args the recorder's, qpx the
 * post API, cq_mod its signal period. */
static void traced_run(const char *args, bool qpx, int cq_mod, uint64_t iters, struct traced *t)
{
	uint32_t qpn[NQP] = { 0x100, 0x101 };
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "test", .device = "fake0",
		.role = PT_PLUGIN_ROLE_CLIENT, .conn = PT_PLUGIN_CONN_RC,
		.directions = PT_PLUGIN_DIR_SEND, .num_qps = NQP, .qp_nums = qpn, .msg_size = 64,
		.iterations = iters, .tx_depth = 32, .rx_depth = 1, .cq_mod = (uint32_t)cq_mod,
		.post_list = 1, .hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW", .send_opcode = PT_PLUGIN_OP_WRITE,
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct pt_bw_meas m;
	struct pt_loop l;
	struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE, iters, qpx);
	char err[256];

	f->run.cq_mod = cq_mod;
	t->w = recorder_plugin_start(args, 0, &in, "bw-trace-test");
	assert_non_null(t->w);
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	pt_hooks_unload_all();
	t->calls = recorder_plugin_calls;
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* Every WR once per QP, in order, each completed after its post, the
 * completions in post order. */
static void rows_whole(const struct traced *t, uint64_t iters)
{
	uint64_t n, next[NQP] = { 0 }, last_comp[NQP] = { 0 };
	const struct wrt_rec *r = wrt_records(t->w, &n);

	assert_int_equal(n, iters * NQP);
	for (uint64_t j = 0; j < n; j++) {
		assert_true(r[j].qp < NQP);
		assert_int_equal(r[j].seq, next[r[j].qp]);
		next[r[j].qp]++;
		assert_int_equal(r[j].wr_id, pt_wrid((int)r[j].qp, r[j].seq));
		assert_int_equal(r[j].status, 0);
		assert_true(r[j].t_post > 0);
		assert_true(r[j].t_comp >= r[j].t_post);
		assert_true(r[j].t_comp >= last_comp[r[j].qp]);
		last_comp[r[j].qp] = r[j].t_comp;
	}
	for (int i = 0; i < NQP; i++)
		assert_int_equal(next[i], iters);
}

static void check(bool qpx, int cq_mod)
{
	const uint64_t iters = 1000;
	struct traced lent, none;

	traced_run("x.csv", qpx, cq_mod, iters, &lent);
	traced_run("x.csv:nodefer", qpx, cq_mod, iters, &none);
	print_message("bw trace qpx %d cq_mod %d: %llu / %llu plugin calls\n", (int)qpx, cq_mod,
		      (unsigned long long)lent.calls, (unsigned long long)none.calls);
	rows_whole(&lent, iters);
	rows_whole(&none, iters);
	recorders_agree(none.w, lent.w, false);
	/* lent: the post times went into the slots, not through calls; the
	 * CQEs (signaled WRs) are calls either way */
	const uint64_t cqes = NQP * ((iters + (uint64_t)cq_mod - 1) / (uint64_t)cq_mod);

	assert_true(lent.calls <= cqes + 16);
	assert_true(none.calls >= iters * NQP + cqes);
	wrt_free(lent.w);
	wrt_free(none.w);
}

static void test_bw_trace_new_api(void **state)
{
	(void)state;
	check(true, 8);
	check(true, 1);
	check(true, 32);
}

static void test_bw_trace_old_api(void **state)
{
	(void)state;
	check(false, 8);
	check(false, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_trace_new_api),
		cmocka_unit_test(test_bw_trace_old_api),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
