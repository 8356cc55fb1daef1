/* SPDX-License-Identifier: BSD-2-Clause */
/* getopt_long loop and per-option value parsing. Cross-option rules live in
 * options_check.c, the table in options_table.c. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mgid.h"
#include "options.h"
#include "options_int.h"

#ifndef WIRE_VERSION
#error "WIRE_VERSION comes from config.h (-include config.h)"
#endif

/* getopt_long() returns short options as their character and every long
 * option as LONG_BASE + its table index, so we know which spelling was typed. */
#define LONG_BASE 256

/* Strict unsigned number: decimal, or 0x-hex. No sign, no blanks, no
 * trailing garbage, no overflow. Upstream's strtol(base 0) reads "010" as 8;
 * we refuse a leading zero instead of guessing. end (may be NULL) receives
 * where the digits stop, for suffixes; without it the whole string must be
 * digits. Returns 0 or -1. */
static int parse_uint(const char *s, uint64_t *v, const char **end)
{
	char *e;
	int base = 10;

	if (!s || !*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		if (!((s[2] >= '0' && s[2] <= '9') || (s[2] >= 'a' && s[2] <= 'f') ||
		      (s[2] >= 'A' && s[2] <= 'F')))
			return -1;
	} else if (s[0] < '0' || s[0] > '9') {
		return -1;
	} else if (s[0] == '0' && s[1] >= '0' && s[1] <= '9') {
		return -1;
	}
	errno = 0;
	unsigned long long x = strtoull(s, &e, base);

	if (errno || e == s)
		return -1;
	if (end)
		*end = e;
	else if (*e)
		return -1;
	*v = x;
	return 0;
}

/* An integer option in [lo, hi]. */
static int get_int(FILE *err, const char *name, const char *arg, long lo, long hi, int *out)
{
	uint64_t v;

	if (parse_uint(arg, &v, NULL) || v < (uint64_t)lo || v > (uint64_t)hi)
		return perr(err, " Invalid value '%s' for %s: expected an integer in %ld..%ld\n",
			    arg, name, lo, hi);
	*out = (int)v;
	return 0;
}

/* -s: 1..2^31-1 bytes with an optional K (x1024) or M (x1048576) suffix. */
static int get_size(FILE *err, const char *name, const char *arg, uint64_t *out)
{
	const char *end;
	uint64_t v, mult = 1;

	if (parse_uint(arg, &v, &end))
		goto bad;
	if (*end == 'K' || *end == 'k')
		mult = 1024;
	else if (*end == 'M' || *end == 'm')
		mult = 1048576;
	else if (*end)
		goto bad;
	if (mult > 1 && end[1])
		goto bad;
	if (v == 0 || v > INT32_MAX / mult)
		goto bad;
	*out = v * mult;
	return 0;
bad:
	return perr(err, " Invalid value '%s' for %s: expected a size in 1..%d bytes"
		    " (K and M suffixes allowed)\n", arg, name, INT32_MAX);
}

/* A limit (-w, -y): a finite real >= 0, nothing after it. */
static int get_limit(FILE *err, const char *name, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = arg && *arg ? strtod(arg, &end) : -1;
	if (!arg || !*arg || errno || *end || !isfinite(v) || v < 0)
		return perr(err, " Invalid value '%s' for %s: expected a number >= 0\n",
			    arg ? arg : "", name);
	*out = v;
	return 0;
}

/* --mmap-offset: a byte offset into the file; mmap needs it page aligned. */
static int get_offset(FILE *err, const char *name, const char *arg, uint64_t *out)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t v;

	if (parse_uint(arg, &v, NULL) || v > (uint64_t)INT64_MAX)
		return perr(err, " Invalid value '%s' for %s: expected a byte offset >= 0\n",
			    arg, name);
	if (page > 0 && v % (uint64_t)page)
		return perr(err, " Invalid value '%s' for %s: mmap needs a multiple of the page"
			    " size (%ld)\n", arg, name, page);
	*out = v;
	return 0;
}

/* A string option copied into a fixed buffer. */
static int get_str(FILE *err, const char *name, const char *arg, char *dst, size_t size)
{
	size_t len = strlen(arg);

	if (len == 0)
		return perr(err, " Empty value for %s\n", name);
	if (len >= size)
		return perr(err, " Value for %s is too long (at most %zu characters)\n",
			    name, size - 1);
	memcpy(dst, arg, len + 1);
	return 0;
}

