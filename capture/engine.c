/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "engine.h"
#include "frame.h"

#define MAX_FRAME 65536
static const char *const fmt_ext[3] = { "pcap", "raw", "hdr" };

uint64_t cap_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t cap_wall_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int cap_engine_init(struct cap_engine *e, const struct cap_opts *o, const char *ts_kind,
		    volatile sig_atomic_t *stop)
{
	memset(e, 0, sizeof(*e));
	e->o = o;
	e->ts_kind = ts_kind;
	e->stop = stop;
	e->src = calloc(o->max_sources, sizeof(*e->src));
	e->scratch_len = MAX_FRAME + 64;
	e->scratch = malloc(e->scratch_len);
	if (!e->src || !e->scratch)
		return -1;
	if (o->roce && cap_psn_init(&e->psn, CAP_PSN_FLOWS))
		return -1;
	e->t0_ns = e->last_tick_ns = cap_now_ns();
	return 0;
}

static uint64_t watched_drops(const struct cap_engine *e)
{
	uint64_t n = 0;

	for (int i = 0; i < e->nwatch; i++)
		n += cap_netdev_rx_drops(e->watch[i]);
	return n;
}

void cap_engine_watch(struct cap_engine *e, const char *netdev)
{
	if (e->nwatch >= CAP_MAX_LIST)
		return;
	for (int i = 0; i < e->nwatch; i++)
		if (!strcmp(e->watch[i], netdev))
			return;
	e->watch_base += cap_netdev_rx_drops(netdev);
	e->watch[e->nwatch++] = netdev;
}

static bool wanted_group(const struct cap_opts *o, const struct cap_frame *f)
{
	if (o->roce || !o->ngroups)
		return true;
	for (int i = 0; i < o->ngroups; i++)
		if (o->groups[i].addr.s_addr == f->dst && (!o->groups[i].port || o->groups[i].port == f->dport))
			return true;
	return false;
}

static bool wanted_source(const struct cap_opts *o, uint32_t src)
{
	if (!o->nsources)
		return true;
	for (int i = 0; i < o->nsources; i++)
		if (o->sources[i].s_addr == src)
			return true;
	return false;
}

static int open_source(struct cap_engine *e, struct cap_source *s)
{
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN], path[512];

	inet_ntop(AF_INET, &s->src, a, sizeof(a));
	inet_ntop(AF_INET, &s->group, g, sizeof(g));
	for (int k = 0; k < 3; k++) {
		if (!(e->o->formats & (1u << k)))
			continue;
		snprintf(path, sizeof(path), "%s/%s-%s-%u.%s", e->o->outdir, a, g, s->port, fmt_ext[k]);
		if (cap_out_open(&s->out[k], path, k == 0 ? DLT_EN10MB : -1, e->o->snaplen,
				 MAX_FRAME + 16, !e->o->buffered)) {
			e->error = errno;
			snprintf(e->error_path, sizeof(e->error_path), "%s", path);
			return -1;
		}
	}
	return 0;
}

static struct cap_source *find_source(struct cap_engine *e, const struct cap_frame *f, int *err)
{
	struct cap_source *s;

	*err = 0;
	for (unsigned i = 0; i < e->nsrc; i++) {
		s = &e->src[i];
		if (s->src.s_addr == f->src && s->group.s_addr == f->dst && s->port == f->dport)
			return s;
	}
	if (e->nsrc >= e->o->max_sources) {
		e->drops.table_full++;
		return NULL;
	}
	s = &e->src[e->nsrc++];
	s->src.s_addr = f->src;
	s->group.s_addr = f->dst;
	s->port = f->dport;
	for (int k = 0; k < 3; k++)
		s->out[k].fd = -1;
	if (open_source(e, s))
		*err = -1;
	return s;
}

static int write_fail(struct cap_engine *e, struct cap_out *o)
{
	e->error = errno;
	snprintf(e->error_path, sizeof(e->error_path), "%s", o->path);
	return -1;
}

