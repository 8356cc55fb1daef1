/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmawire's output. Times in the text are relative: the capture's from
 * its first RoCE packet, a WR's from its post (the fitted clock offset). */
#include <inttypes.h>
#include <jansson.h>
#include <string.h>
#include "roce_report.h"

static const char *cls_name(enum roce_class k)
{
	return k == ROCE_REQUEST ? "requests" : k == ROCE_RESPONSE ? "responses" : "other";
}

void roce_nak_cause(const struct roce_capture *c, const struct roce_flow *resp,
		    const struct roce_rec *nak, struct roce_nak_cause *o)
{
	const struct roce_flow *q = resp->peer >= 0 ? &c->flows[resp->peer] : NULL;
	size_t at, n;

	memset(o, 0, sizeof(*o));
	if (!q)
		return;
	n = roce_flow_find_psn(q, nak->psn, &at);
	o->named_txs = (uint32_t)n;
	for (size_t k = 0; k < n; k++)
		if (q->p[q->by_psn[at + k]].t_ns <= nak->t_ns) {
			o->named = &q->p[q->by_psn[at + k]];
			o->named_tx = (uint32_t)k + 1;
		}
	for (size_t k = 0; k < q->n && q->p[k].t_ns <= nak->t_ns; k++)
		o->latest = &q->p[k];
}

static double rel_ms(const struct roce_capture *c, uint64_t t)
{
	return (double)(t - c->first_ns) / 1e6;
}

static void print_flows(FILE *out, const struct roce_capture *c)
{
	char op[32];

	fprintf(out, "%-44s %-9s %8s %11s %8s %8s %7s %5s %7s %4s %4s %4s %4s %4s %4s %9s\n", "flow",
		"kind", "packets", "bytes", "firstPSN", "lastPSN", "retrans", "gaps", "ACKs", "rnr",
		"seq", "inv", "acc", "op", "oth", "RNRwait");
	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];
		char name[128];

		roce_flow_name(f, name, sizeof(name));
		fprintf(out, "%-44s %-9s %8zu %11" PRIu64 " %08x %08x %7" PRIu64 " %5" PRIu64 " %7" PRIu64,
			name, cls_name(f->cls), f->n, f->bytes, f->first_psn, f->last_psn, f->retransmits,
			f->gaps, f->acks);
		for (int k = ROCE_NAK_RNR; k < ROCE_AETH_KINDS; k++)
			fprintf(out, " %4" PRIu64, f->naks[k]);
		fprintf(out, " %7.2fms\n", (double)f->rnr_wait_us / 1e3);
	}
	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];
		char name[128];

		roce_flow_name(f, name, sizeof(name));
		if (f->cls == ROCE_REQUEST)
			fprintf(out, "%s: %" PRIu64 " messages, PSN 0x%06x..0x%06x, %" PRIu64 " PSNs jumped over (%"
				PRIu64 " came late), %" PRIu64 " never seen, answered by %s\n", name, f->messages,
				f->start_psn, roce_psn_add(f->next_psn, -1), f->gap_psns, f->late, f->missing,
				f->peer >= 0 ? "the responses below" : "no response flow in the capture");
		if (f->reframed) {
			const struct roce_rec *x = NULL;

			for (size_t k = 0; k < f->n && !x; k++)
				if (f->p[k].frame == f->reframed_frame)
					x = &f->p[k];
			fprintf(out, "%s: %" PRIu64 " PSNs retransmitted with another opcode or length than first "
				"sent (message boundaries moved), the first in frame %u (%s, PSN 0x%06x, %u B)\n",
				name, f->reframed, f->reframed_frame,
				x ? roce_opcode_name(x->opcode, op, sizeof(op)) : "?", x ? x->psn : 0,
				x ? x->payload : 0);
		}
		if (f->retrans_psns.n) {
			fprintf(out, "%s: retransmitted PSNs", name);
			for (size_t k = 0; k < f->retrans_psns.n && k < 16; k++) {
				fprintf(out, "%s0x%06x", k ? ", " : " ", f->retrans_psns.r[k][0]);
				if (f->retrans_psns.r[k][1] != f->retrans_psns.r[k][0])
					fprintf(out, "-0x%06x", f->retrans_psns.r[k][1]);
			}
			fprintf(out, "%s\n", f->retrans_psns.n > 16 ? ", ..." : "");
		}
	}
}