static int get_conn(FILE *err, const struct pt_tool *tool, const char *arg,
		    enum pt_conn_type *out)
{
	static const char *const names[] = { "RC", "UC", "UD" };

	if (!strcmp(arg, "XRC") || !strcmp(arg, "DC") || !strcmp(arg, "SRD") ||
	    !strcmp(arg, "RawEth"))
		return perr(err, " connection type %s is not supported by this build\n", arg);
	for (int t = 0; t < 3; t++) {
		if (strcmp(arg, names[t]))
			continue;
		if (!(tool->conn_types & PT_CONN_BIT(t)))
			return perr(err, " connection type %s is not supported by %s\n",
				    arg, tool->name);
		*out = (enum pt_conn_type)t;
		return 0;
	}
	return perr(err, " Invalid connection type '%s' (use RC, UC or UD)\n", arg);
}

static int get_mtu(FILE *err, const char *name, const char *arg, int *out)
{
	uint64_t v;

	if (!parse_uint(arg, &v, NULL) &&
	    (v == 256 || v == 512 || v == 1024 || v == 2048 || v == 4096)) {
		*out = (int)v;
		return 0;
	}
	return perr(err, " Invalid value '%s' for %s: use 256, 512, 1024, 2048 or 4096\n",
		    arg, name);
}

/* --plugin=PATH[:ARGS] */
static int get_plugin(FILE *err, const char *name, const char *arg, struct pt_plugin_params *pl)
{
	const char *colon = strchr(arg, ':');
	size_t plen = colon ? (size_t)(colon - arg) : strlen(arg);

	if (plen == 0)
		return perr(err, " %s needs a path: %s=PATH[:ARGS]\n", name, name);
	if (plen >= sizeof(pl->plugin_path))
		return perr(err, " Plugin path for %s is too long\n", name);
	memcpy(pl->plugin_path, arg, plen);
	pl->plugin_path[plen] = '\0';
	pl->plugin_args[0] = '\0';
	if (colon && strlen(colon + 1) >= sizeof(pl->plugin_args))
		return perr(err, " Plugin arguments for %s are too long\n", name);
	if (colon)
		strcpy(pl->plugin_args, colon + 1);
	return 0;
}

static int get_version(FILE *err, const char *name, const char *arg, char *dst)
{
	for (const char *p = arg; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			return perr(err, " %s: version must be printable ASCII\n", name);
	return get_str(err, name, arg, dst, PT_VERSION_MAX);
}

/* --flow_label a[,b...]: 20-bit labels, one per QP (the list is cycled). */
static int get_flow_labels(FILE *err, const char *name, const char *arg, struct pt_addr_params *a)
{
	char buf[PT_PATH_MAX];
	char *save = NULL, *tok;

	a->num_flow_labels = 0;
	if (get_str(err, name, arg, buf, sizeof(buf)))
		return 1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (a->num_flow_labels == PT_FLOW_LABEL_MAX)
			return perr(err, " Too many values for %s: at most %d\n", name,
				    PT_FLOW_LABEL_MAX);
		if (get_int(err, name, tok, 0, 0xfffff, &a->flow_labels[a->num_flow_labels++]))
			return 1;
	}
	if (!a->num_flow_labels || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
		return perr(err, " Invalid value '%s' for %s: expected labels separated by"
			    " single commas\n", arg, name);
	return 0;
}

/* -W a[,b...]: counter files relative to the port's sysfs directory
 * (counters/NAME or hw_counters/NAME); nothing that leaves it. */
static int get_counters(FILE *err, const char *name, const char *arg, struct pt_addr_params *a)
{
	char buf[PT_PATH_MAX];
	char *save = NULL, *tok;

	a->num_counters = 0;
	if (get_str(err, name, arg, buf, sizeof(buf)))
		return 1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const char *slash = strchr(tok, '/');

		if (a->num_counters == PT_COUNTERS_MAX)
			return perr(err, " Too many counters for %s: at most %d\n", name,
				    PT_COUNTERS_MAX);
		if (!slash || strchr(slash + 1, '/') || !slash[1] || strstr(tok, "..") ||
		    (strncmp(tok, "counters/", 9) && strncmp(tok, "hw_counters/", 12)))
			return perr(err, " Invalid counter '%s' for %s: expected counters/NAME or"
				    " hw_counters/NAME\n", tok, name);
		if (strlen(tok) >= sizeof(a->counters[0]))
			return perr(err, " Counter name '%s' for %s is too long\n", tok, name);
		strcpy(a->counters[a->num_counters++], tok);
	}
	if (!a->num_counters)
		return perr(err, " Invalid value '%s' for %s: expected counters/NAME,...\n", arg, name);
	return 0;
}

