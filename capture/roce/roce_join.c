/* SPDX-License-Identifier: BSD-2-Clause */
/* The join: WR rows of a wrtrace file against the flows of a capture.
 * Send WRs take consecutive PSN ranges from the QP's starting PSN in
 * posting order (per QP, rows sorted by run then seq); receive WRs take the
 * incoming messages that consume a receive, in PSN order, in completion
 * order. */
#include <stdlib.h>
#include <string.h>
#include "roce_join.h"

uint32_t roce_wr_packets(uint32_t bytes, uint32_t pmtu)
{
	if (!pmtu || bytes <= pmtu)
		return 1;
	return (bytes + pmtu - 1) / pmtu;
}

static int cmp_wr(const void *a, const void *b)
{
	const struct roce_wr *x = a, *y = b;

	if (x->qp != y->qp)
		return x->qp < y->qp ? -1 : 1;
	if (x->recv != y->recv)
		return x->recv ? 1 : -1;
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->recv) {             /* receives: completion order, pending ones last */
		if (x->done != y->done)
			return x->done ? -1 : 1;
		if (x->t_comp != y->t_comp)
			return x->t_comp < y->t_comp ? -1 : 1;
	}
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* "0x11,0x12" -> QPN of index qp (0: absent). */
static uint32_t qpn_of(const char *qpns, uint32_t qp)
{
	const char *p = qpns;

	for (uint32_t i = 0; i < qp && p; i++) {
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return p && *p ? (uint32_t)strtoul(p, NULL, 0) : 0;
}

/* The flow of class cls to the local QP dest_qp: to the local address
 * when it is known; else the only one, or, for responses, the one whose
 * requests start at the hinted PSN. -2: ambiguous (why says so). */
static long flow_to(const struct roce_capture *c, uint32_t dest_qp, enum roce_class cls,
		    const struct roce_join_opts *o, char *why, size_t why_len)
{
	long best = -1;
	size_t seen = 0;

	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];

		if (f->dest_qp != dest_qp || f->cls != cls)
			continue;
		if (o->has_local && (f->ip_version != o->local_version || memcmp(f->dst, o->local, 16)))
			continue;
		for (size_t h = 0; cls == ROCE_RESPONSE && f->peer >= 0 && h < o->nhints; h++)
			if (o->hints[h].qpn == dest_qp && c->flows[f->peer].start_psn == o->hints[h].psn)
				return (long)i;
		seen++;
		if (best < 0 || f->n > c->flows[best].n)
			best = (long)i;
	}
	if (seen > 1) {
		snprintf(why, why_len, "QPN 0x%x is a destination in both directions (the same QPN at both "
			 "ends): give --local ADDRESS (the traced tool's host)%s", dest_qp,
			 cls == ROCE_RESPONSE ? " or --psn QPN=PSN" : "");
		return -2;
	}
	return best;
}

static void missing(struct roce_join *j, const char *why)
{
	if (!j->why_missing[0])
		snprintf(j->why_missing, sizeof(j->why_missing), "%s", why);
}

/* The request packets of [first, last] in flow q: count, retransmissions,
 * first and last time out; fits when the ends carry the message's ends. */
static void request_side(const struct roce_capture *c, const struct roce_flow *q, struct roce_wr *w)
{
	uint32_t span = (uint32_t)roce_psn_diff(w->psn_last, w->psn_first) + 1;
	bool read = w->opcode == PT_PLUGIN_OP_READ;
	size_t at, n;

	(void)c;
	w->fits = true;
	for (uint32_t i = 0; i < (read ? 1 : span); i++) {
		uint32_t psn = roce_psn_add(w->psn_first, (int32_t)i);

		n = roce_flow_find_psn(q, psn, &at);
		if (!n) {
			w->fits = false;
			continue;
		}
		w->packets += (uint32_t)n;
		w->retransmits += (uint32_t)n - 1;
		for (size_t k = 0; k < n; k++) {
			const struct roce_rec *r = &q->p[q->by_psn[at + k]];

			if (!w->t_first_out || r->t_ns < w->t_first_out)
				w->t_first_out = r->t_ns;
			if (r->t_ns > w->t_last_out)
				w->t_last_out = r->t_ns;
		}
		if ((i == 0 && !roce_op_first(q->p[q->by_psn[at]].opcode)) ||
		    (i == (read ? 0 : span - 1) && !roce_op_last(q->p[q->by_psn[at]].opcode)))
			w->fits = false;
	}
	w->found = w->packets > 0;
}