static void print_naks(FILE *out, const struct roce_capture *c)
{
	unsigned shown = 0;
	char op[32], op2[32];

	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];

		for (size_t k = 0; k < f->n && f->cls == ROCE_RESPONSE; k++) {
			const struct roce_rec *r = &f->p[k];
			enum roce_aeth_kind kind;
			struct roce_nak_cause cause;
			char name[128];

			if (!r->has_aeth || (kind = roce_aeth_kind(r->syndrome)) == ROCE_ACK)
				continue;
			if (++shown > 20)
				continue;
			roce_flow_name(f, name, sizeof(name));
			roce_nak_cause(c, f, r, &cause);
			fprintf(out, "NAK %s (syndrome 0x%02x) frame %u at %.3f ms, %s, PSN 0x%06x",
				roce_aeth_kind_name(kind), r->syndrome, r->frame, rel_ms(c, r->t_ns), name, r->psn);
			if (kind == ROCE_NAK_RNR)
				fprintf(out, ", wait %u us", roce_rnr_wait_us(r->syndrome));
			if (cause.named)
				fprintf(out, ": answers frame %u (%s, PSN 0x%06x, transmission %u of %u, %.3f ms before)",
					cause.named->frame, roce_opcode_name(cause.named->opcode, op, sizeof(op)),
					cause.named->psn, cause.named_tx, cause.named_txs,
					(double)(r->t_ns - cause.named->t_ns) / 1e6);
			else
				fprintf(out, ": no request with that PSN before it in the capture");
			if (cause.latest && cause.latest != cause.named)
				fprintf(out, "; latest request before it: frame %u (%s, PSN 0x%06x%s)",
					cause.latest->frame, roce_opcode_name(cause.latest->opcode, op2, sizeof(op2)),
					cause.latest->psn, cause.latest->retransmit ? ", a retransmission" : "");
			fputc('\n', out);
		}
	}
	if (shown > 20)
		fprintf(out, "(%u NAKs more, see --json)\n", shown - 20);
}

static bool notable(const struct roce_wr *w)
{
	uint32_t naks = 0;

	for (int k = 0; k < ROCE_AETH_KINDS; k++)
		naks += w->naks[k];
	return !w->found || !w->fits || w->retransmits || naks || (w->done && w->status);
}

static void fmt_ms(char *b, size_t n, bool have, uint64_t t, uint64_t from)
{
	if (have)
		snprintf(b, n, "%.3f", ((double)(int64_t)(t - from)) / 1e6);
	else
		snprintf(b, n, "-");
}

static void print_wr_line(FILE *out, const struct roce_join *j, const struct roce_wr *w)
{
	uint64_t post = roce_wr_to_capture(j, w->t_post);
	char out_s[24], ack_s[24], comp_s[24], status[8];
	uint32_t naks = 0;

	for (int k = 0; k < ROCE_AETH_KINDS; k++)
		naks += w->naks[k];
	snprintf(status, sizeof(status), "%s", !w->done ? "-" : w->status ? "" : "ok");
	if (w->done && w->status)
		snprintf(status, sizeof(status), "%u", w->status);
	fmt_ms(out_s, sizeof(out_s), w->t_first_out && w->posted, w->t_first_out, post);
	fmt_ms(ack_s, sizeof(ack_s), w->t_ack && w->posted, w->t_ack, post);
	fmt_ms(comp_s, sizeof(comp_s), w->done && w->posted, w->t_comp, w->t_post);
	fprintf(out, "%3u %3u %6" PRIu64 " %-8s %8u %6s %06x-%06x %5u %5u %10s %10s %10s %4u%s%s\n", w->run,
		w->qp, w->seq, wrt_opcode_name(w->opcode), w->bytes, status, w->psn_first, w->psn_last,
		w->packets, w->retransmits, out_s, ack_s, comp_s, naks, w->found ? "" : "  no packets",
		w->found && !w->fits ? "  does not fit the wire" : "");
}

