// SPDX-License-Identifier: BSD-2-Clause
#include "report.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "names.h"

/* {"pd": n, "cq": n, ...} for every type */
static json_t *type_counts(const uint64_t n[RM_NTYPES])
{
	json_t *o = json_object();

	for (unsigned t = 0; t < RM_NTYPES; t++)
		json_object_set_new(o, rm_type_name(t), json_integer((json_int_t)n[t]));
	return o;
}

static uint64_t calls_where(const struct rm_snapshot *s, uint64_t cgid, int any_cg, int op,
			    int err, int any_err)
{
	uint64_t n = 0;

	if (!s)
		return 0;
	for (size_t i = 0; i < s->ncalls; i++) {
		const struct rm_op_key *k = &s->calls[i].k;

		if ((any_cg || k->cgid == cgid) && (op < 0 || (int)k->op == op) &&
		    (any_err ? 1 : err == 1 ? k->err != 0 : k->err == err))
			n += s->calls[i].n;
	}
	return n;
}

static void count_sums(const struct rm_snapshot *s, uint64_t cgid, uint64_t *cre, uint64_t *des)
{
	*cre = *des = 0;
	if (!s)
		return;
	for (size_t i = 0; i < s->ncounts; i++)
		if (s->counts[i].k.cgid == cgid && !s->counts[i].k.kern) {
			*cre += s->counts[i].v.creates;
			*des += s->counts[i].v.destroys;
		}
}

static json_t *devices(const struct rm_snapshot *s)
{
	json_t *arr = json_array();
	uint32_t seen[256];
	size_t nseen = 0;

	for (size_t i = 0; i < s->ndevs && nseen < 256; i++)
		seen[nseen++] = s->devs[i].index;
	for (size_t i = 0; i < s->nobjs && nseen < 256; i++) {
		size_t j = 0;

		while (j < nseen && seen[j] != s->objs[i].k.dev)
			j++;
		if (j == nseen)
			seen[nseen++] = s->objs[i].k.dev;
	}
	for (size_t d = 0; d < nseen; d++) {
		uint64_t user[RM_NTYPES] = { 0 }, kern[RM_NTYPES] = { 0 }, all[RM_NTYPES] = { 0 };
		char buf[32];
		json_t *o;

		for (size_t i = 0; i < s->nobjs; i++) {
			const struct rm_objrow *r = &s->objs[i];

			if (r->k.dev != seen[d] || r->k.type >= RM_NTYPES)
				continue;
			(r->o.kern ? kern : user)[r->k.type]++;
			all[r->k.type]++;
		}
		o = json_pack("{s:s, s:I, s:o, s:o, s:o}", "name", rm_snap_dev_name(s, seen[d], buf, sizeof(buf)),
			      "index", (json_int_t)seen[d], "total", type_counts(all), "user",
			      type_counts(user), "kernel", type_counts(kern));
		json_array_append_new(arr, o);
	}
	return arr;
}

struct proc_count { uint32_t pid; const char *comm; uint64_t n; };

static json_t *top_procs(const struct rm_snapshot *s, uint64_t cgid, unsigned top)
{
	struct proc_count pc[64];
	size_t npc = 0;
	json_t *arr = json_array();

	for (size_t i = 0; i < s->nobjs; i++) {
		const struct rm_objrow *r = &s->objs[i];
		size_t j = 0;

		if (r->o.kern || r->o.cgid != cgid)
			continue;
		while (j < npc && pc[j].pid != r->o.pid)
			j++;
		if (j == npc) {
			if (npc == 64)
				continue;
			pc[npc++] = (struct proc_count){ r->o.pid, r->o.comm, 0 };
		}
		pc[j].n++;
	}
	for (unsigned k = 0; k < top && k < npc; k++) {
		size_t best = k;

		for (size_t j = k + 1; j < npc; j++)
			if (pc[j].n > pc[best].n)
				best = j;
		struct proc_count t = pc[k];
		pc[k] = pc[best];
		pc[best] = t;
		json_array_append_new(arr, json_pack("{s:I, s:s%, s:I}", "pid", (json_int_t)pc[k].pid,
						     "comm", pc[k].comm, strnlen(pc[k].comm, 16),
						     "objects", (json_int_t)pc[k].n));
	}
	return arr;
}

