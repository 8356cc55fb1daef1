/* SPDX-License-Identifier: BSD-2-Clause */
/* trace_seeds DIR: writes real wrtrace files, CSV and JSON Lines, through
 * the recorder (plugin/recorder/wrtrace.c) driven by plugin events as our tools send
 * them: the seeds of fuzz_trace. Built and run by make-seeds. Times follow
 * fixed patterns, so every run writes the same files. */
#include <stdlib.h>
#include <string.h>
#include "plugin/recorder/wrtrace.h"

struct scenario {
	const char *name;
	const char *tool;
	uint32_t role, conn, qps, runs;
	bool sends, recvs, hw, lose_cqe, stray_cqe, error_cqe;
	uint64_t max;       /* records per run (0: no cap) */
};

static const struct scenario scenarios[] = {
	/* ib_send_bw client as in the lab: 2 QPs, cq_mod 3, post lists of 2 */
	{ "send-bw-client-rc", "ib_send_bw", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_RC, 2, 1,
	  true, false, false, false, false, false, 0 },
	/* its server: receives, some posted before the run (no post time) */
	{ "send-bw-server-ud", "ib_send_bw", PT_PLUGIN_ROLE_SERVER, PT_PLUGIN_CONN_UD, 1, 1,
	  false, true, false, false, false, true, 0 },
	/* a NIC with CQE timestamps and a clock fit: the post->CQE split */
	{ "hw-fit", "ib_send_lat", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_RC, 2, 1,
	  true, true, true, false, false, false, 0 },
	/* -a: one run per size, appended to one file */
	{ "write-bw-two-runs", "ib_write_bw", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_UC, 1, 2,
	  true, false, false, false, false, false, 0 },
	/* max=4: drops over the cap, the all_* percentiles */
	{ "capped", "ib_read_bw", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_RC, 1, 1,
	  true, false, false, false, false, false, 4 },
	/* a send without its CQE at run end, a CQE that matches nothing */
	{ "incomplete-unmatched", "ib_atomic_bw", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_RC, 2, 1,
	  true, false, false, true, true, false, 0 },
	/* a run in which nothing was posted */
	{ "empty-run", "ib_send_bw", PT_PLUGIN_ROLE_CLIENT, PT_PLUGIN_CONN_RC, 1, 1,
	  false, false, false, false, false, false, 0 },
};

