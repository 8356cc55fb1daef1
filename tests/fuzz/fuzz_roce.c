/* SPDX-License-Identifier: BSD-2-Clause */
/* The RoCE v2 decoder behind rdmawire (capture/roce/roce_decode.c) on any
 * bytes, and what is built from what it accepts: flows and their figures
 * (roce_wire.c), the join with a trace (roce_join.c) and the reports
 * (roce_report.c).
 * fuzz-sources: capture/psn.c capture/roce/roce_decode.c capture/roce/roce_wire.c capture/roce/roce_join.c capture/roce/roce_report.c plugin/recorder/wrtrace_stats.c plugin/recorder/wrtrace_hist.c plugin/recorder/wrtrace_read.c plugin/recorder/wrtrace_write.c
 * fuzz-libs: -ljansson -lpcap -lm
 * fuzz-flags: -max_len=16384 -rss_limit_mb=512
 *
 * Input: byte 0 picks the link type (0 Ethernet, 1 Linux cooked, 2 Linux
 * cooked v2, else an unknown one); then frames, each a 2-byte big-endian
 * length and that many bytes (the last may be short: its caplen is what is
 * left, its wire length the one given). Properties:
 * - every frame gets one verdict; only the bytes given are read (each frame
 *   is a heap copy of exactly its caplen, so ASan sees any read past it);
 * - an accepted packet is UDP 4791, IPv4 or IPv6, its pad 0..3, its class
 *   the one its opcode says, its payload no longer than the frame;
 * - flows account for every accepted packet (packets + UD + CNPs = RoCE);
 *   a request flow's PSN index is a permutation that finds each packet by
 *   its PSN; retransmissions are fewer than its packets; pairs are mutual;
 * - a trace of WRs on the QPNs seen joins: found + missing = WRs, each
 *   found WR's PSN range inside the flow's span; the text and JSON reports
 *   are written without error;
 * - rdmacap's live PSN accounting (capture/psn.c), fed the same packets,
 *   gives every request flow the figures rdmawire gives it afterwards
 *   (packets, gaps, PSNs jumped, late, retransmitted, missing) whenever no
 *   READ request took part (their spans rest on the MTU each learns its
 *   own way), no packet fell behind the live window and the flow did not
 *   go round the PSN space (went_round). */
#include <unistd.h>
#include "fuzz.h"
#include "capture/roce/roce_join.h"
#include "capture/roce/roce_report.h"
#include "capture/psn.h"

static const int links[] = { ROCE_LINK_ETHERNET, ROCE_LINK_LINUX_SLL, ROCE_LINK_LINUX_SLL2, 247 };

static void check_pkt(const struct roce_pkt *k, size_t caplen, uint32_t wire)
{
	FUZZ_ASSERT(k->dport == ROCE_UDP_PORT);
	FUZZ_ASSERT(k->ip_version == 4 || k->ip_version == 6);
	FUZZ_ASSERT(k->pad <= 3);
	FUZZ_ASSERT(k->frame_len == wire);
	FUZZ_ASSERT(k->payload < 65536);
	(void)caplen;
	if (k->opcode == ROCE_OP_CNP)
		FUZZ_ASSERT(k->cls == ROCE_CNP);
	if (k->cls == ROCE_RESPONSE)
		FUZZ_ASSERT((k->opcode & 0x1f) >= 0x0d && (k->opcode & 0x1f) <= 0x12);
	if (k->has_aeth)
		FUZZ_ASSERT(k->cls == ROCE_RESPONSE);
}

static void check_flows(const struct roce_capture *c)
{
	uint64_t pkts = 0;

	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];

		FUZZ_ASSERT(f->n > 0);
		pkts += f->n;
		if (f->peer >= 0) {
			FUZZ_ASSERT((size_t)f->peer < c->nflows && c->flows[f->peer].peer == (long)i);
			FUZZ_ASSERT(c->flows[f->peer].cls != f->cls);
		}
		if (f->cls != ROCE_REQUEST)
			continue;
		FUZZ_ASSERT(f->retransmits < f->n);
		char *seen = calloc(f->n, 1);

		FUZZ_ASSERT(seen);
		for (size_t k = 0; k < f->n; k++) {
			size_t at, n;

			FUZZ_ASSERT(f->by_psn[k] < f->n && !seen[f->by_psn[k]]);
			seen[f->by_psn[k]] = 1;
			n = roce_flow_find_psn(f, f->p[k].psn, &at);
			FUZZ_ASSERT(n >= 1);
			bool found = false;

			for (size_t m = 0; m < n; m++)
				found |= f->by_psn[at + m] == k;
			FUZZ_ASSERT(found);
		}
		free(seen);
	}
	FUZZ_ASSERT(pkts + c->ud + c->cnps == c->roce);
}

