// SPDX-License-Identifier: BSD-2-Clause
#include "lifecycle.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* enum ib_qp_state and enum ib_qp_type (include/rdma/ib_verbs.h), the
 * names `rdma resource` prints. */
static const char *const states[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

const char *rm_qp_state_name(unsigned state)
{
	return state < sizeof(states) / sizeof(states[0]) ? states[state] : "?";
}

const char *rm_qp_type_name(unsigned type)
{
	switch (type) {
	case 0: return "SMI";
	case 1: return "GSI";
	case 2: return "RC";
	case 3: return "UC";
	case 4: return "UD";
	case 5: return "RAW_IPV6";
	case 6: return "RAW_ETHERTYPE";
	case 8: return "RAW_PACKET";
	case 9: return "XRC_INI";
	case 10: return "XRC_TGT";
	case 0xff: return "DRIVER";
	}
	return "?";
}

static const char *const kinds[LE_NKINDS] = {
	[LE_QP_CREATE] = "qp_create", [LE_QP_MODIFY] = "qp_modify", [LE_QP_DESTROY] = "qp_destroy",
	[LE_AH_CREATE] = "ah_create", [LE_AH_DESTROY] = "ah_destroy",
	[LE_CM_REQ_SENT] = "cm_req_sent", [LE_CM_REQ_RECV] = "cm_req_recv",
};

const char *rm_life_kind_name(unsigned kind)
{
	return kind < LE_NKINDS ? kinds[kind] : "?";
}

const char *rm_gid_str(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

const char *rm_sockaddr_str(const uint8_t sa[RM_SA_LEN], char *buf, size_t len)
{
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	sa_family_t fam;
	char a[INET6_ADDRSTRLEN];

	memcpy(&fam, sa, sizeof(fam));
	if (fam == AF_INET) {
		memcpy(&in, sa, sizeof(in));
		inet_ntop(AF_INET, &in.sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(in.sin_port));
	} else if (fam == AF_INET6) {
		memcpy(&in6, sa, sizeof(in6));
		inet_ntop(AF_INET6, &in6.sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(in6.sin6_port));
	} else if (fam == 0) {
		snprintf(buf, len, "-");
	} else {   /* AF_IB and others: the family, not a guess at the bytes */
		snprintf(buf, len, "family-%u", (unsigned)fam);
	}
	return buf;
}

void rm_life_filter_init(struct rm_life_filter *f)
{
	*f = (struct rm_life_filter){ .pid = -1, .qpn = -1 };
}

long long rm_qpn_parse(const char *s)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > 0xffffff)   /* a QPN has 24 bits */
		return -1;
	return (long long)v;
}

/* cgpath equals want or lies below it ("/a" selects "/a" and "/a/b"). */
static int under(const char *cgpath, const char *want)
{
	size_t n;

	while (want[0] == '/' && want[1] == '/')
		want++;
	n = strlen(want);
	while (n > 1 && want[n - 1] == '/')
		n--;
	if (!cgpath)
		return 0;
	if (n == 1 && want[0] == '/')
		return 1;
	if (want[0] != '/')   /* "a/b" means "/a/b" */
		return cgpath[0] == '/' && strncmp(cgpath + 1, want, n) == 0 &&
		       (cgpath[n + 1] == 0 || cgpath[n + 1] == '/');
	return strncmp(cgpath, want, n) == 0 && (cgpath[n] == 0 || cgpath[n] == '/');
}

int rm_life_select(const struct rm_life_filter *f, uint32_t pid, const char *cgpath,
		   const char *dev, long long qpn)
{
	if (f->pid >= 0 && (long)pid != f->pid)
		return 0;
	if (f->cgroup && !under(cgpath, f->cgroup))
		return 0;
	if (f->dev && (!dev || strcmp(dev, f->dev) != 0))
		return 0;
	if (f->qpn >= 0 && qpn != f->qpn)
		return 0;
	return 1;
}

static int has_qpn(unsigned kind)
{
	return kind == LE_QP_CREATE || kind == LE_QP_MODIFY || kind == LE_QP_DESTROY;
}

int rm_life_match(const struct rm_life_filter *f, const struct rm_life_event *e,
		  const char *dev, const char *cgpath)
{
	return rm_life_select(f, e->pid, cgpath, dev, has_qpn(e->kind) ? (long long)e->qpn : -1);
}

static int is_cm(unsigned kind)
{
	return kind == LE_CM_REQ_SENT || kind == LE_CM_REQ_RECV;
}