int cap_engine_packet(struct cap_engine *e, const struct cap_pkt *p)
{
	const struct cap_opts *o = e->o;
	const uint8_t *frame = p->hdr;
	size_t len = p->hdr_len + p->pay_len;
	struct cap_frame f;
	struct cap_source *s;
	int err;

	if (e->error)
		return -1;
	if (p->pay_len) {
		/* split receive: one contiguous frame for pcap and the parser */
		if (len > e->scratch_len) {
			e->drops.cut++;
			len = e->scratch_len;
		}
		memcpy(e->scratch, p->hdr, p->hdr_len);
		memcpy(e->scratch + p->hdr_len, p->pay, len - p->hdr_len);
		frame = e->scratch;
	}
	if (cap_frame_parse(frame, len, &f)) {
		e->drops.not_udp++;
		return 0;
	}
	if (!wanted_group(o, &f) || !wanted_source(o, f.src)) {
		e->drops.miss++;
		return 0;
	}
	s = find_source(e, &f, &err);
	if (err)
		return -1;
	if (!s)
		return 0;
	size_t app_off = f.app_off + p->app_skip;
	size_t app_len = f.app_len > p->app_skip + p->trailer ? f.app_len - p->app_skip - p->trailer : 0;
	const uint8_t *app = frame + app_off;
	uint64_t seq;

	if (o->seq.width) {
		if (cap_seq_read(&o->seq, app, app_len, &seq))
			cap_seq_update(&s->seq, o->seq.width, seq);
		else
			s->seq.short_pkts++;
	}
	if (o->roce)
		cap_psn_frame(&e->psn, frame, len, (uint32_t)(p->wire_len > len ? p->wire_len : len));
	s->packets++;
	s->bytes += p->wire_len;
	e->packets++;
	e->bytes += p->wire_len;
	if (s->out[0].buf) {
		size_t cap = len < o->snaplen ? len : o->snaplen;

		if (cap < p->wire_len && cap == o->snaplen)
			e->drops.cut++;
		cap_out_pcap(&s->out[0], p->ts_ns, frame, cap, p->wire_len > len ? p->wire_len : len);
		if (cap_out_commit(&s->out[0], 0))
			return write_fail(e, &s->out[0]);
	}
	size_t hlen = app_off + o->app_header;

	if (hlen > len)
		hlen = len;
	if (s->out[1].buf) {
		size_t skip = o->app_header < app_len ? o->app_header : app_len;

		cap_out_bytes(&s->out[1], app + skip, app_len - skip);
		if (cap_out_commit(&s->out[1], 0))
			return write_fail(e, &s->out[1]);
	}
	if (s->out[2].buf) {
		cap_out_bytes(&s->out[2], frame, hlen);
		if (cap_out_commit(&s->out[2], 0))
			return write_fail(e, &s->out[2]);
	}
	return 0;
}

static uint64_t lost_total(const struct cap_engine *e, uint64_t *late)
{
	uint64_t lost = 0;

	*late = 0;
	for (unsigned i = 0; i < e->nsrc; i++) {
		lost += e->src[i].seq.lost;
		*late += e->src[i].seq.late;
	}
	return lost;
}

static uint64_t stalls_total(const struct cap_engine *e)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < e->nsrc; i++)
		for (int k = 0; k < 3; k++)
			n += e->src[i].out[k].stalls;
	return n;
}

static void print_line(struct cap_engine *e, FILE *to, const char *what, double secs, double rate_pps,
		       double rate_mbps)
{
	uint64_t late, lost = lost_total(e, &late);
	const struct cap_drops *d = &e->drops;

	fprintf(to, "%s %.1f s: %llu pkts %llu B (%.0f pkt/s %.2f Mb/s) lost %llu late %llu | drops: "
		"netdev %llu kernel %llu freeze %llu starved %llu no-wqe %llu miss %llu not-udp %llu table-full %llu cut %llu "
		"write-stalls %llu | polls/pkt %.2f\n",
		what, secs, (unsigned long long)e->packets, (unsigned long long)e->bytes, rate_pps, rate_mbps,
		(unsigned long long)lost, (unsigned long long)late, (unsigned long long)d->netdev,
		(unsigned long long)d->kernel,
		(unsigned long long)d->ring_freeze, (unsigned long long)d->starved,
		(unsigned long long)d->no_wqe, (unsigned long long)d->miss, (unsigned long long)d->not_udp,
		(unsigned long long)d->table_full, (unsigned long long)d->cut,
		(unsigned long long)stalls_total(e),
		e->packets ? (double)e->polls / (double)e->packets : 0.0);
	if (e->o->roce) {
		struct cap_psn_totals t;

		cap_psn_totals(&e->psn, &t);
		fprintf(to, "%s psn: %u flows, gaps %llu (%llu PSNs) late %llu retransmits %llu missing %llu "
			"beyond-window %llu resyncs %llu undecoded %llu table-full %llu\n", what, e->psn.nflows,
			(unsigned long long)t.gaps, (unsigned long long)t.gap_psns, (unsigned long long)t.late,
			(unsigned long long)t.retransmits, (unsigned long long)t.missing,
			(unsigned long long)t.beyond_window, (unsigned long long)t.resyncs,
			(unsigned long long)e->psn.undecoded, (unsigned long long)e->psn.table_full);
	}
	fflush(to);
}

