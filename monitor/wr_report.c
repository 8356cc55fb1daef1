// SPDX-License-Identifier: BSD-2-Clause
/* The wr view's snapshot and report (wr_report.h). */
#include <stdlib.h>
#include <string.h>

#include "wr_report.h"

static struct rm_wr_qp *find_qp(const struct rm_wr_snap *s, const struct rm_wr_qp_key *k)
{
	for (size_t i = 0; s && i < s->nqps; i++)
		if (s->qps[i].k.pid == k->pid && s->qps[i].k.qpn == k->qpn)
			return &s->qps[i];
	return NULL;
}

int rm_wr_snap_add_qp(struct rm_wr_snap *s, const struct rm_wr_qp_key *k, const struct rm_wr_qp_val *v)
{
	struct rm_wr_qp *q = find_qp(s, k);

	if (!q) {
		struct rm_wr_qp *n = realloc(s->qps, (s->nqps + 1) * sizeof(*n));

		if (!n)
			return -1;
		s->qps = n;
		q = &n[s->nqps++];
		memset(q, 0, sizeof(*q));
		q->k = *k;
	}
	/* the CPU that created the entry holds the index, the others 0 */
	if (v->qp_index > q->v.qp_index)
		q->v.qp_index = v->qp_index;
	if (v->last_seq1 > q->v.last_seq1)
		q->v.last_seq1 = v->last_seq1;
	q->v.post_calls += v->post_calls;
	q->v.posted += v->posted;
	q->v.completed += v->completed;
	q->v.complete_errors += v->complete_errors;
	q->v.recv_posted += v->recv_posted;
	q->v.recv_completed += v->recv_completed;
	q->v.recv_errors += v->recv_errors;
	return 0;
}

struct rm_wr_proc *rm_wr_snap_proc(struct rm_wr_snap *s, uint32_t pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].pid == pid)
			return &s->procs[i];
	return NULL;
}

int rm_wr_snap_add_proc(struct rm_wr_snap *s, uint32_t pid, const struct rm_wr_run_val *r, int has_runs)
{
	struct rm_wr_proc *n = realloc(s->procs, (s->nprocs + 1) * sizeof(*n));

	if (!n)
		return -1;
	s->procs = n;
	n[s->nprocs].pid = pid;
	n[s->nprocs].has_runs = has_runs;
	n[s->nprocs].r = *r;
	n[s->nprocs].r.comm[sizeof(r->comm) - 1] = 0;
	s->nprocs++;
	return 0;
}