json_t *rm_life_json(const struct rm_life_event *e, const char *dev, const char *cgpath,
		     int64_t real_off_ns)
{
	char g[INET6_ADDRSTRLEN], h[64];
	json_t *j, *x;

	j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:s%, s:I, s:s?, s:s?}",
		      "event", rm_life_kind_name(e->kind), "mono_ns", (json_int_t)e->ts_ns,
		      "time_ns", (json_int_t)((int64_t)e->ts_ns + real_off_ns),
		      "pid", (json_int_t)e->pid, "tid", (json_int_t)e->tid,
		      "comm", e->comm, strnlen(e->comm, sizeof(e->comm)),
		      "cgroup_id", (json_int_t)e->cgid, "cgroup", cgpath, "dev", dev);
	if (!j)
		return NULL;
	json_object_set_new(j, "port", json_integer(e->port));
	if (has_qpn(e->kind)) {
		json_object_set_new(j, "qpn", json_integer(e->qpn));
		json_object_set_new(j, "qp_type", json_string(rm_qp_type_name(e->qp_type)));
		json_object_set_new(j, "old_state", e->old_state == RM_QPS_UNKNOWN ? json_null()
						     : json_string(rm_qp_state_name(e->old_state)));
		json_object_set_new(j, "new_state", e->new_state == RM_QPS_UNKNOWN ? json_null()
						     : json_string(rm_qp_state_name(e->new_state)));
	}
	if (e->kind == LE_AH_CREATE || e->kind == LE_AH_DESTROY) {
		snprintf(h, sizeof(h), "0x%" PRIx64, (uint64_t)e->obj);
		json_object_set_new(j, "ah", json_string(h));
	}
	if (e->has_sgid) {
		x = json_pack("{s:s, s:I}", "gid", rm_gid_str(e->sgid, g, sizeof(g)), "sgid_index",
			      (json_int_t)e->sgid_index);
		if (has_qpn(e->kind))
			json_object_set_new(x, "qpn", json_integer(e->qpn));
		json_object_set_new(j, "local", x);
	}
	if (e->has_remote) {
		x = json_pack("{s:s}", "gid", rm_gid_str(e->dgid, g, sizeof(g)));
		if (has_qpn(e->kind))
			json_object_set_new(x, "qpn", json_integer(e->rqpn));
		json_object_set_new(j, "remote", x);
	}
	if (is_cm(e->kind)) {
		json_object_set_new(j, "src", json_string(rm_sockaddr_str(e->src, h, sizeof(h))));
		json_object_set_new(j, "dst", json_string(rm_sockaddr_str(e->dst, h, sizeof(h))));
		json_object_set_new(j, "status", json_integer(e->err));
	}
	return j;
}

void rm_life_text(FILE *f, const struct rm_life_event *e, const char *dev, const char *cgpath)
{
	char g[INET6_ADDRSTRLEN], h[64];

	fprintf(f, "%" PRIu64 ".%09" PRIu64 " %-11s %s/%u", (uint64_t)e->ts_ns / 1000000000u,
		(uint64_t)e->ts_ns % 1000000000u, rm_life_kind_name(e->kind), dev ? dev : "?", e->port);
	if (has_qpn(e->kind)) {
		fprintf(f, " qpn 0x%06x %s", e->qpn, rm_qp_type_name(e->qp_type));
		if (e->kind == LE_QP_MODIFY)
			fprintf(f, " %s->%s", rm_qp_state_name(e->old_state), rm_qp_state_name(e->new_state));
	}
	if (e->kind == LE_AH_CREATE || e->kind == LE_AH_DESTROY)
		fprintf(f, " ah 0x%" PRIx64, (uint64_t)e->obj);
	if (e->has_remote) {
		fprintf(f, " local %s", e->has_sgid ? rm_gid_str(e->sgid, g, sizeof(g)) : "?");
		if (e->has_sgid)
			fprintf(f, " [%u]", e->sgid_index);
		if (has_qpn(e->kind))
			fprintf(f, " qpn 0x%06x", e->qpn);
		fprintf(f, " -> remote %s", rm_gid_str(e->dgid, g, sizeof(g)));
		if (has_qpn(e->kind))
			fprintf(f, " qpn 0x%06x", e->rqpn);
	}
	if (is_cm(e->kind)) {
		fprintf(f, " src %s", rm_sockaddr_str(e->src, h, sizeof(h)));
		fprintf(f, " dst %s", rm_sockaddr_str(e->dst, h, sizeof(h)));
		if (e->err)
			fprintf(f, " status %d", e->err);
	}
	fprintf(f, "  pid %u tid %u (%.16s) %s\n", e->pid, e->tid, e->comm, cgpath ? cgpath : "?");
}
