/* SPDX-License-Identifier: BSD-2-Clause */
/* What the wrtrace unit tests share (test_wrtrace.c, test_wrtrace_defer.c):
 * a run's info, a recorder without a file, and the events fed to it. */
#ifndef PT_TEST_WRTRACE_HARNESS_H
#define PT_TEST_WRTRACE_HARNESS_H
#include "plugin/recorder/wrtrace.h"

static const uint32_t qpns[4] = { 0x11, 0x12, 0x13, 0x14 };

static inline struct pt_plugin_run_info info_for(uint32_t qps, uint64_t iters, uint32_t cq_mod,
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

static inline struct wrt *recorder(const char *args, const struct pt_plugin_run_info *in)
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

static inline void post(struct wrt *w, uint32_t qp, uint64_t seq, uint32_t n, uint32_t period,
		 uint32_t flags, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = n,
		.opcode = PT_PLUGIN_OP_SEND, .first_wr_id = 1000 + seq, .wr_id_step = 1,
		.bytes = 64, .signal_period = period, .flags = flags, .t_ns = t,
	};
	wrt_post(w, &ev);
}

static inline void post_recv(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = 1,
		.opcode = PT_PLUGIN_OP_RECV, .first_wr_id = qp, .bytes = 64, .t_ns = t,
	};
	wrt_post(w, &ev);
}

static inline void cqe(struct wrt *w, uint32_t qp, uint64_t seq, uint32_t status, uint32_t flags,
		uint64_t t, uint64_t hw)
{
	struct pt_plugin_completion ev = {
		.struct_size = sizeof(ev), .qp = qp, .wr_id = 7, .seq = seq, .status = status,
		.opcode = (flags & PT_PLUGIN_COMP_RECV) ? PT_PLUGIN_OP_RECV : PT_PLUGIN_OP_SEND,
		.bytes = 64, .flags = flags, .t_poll_ns = t, .hw_ns = hw,
	};
	wrt_complete(w, &ev);
}

static inline void end(struct wrt *w)
{
	struct pt_plugin_run_end e = { .struct_size = sizeof(e) };
	char err[256];

	assert_int_equal(wrt_run_end(w, &e, err, sizeof(err)), 0);
}

#endif