void rm_wr_snap_clear(struct rm_wr_snap *s)
{
	free(s->qps);
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

static int by_pid_qpn(const void *a, const void *b)
{
	const struct rm_wr_qp *x = a, *y = b;

	if (x->k.pid != y->k.pid)
		return x->k.pid < y->k.pid ? -1 : 1;
	return x->k.qpn < y->k.qpn ? -1 : x->k.qpn > y->k.qpn;
}

/* The counters a QP line and the totals carry, with their JSON names. */
#define WR_FIELDS(X) X(posted) X(post_calls) X(completed) X(complete_errors) \
	X(recv_posted) X(recv_completed) X(recv_errors)

static void put_counts(json_t *o, const struct rm_wr_qp_val *v, const struct rm_wr_qp_val *was)
{
#define PUT(f)                                                                                      \
	json_object_set_new(o, #f, json_integer((json_int_t)v->f));                                 \
	json_object_set_new(o, #f "_delta", json_integer((json_int_t)(v->f - (was ? was->f : 0))));
	WR_FIELDS(PUT)
#undef PUT
}

static void add_counts(struct rm_wr_qp_val *sum, const struct rm_wr_qp_val *v)
{
#define ADD(f) sum->f += v->f;
	WR_FIELDS(ADD)
#undef ADD
}

static json_t *proc_json(const struct rm_wr_proc *p, const struct rm_wr_proc *was, uint32_t pid)
{
	const struct rm_wr_run_val *r = p ? &p->r : NULL;
	json_t *o = json_pack("{s:I, s:s?}", "pid", (json_int_t)pid, "comm",
			      r && r->comm[0] ? r->comm : NULL);
	uint64_t st = r ? r->started : 0, en = r ? r->ended : 0, fa = r ? r->failed : 0;

	json_object_set_new(o, "runs_started", json_integer((json_int_t)st));
	json_object_set_new(o, "runs_ended", json_integer((json_int_t)en));
	json_object_set_new(o, "runs_failed", json_integer((json_int_t)fa));
	json_object_set_new(o, "runs_started_delta", json_integer((json_int_t)(st - (was ? was->r.started : 0))));
	json_object_set_new(o, "runs_ended_delta", json_integer((json_int_t)(en - (was ? was->r.ended : 0))));
	if (p && p->has_runs)
		json_object_set_new(o, "last_run",
				    json_pack("{s:I, s:I, s:I, s:I, s:I}", "run", (json_int_t)r->run, "qps",
					      (json_int_t)r->qps, "msg_size", (json_int_t)r->msg_size,
					      "iterations", (json_int_t)r->iters, "elapsed_ns",
					      (json_int_t)r->elapsed_ns));
	json_object_set_new(o, "qps", json_array());
	return o;
}

json_t *rm_wr_report_json(const struct rm_wr_snap *now, const struct rm_wr_snap *prev, double interval_s,
			  int final)
{
	struct rm_wr_snap *mut = (struct rm_wr_snap *)now;   /* sorted in place: same contents */
	struct rm_wr_qp_val tot = { 0 }, tot_was = { 0 };
	json_t *r = json_pack("{s:s, s:I, s:f, s:b}", "type", "wr", "mono_ns", (json_int_t)now->mono_ns,
			      "interval_s", interval_s, "final", final);
	json_t *procs = json_array(), *cur = NULL;
	uint32_t cur_pid = 0;

	if (!r || !procs)
		return NULL;
	if (mut->nqps)      /* an empty snapshot may have no array at all */
		qsort(mut->qps, mut->nqps, sizeof(*mut->qps), by_pid_qpn);
	for (size_t i = 0; i < now->nqps; i++) {
		const struct rm_wr_qp *q = &now->qps[i], *was = find_qp(prev, &q->k);
		json_t *o = json_pack("{s:I, s:I}", "qpn", (json_int_t)q->k.qpn, "qp_index",
				      (json_int_t)q->v.qp_index);

		if (!cur || cur_pid != q->k.pid) {
			cur_pid = q->k.pid;
			cur = proc_json(rm_wr_snap_proc(mut, cur_pid),
					prev ? rm_wr_snap_proc((struct rm_wr_snap *)prev, cur_pid) : NULL, cur_pid);
			json_array_append_new(procs, cur);
		}
		put_counts(o, &q->v, was ? &was->v : NULL);
		json_object_set_new(o, "last_seq", q->v.last_seq1 ? json_integer((json_int_t)q->v.last_seq1 - 1)
								   : json_null());
		json_array_append_new(json_object_get(cur, "qps"), o);
		add_counts(&tot, &q->v);
		if (was)
			add_counts(&tot_was, &was->v);
	}
	/* processes that ran but posted nothing (yet) */
	for (size_t i = 0; i < now->nprocs; i++) {
		int seen = 0;

		for (size_t j = 0; j < now->nqps && !seen; j++)
			seen = now->qps[j].k.pid == now->procs[i].pid;
		if (!seen)
			json_array_append_new(procs, proc_json(&now->procs[i],
				prev ? rm_wr_snap_proc((struct rm_wr_snap *)prev, now->procs[i].pid) : NULL,
				now->procs[i].pid));
	}
	json_object_set_new(r, "processes", procs);
	json_t *t = json_object();

	put_counts(t, &tot, &tot_was);
	json_object_set_new(r, "totals", t);
	json_object_set_new(r, "lost_qp_map", json_integer((json_int_t)now->lost[WR_LOST_QP_MAP]));
	json_object_set_new(r, "lost_run_map", json_integer((json_int_t)now->lost[WR_LOST_RUN_MAP]));
	return r;
}

static json_int_t geti(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void rm_wr_report_text(FILE *f, const json_t *r)
{
	const json_t *t = json_object_get(r, "totals"), *p, *q;
	size_t i, j;

	fprintf(f, "%s%s: posted %lld (+%lld) completed %lld (+%lld) errors %lld, receives posted %lld "
		"completed %lld\n", json_is_true(json_object_get(r, "final")) ? "wr since start" : "wr",
		json_is_true(json_object_get(r, "final")) ? "" : " interval",
		(long long)geti(t, "posted"), (long long)geti(t, "posted_delta"), (long long)geti(t, "completed"),
		(long long)geti(t, "completed_delta"), (long long)(geti(t, "complete_errors") + geti(t, "recv_errors")),
		(long long)geti(t, "recv_posted"), (long long)geti(t, "recv_completed"));
	json_array_foreach(json_object_get(r, "processes"), i, p) {
		const char *comm = json_string_value(json_object_get(p, "comm"));

		fprintf(f, "  pid %lld (%s) runs started %lld ended %lld failed %lld\n", (long long)geti(p, "pid"),
			comm ? comm : "?", (long long)geti(p, "runs_started"), (long long)geti(p, "runs_ended"),
			(long long)geti(p, "runs_failed"));
		json_array_foreach(json_object_get(p, "qps"), j, q)
			fprintf(f, "    qpn 0x%llx [%lld] posted %lld (+%lld) completed %lld (+%lld) errors %lld "
				"recv posted %lld completed %lld\n", (unsigned long long)geti(q, "qpn"),
				(long long)geti(q, "qp_index"), (long long)geti(q, "posted"),
				(long long)geti(q, "posted_delta"), (long long)geti(q, "completed"),
				(long long)geti(q, "completed_delta"),
				(long long)(geti(q, "complete_errors") + geti(q, "recv_errors")),
				(long long)geti(q, "recv_posted"), (long long)geti(q, "recv_completed"));
	}
	if (geti(r, "lost_qp_map") || geti(r, "lost_run_map"))
		fprintf(f, "  LOST: %lld QP-map and %lld run-map updates (map full)\n",
			(long long)geti(r, "lost_qp_map"), (long long)geti(r, "lost_run_map"));
	fflush(f);
}
