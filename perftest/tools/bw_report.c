/* SPDX-License-Identifier: BSD-2-Clause */
/* Bandwidth rows shared by every BW tool: the local row, the -b sum after
 * the report exchange (docs/wire-protocol.md §8), --run_infinitely's periodic rows, and
 * the partial row of an interrupted run; and one size's receives and timed
 * run, the same in send_bw.c and rdma_bw.c. */
#include <errno.h>
#include <stdio.h>
#include "perftest/engine/engine.h"
#include "perftest/engine/fault.h"
#include "perftest/report/json.h"
#include "perftest/report/verdict.h"
#include "tool.h"

/* -w/-y over every final row this process prints (one run per process). */
static struct pt_verdict limits;
static bool limits_ready;

void pt_bw_check_limits(struct pt_ctx *c, const struct pt_bw_result *r)
{
	if (!limits_ready) {
		pt_verdict_init(&limits, c->p->report.limit_bw, c->p->report.limit_msgrate);
		limits_ready = true;
	}
	if (!pt_verdict_active(&limits))
		return;
	pt_verdict_add_bw(&limits, r, stderr);
	if (c->out.json && pt_json_set_verdict(c->out.json, &limits))
		fprintf(stderr, " Couldn't add the limits to the JSON document\n");
}

bool pt_bw_limits_failed(void)
{
	return limits_ready && !pt_verdict_pass(&limits);
}

int pt_bw_report(struct pt_ctx *c, const struct pt_bw_meas *m, bool peak, bool xchg,
		 struct pt_bw_result *local)
{
	const struct pt_params *p = c->p;
	bool duration = p->traffic.test_type == PT_TEST_DURATION;
	struct pt_bw_input in = {
		.size = c->run.size,
		/* upstream's #iterations column counts all QPs' messages */
		.iters = duration || m->lost ? m->msgs : p->traffic.iters * (uint64_t)c->res.num_qps,
		.msgs = m->msgs,
		.elapsed_ns = m->elapsed_ns,
		.gbits = p->report.gbits,
		.peak = peak ? m->peak : NULL,
		.per_port = p->addr.report_per_port,
		.msgs_port = { m->msgs_port[0], m->msgs_port[1] },
	};
	struct pt_bw_result r, remote, sum;
	struct pt_bw_report mine, theirs;
	int rc = pt_bw_compute(&in, &r);

	if (rc == -ERANGE) { /* the row without its peak rather than no row */
		fprintf(stderr, " %s\n", pt_results_strerror(rc));
		in.peak = NULL;
		rc = pt_bw_compute(&in, &r);
	}
	if (rc) {
		fprintf(stderr, " Can't produce a report: %s\n", pt_results_strerror(rc));
		return -1;
	}
	if (m->cpu_util >= 0) {
		r.has_cpu_util = true;
		r.cpu_util = m->cpu_util;
	}
	if (local)
		*local = r;
	if (!xchg) {
		pt_session_bw_row(c, &r);
		pt_bw_check_limits(c, &r);
		return 0;
	}
	/* -b: both sides swap their numbers and print the sum (docs/wire-protocol.md §8). */
	mine = (struct pt_bw_report){ r.size, r.iters, r.bw_peak, r.bw_avg, r.msg_rate,
				      r.per_port, { r.bw_avg_port[0], r.bw_avg_port[1] },
				      { r.msg_rate_port[0], r.msg_rate_port[1] } };
	PT_TEST_STOP(PT_STAGE_REPORT);
	if (pt_oob_xchg_bw_report(&c->peer.oob, &mine, &theirs)) {
		fprintf(stderr, " Failed to exchange the BW report: %s\n", pt_oob_strerror(&c->peer.oob));
		return -1;
	}
	remote = r;
	remote.bw_peak = theirs.bw_peak;
	remote.bw_avg = theirs.bw_avg;
	remote.msg_rate = theirs.msg_rate;
	for (int k = 0; k < 2; k++) {
		remote.bw_avg_port[k] = theirs.bw_avg_port[k];
		remote.msg_rate_port[k] = theirs.msg_rate_port[k];
	}
	if (p->report.report_both && p->report.output == PT_OUTPUT_FULL) {
		printf(" Local results:\n");
		pt_report_bw_row(stdout, &r);
		printf(" Remote results:\n");
		pt_report_bw_row(stdout, &remote);
		printf(" Sum:\n");
	}
	pt_bw_sum(&r, &remote, &sum);
	pt_session_bw_row(c, &sum);
	pt_bw_check_limits(c, &sum);
	return 0;
}

/* --run_infinitely: one row per period, from that period's messages
 * (the loop's period_row; arg is the context). */
static void period_row(void *arg, uint64_t msgs, uint64_t ns)
{
	struct pt_ctx *c = arg;
	struct pt_bw_input in = {
		.size = c->run.size, .iters = msgs, .msgs = msgs, .elapsed_ns = ns ? ns : 1,
		.gbits = c->p->report.gbits,
	};
	struct pt_bw_result r;

	if (!pt_bw_compute(&in, &r))
		pt_session_bw_row(c, &r);
}

void pt_bw_loop_view(struct pt_ctx *c, struct pt_loop *l)
{
	pt_loop_view(c, l);
	l->period_row = period_row;
	l->period_arg = c;
}

/* SIGINT during a run: a row from the messages completed so far (no peak,
 * no report exchange), marked partial so it is not taken for a full run. */
void pt_bw_partial(struct pt_ctx *c, const struct pt_bw_meas *m)
{
	const struct pt_params *p = c->p;
	struct pt_bw_input in = {
		.size = c->run.size, .iters = m->msgs, .msgs = m->msgs, .elapsed_ns = m->elapsed_ns,
		.gbits = p->report.gbits,
	};
	struct pt_bw_result r;

	pt_say_partial(p->traffic.test_type == PT_TEST_DURATION, m->msgs,
		       p->traffic.iters * (uint64_t)c->res.num_qps, m->elapsed_ns, "messages");
	if (!m->msgs || pt_bw_compute(&in, &r))
		printf(" (nothing measured yet: no row)\n");
	else
		pt_session_bw_row(c, &r);
	fflush(stdout);
}

int pt_bw_post_receives(struct pt_ctx *c, const struct pt_loop *l)
{
	for (int i = 0; i < c->res.num_qps; i++) {
		c->res.qps[i].recv_posted = 0;
		if (pt_post_recv(l, i, pt_recv_prepost(c)))
			return -1;
	}
	return 0;
}

int pt_bw_run_one(struct pt_ctx *c, const struct pt_loop *l, bool sender, bool receiver,
		  bool xchg, struct pt_bw_result *local)
{
	struct pt_bw_meas m = { 0 };
	int rc;

	if (sender && receiver)
		rc = pt_run_bw_bidir(l, &m);
	else if (sender)
		rc = pt_run_bw_send(l, &m);
	else
		rc = pt_run_bw_recv(l, &m);
	if (!rc && !c->p->traffic.run_infinitely)
		rc = pt_bw_report(c, &m, sender, xchg, local);
	else if (m.interrupted)
		pt_bw_partial(c, &m);
	if (pt_trace_end(rc || pt_interrupted ? -1 : 0, m.elapsed_ns))
		rc = -1;
	pt_bw_meas_free(&m);
	return rc;
}