/* Store one option's value. */
static int apply(const struct pt_optdef *d, const char *name, const char *arg,
		 struct pt_params *p, struct pt_parse_state *st, FILE *err)
{
	struct pt_traffic_params *t = &p->traffic;
	char msg[160];

	switch (d->id) {
	case PT_OPT_ALL: t->all_sizes = true; return 0;
	case PT_OPT_BIDIR: t->bidirectional = true; return 0;
	case PT_OPT_REPORT_CYCLES: p->report.report_cycles = true; return 0;
	case PT_OPT_EVENTS: t->use_event = true; return 0;
	case PT_OPT_CPU_FREQ: p->report.cpu_freq_warn_off = true; return 0;
	case PT_OPT_MCG: p->mcast.enabled = true; return 0;
	case PT_OPT_HISTOGRAM: p->report.histogram = true; return 0;
	case PT_OPT_NO_PEAK: p->report.no_peak = true; return 0;
	case PT_OPT_RDMA_CM: p->conn.rdma_cm_qps = true; return 0;
	case PT_OPT_UNSORTED: p->report.unsorted = true; return 0;
	case PT_OPT_COMM_RDMA_CM: p->conn.rdma_cm_oob = true; return 0;
	case PT_OPT_CPU_UTIL: p->report.cpu_util = true; return 0;
	case PT_OPT_DONT_XCHG: p->oob.dont_xchg_versions = true; return 0;
	case PT_OPT_OUT_JSON: p->report.out_json = true; return 0;
	case PT_OPT_REPORT_GBITS: p->report.gbits = true; return 0;
	case PT_OPT_REPORT_BOTH: p->report.report_both = true; return 0;
	case PT_OPT_RUN_INFINITELY: t->run_infinitely = true; return 0;
	case PT_OPT_OLD_POST_SEND: t->use_old_post_send = true; return 0;
	case PT_OPT_NEW_POST_SEND: t->use_old_post_send = false; return 0;
	case PT_OPT_CONNECTIONLESS: p->mcast.connectionless = true; return 0;
	case PT_OPT_USE_SRQ: t->use_srq = true; return 0;
	case PT_OPT_NO_DYN_POLL: t->no_dynamic_poll = true; return 0;
	case PT_OPT_WARM_UP: t->warm_up = true; return 0;
	case PT_OPT_SEND_IMM:
	case PT_OPT_WRITE_IMM: t->with_imm = true; return 0;
	case PT_OPT_ATOMIC_TYPE:
		if (!strcmp(arg, "CMP_AND_SWAP"))
			t->atomic_type = PT_ATOMIC_CMP_AND_SWAP;
		else if (!strcmp(arg, "FETCH_AND_ADD"))
			t->atomic_type = PT_ATOMIC_FETCH_AND_ADD;
		else
			return perr(err, " Invalid atomic type '%s' for %s"
				    " (use CMP_AND_SWAP or FETCH_AND_ADD)\n", arg, name);
		return 0;
	case PT_OPT_CONNECTION:
		p->conn.type_given = true;
		return get_conn(err, p->tool, arg, &p->conn.type);
	case PT_OPT_IB_DEV:
		return get_str(err, name, arg, p->dev.ib_devname, sizeof(p->dev.ib_devname));
	case PT_OPT_DURATION:
		st->duration_given = true;
		return get_int(err, name, arg, 1, INT32_MAX / 4, &t->duration);
	case PT_OPT_MARGIN:
		st->margin_given = true;
		return get_int(err, name, arg, 0, INT32_MAX / 4, &t->margin);
	case PT_OPT_IB_PORT:
		return get_int(err, name, arg, 1, 255, &p->dev.ib_port);
	case PT_OPT_INLINE:
		return get_int(err, name, arg, 0, 1024, &t->inline_size);
	case PT_OPT_POST_LIST:
		return get_int(err, name, arg, 1, 16384, &t->post_list);
	case PT_OPT_MTU:
		return get_mtu(err, name, arg, &p->dev.mtu);
	case PT_OPT_MGID:
		if (pt_mgid_parse(arg, p->mcast.mgid, msg, sizeof(msg)))
			return perr(err, " Invalid MGID '%s' for %s: %s\n", arg, name, msg);
		p->mcast.mgid_given = true;
		return 0;
	case PT_OPT_ITERS: {
		uint64_t v;

		t->iters_given = true;
		if (parse_uint(arg, &v, NULL) || v < 5 || v > 100000000)
			return perr(err, " Invalid value '%s' for %s: expected an integer"
				    " in 5..100000000\n", arg, name);
		t->iters = v;
		return 0;
	}
	case PT_OPT_OUTS:
		return get_int(err, name, arg, 1, 255, &t->out_reads);
	case PT_OPT_PORT:
		return get_int(err, name, arg, 1, 65535, &p->oob.port);
	case PT_OPT_QP:
		return get_int(err, name, arg, 1, 16384, &p->conn.num_qps);
	case PT_OPT_CQ_MOD:
		t->cq_mod_given = true;
		return get_int(err, name, arg, 1, 1024, &t->cq_mod);
	case PT_OPT_RX_DEPTH:
		t->rx_depth_given = true;
		return get_int(err, name, arg, 1, 16384, &t->rx_depth);
	case PT_OPT_SIZE:
		t->size_given = true;
		return get_size(err, name, arg, &t->size);
	case PT_OPT_SL:
		return get_int(err, name, arg, 0, 15, &p->dev.sl);
	case PT_OPT_TX_DEPTH:
		t->tx_depth_given = true;
		return get_int(err, name, arg, 1, 15000, &t->tx_depth);
	case PT_OPT_TOS:
		return get_int(err, name, arg, 0, 255, &p->dev.tos);
	case PT_OPT_QP_TIMEOUT:
		/* the QP attribute has 5 bits */
		return get_int(err, name, arg, 0, 31, &p->dev.qp_timeout);
	case PT_OPT_GID_INDEX:
		p->dev.gid_index_given = true;
		return get_int(err, name, arg, 0, 64, &p->dev.gid_index);
	case PT_OPT_OOB_TIMEOUT:
		return get_int(err, name, arg, 0, 86400, &p->oob.timeout_sec);
	case PT_OPT_OUTPUT:
		if (!strcmp(arg, "bandwidth"))
			p->report.output = PT_OUTPUT_BANDWIDTH;
		else if (!strcmp(arg, "message_rate"))
			p->report.output = PT_OUTPUT_MESSAGE_RATE;
		else if (!strcmp(arg, "latency"))
			p->report.output = PT_OUTPUT_LATENCY;
		else
			return perr(err, " Invalid value '%s' for %s"
				    " (use bandwidth, message_rate or latency)\n", arg, name);
		return 0;
	case PT_OPT_OUT_JSON_FILE:
		p->report.out_json = true;
		return get_str(err, name, arg, p->report.out_json_file,
			       sizeof(p->report.out_json_file));
	case PT_OPT_PLUGIN:
		return get_plugin(err, name, arg, &p->plugin);
	case PT_OPT_TCLASS:
		return get_int(err, name, arg, 0, 255, &p->dev.tclass);
	case PT_OPT_TRACE:
		return get_str(err, name, arg, p->plugin.trace_file,
			       sizeof(p->plugin.trace_file));
	case PT_OPT_LIMIT_BW:
		return get_limit(err, name, arg, &p->report.limit_bw);
	case PT_OPT_LIMIT_MSGRATE:
		return get_limit(err, name, arg, &p->report.limit_msgrate);
	case PT_OPT_IPV6_ADDR: p->oob.ipv6_addr = true; return 0;
	case PT_OPT_BIND_SOURCE_IP: {
		/* numeric only (an IPv6 scope such as %eth0 allowed): no lookup here */
		struct addrinfo hints = { .ai_flags = AI_NUMERICHOST }, *ai = NULL;

		if (getaddrinfo(arg, NULL, &hints, &ai))
			return perr(err, " Invalid value '%s' for %s: expected a numeric IPv4 or"
				    " IPv6 address\n", arg, name);
		freeaddrinfo(ai);
		return get_str(err, name, arg, p->oob.source_ip, sizeof(p->oob.source_ip));
	}
	case PT_OPT_WAIT_DESTROY:
		return get_int(err, name, arg, 0, 86400, &t->wait_destroy);
	case PT_OPT_RECV_POST_LIST:
		return get_int(err, name, arg, 1, 65536, &t->recv_post_list);
	case PT_OPT_CQE_POLL: /* 6.29's range (docs/option-parity.md) */
		return get_int(err, name, arg, 1, 65535, &t->cqe_poll);
	/* placement and queues (helper numa): the device checks run in the engine */
	case PT_OPT_NUMA_NODE:
		return get_int(err, name, arg, 0, 1023, &p->numa_node);
	case PT_OPT_PIN_CORES:
		if (!*arg || strlen(arg) >= sizeof(p->pin_cores) ||
		    strspn(arg, "0123456789,-") != strlen(arg))
			return perr(err, " Invalid value '%s' for %s: expected a CPU list such as 0-3,8\n",
				    arg, name);
		snprintf(p->pin_cores, sizeof(p->pin_cores), "%s", arg);
		return 0;
	case PT_OPT_DISABLE_NUMA: p->disable_numa = true; return 0;
	case PT_OPT_VECTOR:
		p->vector_given = true;
		return get_int(err, name, arg, 0, 2048, &p->comp_vector);
	case PT_OPT_NO_LOCK: p->no_lock = true; return 0;
	case PT_OPT_ANNOUNCE_VERSION:
		return get_version(err, name, arg, p->oob.fake_version);
	/* issue 18, memory group */
	case PT_OPT_HUGEPAGES: p->mem.use_hugepages = true; return 0;
	case PT_OPT_MR_PER_QP: p->mem.mr_per_qp = true; return 0;
	case PT_OPT_NULL_MR: p->mem.null_mr = true; return 0;
	case PT_OPT_ODP: p->mem.odp = true; return 0;
	case PT_OPT_DATA_VALIDATION: p->mem.data_validation = true; return 0;
	case PT_OPT_DATA_VALIDATION_DEBUG:
		p->mem.data_validation = p->mem.data_validation_debug = true;
		return 0;
	case PT_OPT_MMAP:
		return get_str(err, name, arg, p->mem.mmap_file, sizeof(p->mem.mmap_file));
	case PT_OPT_MMAP_OFFSET:
		return get_offset(err, name, arg, &p->mem.mmap_offset);
	case PT_OPT_PAYLOAD_FILE:
		return get_str(err, name, arg, p->mem.payload_file, sizeof(p->mem.payload_file));
	/* pace: the rate limiter, the latency gap, the reversed direction */
	case PT_OPT_RATE_LIMIT:
		if (get_limit(err, name, arg, &p->pace.rate_limit))
			return 1;
		if (p->pace.rate_limit <= 0)
			return perr(err, " Invalid value '%s' for %s: the rate must be above 0\n", arg, name);
		return 0;
	case PT_OPT_RATE_UNITS:
		p->pace.rate_units_given = true;
		if (!strcmp(arg, "M"))
			p->pace.rate_units = PT_RATE_MIBPS;
		else if (!strcmp(arg, "g"))
			p->pace.rate_units = PT_RATE_GBPS;
		else if (!strcmp(arg, "p"))
			p->pace.rate_units = PT_RATE_PPS;
		else
			return perr(err, " Invalid value '%s' for %s: expected M (MiB/s), g (Gb/s)"
				    " or p (messages/s)\n", arg, name);
		return 0;
	case PT_OPT_RATE_LIMIT_TYPE:
		st->rate_limit_type_given = true;
		if (!strcmp(arg, "SW"))
			p->pace.limit_type = PT_RATE_LIMIT_SW;
		else if (!strcmp(arg, "HW"))
			p->pace.limit_type = PT_RATE_LIMIT_HW;
		else if (!strcmp(arg, "PP"))
			p->pace.limit_type = PT_RATE_LIMIT_PP;
		else
			return perr(err, " Invalid value '%s' for %s: expected SW, HW or PP\n", arg, name);
		return 0;
	case PT_OPT_BURST_SIZE:
		st->burst_size_given = true;
		return get_int(err, name, arg, 1, 65535, &p->pace.burst_size);
	case PT_OPT_TYPICAL_PKT_SIZE: /* ibv_qp_rate_limit_attr's uint16_t */
		st->typical_pkt_size_given = true;
		return get_int(err, name, arg, 1, 65535, &p->pace.typical_pkt_size);
	case PT_OPT_LATENCY_GAP: /* at most 10 s between two posts */
		return get_int(err, name, arg, 0, 10000000, &p->pace.latency_gap_us);
	case PT_OPT_REVERSED: p->pace.reversed = true; return 0;
	/* group "addr" */
	case PT_OPT_IPV6: p->addr.ipv6_gid = true; return 0;
	case PT_OPT_NO_RELAXED: p->addr.no_relaxed = true; return 0;
	case PT_OPT_DUALPORT: p->addr.dualport = true; return 0;
	case PT_OPT_REPORT_PER_PORT: p->addr.report_per_port = true; return 0;
	case PT_OPT_FLOW_LABEL:
		return get_flow_labels(err, name, arg, &p->addr);
	case PT_OPT_PKEY_INDEX: /* checked against the port's table at run time */
		return get_int(err, name, arg, 0, 0xffff, &p->addr.pkey_index);
	case PT_OPT_RETRY_COUNT: /* rdma_conn_param.retry_count has 3 bits */
		return get_int(err, name, arg, 0, 7, &p->addr.retry_count);
	case PT_OPT_DLID: /* a unicast LID */
		return get_int(err, name, arg, 1, 0xbfff, &p->addr.dlid);
	case PT_OPT_FORCE_LINK:
		if (!strcmp(arg, "IB"))
			p->addr.force_link = PT_LINK_IB;
		else if (!strcmp(arg, "Ethernet"))
			p->addr.force_link = PT_LINK_ETHERNET;
		else
			return perr(err, " Invalid value '%s' for %s (use IB or Ethernet)\n",
				    arg, name);
		return 0;
	case PT_OPT_REPORT_COUNTERS:
		return get_counters(err, name, arg, &p->addr);
	case PT_OPT_HELP:
	case PT_OPT_VERSION:
	case PT_OPT_UNSUPPORTED:
		break;
	}
	return perr(err, " internal error: option %s not handled\n", name);
}

