// SPDX-License-Identifier: BSD-2-Clause
#include "metrics.h"

#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"

/* The cgroup label of kernel-owned objects (they belong to no cgroup). */
#define KERNEL_CGROUP "(kernel)"
#define MAX_DEVS 256
#define MAX_CGDEVS 1024

struct writer {
	FILE *f;
	enum rm_metrics_format fmt;
};

/* HELP and TYPE of a family. name is the family's name; a counter's
 * samples end in _total, which the Prometheus text format also puts in
 * the family's name while OpenMetrics does not. */
static void family(struct writer *w, const char *name, const char *type, const char *help)
{
	const char *sfx = strcmp(type, "counter") == 0 && w->fmt == RM_FMT_PROMETHEUS ? "_total" : "";

	fprintf(w->f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, sfx, help, name, sfx, type);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', f);
		if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* One sample; labels are name/value pairs. */
static void sample(struct writer *w, const char *name, int counter, const char *const *labels,
		   unsigned nlabels, double value)
{
	fprintf(w->f, "%s%s", name, counter ? "_total" : "");
	for (unsigned i = 0; i < nlabels; i++) {
		fprintf(w->f, "%s%s=\"", i ? "," : "{", labels[2 * i]);
		label_value(w->f, labels[2 * i + 1]);
		fputc('"', w->f);
	}
	fputs(nlabels ? "} " : " ", w->f);
	if (value >= 0 && value < 9007199254740992.0 && value == (double)(uint64_t)value)
		fprintf(w->f, "%" PRIu64 "\n", (uint64_t)value);   /* counts: exact integers */
	else
		fprintf(w->f, "%.15g\n", value);
}

static const char *cg_label(const struct rm_report_ctx *ctx, uint64_t id, char *buf, size_t len)
{
	const char *p = ctx && ctx->cg ? rm_cgpath(ctx->cg, id) : NULL;

	if (p)
		return p;
	snprintf(buf, len, "cgroup-id:%" PRIu64, id);   /* removed since, or no tree */
	return buf;
}

static size_t add_unique32(uint32_t *v, size_t n, size_t cap, uint32_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return n;
	if (n < cap)
		v[n++] = x;
	return n;
}

/* Live objects per device, type and owner. */
static void objects(struct writer *w, const struct rm_snapshot *s)
{
	uint32_t devs[MAX_DEVS];
	size_t nd = 0;

	for (size_t i = 0; i < s->ndevs; i++)
		nd = add_unique32(devs, nd, MAX_DEVS, s->devs[i].index);
	for (size_t i = 0; i < s->nobjs; i++)
		nd = add_unique32(devs, nd, MAX_DEVS, s->objs[i].k.dev);
	family(w, "rdmamon_objects", "gauge",
	       "Live RDMA objects per device, type and owner (user or kernel), as rdma resource counts them.");
	for (size_t d = 0; d < nd; d++) {
		uint64_t n[2][RM_NTYPES] = { { 0 } };
		char buf[32];
		const char *dn = rm_snap_dev_name(s, devs[d], buf, sizeof(buf));

		for (size_t i = 0; i < s->nobjs; i++)
			if (s->objs[i].k.dev == devs[d] && s->objs[i].k.type < RM_NTYPES)
				n[s->objs[i].o.kern ? 1 : 0][s->objs[i].k.type]++;
		for (unsigned own = 0; own < 2; own++)
			for (unsigned t = 0; t < RM_NTYPES; t++) {
				const char *l[] = { "device", dn, "type", rm_type_name(t), "owner",
						    own ? "kernel" : "user" };

				sample(w, "rdmamon_objects", 0, l, 3, (double)n[own][t]);
			}
	}
}

struct cgdev { uint64_t cgid; uint32_t dev; };

/* User objects per cgroup and device: every (cgroup, device) that holds an
 * object or created one since start, all types (0 included, so a cgroup
 * that released its objects reads 0 rather than vanishing). */
static void cgroup_objects(struct writer *w, const struct rm_snapshot *s,
			   const struct rm_report_ctx *ctx)
{
	struct cgdev *v = calloc(MAX_CGDEVS, sizeof(*v));
	size_t n = 0;

	if (!v)
		return;
	for (size_t i = 0; i < s->nobjs + s->ncounts; i++) {
		struct cgdev c;
		size_t j = 0;

		if (i < s->nobjs) {
			if (s->objs[i].o.kern)
				continue;
			c = (struct cgdev){ s->objs[i].o.cgid, s->objs[i].k.dev };
		} else {
			const struct rm_count_key *k = &s->counts[i - s->nobjs].k;

			if (k->kern)
				continue;
			c = (struct cgdev){ k->cgid, k->dev };
		}
		while (j < n && (v[j].cgid != c.cgid || v[j].dev != c.dev))
			j++;
		if (j == n && n < MAX_CGDEVS)
			v[n++] = c;
	}
	family(w, "rdmamon_cgroup_objects", "gauge",
	       "Live user RDMA objects per cgroup (by path), device and type.");
	for (size_t c = 0; c < n; c++) {
		uint64_t live[RM_NTYPES] = { 0 };
		char b1[32], b2[48];
		const char *dn = rm_snap_dev_name(s, v[c].dev, b1, sizeof(b1));
		const char *cg = cg_label(ctx, v[c].cgid, b2, sizeof(b2));

		for (size_t i = 0; i < s->nobjs; i++)
			if (!s->objs[i].o.kern && s->objs[i].o.cgid == v[c].cgid &&
			    s->objs[i].k.dev == v[c].dev && s->objs[i].k.type < RM_NTYPES)
				live[s->objs[i].k.type]++;
		for (unsigned t = 0; t < RM_NTYPES; t++) {
			const char *l[] = { "cgroup", cg, "device", dn, "type", rm_type_name(t) };

			sample(w, "rdmamon_cgroup_objects", 0, l, 3, (double)live[t]);
		}
	}
	free(v);
}

/* Creates or destroys since start per cgroup, device, type and owner. */
static void lifecycle(struct writer *w, const struct rm_snapshot *s, const struct rm_report_ctx *ctx,
		      int destroys)
{
	const char *name = destroys ? "rdmamon_destroys" : "rdmamon_creates";

	family(w, name, "counter", destroys ?
	       "Objects deleted from the resource tracking since rdmamon started, per cgroup, device, type, owner." :
	       "Objects added to the resource tracking (successful creates) since rdmamon started, per cgroup, device, type, owner.");
	for (size_t i = 0; i < s->ncounts; i++) {
		const struct rm_countrow *r = &s->counts[i];
		char b1[32], b2[48];
		const char *l[] = { "cgroup", r->k.kern ? KERNEL_CGROUP : cg_label(ctx, r->k.cgid, b2, sizeof(b2)),
				    "device", rm_snap_dev_name(s, r->k.dev, b1, sizeof(b1)),
				    "type", rm_type_name(r->k.type), "owner", r->k.kern ? "kernel" : "user" };

		sample(w, name, 1, l, 4, (double)(destroys ? r->v.destroys : r->v.creates));
	}
}

static uint64_t op_total(const struct rm_snapshot *s, unsigned op)
{
	uint64_t n = 0;

	for (size_t i = 0; s && i < s->ncalls; i++)
		if (s->calls[i].k.op == op)
			n += s->calls[i].n;
	return n;
}

static void calls(struct writer *w, const struct rm_snapshot *s, const struct rm_snapshot *prev,
		  const struct rm_report_ctx *ctx)
{
	double dt = prev && s->mono_ns > prev->mono_ns ? (double)(s->mono_ns - prev->mono_ns) / 1e9 : 0;

	family(w, "rdmamon_calls", "counter",
	       "Control-path calls since rdmamon started, per cgroup, operation and result (errno ok: succeeded).");
	for (size_t i = 0; i < s->ncalls; i++) {
		const struct rm_callrow *r = &s->calls[i];
		char b1[48], b2[16];
		const char *l[] = { "cgroup", cg_label(ctx, r->k.cgid, b1, sizeof(b1)),
				    "operation", rm_op_name(r->k.op),
				    "errno", rm_errno_name(r->k.err, b2, sizeof(b2)) };

		sample(w, "rdmamon_calls", 1, l, 3, (double)r->n);
	}
	family(w, "rdmamon_calls_per_second", "gauge",
	       "Calls per second per operation over the last interval (all cgroups and results).");
	for (unsigned op = 0; op < OP_NOPS; op++) {
		const char *l[] = { "operation", rm_op_name(op) };

		sample(w, "rdmamon_calls_per_second", 0, l, 1,
		       dt > 0 ? (double)(op_total(s, op) - op_total(prev, op)) / dt : 0.0);
	}
}

static void health(struct writer *w, const struct rm_snapshot *s, const struct rm_snapshot *prev,
		   const struct rm_report_ctx *ctx)
{
	static const char *const lost_names[LOST_NSLOTS] = {
		[LOST_RING_ADD] = "ring_add", [LOST_RING_DEL] = "ring_del",
		[LOST_RING_CALL] = "ring_call", [LOST_OBJ_MAP] = "object_table",
	};
	static const char *const kinds[EV_NKINDS] = { "add", "del", "call" };

	family(w, "rdmamon_lost", "counter",
	       "What could not be recorded: events dropped because the ring buffer was full (per event kind), objects the full object table could not hold.");
	for (unsigned i = 0; i < LOST_NSLOTS; i++) {
		const char *l[] = { "what", lost_names[i] };

		sample(w, "rdmamon_lost", 1, l, 1, (double)s->lost[i]);
	}
	family(w, "rdmamon_ring_events", "counter", "Events read from the ring buffer since start, per kind.");
	for (unsigned i = 0; i < EV_NKINDS; i++) {
		const char *l[] = { "kind", kinds[i] };

		sample(w, "rdmamon_ring_events", 1, l, 1, (double)s->events[i]);
	}
	family(w, "rdmamon_hooks_attached", "gauge", "Kernel functions rdmamon's programs are attached to.");
	sample(w, "rdmamon_hooks_attached", 0, NULL, 0, ctx ? ctx->hooks_attached : 0);
	family(w, "rdmamon_hook_missing", "gauge",
	       "1 per hook this kernel lacks (rdmamon works with the rest).");
	for (const char *const *m = ctx ? ctx->missing_hooks : NULL; m && *m; m++) {
		const char *l[] = { "function", *m };

		sample(w, "rdmamon_hook_missing", 0, l, 1, 1);
	}
	family(w, "rdmamon_interval_seconds", "gauge", "Length of the interval the rates cover.");
	sample(w, "rdmamon_interval_seconds", 0, NULL, 0,
	       prev && s->mono_ns > prev->mono_ns ? (double)(s->mono_ns - prev->mono_ns) / 1e9 : 0);
	family(w, "rdmamon_last_update_timestamp_seconds", "gauge",
	       "Wall-clock time of the reading these figures come from (Unix seconds).");
	sample(w, "rdmamon_last_update_timestamp_seconds", 0, NULL, 0, (double)s->real_ns / 1e9);
}

char *rm_metrics_text(const struct rm_snapshot *now, const struct rm_snapshot *prev,
		      const struct rm_report_ctx *ctx, enum rm_metrics_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	struct writer w = { .fmt = fmt };

	w.f = open_memstream(&buf, &len);
	if (!w.f)
		return NULL;
	objects(&w, now);
	cgroup_objects(&w, now, ctx);
	lifecycle(&w, now, ctx, 0);
	lifecycle(&w, now, ctx, 1);
	calls(&w, now, prev, ctx);
	health(&w, now, prev, ctx);
	if (fmt == RM_FMT_OPENMETRICS)
		fputs("# EOF\n", w.f);
	if (ferror(w.f)) {
		fclose(w.f);
		free(buf);
		return NULL;
	}
	fclose(w.f);
	return buf;
}

int rm_listen_parse(const char *spec, struct sockaddr_storage *ss, socklen_t *len, char *msg,
		    size_t msglen)
{
	char host[256];
	const char *port = spec, *colon;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai;
	char *end;
	long p;
	int rc;

	snprintf(host, sizeof(host), "127.0.0.1");
	if (spec[0] == '[') {                         /* [IPV6]:PORT */
		const char *close = strchr(spec, ']');

		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host)) {
			snprintf(msg, msglen, "--listen '%s': write an IPv6 address as [ADDR]:PORT", spec);
			return -1;
		}
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = 0;
		port = close + 2;
	} else if ((colon = strrchr(spec, ':'))) {     /* IPV4:PORT */
		if (strchr(spec, ':') != colon) {
			snprintf(msg, msglen, "--listen '%s': write an IPv6 address as [ADDR]:PORT", spec);
			return -1;
		}
		if ((size_t)(colon - spec) >= sizeof(host) || colon == spec) {
			snprintf(msg, msglen, "--listen '%s': no address before the ':'", spec);
			return -1;
		}
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
		port = colon + 1;
	}
	p = strtol(port, &end, 10);
	if (!*port || *end || p < 1 || p > 65535) {
		snprintf(msg, msglen, "--listen '%s': '%s' is not a port number in 1..65535", spec, port);
		return -1;
	}
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc != 0) {
		snprintf(msg, msglen, "--listen '%s': '%s' is not a numeric IPv4 or [IPv6] address (%s)",
			 spec, host, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}
