/* SPDX-License-Identifier: BSD-2-Clause */
/* pcap file -> flows -> per-flow figures. Packets are kept in file order
 * (capture time); the figures are computed once the path MTU is known,
 * since a READ request's PSN step depends on it. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include "roce_wire.h"

static long flow_find(struct roce_capture *c, const struct roce_pkt *k)
{
	for (size_t i = 0; i < c->nflows; i++) {
		const struct roce_flow *f = &c->flows[i];

		if (f->dest_qp == k->dest_qp && f->cls == k->cls && f->ip_version == k->ip_version &&
		    !memcmp(f->src, k->src, 16) && !memcmp(f->dst, k->dst, 16))
			return (long)i;
	}
	return -1;
}

static int flow_new(struct roce_capture *c, const struct roce_pkt *k)
{
	struct roce_flow *v = realloc(c->flows, (c->nflows + 1) * sizeof(*v));

	if (!v)
		return -1;
	c->flows = v;
	memset(&v[c->nflows], 0, sizeof(*v));
	v[c->nflows].ip_version = k->ip_version;
	memcpy(v[c->nflows].src, k->src, 16);
	memcpy(v[c->nflows].dst, k->dst, 16);
	v[c->nflows].dest_qp = k->dest_qp;
	v[c->nflows].cls = k->cls;
	v[c->nflows].peer = -1;
	return (int)c->nflows++;
}

int roce_capture_add(struct roce_capture *c, const struct roce_pkt *k, uint64_t t_ns, uint32_t frame)
{
	struct roce_flow *f;
	struct roce_rec *r;
	long i;

	c->roce++;
	if (!c->first_ns || t_ns < c->first_ns)
		c->first_ns = t_ns;
	if (t_ns > c->last_ns)
		c->last_ns = t_ns;
	if (k->cls == ROCE_CNP) {
		c->cnps++;
		return 0;
	}
	if (k->cls == ROCE_OTHER) {
		c->ud++;
		return 0;
	}
	/* FIRST and MIDDLE packets are full: their payload is the path MTU */
	if (k->cls != ROCE_CNP && !roce_op_last(k->opcode) && !roce_op_is_read_request(k->opcode) &&
	    k->payload > c->pmtu && (k->opcode & 0x1f) != 0x11)
		c->pmtu = k->payload;
	i = flow_find(c, k);
	if (i < 0 && (i = flow_new(c, k)) < 0)
		return -1;
	f = &c->flows[i];
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 256;
		struct roce_rec *v = realloc(f->p, cap * sizeof(*v));

		if (!v)
			return -1;
		f->p = v;
		f->cap = cap;
	}
	r = &f->p[f->n++];
	memset(r, 0, sizeof(*r));
	r->t_ns = t_ns;
	r->frame = frame;
	r->psn = k->psn;
	r->frame_len = k->frame_len;
	r->payload = k->payload;
	r->dma_len = k->dma_len;
	r->msn = k->msn;
	r->opcode = k->opcode;
	r->syndrome = k->syndrome;
	r->ack_req = k->ack_req;
	r->has_aeth = k->has_aeth;
	f->bytes += k->frame_len;
	f->payload += k->payload;
	return 0;
}

uint32_t roce_psns_of(const struct roce_capture *c, const struct roce_rec *r)
{
	if (roce_op_is_read_request(r->opcode) && c->pmtu && r->dma_len > c->pmtu)
		return (r->dma_len + c->pmtu - 1) / c->pmtu;
	return 1;
}

static int ranges_add(struct roce_ranges *g, uint32_t psn)
{
	for (size_t i = g->n; i-- > 0;) {
		int32_t lo = roce_psn_diff(psn, g->r[i][0]), hi = roce_psn_diff(psn, g->r[i][1]);

		if (lo >= 0 && hi <= 0)
			return 0;
		if (hi == 1) {
			g->r[i][1] = psn;
			return 0;
		}
		if (lo == -1) {
			g->r[i][0] = psn;
			return 0;
		}
	}
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		uint32_t (*v)[2] = realloc(g->r, cap * sizeof(*v));

		if (!v)
			return -1;
		g->r = v;
		g->cap = cap;
	}
	g->r[g->n][0] = g->r[g->n][1] = psn;
	g->n++;
	return 0;
}

/* Requests: a packet of a PSN seen before is a retransmission (by_psn,
 * sorted by PSN then time, has each PSN's packets together). In time
 * order, a PSN beyond the next expected one jumped over PSNs (a gap: lost
 * before the capture point, or not captured); a PSN's first packet behind
 * it came late (such a lost packet, sent again). */