static int has_cg(const uint64_t *v, size_t n, uint64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return 1;
	return 0;
}

static json_t *cgroups(const struct rm_snapshot *s, const struct rm_snapshot *prev,
		       const struct rm_report_ctx *ctx)
{
	json_t *arr = json_array();
	uint64_t ids[512];
	size_t n = 0;

	for (size_t i = 0; i < s->nobjs && n < 512; i++)
		if (!s->objs[i].o.kern && !has_cg(ids, n, s->objs[i].o.cgid))
			ids[n++] = s->objs[i].o.cgid;
	for (size_t i = 0; i < s->ncounts && n < 512; i++)
		if (!s->counts[i].k.kern && !has_cg(ids, n, s->counts[i].k.cgid))
			ids[n++] = s->counts[i].k.cgid;
	for (size_t i = 0; i < s->ncalls && n < 512; i++)
		if (!has_cg(ids, n, s->calls[i].k.cgid))
			ids[n++] = s->calls[i].k.cgid;
	for (size_t c = 0; c < n; c++) {
		uint64_t live[RM_NTYPES] = { 0 }, cre, des, pcre, pdes;
		const char *path = ctx->cg ? rm_cgpath(ctx->cg, ids[c]) : NULL;
		json_t *o;

		for (size_t i = 0; i < s->nobjs; i++)
			if (!s->objs[i].o.kern && s->objs[i].o.cgid == ids[c] &&
			    s->objs[i].k.type < RM_NTYPES)
				live[s->objs[i].k.type]++;
		count_sums(s, ids[c], &cre, &des);
		count_sums(prev, ids[c], &pcre, &pdes);
		o = json_pack("{s:I, s:s?, s:o, s:I, s:I, s:I, s:I, s:I, s:o}", "id", (json_int_t)ids[c],
			      "path", path, "live", type_counts(live),
			      "creates", (json_int_t)(cre - pcre), "destroys", (json_int_t)(des - pdes),
			      "modifies", (json_int_t)(calls_where(s, ids[c], 0, OP_MODIFY_QP, 0, 0) -
						      calls_where(prev, ids[c], 0, OP_MODIFY_QP, 0, 0)),
			      "failed", (json_int_t)(calls_where(s, ids[c], 0, -1, 1, 0) -
						    calls_where(prev, ids[c], 0, -1, 1, 0)),
			      "creates_total", (json_int_t)cre,
			      "top", top_procs(s, ids[c], ctx->top));
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *calls(const struct rm_snapshot *s, const struct rm_snapshot *prev, double dt)
{
	json_t *o = json_object();

	for (unsigned op = 0; op < OP_NOPS; op++) {
		uint64_t tot = calls_where(s, 0, 1, (int)op, 0, 1);
		uint64_t in = tot - calls_where(prev, 0, 1, (int)op, 0, 1);

		json_object_set_new(o, rm_op_name(op),
				    json_pack("{s:I, s:I, s:f, s:I}", "total", (json_int_t)tot,
					      "interval", (json_int_t)in, "per_s", dt > 0 ? in / dt : 0.0,
					      "failed_total", (json_int_t)calls_where(s, 0, 1, (int)op, 1, 0)));
	}
	return o;
}

static json_t *failed(const struct rm_snapshot *s, const struct rm_snapshot *prev)
{
	json_t *arr = json_array();

	/* one row per (op, err) over all cgroups; the snapshot has a row per cgroup */
	for (size_t i = 0; i < s->ncalls; i++) {
		const struct rm_op_key *k = &s->calls[i].k;
		int first = 1;
		char buf[16];

		if (k->err == 0)
			continue;
		for (size_t j = 0; j < i; j++)
			if (s->calls[j].k.op == k->op && s->calls[j].k.err == k->err)
				first = 0;
		if (!first)
			continue;
		uint64_t tot = calls_where(s, 0, 1, (int)k->op, k->err, 0);
		uint64_t in = tot - calls_where(prev, 0, 1, (int)k->op, k->err, 0);

		json_array_append_new(arr, json_pack("{s:s, s:s, s:i, s:I, s:I}", "op", rm_op_name(k->op),
						     "errno", rm_errno_name(k->err, buf, sizeof(buf)),
						     "err", -k->err, "total", (json_int_t)tot,
						     "interval", (json_int_t)in));
	}
	return arr;
}

json_t *rm_report_json(const struct rm_snapshot *now, const struct rm_snapshot *prev,
		       const struct rm_report_ctx *ctx)
{
	uint64_t user[RM_NTYPES] = { 0 }, kern[RM_NTYPES] = { 0 };
	double dt = prev ? (double)(now->mono_ns - prev->mono_ns) / 1e9 : 0;
	char ts[96];
	struct tm tm;
	time_t sec = (time_t)(now->real_ns / 1000000000u);
	json_t *r, *missing = json_array(), *lost;

	for (size_t i = 0; i < now->nobjs; i++)
		if (now->objs[i].k.type < RM_NTYPES)
			(now->objs[i].o.kern ? kern : user)[now->objs[i].k.type]++;
	gmtime_r(&sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(now->real_ns / 1000000u % 1000u));
	for (const char *const *m = ctx->missing_hooks; m && *m; m++)
		json_array_append_new(missing, json_string(*m));
	lost = json_pack("{s:I, s:I, s:I, s:I}", "ring_add",
			 (json_int_t)now->lost[LOST_RING_ADD], "ring_del", (json_int_t)now->lost[LOST_RING_DEL],
			 "ring_call", (json_int_t)now->lost[LOST_RING_CALL], "object_table",
			 (json_int_t)now->lost[LOST_OBJ_MAP]);
	r = json_pack("{s:s, s:s, s:I, s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:{s:I, s:I, s:I}, s:o, s:I}",
		      "type", "interval", "time", ts, "mono_ns", (json_int_t)now->mono_ns,
		      "interval_s", dt, "final", ctx->final,
		      "live", type_counts(user), "kernel", type_counts(kern),
		      "devices", devices(now), "cgroups", cgroups(now, prev, ctx),
		      "calls", calls(now, prev, dt), "failed", failed(now, prev), "lost", lost,
		      "events", "add", (json_int_t)now->events[EV_ADD], "del",
		      (json_int_t)now->events[EV_DEL], "call", (json_int_t)now->events[EV_CALL],
		      "hooks_missing", missing, "hooks_attached", (json_int_t)ctx->hooks_attached);
	return r;
}

/* --- text ---------------------------------------------------------------------------- */

static const unsigned shown[] = { RM_PD, RM_CQ, RM_QP, RM_MR, RM_SRQ, RM_AH, RM_CM_ID, RM_CTX };
#define NSHOWN (sizeof(shown) / sizeof(shown[0]))

static void row(FILE *f, const char *a, const char *b, const json_t *counts)
{
	fprintf(f, "%-28.28s %-7s", a, b);
	for (size_t i = 0; i < NSHOWN; i++)
		fprintf(f, " %6" JSON_INTEGER_FORMAT,
			json_integer_value(json_object_get(counts, rm_type_name(shown[i]))));
}

static void header(FILE *f, const char *first)
{
	fprintf(f, "%-28s %-7s", first, "OWNER");
	for (size_t i = 0; i < NSHOWN; i++) {
		char up[8];
		size_t j;

		for (j = 0; rm_type_name(shown[i])[j] && j < sizeof(up) - 1; j++)
			up[j] = (char)(rm_type_name(shown[i])[j] & ~0x20);
		up[j] = 0;
		fprintf(f, " %6s", up);
	}
}

void rm_report_text(FILE *f, const json_t *r)
{
	const json_t *lost = json_object_get(r, "lost"), *v;
	size_t i;
	const char *k;

	fprintf(f, "\nrdmamon %s  %s  interval %.1f s  hooks %" JSON_INTEGER_FORMAT "%s\n",
		json_string_value(json_object_get(r, "time")),
		json_is_true(json_object_get(r, "final")) ? "FINAL SUMMARY" : "",
		json_real_value(json_object_get(r, "interval_s")),
		json_integer_value(json_object_get(r, "hooks_attached")),
		json_array_size(json_object_get(r, "hooks_missing")) ? " (some missing)" : "");
	header(f, "DEVICE");
	fputc('\n', f);
	row(f, "all", "user", json_object_get(r, "live"));
	fputc('\n', f);
	row(f, "all", "kernel", json_object_get(r, "kernel"));
	fputc('\n', f);
	json_array_foreach(json_object_get(r, "devices"), i, v) {
		row(f, json_string_value(json_object_get(v, "name")), "user", json_object_get(v, "user"));
		fputc('\n', f);
		row(f, json_string_value(json_object_get(v, "name")), "kernel",
		    json_object_get(v, "kernel"));
		fputc('\n', f);
	}
	header(f, "CGROUP");
	fprintf(f, " %5s %5s %5s %5s  TOP\n", "+CRE", "-DES", "MOD", "FAIL");
	json_array_foreach(json_object_get(r, "cgroups"), i, v) {
		const char *path = json_string_value(json_object_get(v, "path"));
		char idbuf[32];
		size_t j;
		json_t *p;

		if (!path) {
			snprintf(idbuf, sizeof(idbuf), "cgroup:%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(v, "id")));
			path = idbuf;
		}
		row(f, path, "user", json_object_get(v, "live"));
		fprintf(f, " %5" JSON_INTEGER_FORMAT " %5" JSON_INTEGER_FORMAT " %5" JSON_INTEGER_FORMAT
			" %5" JSON_INTEGER_FORMAT " ",
			json_integer_value(json_object_get(v, "creates")),
			json_integer_value(json_object_get(v, "destroys")),
			json_integer_value(json_object_get(v, "modifies")),
			json_integer_value(json_object_get(v, "failed")));
		json_array_foreach(json_object_get(v, "top"), j, p)
			fprintf(f, " %s[%" JSON_INTEGER_FORMAT "]:%" JSON_INTEGER_FORMAT,
				json_string_value(json_object_get(p, "comm")),
				json_integer_value(json_object_get(p, "pid")),
				json_integer_value(json_object_get(p, "objects")));
		fputc('\n', f);
	}
	fprintf(f, "CALLS/s ");
	json_object_foreach((json_t *)json_object_get(r, "calls"), k, v)
		if (json_integer_value(json_object_get(v, "total")))
			fprintf(f, " %s %.1f (total %" JSON_INTEGER_FORMAT ")", k,
				json_real_value(json_object_get(v, "per_s")),
				json_integer_value(json_object_get(v, "total")));
	fputc('\n', f);
	json_array_foreach(json_object_get(r, "failed"), i, v)
		fprintf(f, "FAILED   %s %s: %" JSON_INTEGER_FORMAT " in interval, %" JSON_INTEGER_FORMAT
			" total\n", json_string_value(json_object_get(v, "op")),
			json_string_value(json_object_get(v, "errno")),
			json_integer_value(json_object_get(v, "interval")),
			json_integer_value(json_object_get(v, "total")));
	fprintf(f, "LOST     ring add %" JSON_INTEGER_FORMAT " del %" JSON_INTEGER_FORMAT
		" call %" JSON_INTEGER_FORMAT ", object table %" JSON_INTEGER_FORMAT "\n",
		json_integer_value(json_object_get(lost, "ring_add")),
		json_integer_value(json_object_get(lost, "ring_del")),
		json_integer_value(json_object_get(lost, "ring_call")),
		json_integer_value(json_object_get(lost, "object_table")));
	json_array_foreach(json_object_get(r, "hooks_missing"), i, v)
		fprintf(f, "MISSING  hook %s (not in this kernel)\n", json_string_value(v));
	fflush(f);
}