/* Build getopt's tables from ours. */
static void build_getopt_tables(const struct pt_optdef *defs, size_t n,
				struct option *longopts, char *shortopts)
{
	size_t nl = 0;
	char *s = shortopts;

	*s++ = ':'; /* report a missing argument as ':' */
	for (size_t i = 0; i < n; i++) {
		const struct pt_optdef *d = &defs[i];
		/* refused: take an argument if attached, never the next word */
		int has = (d->flags & (PT_OPTF_UNSUPPORTED | PT_OPTF_NOT_YET)) ? optional_argument :
			  d->has_arg ? required_argument : no_argument;

		if (d->short_name) {
			*s++ = d->short_name;
			if (has != no_argument)
				*s++ = ':';
			if (has == optional_argument)
				*s++ = ':';
		}
		for (int k = 0; k < 2; k++) {
			const char *ln = k ? d->long_alias : d->long_name;

			if (!ln)
				continue;
			longopts[nl].name = ln;
			longopts[nl].has_arg = has;
			longopts[nl].flag = NULL;
			longopts[nl].val = LONG_BASE + (int)i;
			nl++;
		}
	}
	*s = '\0';
	memset(&longopts[nl], 0, sizeof(longopts[nl]));
}

static const struct pt_optdef *find_short(const struct pt_optdef *defs, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (defs[i].short_name == c)
			return &defs[i];
	return NULL;
}

