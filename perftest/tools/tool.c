/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/tsc.h"
#include "perftest/cli/mgid.h"
#include "perftest/cli/options.h"
#include "tool.h"
#include "perftest/engine/fault.h"
#include "plugin/hooks/hooks.h"
#include "plugin/recorder/wrtrace.h"

static void on_signal(int sig)
{
	pt_interrupt(sig);
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;      /* no SA_RESTART: blocking waits return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pt_oob_set_stop_flag(&pt_interrupted);  /* out-of-band waits end too */
}

/* Checks that need the device but no peer: fail before any traffic. */
static int local_checks(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct in_addr group;
	int max_rd = c->dev.dev_attr.orig_attr.max_qp_rd_atom;

	if (pt_pace_hw_check(p, &c->dev.dev_attr, c->dev.devname) || pt_dev_local_setup(c))
		return -1;
	if (p->traffic.out_reads > max_rd) {
		fprintf(stderr, " -o %d is more than %s allows per QP (max_qp_rd_atom %d)\n",
			p->traffic.out_reads, c->dev.devname, max_rd);
		return -1;
	}

	/* the groups a side attaches to: the receiver's (the client with
	 * --reversed), both sides' in send_lat */
	if (p->mcast.enabled && c->dev.is_roce && (!pt_bw_sender_side(p) || p->tool->kind == PT_KIND_LAT)) {
		bool v4gid = c->dev.gid.raw[10] == 0xff && c->dev.gid.raw[11] == 0xff;

		if (pt_mgid_ipv4(p->mcast.mgid, &group) != v4gid) {
			fprintf(stderr, " The MGID and GID %d differ in type (IPv4-mapped or not):"
				" use an IPv4 group with an IPv4 GID (e.g. -x 1 -M 225.1.1.20)\n",
				c->dev.gid_index);
			return -1;
		}
	}
	return 0;
}

/* -o, or as many as the device allows, for READ and ATOMIC; 1 otherwise. */
static int out_reads(const struct pt_ctx *c)
{
	enum pt_verb v = c->p->tool->verb;
	int max = c->dev.dev_attr.orig_attr.max_qp_rd_atom;

	if (v != PT_VERB_READ && v != PT_VERB_ATOMIC)
		return 1;
	if (max < 1)
		max = 1;
	if (c->p->traffic.out_reads && c->p->traffic.out_reads < max)
		return c->p->traffic.out_reads;
	return max;
}

uint64_t pt_next_size(const struct pt_ctx *c, uint64_t s)
{
	if (!c->p->traffic.all_sizes)
		return 0;
	return s * 2 <= c->run.max_size ? s * 2 : 0;
}

int pt_tool_prepare(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	unsigned mtu;

	c->run.size = p->traffic.size;
	c->run.max_size = p->traffic.all_sizes ? PT_MAX_SIZE : c->run.size;
	/* A connectionless receiver has no peer: local MTU and sizes hold. */
	if (!p->mcast.connectionless && pt_session_start(c))
		return -1;
	mtu = pt_mtu_bytes(c->run.mtu);
	if (p->conn.type == PT_CONN_UD && c->run.max_size > mtu) {
		if (!p->traffic.all_sizes && p->traffic.size_given) {
			fprintf(stderr, " Max message size in UD cannot be greater than MTU (%u)\n", mtu);
			return -1;
		}
		if (!p->traffic.all_sizes && p->report.output == PT_OUTPUT_FULL)
			printf(" Max msg size in UD is MTU %u\n Changing to this MTU\n", mtu);
		c->run.max_size = mtu;
		if (c->run.size > mtu)
			c->run.size = mtu;
	}
	if (!p->mcast.connectionless && pt_session_negotiate(c))
		return -1;
	return pt_resources_create(c);
}

/* --wait_destroy: keep the resources a while after the run (for looking
 * at them from outside); SIGINT ends the wait. */
static void wait_before_destroy(int seconds)
{
	for (int tenths = 0; tenths < seconds * 10 && !pt_interrupted; tenths++)
		usleep(100000);
}

int pt_tool_main(const struct pt_tool *tool, pt_flow_fn flow, int argc, char **argv)
{
	static struct pt_params params;
	static struct pt_ctx ctx;
	int rc;

	/* a line at a time even into a file or pipe: an error on stderr then
	 * lands after the table lines printed before it, not ahead of them */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pt_parse_args(tool, argc, argv, &params) || pt_test_stop_init())
		return PT_EXIT_FAIL;
	/* the TSC line, once, before anything is timed (~10 ms, mostly asleep) */
	if (pt_clock_init())
		return PT_EXIT_FAIL;
	if (pt_trace_load(&params, wrt_plugin_get_ops())) {
		pt_hooks_unload_all();
		return PT_EXIT_FAIL;
	}
	pt_ctx_init(&ctx);
	catch_signals();
	if (pt_dev_open(&ctx, &params) || local_checks(&ctx)) {
		pt_ctx_destroy(&ctx);
		return PT_EXIT_FAIL;
	}
	ctx.run.tx_depth = params.traffic.tx_depth;
	ctx.run.rx_depth = params.traffic.rx_depth;
	ctx.run.cq_mod = params.traffic.cq_mod;
	ctx.run.inline_size = pt_inline_default(&params, false);
	ctx.run.out_reads = out_reads(&ctx);
	rc = flow(&ctx);
	if (!rc && params.traffic.wait_destroy > 0)
		wait_before_destroy(params.traffic.wait_destroy);
	if (!rc && pt_bw_limits_failed())
		rc = PT_EXIT_FAIL;   /* after a complete run: the peer saw no error */
	if (rc && pt_interrupted && ctx.out.json)   /* the flow stopped before writing it */
		fprintf(stderr, " %s not written: the run was interrupted\n", params.report.out_json_file);
	pt_ctx_destroy(&ctx);   /* detaches multicast groups, closes the session */
	pt_hooks_unload_all();  /* plugins finish their files */
	if (pt_interrupted) {
		fprintf(stderr, " Interrupted by signal %d\n", (int)pt_interrupted);
		return PT_EXIT_INTERRUPTED;
	}
	return rc;
}