static void print_join(FILE *out, const struct roce_capture *c, const struct roce_join *j,
		       const struct roce_report_opts *o)
{
	const struct wrt_meta *m = o->trace->nruns ? &o->trace->runs[0].meta : NULL;
	size_t shown = 0, slow = SIZE_MAX;
	int64_t slow_ns = -1;

	(void)c;
	fprintf(out, "\ntrace %s: %zu WRs", o->trace_path, j->n);
	if (m)
		fprintf(out, " (%s %s %s, %" PRIu64 " B, QPNs %s)", m->tool, wrt_conn_name(m->conn),
			wrt_role_name(m->role), m->msg_size, m->qpns[0] ? m->qpns : "-");
	fprintf(out, ": %" PRIu64 " with packets, %" PRIu64 " without, %" PRIu64 " not fitting the wire, "
		"%" PRIu64 " with retransmissions, %" PRIu64 " with NAKs, %" PRIu64 " failed\n", j->found,
		j->missing, j->unfit, j->with_retransmits, j->with_naks, j->failed);
	if (j->why_missing[0])
		fprintf(out, "without packets: %s\n", j->why_missing);
	if (j->has_offset)
		fprintf(out, "clock: capture = trace %+.3f ms (consistent from %+.3f to %+.3f ms)\n",
			(double)j->offset_ns / 1e6, (double)j->offset_lo_ns / 1e6, (double)j->offset_hi_ns / 1e6);
	for (size_t i = 0; i < j->n; i++)
		if (j->w[i].done && j->w[i].posted && (int64_t)(j->w[i].t_comp - j->w[i].t_post) > slow_ns) {
			slow_ns = (int64_t)(j->w[i].t_comp - j->w[i].t_post);
			slow = i;
		}
	fprintf(out, "run  qp    seq opcode      bytes status PSN range     pkts rexmt    out(ms)    ack(ms)   "
		"comp(ms) naks\n");
	for (size_t i = 0; i < j->n; i++) {
		if (!o->all_wrs && !notable(&j->w[i]) && i != slow)
			continue;
		if (!o->all_wrs && ++shown > 30)
			continue;
		print_wr_line(out, j, &j->w[i]);
	}
	if (!o->all_wrs && shown > 30)
		fprintf(out, "(%zu notable WRs more; --all prints every WR, --json too)\n", shown - 30);
	else if (!o->all_wrs)
		fprintf(out, "(the notable WRs and the slowest; --all prints every WR)\n");
}

void roce_report_text(FILE *out, const struct roce_capture *c, const struct roce_join *j,
		      const struct roce_report_opts *o)
{
	fprintf(out, "rdmawire %s: %" PRIu64 " frames, %" PRIu64 " RoCE v2 (%" PRIu64 " UD, %" PRIu64
		" CNP), %" PRIu64 " other, %" PRIu64 " truncated, %" PRIu64 " malformed; path MTU %u; %.3f ms; %s stamps\n",
		c->path ? c->path : "-", c->frames, c->roce, c->ud, c->cnps, c->other, c->truncated,
		c->malformed, c->pmtu, c->roce ? (double)(c->last_ns - c->first_ns) / 1e6 : 0.0,
		c->nanosecond ? "ns" : "us");
	print_flows(out, c);
	print_naks(out, c);
	if (j && o->trace)
		print_join(out, c, j, o);
}