static int invalid(FILE *err, const struct pt_tool *tool, const char *what, const char *opt)
{
	return perr(err, " %s: %s '%s'\n Invalid Command or flag.\n"
		    " Please check command line and run again (%s -h lists the options).\n",
		    tool->name, what, opt, tool->name);
}

/* Map getopt's result to a table entry, or print why not. */
static const struct pt_optdef *resolve(int c, char **argv, const struct pt_tool *tool,
				       const struct pt_optdef *defs, size_t n,
				       char *name, size_t namelen, FILE *err)
{
	const struct pt_optdef *d = NULL;

	if (c == '?' || c == ':') {
		int o = optopt;

		if (o >= LONG_BASE && (size_t)(o - LONG_BASE) < n)
			snprintf(name, namelen, "--%s", defs[o - LONG_BASE].long_name);
		else if (o > 0 && o < LONG_BASE)
			snprintf(name, namelen, "-%c", o);
		if (c == ':')
			invalid(err, tool, "missing argument for", name);
		else if (o >= LONG_BASE)
			invalid(err, tool, "no argument allowed for", name);
		else if (o > 0)
			invalid(err, tool, "invalid option", name);
		else
			invalid(err, tool, "unrecognized or ambiguous option",
				optind > 0 ? argv[optind - 1] : "?");
		return NULL;
	}
	if (c >= LONG_BASE) {
		d = &defs[c - LONG_BASE];
		snprintf(name, namelen, "--%s", d->long_name);
	} else {
		d = find_short(defs, n, c);
		snprintf(name, namelen, "-%c", c);
	}
	if (!d) {
		invalid(err, tool, "invalid option", name);
		return NULL;
	}
	/* the tool first: upstream refuses these on the other tools whatever
	 * this build can do */
	if (d->id == PT_OPT_MCG && !(tool->option_groups & PT_OPTG_MCAST)) {
		fprintf(err, "MultiCast feature only available on SEND verb\n");
		return NULL;
	}
	if (d->groups && !(tool->option_groups & d->groups)) {
		fprintf(err, " option %s is not available in %s\n", name, tool->name);
		return NULL;
	}
	if (d->flags & PT_OPTF_UNSUPPORTED) {
		fprintf(err, " option %s is not supported by this build: %s\n", name, d->help);
		return NULL;
	}
	if (d->flags & PT_OPTF_NOT_YET) {
		fprintf(err, " option %s is not implemented yet: %s (plain verbs, planned;"
			" docs/option-parity.md)\n", name, d->help);
		return NULL;
	}
	return d;
}