static void run(struct wrt *w, const struct scenario *sc, uint32_t n)
{
	static const uint32_t qpns[2] = { 0x11, 0x12 };
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .run = n, .tool = sc->tool, .device = "rxe0",
		.role = sc->role, .conn = sc->conn, .num_qps = sc->qps, .qp_nums = qpns,
		.msg_size = n ? 4096 : 2, .iterations = 6, .tx_depth = 8, .rx_depth = 2,
		.cq_mod = 3, .post_list = 2,
		.directions = (sc->sends ? PT_PLUGIN_DIR_SEND : 0) | (sc->recvs ? PT_PLUGIN_DIR_RECV : 0),
		.hw_ts = sc->hw ? PT_PLUGIN_HW_TS_ON : PT_PLUGIN_HW_TS_NONE,
		.hw_clock_hz = sc->hw ? 156250000 : 0, .hw_clock_domain = sc->hw ? "hca" : "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW",
	};
	struct pt_plugin_clock_fit fit = {
		.struct_size = sizeof(fit), .samples = 5, .hw_ref_ns = 7000000000ull,
		.sw_ref_ns = 2000000, .intercept_ns = -3.5, .slope = 1.0000021,
		.residual_rms_ns = 2.25, .residual_max_ns = 6.5,
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end), .run = n };
	uint64_t t = 2000000 + 1000000 * (uint64_t)n;
	char err[256];

	if (wrt_run_start(w, &in, err, sizeof(err))) {
		fprintf(stderr, "trace_seeds: %s: %s\n", sc->name, err);
		exit(1);
	}
	if (sc->hw)
		wrt_clock_fit(w, &fit);
	for (uint32_t q = 0; q < sc->qps; q++) {
		for (uint64_t s = 0; sc->sends && s < 6; s += 2) {
			struct pt_plugin_post p = {
				.struct_size = sizeof(p), .qp = q, .first_seq = s, .count = 2,
				.opcode = PT_PLUGIN_OP_SEND, .first_wr_id = ((uint64_t)q << 48) | s,
				.wr_id_step = 1, .bytes = (uint32_t)in.msg_size, .signal_period = 3,
				.t_ns = t += 41 + 7 * s,
			};
			wrt_post(w, &p);
		}
		/* the signaled WRs are 2 and 5; each CQE retires the ones before */
		for (uint64_t s = 2; sc->sends && s < 6; s += 3) {
			struct pt_plugin_completion c = {
				.struct_size = sizeof(c), .qp = q, .wr_id = ((uint64_t)q << 48) | s,
				.seq = s, .opcode = PT_PLUGIN_OP_SEND, .bytes = (uint32_t)in.msg_size,
				.t_poll_ns = t += 1500 + 211 * s,
				.flags = sc->hw ? PT_PLUGIN_COMP_HW_TS : 0,
				.hw_ns = 7000000000ull + t - 2000000 - 350,
			};
			if (sc->lose_cqe && q == 1 && s == 5)
				continue;
			wrt_complete(w, &c);
		}
		for (uint64_t s = 0; sc->recvs && s < 3; s++) {
			/* receives 0 and 1 were posted before the run; 2 and 3 during it */
			struct pt_plugin_post r = {
				.struct_size = sizeof(r), .qp = q, .first_seq = 2 + s, .count = 1,
				.opcode = PT_PLUGIN_OP_RECV, .first_wr_id = 2 + s, .bytes = 4096,
				.t_ns = t += 13,
			};
			struct pt_plugin_completion c = {
				.struct_size = sizeof(c), .qp = q, .wr_id = s, .seq = PT_PLUGIN_SEQ_UNKNOWN,
				.status = sc->error_cqe && s == 1 ? 5 : 0, .opcode = PT_PLUGIN_OP_RECV,
				.bytes = 4136, .flags = PT_PLUGIN_COMP_RECV | (sc->hw ? PT_PLUGIN_COMP_HW_TS : 0),
				.t_poll_ns = t += 800 + 97 * s, .hw_ns = 7000000000ull + t - 2000000 - 120,
			};
			if (s < 2)
				wrt_post(w, &r);
			wrt_complete(w, &c);
		}
	}
	if (sc->stray_cqe) {
		struct pt_plugin_completion c = {
			.struct_size = sizeof(c), .qp = 0, .wr_id = 99, .seq = 99,
			.opcode = PT_PLUGIN_OP_SEND, .bytes = 8, .t_poll_ns = t += 3000,
		};
		wrt_complete(w, &c);
	}
	if (wrt_run_end(w, &end, err, sizeof(err))) {
		fprintf(stderr, "trace_seeds: %s: %s\n", sc->name, err);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: trace_seeds DIR\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		for (int jsonl = 0; jsonl < 2; jsonl++) {
			const struct scenario *sc = &scenarios[i];
			struct wrt_config cfg = { .jsonl = jsonl, .fifo_min = 64, .quiet = true,
						  .max_records = sc->max ? sc->max : WRT_DEFAULT_MAX };
			struct wrt *w;

			snprintf(cfg.path, sizeof(cfg.path), "%s/%s.%s", argv[1], sc->name,
				 jsonl ? "jsonl" : "csv");
			w = wrt_new(&cfg);
			if (!w)
				return 1;
			for (uint32_t r = 0; r < sc->runs; r++)
				run(w, sc, r);
			wrt_free(w);
		}
	return 0;
}