/* ---------------------------------------------------------------- JSON -- */

static json_t *flow_json(const struct roce_capture *c, const struct roce_flow *f)
{
	char s[64], d[64], op[32];
	json_t *o, *naks = json_object(), *rp = json_array(), *nl = json_array();

	roce_addr_text(f->ip_version, f->src, s, sizeof(s));
	roce_addr_text(f->ip_version, f->dst, d, sizeof(d));
	for (int k = ROCE_NAK_RNR; k < ROCE_AETH_KINDS; k++)
		json_object_set_new(naks, roce_aeth_kind_name((enum roce_aeth_kind)k), json_integer((json_int_t)f->naks[k]));
	for (size_t k = 0; k < f->retrans_psns.n; k++)
		json_array_append_new(rp, json_pack("[ii]", (json_int_t)f->retrans_psns.r[k][0],
						    (json_int_t)f->retrans_psns.r[k][1]));
	for (size_t k = 0; k < f->n && f->cls == ROCE_RESPONSE; k++) {
		const struct roce_rec *r = &f->p[k];
		struct roce_nak_cause cz;
		enum roce_aeth_kind kind;
		json_t *n;

		if (!r->has_aeth || (kind = roce_aeth_kind(r->syndrome)) == ROCE_ACK)
			continue;
		roce_nak_cause(c, f, r, &cz);
		n = json_pack("{s:s,s:i,s:i,s:i,s:f}", "kind", roce_aeth_kind_name(kind), "syndrome",
			      (json_int_t)r->syndrome, "frame", (json_int_t)r->frame, "psn", (json_int_t)r->psn,
			      "t_ms", rel_ms(c, r->t_ns));
		if (cz.named)
			json_object_set_new(n, "answers", json_pack("{s:i,s:s,s:i,s:i,s:b}", "frame",
				(json_int_t)cz.named->frame, "opcode", roce_opcode_name(cz.named->opcode, op, sizeof(op)),
				"transmission", (json_int_t)cz.named_tx, "transmissions", (json_int_t)cz.named_txs,
				"retransmission", cz.named->retransmit));
		if (cz.latest)
			json_object_set_new(n, "latest_request", json_pack("{s:i,s:i,s:b}", "frame",
				(json_int_t)cz.latest->frame, "psn", (json_int_t)cz.latest->psn,
				"retransmission", cz.latest->retransmit));
		json_array_append_new(nl, n);
	}
	o = json_pack("{s:s,s:s,s:i,s:s,s:i,s:I,s:I,s:i,s:i,s:i,s:i,s:I,s:I,s:o,s:I,s:I,s:I,s:o,s:I,s:o}",
		      "src", s, "dst", d, "dest_qp", (json_int_t)f->dest_qp, "kind", cls_name(f->cls),
		      "packets", (json_int_t)f->n, "bytes", (json_int_t)f->bytes, "payload_bytes",
		      (json_int_t)f->payload, "first_psn", (json_int_t)f->first_psn, "last_psn",
		      (json_int_t)f->last_psn, "start_psn", (json_int_t)f->start_psn, "next_psn",
		      (json_int_t)f->next_psn, "messages", (json_int_t)f->messages, "retransmits",
		      (json_int_t)f->retransmits, "retransmitted_psns", rp, "gaps", (json_int_t)f->gaps,
		      "gap_psns", (json_int_t)f->gap_psns, "acks", (json_int_t)f->acks, "naks", naks,
		      "rnr_wait_us", (json_int_t)f->rnr_wait_us, "nak_list", nl);
	if (o) {
		json_object_set_new(o, "peer", f->peer >= 0 ? json_integer(f->peer) : json_null());
		json_object_set_new(o, "late", json_integer((json_int_t)f->late));
		json_object_set_new(o, "missing", json_integer((json_int_t)f->missing));
		json_object_set_new(o, "reframed", json_integer((json_int_t)f->reframed));
		json_object_set_new(o, "reframed_frame", json_integer((json_int_t)f->reframed_frame));
	}
	return o;
}

