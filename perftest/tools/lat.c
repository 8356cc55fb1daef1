/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency tools' sequences on the wire (docs/wire-protocol.md §6) and their report
 * (docs/upstream-behaviour.md §6.2): ib_send_lat, ib_write_lat, ib_read_lat and ib_atomic_lat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "perftest/engine/engine.h"
#include "perftest/engine/fault.h"
#include "perftest/report/json.h"
#include "tool.h"

/* SEND and WRITE samples are round trips: report half (docs/upstream-behaviour.md §6.2). */
static unsigned rtt_factor(const struct pt_ctx *c)
{
	enum pt_verb v = c->p->tool->verb;

	return v == PT_VERB_SEND || v == PT_VERB_WRITE ? 2 : 1;
}

static void print_samples(const uint64_t *s, uint64_t n, double div, bool cycles)
{
	printf("#, %s\n", cycles ? "nsec" : "usec");
	for (uint64_t i = 0; i < n; i++)
		printf("%llu, %.2f\n", (unsigned long long)i + 1, (double)s[i] / div);
}

static void lat_row(struct pt_ctx *c, const struct pt_lat_result *r)
{
	if (c->p->report.output == PT_OUTPUT_FULL)
		pt_report_lat_row(stdout, r);
	else
		pt_report_lat_number(stdout, (enum pt_output_mode)c->p->report.output, r);
	if (c->out.json)
		pt_json_add_lat(c->out.json, r);
	fflush(stdout);
}

/* -C: upstream counts CPU cycles; our clock is CLOCK_MONOTONIC_RAW, so -C
 * reports nanoseconds (said once before the table). */
static void to_clock_units(struct pt_lat_result *r)
{
	double *v[] = { &r->t_min, &r->t_max, &r->t_typical, &r->t_avg, &r->t_stdev, &r->p50,
			&r->p90, &r->p99, &r->p99_9, &r->p99_99, &r->p99_999, &r->max_all };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		*v[i] *= 1000.0;
}

/* Duration mode: upstream's row (average and transactions/s), then our
 * percentiles of the window's round trips in a table of their own. */
static int report_lat_dur(struct pt_ctx *c, const struct pt_lat_meas *m)
{
	const struct pt_report_params *rp = &c->p->report;
	unsigned rtt = rtt_factor(c);
	struct pt_lat_dur_result dr = { 0 };
	int rc;

	if ((rc = pt_lat_duration_compute(c->run.size, m->iters, m->elapsed_ns, rtt, &dr))) {
		fprintf(stderr, " Can't produce a report: %s\n", pt_results_strerror(rc));
		return -1;
	}
	/* no percentiles only when no round trip ended inside the window */
	pt_lat_duration_percentiles(m->hist, rtt, &dr);
	if (rp->report_cycles) {
		double *v[] = { &dr.t_avg, &dr.t_min, &dr.p50, &dr.p90, &dr.p99, &dr.p99_9,
				&dr.p99_99, &dr.p99_999, &dr.max };

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			*v[i] *= 1000.0;
	}
	if (rp->output == PT_OUTPUT_FULL) {
		pt_report_lat_dur_row(stdout, &dr);
		if (dr.has_pct) {
			printf(PT_RESULT_LINE);
			pt_report_lat_dur_pct(stdout, &dr);
		}
	} else {
		pt_report_lat_dur_number(stdout, (enum pt_output_mode)rp->output, &dr);
	}
	if (c->out.json)
		pt_json_add_lat_dur(c->out.json, &dr);
	fflush(stdout);
	return 0;
}