/* In the response flow: the first ACK (or last READ response) at or after
 * psn_last once the WR is out, and the NAKs naming a PSN of the WR. */
static void response_side(const struct roce_flow *r, struct roce_wr *w)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct roce_rec *p = &r->p[i];
		enum roce_aeth_kind k;

		if (!p->has_aeth)
			continue;
		k = roce_aeth_kind(p->syndrome);
		if (k != ROCE_ACK) {
			if (roce_psn_diff(p->psn, w->psn_first) >= 0 && roce_psn_diff(p->psn, w->psn_last) <= 0) {
				w->naks[k]++;
				if (!w->first_nak_frame)
					w->first_nak_frame = p->frame;
			}
			continue;
		}
		if (!w->t_ack && w->t_first_out && p->t_ns >= w->t_first_out &&
		    roce_psn_diff(p->psn, w->psn_last) >= 0) {
			w->t_ack = p->t_ns;
			w->ack_frame = p->frame;
		}
	}
}

static void join_sends(const struct roce_capture *c, struct roce_join *j, struct roce_wr *w, size_t n,
		       const struct roce_join_opts *o)
{
	char why[256];
	long ri = flow_to(c, w[0].qpn, ROCE_RESPONSE, o, why, sizeof(why)), qi = ri >= 0 ? c->flows[ri].peer : -1;
	const struct roce_flow *q, *r;
	uint32_t psn;

	if (ri == -2) {
		missing(j, why);
		return;
	}
	if (qi < 0) {
		snprintf(why, sizeof(why), "QPN 0x%x: no %s in the capture", w[0].qpn,
			 ri < 0 ? "ACK or response to it" : "requests answered by its ACKs");
		missing(j, why);
		return;
	}
	q = &c->flows[qi];
	r = &c->flows[ri];
	psn = q->start_psn;
	for (size_t i = 0; i < o->nhints; i++)
		if (o->hints[i].qpn == w[0].qpn)
			psn = o->hints[i].psn & ROCE_PSN_MASK;
	for (size_t i = 0; i < n; i++) {
		uint32_t np = w[i].opcode == PT_PLUGIN_OP_ATOMIC_FA || w[i].opcode == PT_PLUGIN_OP_ATOMIC_CS ?
			      1 : roce_wr_packets(w[i].bytes, c->pmtu);

		w[i].req_flow = qi;
		w[i].resp_flow = ri;
		w[i].psn_first = psn;
		w[i].psn_last = roce_psn_add(psn, (int32_t)np - 1);
		psn = roce_psn_add(psn, (int32_t)np);
		request_side(c, q, &w[i]);
		response_side(r, &w[i]);
	}
}

/* Incoming messages that consume a receive, in PSN order (first
 * transmissions), each WR the next of them. */
static void join_recvs(const struct roce_capture *c, struct roce_join *j, struct roce_wr *w, size_t n,
		       const struct roce_join_opts *o)
{
	char why[256];
	long qi = flow_to(c, w[0].qpn, ROCE_REQUEST, o, why, sizeof(why)), ri = qi >= 0 ? c->flows[qi].peer : -1;
	const struct roce_flow *q;
	size_t k = 0, i = 0;

	if (qi == -2) {
		missing(j, why);
		return;
	}
	if (qi < 0) {
		snprintf(why, sizeof(why), "QPN 0x%x: no requests to it in the capture", w[0].qpn);
		missing(j, why);
		return;
	}
	q = &c->flows[qi];
	while (k < q->n && i < n) {
		const struct roce_rec *first = &q->p[q->by_psn[k]], *last = first;
		size_t end = k;

		/* the message: from a FIRST/ONLY to its LAST/ONLY, one packet per PSN */
		while (!roce_op_last(last->opcode)) {
			uint32_t next = roce_psn_add(last->psn, 1);

			while (end < q->n && q->p[q->by_psn[end]].psn != next &&
			       roce_psn_diff(q->p[q->by_psn[end]].psn, next) < 0)
				end++;
			if (end == q->n || q->p[q->by_psn[end]].psn != next)
				break;
			last = &q->p[q->by_psn[end]];
		}
		while (end < q->n && q->p[q->by_psn[end]].psn == last->psn)
			end++;
		if (end == k)
			end = k + 1;
		k = end;
		if (!roce_op_first(first->opcode) || !roce_op_consumes_recv(last->opcode))
			continue;
		w[i].req_flow = qi;
		w[i].resp_flow = ri;
		w[i].psn_first = first->psn;
		w[i].psn_last = last->psn;
		request_side(c, q, &w[i]);
		if (ri >= 0)
			response_side(&c->flows[ri], &w[i]);
		i++;
	}
	if (i < n)
		missing(j, "more receive WRs than incoming messages (capture started late or stopped early?)");
}