static json_t *wr_json(const struct roce_join *j, const struct roce_wr *w)
{
	json_t *naks = json_object();
	uint64_t post = roce_wr_to_capture(j, w->t_post);

	for (int k = ROCE_NAK_RNR; k < ROCE_AETH_KINDS; k++)
		json_object_set_new(naks, roce_aeth_kind_name((enum roce_aeth_kind)k), json_integer(w->naks[k]));
	return json_pack("{s:i,s:i,s:i,s:I,s:s,s:i,s:o,s:b,s:b,s:i,s:i,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:i,s:i}",
		"run", (json_int_t)w->run, "qp", (json_int_t)w->qp, "qpn", (json_int_t)w->qpn,
		"seq", (json_int_t)w->seq, "opcode", wrt_opcode_name(w->opcode), "bytes", (json_int_t)w->bytes,
		"status", w->done ? json_integer(w->status) : json_null(), "found", w->found, "fits", w->fits,
		"psn_first", (json_int_t)w->psn_first, "psn_last", (json_int_t)w->psn_last,
		"packets", (json_int_t)w->packets, "retransmits", (json_int_t)w->retransmits,
		"first_out_us", w->t_first_out && w->posted ? json_real((double)(int64_t)(w->t_first_out - post) / 1e3) : json_null(),
		"ack_us", w->t_ack && w->posted ? json_real((double)(int64_t)(w->t_ack - post) / 1e3) : json_null(),
		"completion_us", w->done && w->posted ? json_real((double)(w->t_comp - w->t_post) / 1e3) : json_null(),
		"naks", naks, "ack_frame", w->ack_frame ? json_integer(w->ack_frame) : json_null(),
		"first_nak_frame", (json_int_t)w->first_nak_frame, "recv", (json_int_t)w->recv);
}

int roce_report_json(FILE *out, const struct roce_capture *c, const struct roce_join *j,
		     const struct roce_report_opts *o)
{
	json_t *root, *flows = json_array();
	int rc;

	for (size_t i = 0; i < c->nflows; i++)
		json_array_append_new(flows, flow_json(c, &c->flows[i]));
	root = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i,s:b,s:f,s:o}", "file", c->path ? c->path : "",
			 "frames", (json_int_t)c->frames, "roce", (json_int_t)c->roce, "ud", (json_int_t)c->ud,
			 "cnp", (json_int_t)c->cnps, "other", (json_int_t)c->other,
			 "truncated", (json_int_t)c->truncated, "malformed", (json_int_t)c->malformed,
			 "path_mtu", (json_int_t)c->pmtu, "ns_stamps", c->nanosecond,
			 "duration_ms", c->roce ? (double)(c->last_ns - c->first_ns) / 1e6 : 0.0, "flows", flows);
	if (!root)
		return -1;
	if (j && o->trace) {
		json_t *wrs = json_array();

		for (size_t i = 0; i < j->n; i++)
			json_array_append_new(wrs, wr_json(j, &j->w[i]));
		json_object_set_new(root, "trace", json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:o,s:o}",
			"file", o->trace_path, "wrs", (json_int_t)j->n, "found", (json_int_t)j->found,
			"missing", (json_int_t)j->missing, "unfit", (json_int_t)j->unfit,
			"with_retransmits", (json_int_t)j->with_retransmits, "with_naks", (json_int_t)j->with_naks,
			"failed", (json_int_t)j->failed, "why_missing", j->why_missing,
			"clock_offset_ns", j->has_offset ? json_integer(j->offset_ns) : json_null(), "wr", wrs));
	}
	rc = json_dumpf(root, out, JSON_INDENT(1)) || fputc('\n', out) == EOF ? -1 : 0;
	json_decref(root);
	return rc;
}