static int report_lat(struct pt_ctx *c, struct pt_lat_meas *m)
{
	const struct pt_report_params *rp = &c->p->report;
	unsigned rtt = rtt_factor(c);
	double div = (rp->report_cycles ? 1.0 : 1000.0) * rtt;
	struct pt_lat_stats st;
	struct pt_lat_result r;
	struct pt_lat_sum sum;
	const uint64_t *sorted;
	uint64_t n, *d;
	int rc;

	if (c->p->traffic.test_type == PT_TEST_DURATION)
		return report_lat_dur(c, m);
	if (m->hist) {
		rc = pt_hist_stats(m->hist, &st);
	} else {
		/* sample i: from post i to post i+1, one full round trip */
		n = m->n ? m->n - 1 : 0;
		d = malloc((n ? n : 1) * sizeof(*d));
		if (!d)
			return -1;
		pt_lat_meas_ns(m);
		pt_lat_samples(m->stamps, m->n, d, &sum);
		if (rp->unsorted)
			print_samples(d, n, div, rp->report_cycles);
		/* the stamps are spent: the scratch; the samples are sorted
		 * only for -H, which prints them in order */
		if (n <= 2)
			rc = -1;
		else if (rp->histogram)
			rc = pt_lat_stats_compute_sum(d, n, 2, &st, m->stamps, &sum, &sorted);
		else
			rc = pt_lat_stats_compute_ranks(d, n, 2, &st, m->stamps, &sum);
		if (!rc && rp->histogram)
			print_samples(sorted, st.count, div, rp->report_cycles);
		free(d);
	}
	/* an interrupted run reports the iterations it got through */
	if (rc || pt_lat_result_from_stats(&st, c->run.size, m->interrupted ? m->n : c->p->traffic.iters,
					   rtt, &r)) {
		fprintf(stderr, " Can't produce a latency report from %llu samples\n",
			(unsigned long long)(m->n ? m->n - 1 : 0));
		return -1;
	}
	if (rp->report_cycles)
		to_clock_units(&r);
	lat_row(c, &r);
	return 0;
}

/* SIGINT: a row from the samples taken so far, marked partial. */
static void report_partial(struct pt_ctx *c, struct pt_lat_meas *m)
{
	bool duration = c->p->traffic.test_type == PT_TEST_DURATION;

	pt_say_partial(duration, duration ? m->iters : m->n,
		       c->p->traffic.iters, m->elapsed_ns, "iterations");
	if (m->elapsed_ns || m->n > 1)
		report_lat(c, m);
	else
		printf(" (nothing measured yet: no row)\n");
	fflush(stdout);
}

static void result_header(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;

	if (p->report.output != PT_OUTPUT_FULL)
		return;
	printf(PT_RESULT_LINE);
	if (p->report.report_cycles)
		printf(" -C: times below are in nanoseconds of CLOCK_MONOTONIC_RAW"
		       " (no CPU cycle counter is used)\n");
	if (p->traffic.iters > PT_LAT_RAW_MAX)
		printf(" Latency from a histogram of %llu samples (over %llu: bounded memory,"
		       " at most %.2f%% error)\n", (unsigned long long)p->traffic.iters - 1,
		       (unsigned long long)PT_LAT_RAW_MAX, 100.0 * pt_hist_max_rel_error());
	if (p->traffic.test_type == PT_TEST_DURATION)
		pt_report_lat_dur_header(stdout);
	else
		pt_report_lat_header(stdout);
}

static int finish(struct pt_ctx *c, bool closing_barrier)
{
	if (c->p->report.output == PT_OUTPUT_FULL)
		printf(PT_RESULT_LINE);
	if (closing_barrier && pt_session_barrier(c))
		return PT_EXIT_FAIL;
	return pt_session_finish(c) ? PT_EXIT_FAIL : 0;
}

typedef int (*lat_loop_fn)(const struct pt_loop *l, struct pt_lat_meas *m);

