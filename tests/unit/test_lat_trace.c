/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops traced (run_lat.c's hooks copy): the real loops over
 * the fake device (fake_verbs.h), through the real hooks into a recorder
 * with all the pair slots the run wants (the loop holds them: a WR is a
 * pair's stores), with 5 at a time (full every few iterations: taken back,
 * the iteration through the hooks' calls) and with none (:nodefer, every
 * WR an event). The three keep the same rows but for times, and every
 * time is the one the loop stamped: a send's post time is its iteration's
 * stamp, its CQE's poll time lies before the next stamp; send_lat's pong
 * is polled at the next iteration's stamp (the hooks' copy stamps with
 * it) and reposted at that stamp. A pair counted one off fails them.
 * Each loop in every post form: a plain copy of its own each. */
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
#include "perftest/report/results.h"
#include "plugin/hooks/hooks.h"
#include "plugin/recorder/wrtrace.h"
#include "fake_verbs.h"
#include "recorder_compare.h"
#include "recorder_plugin.h"

enum kind { K_SEND, K_WRITE, K_READ, K_ATOMIC };

static const enum ibv_wr_opcode kind_op[] = {
	[K_SEND] = IBV_WR_SEND, [K_WRITE] = IBV_WR_RDMA_WRITE, [K_READ] = IBV_WR_RDMA_READ,
	[K_ATOMIC] = IBV_WR_ATOMIC_FETCH_AND_ADD,
};

#define INITIAL_RECVS 4u   /* send_lat: receives posted before the run */

/* -e: the runs sleep on the fake's completion channel (the hooks' copies
 * then take the general loop's event wait). */
static bool trace_events;

/* The post form (the plain copies are built once per form): the old post
 * API, the new one with an SGE, or inline (send and write only). */
enum form { F_OLD, F_SGE, F_INLINE };
static enum form trace_form;

struct traced {
	struct wrt *w;
	struct pt_lat_meas m;
	uint64_t calls;
};

/* One client run of kind's loop, traced by a recorder of args with at
 * most pairs_max pair slots lent at a time (0: as many as it wants). */
static void traced_run(enum kind k, const char *args, uint64_t pairs_max, uint64_t iters,
		       struct traced *t)
{
	const bool recvs = k == K_SEND;
	uint32_t qpn = 0x100;
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "test", .device = "fake0",
		.role = PT_PLUGIN_ROLE_CLIENT, .conn = PT_PLUGIN_CONN_RC,
		.directions = PT_PLUGIN_DIR_SEND | (recvs ? PT_PLUGIN_DIR_RECV : 0), .num_qps = 1,
		.qp_nums = &qpn, .msg_size = 64, .iterations = iters, .tx_depth = 1,
		.rx_depth = recvs ? INITIAL_RECVS : 1, .cq_mod = 1, .post_list = 1,
		.hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW", .send_opcode = pt_plugin_op_of_wr(kind_op[k]),
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct pt_loop l;
	struct fake *f = fake_new_lat(&l, kind_op[k], iters, trace_form != F_OLD);
	char err[256];
	int rc;

	if (trace_form == F_INLINE)
		f->run.inline_size = 64;
	if (trace_events)
		fake_use_events(f, false);
	t->w = recorder_plugin_start(args, pairs_max, &in, "lat-trace-test");
	assert_non_null(t->w);