void cap_engine_tick(struct cap_engine *e)
{
	uint64_t now = cap_now_ns();
	double dt = (double)(now - e->last_tick_ns) / 1e9;

	if (dt < 1.0)
		return;
	e->drops.netdev = watched_drops(e) - e->watch_base;
	if (!e->o->quiet)
		print_line(e, stdout, "rdmacap:", (double)(now - e->t0_ns) / 1e9,
			   (double)(e->packets - e->last_pkts) / dt,
			   (double)(e->bytes - e->last_bytes) * 8 / dt / 1e6);
	e->last_tick_ns = now;
	e->last_pkts = e->packets;
	e->last_bytes = e->bytes;
}

bool cap_engine_done(const struct cap_engine *e)
{
	if (*e->stop || e->error)
		return true;
	if (e->o->count && e->packets >= e->o->count)
		return true;
	return e->o->duration > 0 && (double)(cap_now_ns() - e->t0_ns) / 1e9 >= e->o->duration;
}

static json_t *psn_json(const struct cap_psn *t)
{
	json_t *flows = json_array();
	struct cap_psn_totals sum;
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < t->nflows; i++) {
		const struct cap_psn_flow *f = &t->flows[i];

		roce_addr_text(f->ip_version, f->src, a, sizeof(a));
		roce_addr_text(f->ip_version, f->dst, b, sizeof(b));
		json_array_append_new(flows, json_pack("{s:s, s:s, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"src", a, "dst", b, "dest_qp", (json_int_t)f->dest_qp,
			"transport", f->transport == ROCE_TR_UC ? "UC" : "RC",
			"packets", (json_int_t)f->packets, "first_psn", (json_int_t)f->first_psn,
			"next_psn", (json_int_t)f->next_psn, "gaps", (json_int_t)f->gaps,
			"gap_psns", (json_int_t)f->gap_psns, "late", (json_int_t)f->late,
			"retransmits", (json_int_t)f->retransmits, "missing", (json_int_t)cap_psn_missing(f),
			"beyond_window", (json_int_t)f->beyond_window, "resyncs", (json_int_t)f->resyncs));
	}
	cap_psn_totals(t, &sum);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o}",
		"path_mtu", (json_int_t)t->pmtu, "gaps", (json_int_t)sum.gaps, "gap_psns", (json_int_t)sum.gap_psns,
		"late", (json_int_t)sum.late, "retransmits", (json_int_t)sum.retransmits,
		"missing", (json_int_t)sum.missing, "beyond_window", (json_int_t)sum.beyond_window,
		"resyncs", (json_int_t)sum.resyncs, "undecoded", (json_int_t)t->undecoded,
		"table_full", (json_int_t)t->table_full, "flows", flows);
}

static json_t *summary_json(struct cap_engine *e, double secs)
{
	const struct cap_drops *d = &e->drops;
	uint64_t late, lost = lost_total(e, &late);
	json_t *srcs = json_array();
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];

	for (unsigned i = 0; i < e->nsrc; i++) {
		struct cap_source *s = &e->src[i];
		json_t *files = json_array();

		inet_ntop(AF_INET, &s->src, a, sizeof(a));
		inet_ntop(AF_INET, &s->group, g, sizeof(g));
		for (int k = 0; k < 3; k++)
			if (e->o->formats & (1u << k)) {
				const char *slash = strrchr(s->out[k].path, '/');

				json_array_append_new(files, json_string(slash ? slash + 1 : s->out[k].path));
			}
		json_array_append_new(srcs, json_pack("{s:s, s:s, s:i, s:I, s:I, s:b, s:I, s:I, s:I, s:I, s:o}",
			"source", a, "group", g, "port", (int)s->port,
			"packets", (json_int_t)s->packets, "bytes", (json_int_t)s->bytes,
			"seq_seen", s->seq.started, "first_seq", (json_int_t)s->seq.first,
			"lost", (json_int_t)s->seq.lost, "late", (json_int_t)s->seq.late,
			"seq_short", (json_int_t)s->seq.short_pkts, "files", files));
	}
	unsigned nfiles = 0, ndirect = 0;

	for (unsigned i = 0; i < e->nsrc; i++)
		for (int k = 0; k < 3; k++)
			if (e->o->formats & (1u << k)) {
				nfiles++;
				ndirect += e->src[i].out[k].direct_io;
			}
	return json_pack("{s:s, s:s, s:f, s:I, s:I, s:I, s:I, s:f, s:I, s:s, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I},"
			 " s:o, s:s?}",
		"backend", cap_backend_name(e->o->backend), "timestamps", e->ts_kind, "seconds", secs,
		"packets", (json_int_t)e->packets, "bytes", (json_int_t)e->bytes,
		"lost", (json_int_t)lost, "late", (json_int_t)late,
		"polls_per_packet", e->packets ? (double)e->polls / (double)e->packets : 0.0,
		"sources_count", (json_int_t)e->nsrc,
		/* O_DIRECT is used where the file system takes it (rdmacap(8)) */
		"files_io", !nfiles ? "none" : !ndirect ? "buffered" : ndirect == nfiles ? "direct" : "mixed",
		"drops", "netdev", (json_int_t)d->netdev, "kernel", (json_int_t)d->kernel, "ring_freeze", (json_int_t)d->ring_freeze,
		"starved", (json_int_t)d->starved, "device_out_of_buffer", (json_int_t)d->no_wqe,
		"steering_miss", (json_int_t)d->miss,
		"not_udp", (json_int_t)d->not_udp, "table_full", (json_int_t)d->table_full,
		"cut", (json_int_t)d->cut, "write_stalls", (json_int_t)stalls_total(e),
		"sources", srcs, "error", e->error ? strerror(e->error) : NULL);
}