static int run_sizes(struct pt_ctx *c, lat_loop_fn loop, bool post_recvs, bool barrier)
{
	const struct pt_params *p = c->p;

	for (uint64_t s = p->traffic.all_sizes ? 2 : c->run.size; s; s = pt_next_size(c, s)) {
		struct pt_lat_meas m;
		struct pt_loop l;
		int rc;

		c->run.size = s;
		pt_loop_view(c, &l);
		if (pt_trace_begin(c, true, post_recvs))
			return -1;
		if (post_recvs) {
			c->res.qps[0].recv_posted = 0;
			if (pt_post_recv(&l, 0, pt_recv_prepost(c)))
				return -1;
		}
		if (barrier && pt_session_barrier(c))
			return -1;
		rc = loop(&l, &m);
		if (!rc)
			rc = report_lat(c, &m);
		else if (m.interrupted)
			report_partial(c, &m);
		if (pt_trace_end(rc || pt_interrupted ? -1 : 0, m.elapsed_ns))
			rc = -1;
		pt_lat_meas_free(&m);
		if (rc || pt_interrupted)
			return -1;
	}
	return 0;
}

/* -g (docs/wire-protocol.md §6.3, §10): each side attaches to its own group and advertises
 * it in its keys; the client's is one more in the last byte unless -M
 * names the group. After the keys, each sends to the peer's group. With
 * one group for both, our own messages must not come back to us. */
static int send_lat_mcast_join(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;

	memcpy(c->mcast.mgid, p->mcast.mgid, 16);
	if (p->oob.is_client && !p->mcast.mgid_given)
		c->mcast.mgid[15]++;
	return pt_mcast_attach(c) || pt_mcast_block_own(c) ? -1 : 0;
}

/* ib_send_lat: keys, connect, K0, keys; per size receives, K0, ping-pong. */
int pt_send_lat_flow(struct pt_ctx *c)
{
	bool mcast = c->p->mcast.enabled;

	if (pt_tool_prepare(c) || (mcast && send_lat_mcast_join(c)) ||
	    pt_session_print_header(c) || pt_session_xchg_keys(c, false))
		return PT_EXIT_FAIL;
	if (mcast) {
		if (pt_mcast_check_route(c, c->peer.rem_keys[0].gid))
			return PT_EXIT_FAIL;
		usleep(50000);
	}
	if (pt_qps_connect(c, true) || pt_session_barrier(c) || pt_session_xchg_keys(c, true))
		return PT_EXIT_FAIL;
	result_header(c);
	if (run_sizes(c, pt_run_lat_send, true, true))
		return PT_EXIT_RUN_FAILED;
	return finish(c, true);
}

/* ib_write_lat: a handshake, keys twice around the connect, K0, then the
 * ping-pong; no closing handshake. --write_with_imm (docs/wire-protocol.md §6.3):
 * receives posted, one more K0, then a ping-pong of receive completions as
 * in send_lat (the client writes first). */
int pt_write_lat_flow(struct pt_ctx *c)
{
	if (pt_tool_prepare(c) || pt_session_print_header(c) || pt_session_xchg_keys(c, false) ||
	    pt_session_xchg_keys(c, false) || pt_qps_connect(c, true) ||
	    pt_session_xchg_keys(c, true) || pt_session_barrier(c))
		return PT_EXIT_FAIL;
	result_header(c);
	if (c->p->traffic.with_imm ? run_sizes(c, pt_run_lat_send, true, true) :
				     run_sizes(c, pt_run_lat_write, false, false))
		return PT_EXIT_FAIL;
	return finish(c, false);
}

/* ib_read_lat / ib_atomic_lat: as write_lat up to K0; then only the
 * client runs while the server waits in the closing barrier. */
int pt_read_lat_flow(struct pt_ctx *c)
{
	if (pt_tool_prepare(c) || pt_session_print_header(c) || pt_session_xchg_keys(c, false) ||
	    pt_session_xchg_keys(c, false) || pt_qps_connect(c, true) ||
	    pt_session_xchg_keys(c, true) || pt_session_barrier(c))
		return PT_EXIT_FAIL;
	if (!c->p->oob.is_client) {
		if (c->p->report.output == PT_OUTPUT_FULL)
			printf(PT_RESULT_LINE);
		fflush(stdout);
		return pt_session_wait_peer_run(c) ? PT_EXIT_FAIL : 0;
	}
	result_header(c);
	if (run_sizes(c, pt_run_lat_read, false, false))
		return PT_EXIT_FAIL;
	return finish(c, true);
}
