/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine's side of the plugin hooks (plugin/hooks/hooks.h): load what the
 * command line and PERFTEST_PLUGIN ask for, and tell the plugins where each
 * run (one message size) starts and ends. The loops call pt_hook_post and
 * pt_hook_wc themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"
#include "util/clock.h"
#include "util/hwts.h"

int pt_trace_load_builtin(const struct pt_plugin_ops *ops, const char *arg, char *err, size_t err_len)
{
	if (!arg || !*arg) {
		snprintf(err, err_len, "--trace: give an output file (FILE.csv or FILE.jsonl)");
		return -1;
	}
	return pt_hooks_load_builtin(ops, "wrtrace (built in)", arg, err, err_len);
}

int pt_trace_load(const struct pt_params *p, const struct pt_plugin_ops *trace_ops)
{
	char err[256], spec[2 * PT_PATH_MAX + 2];

	if (pt_hooks_load_env(err, sizeof(err)))
		goto fail;
	if (p->plugin.trace_file[0] && pt_trace_load_builtin(trace_ops, p->plugin.trace_file, err, sizeof(err)))
		goto fail;
	if (p->plugin.plugin_path[0]) {
		snprintf(spec, sizeof(spec), "%s%s%s", p->plugin.plugin_path,
			 p->plugin.plugin_args[0] ? ":" : "", p->plugin.plugin_args);
		if (pt_hooks_load(spec, err, sizeof(err)))
			goto fail;
	}
	return 0;
fail:
	fprintf(stderr, " %s\n", err);
	return -1;
}

static enum pt_plugin_conn conn_of(enum pt_conn_type t)
{
	return t == PT_CONN_UD ? PT_PLUGIN_CONN_UD : t == PT_CONN_UC ? PT_PLUGIN_CONN_UC : PT_PLUGIN_CONN_RC;
}

static uint32_t run;   /* runs so far: one per message size */

int pt_trace_begin(struct pt_ctx *c, bool sends, bool recvs)
{
	struct pt_hwts_caps caps;
	uint32_t qpn[64];
	uint32_t n = c->res.num_qps < 64 ? (uint32_t)c->res.num_qps : 64;
	char err[256];

	/* the probes fire with or without plugins: run numbers count every run */
	PT_PROBE_RUN_START(run, c->res.num_qps, c->run.size, c->p->traffic.iters,
			   (sends ? PT_PLUGIN_DIR_SEND : 0) | (recvs ? PT_PLUGIN_DIR_RECV : 0), pt_now_ns());
	if (!pt_hooks_count()) {
		run++;
		return 0;
	}
	pt_hwts_probe(&c->dev.dev_attr, c->dev.devname, &caps);
	for (uint32_t i = 0; i < n; i++)
		qpn[i] = c->res.qps[i].qp->qp_num;
	struct pt_plugin_run_info info = {
		.struct_size = sizeof(info),
		.run = run++,
		.tool = c->p->tool->name,
		.device = c->dev.devname,
		.role = c->p->oob.is_client ? PT_PLUGIN_ROLE_CLIENT : PT_PLUGIN_ROLE_SERVER,
		.conn = conn_of(c->p->conn.type),
		.directions = (sends ? PT_PLUGIN_DIR_SEND : 0) | (recvs ? PT_PLUGIN_DIR_RECV : 0),
		.num_qps = n,
		.qp_nums = qpn,
		.msg_size = c->run.size,
		.iterations = c->p->traffic.iters,
		.tx_depth = (uint32_t)c->run.tx_depth,
		.rx_depth = (uint32_t)c->run.rx_depth,
		.cq_mod = (uint32_t)c->run.cq_mod,
		.post_list = (uint32_t)c->p->traffic.post_list,
		/* ON: ex-CQs with CQE times (hwts_cq.c); OFF: the device has them
		 * but the CQs are plain; NONE: no timestamps (rxe) */
		.hw_ts = c->res.hwts ? PT_PLUGIN_HW_TS_ON :
			 caps.supported ? PT_PLUGIN_HW_TS_OFF : PT_PLUGIN_HW_TS_NONE,
		.hw_clock_hz = caps.supported ? caps.hz : 0,
		/* the conversion hwts_cq.c set up: mlx5 clock info or hca_core_clock */
		.hw_clock_domain = !caps.supported ? "none" :
				   c->res.hwclock ? c->res.hwclock->domain : PT_HWCLOCK_DOMAIN_HCA,
		.sw_clock = pt_clock_sw_name(),   /* tsc->CLOCK_MONOTONIC_RAW after pt_clock_init */
		.send_opcode = sends ? pt_plugin_op_of_wr(pt_wr_opcode(c)) : PT_PLUGIN_OP_OTHER,
	};
	/* the plugins hear of n QPs; the loops post on all of them */
	pt_hooks_set_qps((uint32_t)c->res.num_qps);
	if (pt_hooks_run_start(&info, err, sizeof(err))) {
		fprintf(stderr, " %s\n", err);
		return -1;
	}
	/* the fit so far, so a run's first CQEs can be mapped already */
	if (c->res.hwts && c->res.hwclock->nsamples)
		pt_hooks_clock_fit(&c->res.hwclock->fit);
	return 0;
}

int pt_trace_end(int status, uint64_t elapsed_ns)
{
	struct pt_plugin_run_end end = {
		.struct_size = sizeof(end), .run = run ? run - 1 : 0, .status = status,
		.elapsed_ns = elapsed_ns,
	};
	char err[256];

	PT_PROBE_RUN_END(end.run, status, elapsed_ns, pt_now_ns());
	if (!pt_hooks_on)
		return 0;
	if (pt_hooks_run_end(&end, err, sizeof(err))) {
		fprintf(stderr, " %s\n", err);
		return -1;
	}
	return 0;
}