	f->run.cq_mod = 1;
	if (k == K_SEND) {
		f->echo = true;
		assert_int_equal(pt_post_recv(&l, 0, INITIAL_RECVS), 0);
		rc = pt_run_lat_send(&l, &t->m);
	} else if (k == K_WRITE) {
		f->echo_write = true;
		f->qps[0].recv_buf[f->run.size - 1] = 1;   /* the server wrote first */
		rc = pt_run_lat_write(&l, &t->m);
	} else {
		rc = pt_run_lat_read(&l, &t->m);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(t->m.n, iters);
	if (trace_events) {   /* every CQE but each CQ's first came with an event, all acked */
		assert_int_equal(f->scq.ev.taken, iters - 1);
		assert_int_equal(f->scq.ev.acked, iters - 1);
		assert_int_equal(f->rcq.ev.taken, recvs ? iters - 1 : 0);
		assert_int_equal(f->rcq.ev.acked, f->rcq.ev.taken);
	}
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	pt_hooks_unload_all();
	t->calls = recorder_plugin_calls;
	fake_free(f);
}

/* Every row's times are those the loop stamped (see the top). */
static void times_stamped(const struct traced *t, enum kind k, uint64_t iters)
{
	const uint64_t *st = t->m.stamps;
	const struct wrt_rec *r;
	uint64_t n, sends = 0, recvs = 0;

	r = wrt_records(t->w, &n);
	for (uint64_t j = 0; j < n; j++) {
		if (r[j].opcode != PT_PLUGIN_OP_RECV) {
			assert_true(r[j].seq < iters);
			assert_int_equal(r[j].t_post, st[r[j].seq]);
			assert_true(r[j].t_comp >= r[j].t_post);
			if (r[j].seq + 1 < iters)
				assert_true(r[j].t_comp <= st[r[j].seq + 1]);
			sends++;
			continue;
		}
		/* receive wr_id w: the pong of send w, taken at iteration w + 1 */
		uint64_t wr = pt_wrid_index(r[j].wr_id);

		if (wr + 1 < iters)
			assert_int_equal(r[j].t_comp, st[wr + 1]);
		if (wr >= INITIAL_RECVS)   /* reposted at iteration wr - INITIAL_RECVS + 1 */
			assert_int_equal(r[j].t_post, st[wr - INITIAL_RECVS + 1]);
		recvs++;
	}
	assert_int_equal(sends, iters);
	assert_int_equal(recvs, k == K_SEND ? iters : 0);
}

static void check_kind(enum kind k)
{
	const uint64_t iters = 300;
	struct traced all, few, none;

	traced_run(k, "x.csv", 0, iters, &all);
	traced_run(k, "x.csv:nodefer", 0, iters, &none);
	/* buffers that fill at every alignment with the run's end */
	for (uint64_t few_max = 3; few_max < 9; few_max++) {
		traced_run(k, "x.csv", few_max, iters, &few);
		times_stamped(&few, k, iters);
		recorders_agree(none.w, few.w, false);
		wrt_free(few.w);
		pt_lat_meas_free(&few.m);
	}
	traced_run(k, "x.csv", 5, iters, &few);
	print_message("lat trace kind %d: %llu / %llu / %llu plugin calls\n", (int)k,
		      (unsigned long long)all.calls, (unsigned long long)few.calls,
		      (unsigned long long)none.calls);
	/* held: the first iteration teaches the hooks, the rest are pairs */
	assert_true(all.calls <= 8);
	assert_true(few.calls > all.calls && few.calls < none.calls);
	assert_true(none.calls >= iters * 2);
	times_stamped(&all, k, iters);
	times_stamped(&few, k, iters);
	times_stamped(&none, k, iters);
	recorders_agree(none.w, all.w, false);
	recorders_agree(none.w, few.w, false);
	wrt_free(all.w);
	wrt_free(few.w);
	wrt_free(none.w);
	pt_lat_meas_free(&all.m);
	pt_lat_meas_free(&few.m);
	pt_lat_meas_free(&none.m);
}

/* Duration mode (the loops' general copy): read_lat for 1 s, hooks off
 * and traced; the pair slots (65536 at a time) fill and are taken back
 * over and over; every post is a row, and few went as calls. */
static void test_read_lat_duration(void **state)
{
	uint32_t qpn = 0x100;
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "test", .device = "fake0",
		.role = PT_PLUGIN_ROLE_CLIENT, .conn = PT_PLUGIN_CONN_RC,
		.directions = PT_PLUGIN_DIR_SEND, .num_qps = 1, .qp_nums = &qpn, .msg_size = 64,
		.tx_depth = 1, .rx_depth = 1, .cq_mod = 1, .post_list = 1,
		.hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW", .send_opcode = PT_PLUGIN_OP_READ,
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct wrt_config cfg;
	char err[256];

	(void)state;
	for (int traced = 0; traced < 2; traced++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		struct fake *f = fake_new_lat(&l, IBV_WR_RDMA_READ, 0, false);
		struct wrt *w = NULL;

		l.opt.duration = true;
		l.opt.duration_s = 1;
		l.opt.margin_s = 0;
		f->run.cq_mod = 1;
		if (traced) {
			assert_int_equal(wrt_config_parse("x.csv:max=100000", &cfg, err, sizeof(err)), 0);
			cfg.path[0] = '\0';
			cfg.quiet = true;
			w = wrt_new(&cfg);
			assert_non_null(w);
			assert_int_equal(wrt_run_start(w, &in, err, sizeof(err)), 0);
			recorder_plugin_target = w;
			recorder_plugin_calls = 0;
			assert_int_equal(pt_hooks_load_builtin(&recorder_plugin_ops, "lat-trace-test", "", err, sizeof(err)), 0);
			assert_int_equal(pt_hooks_run_start(&in, err, sizeof(err)), 0);
		}
		assert_int_equal(pt_run_lat_read(&l, &m), 0);
		assert_non_null(m.hist);
		assert_true(m.iters > 0 && m.n >= m.iters);
		assert_int_equal(f->sends, m.n);
		if (traced) {
			assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
			pt_hooks_unload_all();
			print_message("duration: %llu iterations, %llu plugin calls\n",
				      (unsigned long long)m.n, (unsigned long long)recorder_plugin_calls);
			assert_int_equal(wrt_meta(w)->wrs, m.n);
			assert_int_equal(wrt_meta(w)->recorded + wrt_meta(w)->dropped, m.n);
			assert_int_equal(wrt_meta(w)->incomplete, 0);
			assert_true(recorder_plugin_calls < 2 + 4 * (m.n / 65536 + 1));   /* a full buffer: a few */
			wrt_free(w);
		}
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* -e traced: the same rows and times as spinning. */
static void test_events(void **state)
{
	(void)state;
	trace_events = true;
	check_kind(K_SEND);
	check_kind(K_READ);
	check_kind(K_ATOMIC);
	trace_events = false;
}

/* Each kind in every form it has (a READ or an atomic is never inline). */
static void check_forms(enum kind k)
{
	for (trace_form = F_OLD; trace_form <= F_INLINE; trace_form++)
		if (trace_form != F_INLINE || k == K_SEND || k == K_WRITE)
			check_kind(k);
	trace_form = F_OLD;
}

static void test_send_lat(void **state) { (void)state; check_forms(K_SEND); }
static void test_write_lat(void **state) { (void)state; check_forms(K_WRITE); }
static void test_read_lat(void **state) { (void)state; check_forms(K_READ); }
static void test_atomic_lat(void **state) { (void)state; check_forms(K_ATOMIC); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_send_lat),
		cmocka_unit_test(test_write_lat),
		cmocka_unit_test(test_read_lat),
		cmocka_unit_test(test_atomic_lat),
		cmocka_unit_test(test_read_lat_duration),
		cmocka_unit_test(test_events),
	};
	return cmocka_run_group_tests_name("latency loops traced", tests, NULL, NULL);
}