int pt_parse_args_io(const struct pt_tool *tool, int argc, char **argv,
		     struct pt_params *out, FILE *out_stream, FILE *err_stream)
{
	struct option longopts[PT_MAX_LONGOPTS + 1];
	char shortopts[3 * 128 + 2];
	struct pt_parse_state st = { 0 };
	size_t n;
	const struct pt_optdef *defs = pt_optdefs(&n);

	pt_params_defaults(tool, out);
	build_getopt_tables(defs, n, longopts, shortopts);
	/* optind = 0 makes glibc re-initialise getopt completely. */
	optind = 0;
	opterr = 0;
	for (;;) {
		int longindex = -1;
		int c = getopt_long(argc, argv, shortopts, longopts, &longindex);
		const struct pt_optdef *d;
		char name[64] = "?";

		if (c == -1)
			break;
		d = resolve(c, argv, tool, defs, n, name, sizeof(name), err_stream);
		if (!d)
			return 1;
		if (d->id == PT_OPT_HELP) {
			pt_print_usage(tool, out_stream);
			return 1;
		}
		if (d->id == PT_OPT_VERSION) {
			fprintf(out_stream, "Version: %s\n", WIRE_VERSION);
			return 1;
		}
		if (apply(d, name, optarg, out, &st, err_stream))
			return 1;
	}
	if (argc - optind > 1)
		return perr(err_stream, " Invalid Command line. Please check command rerun\n");
	if (argc - optind == 1) {
		if (get_str(err_stream, "the server name", argv[optind], out->oob.servername,
			    sizeof(out->oob.servername)))
			return 1;
		out->oob.is_client = true;
	}
	return pt_options_check(out, &st, err_stream);
}

int pt_parse_args(const struct pt_tool *tool, int argc, char **argv, struct pt_params *out)
{
	return pt_parse_args_io(tool, argc, argv, out, stdout, stderr);
}