static int request_figures(struct roce_capture *c, struct roce_flow *f)
{
	uint64_t covered = 0;
	size_t group = 0;                   /* by_psn index of the current PSN's first packet */
	bool counted = false;

	for (size_t k = 0; k < f->n; k++) {
		struct roce_rec *r = &f->p[f->by_psn[k]];

		if (k && r->psn == f->p[f->by_psn[k - 1]].psn) {
			const struct roce_rec *first = &f->p[f->by_psn[group]];

			/* a retransmission must repeat the packet: another opcode or
			 * length moves the message boundaries (the responder then
			 * sees messages that are not the ones posted) */
			if (first->opcode != r->opcode || first->payload != r->payload) {
				f->reframed += !counted;
				counted = true;
				if (!f->reframed_frame || r->frame < f->reframed_frame)
					f->reframed_frame = r->frame;
			}
			r->retransmit = true;
			f->retransmits++;
			if (ranges_add(&f->retrans_psns, r->psn))
				return -1;
		} else {
			group = k;
			counted = false;
			covered += roce_psns_of(c, r);
		}
	}
	f->next_psn = f->p[0].psn;
	for (size_t i = 0; i < f->n; i++) {
		struct roce_rec *r = &f->p[i];
		int32_t d = roce_psn_diff(r->psn, f->next_psn);
		uint32_t end = roce_psn_add(r->psn, (int32_t)roce_psns_of(c, r));

		if (i && d > 0) {
			f->gaps++;
			f->gap_psns += (uint64_t)d;
		} else if (i && d < 0 && !r->retransmit) {
			f->late++;
		}
		if (!r->retransmit && roce_op_first(r->opcode))
			f->messages++;
		if (d >= 0)   /* at or past the next expected: it moves on (as capture/psn.c) */
			f->next_psn = end;
	}
	if (roce_psn_dist(f->next_psn, f->start_psn) > covered)
		f->missing = roce_psn_dist(f->next_psn, f->start_psn) - (uint32_t)covered;
	return 0;
}

static void response_figures(struct roce_flow *f)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct roce_rec *r = &f->p[i];
		enum roce_aeth_kind k;

		if (!r->has_aeth)
			continue;
		k = roce_aeth_kind(r->syndrome);
		if (k == ROCE_ACK) {
			f->acks++;
			continue;
		}
		f->naks[k]++;
		if (k == ROCE_NAK_RNR)
			f->rnr_wait_us += roce_rnr_wait_us(r->syndrome);
	}
}

/* A request flow's lowest PSN, as rdmacap's live accounting finds it
 * (capture/psn.c): in time order, a PSN behind the next expected one and
 * outside the span so far (below its lowest PSN) is the new lowest; one
 * ahead only moves the next expected one, however far (a jump past 2^23
 * PSNs is still ahead of where the flow had come to, not behind its first
 * packet). Every PSN of the flow then lies from it forward
 * (roce_psn_dist). */
static uint32_t request_start(const struct roce_capture *c, const struct roce_flow *f)
{
	uint32_t start = f->p[0].psn, next = start;

	for (size_t k = 0; k < f->n; k++) {
		const struct roce_rec *r = &f->p[k];
		uint32_t end = roce_psn_add(r->psn, (int32_t)roce_psns_of(c, r));

		if (roce_psn_diff(r->psn, next) >= 0)
			next = end;
		else if (!roce_psn_in(r->psn, start, next))
			start = r->psn;
	}
	return start;
}

static const struct roce_flow *sort_flow;

static int by_psn_cmp(const void *a, const void *b)
{
	const struct roce_rec *x = &sort_flow->p[*(const uint32_t *)a], *y = &sort_flow->p[*(const uint32_t *)b];
	uint32_t dx = roce_psn_dist(x->psn, sort_flow->start_psn), dy = roce_psn_dist(y->psn, sort_flow->start_psn);

	if (dx != dy)
		return dx < dy ? -1 : 1;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns ? 1 :
	       (*(const uint32_t *)a > *(const uint32_t *)b) - (*(const uint32_t *)a < *(const uint32_t *)b);
}

size_t roce_flow_find_psn(const struct roce_flow *f, uint32_t psn, size_t *first)
{
	uint32_t want = roce_psn_dist(psn, f->start_psn);
	size_t lo = 0, hi = f->n, n = 0;

	if (!f->by_psn)
		return 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (roce_psn_dist(f->p[f->by_psn[mid]].psn, f->start_psn) < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo + n < f->n && f->p[f->by_psn[lo + n]].psn == psn)
		n++;
	return n;
}

/* A response flow answers the request flow of the opposite direction
 * whose PSN span holds most of its PSNs (an ACK may name the PSN before
 * the first request: the "nothing yet" acknowledgement). */