/* capture - trace: a WR's first packet leaves after its post; its
 * completion comes after the ACK that retired it. */
static void fit_offset(struct roce_join *j)
{
	bool lo = false, hi = false;

	for (size_t i = 0; i < j->n; i++) {
		const struct roce_wr *w = &j->w[i];

		if (!w->found)
			continue;
		if (!w->recv && w->posted && w->t_first_out) {
			int64_t d = (int64_t)w->t_first_out - (int64_t)w->t_post;

			if (!hi || d < j->offset_hi_ns)
				j->offset_hi_ns = d;
			hi = true;
		}
		if (w->done && (w->recv ? w->t_last_out : w->t_ack)) {
			int64_t d = (int64_t)(w->recv ? w->t_last_out : w->t_ack) - (int64_t)w->t_comp;

			if (!lo || d > j->offset_lo_ns)
				j->offset_lo_ns = d;
			lo = true;
		}
	}
	j->has_offset = lo || hi;
	j->offset_ns = hi ? j->offset_hi_ns : j->offset_lo_ns;
	if (!hi)
		j->offset_hi_ns = j->offset_lo_ns;
	if (!lo)
		j->offset_lo_ns = j->offset_hi_ns;
}

int roce_join(const struct roce_capture *c, const struct wrt_trace *t,
	      const struct roce_join_opts *o, struct roce_join *j, char *err, size_t err_len)
{
	size_t total = 0;

	memset(j, 0, sizeof(*j));
	for (size_t r = 0; r < t->nruns; r++)
		total += t->runs[r].n;
	j->w = calloc(total ? total : 1, sizeof(*j->w));
	if (!j->w) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (size_t r = 0; r < t->nruns; r++)
		for (uint64_t i = 0; i < t->runs[r].n; i++) {
			const struct wrt_rec *x = &t->runs[r].recs[i];
			struct roce_wr *w = &j->w[j->n++];

			w->run = t->runs[r].meta.run;
			w->qp = x->qp;
			w->qpn = qpn_of(t->runs[r].meta.qpns, x->qp);
			w->seq = x->seq;
			w->wr_id = x->wr_id;
			w->opcode = x->opcode;
			w->bytes = x->bytes;
			w->status = x->status;
			w->recv = x->flags & WRT_RECV;
			w->posted = x->flags & WRT_POSTED;
			w->done = x->flags & WRT_DONE;
			w->t_post = x->t_post;
			w->t_comp = x->t_comp;
			w->req_flow = w->resp_flow = -1;
		}
	qsort(j->w, j->n, sizeof(*j->w), cmp_wr);
	for (size_t i = 0; i < j->n;) {
		size_t e = i;

		while (e < j->n && j->w[e].qp == j->w[i].qp && j->w[e].recv == j->w[i].recv)
			e++;
		if (!j->w[i].qpn)
			missing(j, "the trace does not name the QPN of a QP (no qpns in its metadata)");
		else if (j->w[i].recv)
			join_recvs(c, j, &j->w[i], e - i, o);
		else
			join_sends(c, j, &j->w[i], e - i, o);
		i = e;
	}
	for (size_t i = 0; i < j->n; i++) {
		const struct roce_wr *w = &j->w[i];
		uint32_t naks = 0;

		for (int k = 0; k < ROCE_AETH_KINDS; k++)
			naks += w->naks[k];
		j->found += w->found;
		j->missing += !w->found;
		j->unfit += w->found && !w->fits;
		j->with_retransmits += w->retransmits > 0;
		j->with_naks += naks > 0;
		j->failed += w->done && w->status;
	}
	fit_offset(j);
	return 0;
}

void roce_join_free(struct roce_join *j)
{
	free(j->w);
	memset(j, 0, sizeof(*j));
}
