// SPDX-License-Identifier: BSD-2-Clause
#include "conntable.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "lifecycle.h"

int rm_conn_established(const struct rm_qp_info *v)
{
	/* RTR 2, RTS 3, SQD 4, SQE 5: RESET and ERR end a connection */
	return v->has_remote && v->state >= 2 && v->state <= 5;
}

static int by_dev_qpn(const void *a, const void *b)
{
	const struct rm_conn_row *x = a, *y = b;

	if (x->k.dev != y->k.dev)
		return x->k.dev < y->k.dev ? -1 : 1;
	return x->k.qpn < y->k.qpn ? -1 : x->k.qpn > y->k.qpn;
}

json_t *rm_conns_json(struct rm_conn_row *rows, size_t n, uint64_t mono_ns, int64_t real_off_ns,
		      int final, const uint64_t *lost)
{
	json_t *t, *arr = json_array(), *l = json_object();
	char g[INET6_ADDRSTRLEN];
	size_t count = 0;

	if (!arr || !l)
		goto nomem;
	qsort(rows, n, sizeof(*rows), by_dev_qpn);
	for (size_t i = 0; i < n; i++) {
		const struct rm_qp_info *v = &rows[i].v;
		json_t *c, *loc;

		if (!rm_conn_established(v))
			continue;
		loc = v->has_sgid ? json_pack("{s:s, s:I, s:I}", "gid", rm_gid_str(v->sgid, g, sizeof(g)),
					      "sgid_index", (json_int_t)v->sgid_index,
					      "qpn", (json_int_t)rows[i].k.qpn)
				  : json_pack("{s:n, s:I}", "gid", "qpn", (json_int_t)rows[i].k.qpn);
		c = json_pack("{s:s?, s:I, s:s, s:s, s:o, s:{s:s, s:I}, s:I, s:s%, s:s?, s:I}",
			      "dev", rows[i].dev, "port", (json_int_t)v->port,
			      "qp_type", rm_qp_type_name(v->qp_type), "state", rm_qp_state_name(v->state),
			      "local", loc, "remote", "gid", rm_gid_str(v->dgid, g, sizeof(g)),
			      "qpn", (json_int_t)v->rqpn, "pid", (json_int_t)v->pid,
			      "comm", v->comm, strnlen(v->comm, sizeof(v->comm)),
			      "cgroup", rows[i].cgroup, "since_mono_ns", (json_int_t)v->rtr_ns);
		if (!c || json_array_append_new(arr, c))
			goto nomem;
		count++;
	}
	for (unsigned k = 0; lost && k < LE_NKINDS; k++)
		json_object_set_new(l, rm_life_kind_name(k), json_integer((json_int_t)lost[k]));
	t = json_pack("{s:s, s:I, s:I, s:b, s:I, s:o, s:o}", "event", "conns",
		      "mono_ns", (json_int_t)mono_ns, "time_ns", (json_int_t)((int64_t)mono_ns + real_off_ns),
		      "final", final, "count", (json_int_t)count, "conns", arr, "lost", l);
	return t;
nomem:
	json_decref(arr);
	json_decref(l);
	return NULL;
}

static const char *str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "?";
}

static long long num(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void rm_conns_text(FILE *f, const json_t *t)
{
	const json_t *c, *l = json_object_get(t, "lost");
	long long lost = 0;
	const char *k;
	size_t i;
	json_t *v;

	json_object_foreach((json_t *)l, k, v)
		lost += json_integer_value(v);
	fprintf(f, "rdmamon conns%s: %lld established, %lld events lost\n",
		json_is_true(json_object_get(t, "final")) ? " (final)" : "", num(t, "count"), lost);
	if (!num(t, "count"))
		return;
	fprintf(f, "%-10s %4s %-5s %-4s %-8s %-28s %-4s %-8s %-28s %8s %-16s %s\n", "DEVICE", "PORT",
		"TYPE", "STATE", "LQPN", "LOCAL GID", "IDX", "RQPN", "REMOTE GID", "PID", "COMM", "CGROUP");
	json_array_foreach(json_object_get(t, "conns"), i, c) {
		const json_t *lo = json_object_get(c, "local"), *re = json_object_get(c, "remote");
		char lq[16], rq[16];

		snprintf(lq, sizeof(lq), "0x%06llx", num(lo, "qpn"));
		snprintf(rq, sizeof(rq), "0x%06llx", num(re, "qpn"));
		fprintf(f, "%-10s %4lld %-5s %-4s %-8s %-28s %-4lld %-8s %-28s %8lld %-16s %s\n",
			str(c, "dev"), num(c, "port"), str(c, "qp_type"), str(c, "state"), lq, str(lo, "gid"),
			num(lo, "sgid_index"), rq, str(re, "gid"), num(c, "pid"), str(c, "comm"),
			str(c, "cgroup"));
	}
}