static void pair_flows(struct roce_capture *c)
{
	for (size_t i = 0; i < c->nflows; i++) {
		struct roce_flow *r = &c->flows[i];
		size_t best_score = 0;
		long best = -1;

		if (r->cls != ROCE_RESPONSE)
			continue;
		for (size_t j = 0; j < c->nflows; j++) {
			struct roce_flow *q = &c->flows[j];
			size_t score = 0, step = r->n / 64 + 1;

			if (q->cls != ROCE_REQUEST || q->ip_version != r->ip_version ||
			    memcmp(q->src, r->dst, 16) || memcmp(q->dst, r->src, 16))
				continue;
			for (size_t k = 0; k < r->n; k += step)
				if (roce_psn_diff(r->p[k].psn, q->start_psn) >= -1 &&
				    roce_psn_diff(r->p[k].psn, q->next_psn) < 0)
					score++;
			if (score > best_score && q->peer < 0) {
				best_score = score;
				best = (long)j;
			}
		}
		if (best >= 0) {
			r->peer = best;
			c->flows[best].peer = (long)i;
		}
	}
}

int roce_capture_finish(struct roce_capture *c)
{
	for (size_t i = 0; i < c->nflows; i++) {
		struct roce_flow *f = &c->flows[i];

		f->first_psn = f->p[0].psn;
		f->last_psn = f->p[f->n - 1].psn;
		if (f->cls != ROCE_REQUEST) {
			response_figures(f);
			continue;
		}
		f->start_psn = request_start(c, f);
		f->by_psn = malloc(f->n * sizeof(*f->by_psn));
		if (!f->by_psn)
			return -1;
		for (size_t k = 0; k < f->n; k++)
			f->by_psn[k] = (uint32_t)k;
		sort_flow = f;
		qsort(f->by_psn, f->n, sizeof(*f->by_psn), by_psn_cmp);
		if (request_figures(c, f))
			return -1;
	}
	pair_flows(c);
	return 0;
}

/* libpcap scales µs stamps up when asked for ns; the file's magic says
 * which it holds (0xa1b23c4d: ns, either byte order). */
static bool file_is_ns(const char *path)
{
	unsigned char m[4] = { 0 };
	FILE *f = fopen(path, "rb");
	bool ns;

	if (!f)
		return false;
	ns = fread(m, 1, 4, f) == 4 && ((m[0] == 0xa1 && m[1] == 0xb2 && m[2] == 0x3c && m[3] == 0x4d) ||
					(m[0] == 0x4d && m[1] == 0x3c && m[2] == 0xb2 && m[3] == 0xa1));
	fclose(f);
	return ns;
}

int roce_capture_read(const char *path, struct roce_capture *c, char *err, size_t err_len)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	pcap_t *pc;
	int rc;

	memset(c, 0, sizeof(*c));
	c->path = path;
	pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, perr);
	if (!pc) {
		/* libpcap names the file in some messages, not in others */
		if (!strncmp(perr, path, strlen(path)))
			snprintf(err, err_len, "%s", perr);
		else
			snprintf(err, err_len, "%s: %s", path, perr);
		return -1;
	}
	c->link = pcap_datalink(pc);
	if (c->link != ROCE_LINK_ETHERNET && c->link != ROCE_LINK_LINUX_SLL &&
	    c->link != ROCE_LINK_LINUX_SLL2) {
		snprintf(err, err_len, "%s: link type %d (%s) is not Ethernet or Linux cooked capture",
			 path, c->link, pcap_datalink_val_to_name(c->link) ? pcap_datalink_val_to_name(c->link) : "?");
		pcap_close(pc);
		return -1;
	}
	c->nanosecond = file_is_ns(path);
	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		struct roce_pkt k;
		uint64_t t = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;

		c->frames++;
		switch (roce_decode(c->link, data, h->caplen, h->len, &k)) {
		case ROCE_OK:
			if (roce_capture_add(c, &k, t, (uint32_t)c->frames)) {
				snprintf(err, err_len, "out of memory after %llu frames",
					 (unsigned long long)c->frames);
				pcap_close(pc);
				return -1;
			}
			break;
		case ROCE_NOT_ROCE: c->other++; break;
		case ROCE_TRUNCATED: c->truncated++; break;
		case ROCE_MALFORMED: c->malformed++; break;
		}
	}
	if (rc == PCAP_ERROR) {
		snprintf(err, err_len, "%s: after frame %llu: %s", path, (unsigned long long)c->frames,
			 pcap_geterr(pc));
		pcap_close(pc);
		return -1;
	}
	pcap_close(pc);
	if (roce_capture_finish(c)) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	return 0;
}

void roce_capture_free(struct roce_capture *c)
{
	for (size_t i = 0; i < c->nflows; i++) {
		free(c->flows[i].p);
		free(c->flows[i].retrans_psns.r);
		free(c->flows[i].by_psn);
	}
	free(c->flows);
	memset(c, 0, sizeof(*c));
}

void roce_flow_name(const struct roce_flow *f, char *buf, size_t len)
{
	char s[64], d[64];

	roce_addr_text(f->ip_version, f->src, s, sizeof(s));
	roce_addr_text(f->ip_version, f->dst, d, sizeof(d));
	snprintf(buf, len, "%s -> %s qp 0x%06x", s, d, f->dest_qp);
}