static void print_psn_flows(const struct cap_psn *t)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < t->nflows; i++) {
		const struct cap_psn_flow *f = &t->flows[i];

		roce_addr_text(f->ip_version, f->src, a, sizeof(a));
		roce_addr_text(f->ip_version, f->dst, b, sizeof(b));
		printf("rdmacap: requests %s -> %s QP 0x%06x (%s): %llu pkts PSN 0x%06x..0x%06x gaps %llu "
		       "(%llu PSNs) late %llu retransmits %llu missing %llu\n", a, b, f->dest_qp,
		       f->transport == ROCE_TR_UC ? "UC" : "RC", (unsigned long long)f->packets, f->first_psn,
		       roce_psn_add(f->next_psn, -1), (unsigned long long)f->gaps,
		       (unsigned long long)f->gap_psns, (unsigned long long)f->late,
		       (unsigned long long)f->retransmits, (unsigned long long)cap_psn_missing(f));
	}
}

int cap_engine_finish(struct cap_engine *e)
{
	double secs = (double)(cap_now_ns() - e->t0_ns) / 1e9;
	char a[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN], path[512];
	int rc = 0;

	e->drops.netdev = watched_drops(e) - e->watch_base;
	for (unsigned i = 0; i < e->nsrc; i++)
		for (int k = 0; k < 3; k++)
			if (cap_out_close(&e->src[i].out[k]) && !e->error) {
				e->error = errno;
				snprintf(e->error_path, sizeof(e->error_path), "%s", e->src[i].out[k].path);
			}
	print_line(e, stdout, "rdmacap: total", secs, secs > 0 ? (double)e->packets / secs : 0,
		   secs > 0 ? (double)e->bytes * 8 / secs / 1e6 : 0);
	printf("rdmacap: timestamps from the %s clock (%s)\n", e->ts_kind,
	       strcmp(e->ts_kind, "host") ? "the device stamps" : "the device does not stamp");
	for (unsigned i = 0; i < e->nsrc; i++) {
		struct cap_source *s = &e->src[i];

		inet_ntop(AF_INET, &s->src, a, sizeof(a));
		inet_ntop(AF_INET, &s->group, g, sizeof(g));
		printf("rdmacap: source %s group %s port %u: %llu pkts %llu B", a, g, s->port,
		       (unsigned long long)s->packets, (unsigned long long)s->bytes);
		if (e->o->seq.width)
			printf(" seq %llu.. lost %llu late %llu", (unsigned long long)s->seq.first,
			       (unsigned long long)s->seq.lost, (unsigned long long)s->seq.late);
		printf("\n");
	}
	if (e->o->roce)
		print_psn_flows(&e->psn);
	if (e->error) {
		fprintf(stderr, "rdmacap: write to %s failed: %s; capture stopped, the files hold every "
			"packet before it (whole records)\n", e->error_path, strerror(e->error));
		rc = 1;
	}
	json_t *j = summary_json(e, secs);

	if (e->o->roce)
		json_object_set_new(j, "psn", psn_json(&e->psn));

	if (e->o->json && json_dump_file(j, e->o->json, JSON_INDENT(1))) {
		fprintf(stderr, "rdmacap: cannot write %s\n", e->o->json);
		rc = 1;
	}
	/* beside the files: which clock stamped them, and what was lost */
	snprintf(path, sizeof(path), "%s/capture.json", e->o->outdir);
	if (json_dump_file(j, path, JSON_INDENT(1)) && !e->error) {
		fprintf(stderr, "rdmacap: cannot write %s\n", path);
		rc = 1;
	}
	json_decref(j);
	cap_psn_free(&e->psn);
	free(e->src);
	free(e->scratch);
	e->src = NULL;
	e->scratch = NULL;
	return rc;
}