/* WRs of every opcode kind on the first two QPNs seen (as local QPNs). */
static void check_join(const struct roce_capture *c, const uint8_t *data, size_t size)
{
	struct wrt_run run = { 0 };
	struct wrt_trace t = { .runs = &run, .nruns = 1 };
	struct wrt_rec recs[24];
	struct roce_join j;
	struct roce_psn_hint h = { .qpn = c->nflows ? c->flows[0].dest_qp : 0, .psn = size > 3 ? data[3] : 0 };
	char err[128];
	FILE *null = fopen("/dev/null", "w");

	FUZZ_ASSERT(null);
	snprintf(run.meta.qpns, sizeof(run.meta.qpns), "0x%x,0x%x", c->nflows ? c->flows[0].dest_qp : 1,
		 c->nflows > 1 ? c->flows[1].dest_qp : 2);
	run.meta.num_qps = 2;
	run.recs = recs;
	run.n = run.cap = sizeof(recs) / sizeof(recs[0]);
	for (size_t i = 0; i < run.n; i++) {
		uint8_t b = size > i + 4 ? data[i + 4] : (uint8_t)i;

		recs[i] = (struct wrt_rec){ .qp = b & 1, .seq = i, .opcode = (uint8_t)((b >> 1) % 8),
					    .bytes = (uint32_t)b * 997, .t_post = 1000 + i, .t_comp = 5000 + i,
					    .status = (uint8_t)(b >> 6),
					    .flags = (uint8_t)(WRT_POSTED | (b & 0x20 ? WRT_DONE : 0)) };
		if (recs[i].opcode == PT_PLUGIN_OP_RECV)
			recs[i].flags |= WRT_RECV;
	}
	struct roce_join_opts jo = { .hints = &h, .nhints = 1, .has_local = size > 2 && data[2] & 1,
				     .local_version = 4, .local = { 198, 18, 0, 1 } };

	FUZZ_ASSERT(roce_join(c, &t, &jo, &j, err, sizeof(err)) == 0);
	FUZZ_ASSERT(j.n == run.n && j.found + j.missing == j.n);
	for (size_t i = 0; i < j.n; i++) {
		const struct roce_wr *w = &j.w[i];

		if (!w->found)
			continue;
		FUZZ_ASSERT(w->req_flow >= 0 && (size_t)w->req_flow < c->nflows);
		FUZZ_ASSERT(w->packets >= 1 && w->retransmits < w->packets);
	}
	struct roce_report_opts o = { .trace = &t, .trace_path = "fuzz" };

	if (size > 1 && data[1] & 1) {      /* the reports (slow): every other input */
		roce_report_text(null, c, &j, &o);
		FUZZ_ASSERT(roce_report_json(null, c, &j, &o) == 0);
	}
	roce_join_free(&j);
	fclose(null);
}

/* Whether a flow went round the PSN space: a PSN seen before comes at or
 * ahead of the next expected one (2^23 or more behind it, or a whole
 * 2^24 later). A 24-bit PSN then names two packets: rdmawire, which has
 * the whole capture, calls it a retransmission; the live accounting, which
 * has the last CAP_PSN_WINDOW PSNs, a new PSN ahead. RC keeps fewer than
 * 2^23 PSNs outstanding, so only a flow longer than the PSN space (or
 * made up) does this; docs/capture-roce.md says how each counts it. */
static bool went_round(const struct roce_capture *c, const struct roce_flow *f)
{
	uint32_t next = f->p[0].psn;

	for (size_t i = 0; i < f->n; i++) {
		const struct roce_rec *r = &f->p[i];
		int32_t d = roce_psn_diff(r->psn, next);

		if (i && d >= 0 && r->retransmit)
			return true;
		if (d >= 0)
			next = roce_psn_add(r->psn, (int32_t)roce_psns_of(c, r));
	}
	return false;
}

static void check_live(const struct roce_capture *c, const struct cap_psn *live, bool reads)
{
	if (reads || live->table_full)
		return;
	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];
		const struct cap_psn_flow *l = NULL;
		size_t alen = f->ip_version == 4 ? 4 : 16;

		if (f->cls != ROCE_REQUEST)
			continue;
		for (unsigned k = 0; k < live->nflows && !l; k++)
			if (live->flows[k].dest_qp == f->dest_qp && live->flows[k].ip_version == f->ip_version &&
			    !memcmp(live->flows[k].src, f->src, alen) && !memcmp(live->flows[k].dst, f->dst, alen))
				l = &live->flows[k];
		FUZZ_ASSERT(l && l->packets == f->n);
		if (l->beyond_window || went_round(c, f))
			continue;
		FUZZ_ASSERT(l->gaps == f->gaps && l->gap_psns == f->gap_psns);
		FUZZ_ASSERT(l->late == f->late && l->retransmits == f->retransmits);
		FUZZ_ASSERT(cap_psn_missing(l) == f->missing);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_capture c = { 0 };
	struct cap_psn live;
	bool reads = false;
	size_t off = 1;
	uint32_t frame = 0;

	if (!size)
		return 0;
	c.path = "fuzz";
	c.link = links[data[0] % 4];
	FUZZ_ASSERT(cap_psn_init(&live, CAP_PSN_FLOWS) == 0);
	while (off + 2 <= size) {
		uint32_t wire = (uint32_t)data[off] << 8 | data[off + 1];
		size_t cap = size - off - 2 < wire ? size - off - 2 : wire;
		char *copy = fuzz_dup(data + off + 2, cap);
		struct roce_pkt k;
		enum roce_verdict v = roce_decode(c.link, (const uint8_t *)copy, cap, wire, &k);

		FUZZ_ASSERT(v == ROCE_OK || v == ROCE_NOT_ROCE || v == ROCE_TRUNCATED || v == ROCE_MALFORMED);
		c.frames++;
		if (v == ROCE_OK) {
			check_pkt(&k, cap, wire);
			frame++;
			FUZZ_ASSERT(roce_capture_add(&c, &k, 1000000ull * frame, frame) == 0);
			cap_psn_packet(&live, &k);
			reads |= k.cls == ROCE_REQUEST && roce_op_is_read_request(k.opcode);
		}
		free(copy);
		off += 2 + cap;
	}
	FUZZ_ASSERT(roce_capture_finish(&c) == 0);
	check_flows(&c);
	check_live(&c, &live, reads);
	cap_psn_free(&live);
	check_join(&c, data, size);
	roce_capture_free(&c);
	return 0;
}
