/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace_synth FILE[:OPTS] [WRS]: one synthetic run through the hook layer
 * and the built-in recorder (as --trace=FILE does), for test_wrtrace_cli.sh.
 * Latencies follow a fixed saw-tooth so every run writes the same file. */
#include <stdio.h>
#include <stdlib.h>
#include "plugin/hooks/hooks.h"
#include "plugin/recorder/wrtrace.h"
#include "perftest/engine/engine.h"

int main(int argc, char **argv)
{
	uint64_t wrs = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000, t = 1000000;
	uint32_t qpns[2] = { 0x31, 0x32 };
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "wrtrace_synth", .device = "mock0",
		.directions = PT_PLUGIN_DIR_SEND, .num_qps = 2, .qp_nums = qpns, .msg_size = 65536,
		.iterations = wrs, .tx_depth = 128, .cq_mod = 4, .post_list = 1,
		.hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW",
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	char err[512];

	if (argc < 2 || pt_trace_load_builtin(wrt_plugin_get_ops(), argv[1], err, sizeof(err)) ||
	    pt_hooks_run_start(&in, err, sizeof(err))) {
		fprintf(stderr, "wrtrace_synth: %s\n", argc < 2 ? "usage: wrtrace_synth FILE [WRS]" : err);
		return 1;
	}
	for (uint64_t s = 0; s < wrs; s++)
		for (uint32_t q = 0; q < 2; q++) {
			pt_hook_post(q, s, 1, PT_PLUGIN_OP_SEND, s, 1, 65536, 4,
				     s + 1 == wrs ? PT_PLUGIN_POST_LAST_SIGNALED : 0, t += 100);
			if ((s + 1) % 4 == 0 || s + 1 == wrs)
				pt_hook_completion(q, s, s, 0, PT_PLUGIN_OP_SEND, 65536, 0,
						   t += 2000 + (s * 37) % 5000, 0);
		}
	if (pt_hooks_run_end(&end, err, sizeof(err))) {
		fprintf(stderr, "wrtrace_synth: %s\n", err);
		return 1;
	}
	pt_hooks_unload_all();
	return 0;
}
