/* SPDX-License-Identifier: BSD-2-Clause */
#include "psn.h"

#include <stdlib.h>
#include <string.h>

#define MIN_PMTU 256u

int cap_psn_init(struct cap_psn *t, unsigned max_flows)
{
	memset(t, 0, sizeof(*t));
	t->flows = calloc(max_flows ? max_flows : 1, sizeof(*t->flows));
	if (!t->flows)
		return -1;
	t->max_flows = max_flows;
	return 0;
}

void cap_psn_free(struct cap_psn *t)
{
	free(t->flows);
	t->flows = NULL;
	t->nflows = 0;
}

static struct cap_psn_flow *flow_of(struct cap_psn *t, const struct roce_pkt *k)
{
	size_t alen = k->ip_version == 4 ? 4 : 16;
	struct cap_psn_flow *f;

	for (unsigned i = 0; i < t->nflows; i++) {
		f = &t->flows[i];
		if (f->dest_qp == k->dest_qp && f->ip_version == k->ip_version &&
		    !memcmp(f->src, k->src, alen) && !memcmp(f->dst, k->dst, alen))
			return f;
	}
	if (t->nflows == t->max_flows)
		return NULL;
	f = &t->flows[t->nflows++];
	f->ip_version = k->ip_version;
	memcpy(f->src, k->src, sizeof(f->src));
	memcpy(f->dst, k->dst, sizeof(f->dst));
	f->dest_qp = k->dest_qp;
	f->transport = k->opcode & 0xe0;
	return f;
}

static bool seen(const struct cap_psn_flow *f, uint32_t psn)
{
	uint32_t b = psn % CAP_PSN_WINDOW;

	return f->seen[b / 64] >> (b % 64) & 1;
}

static void mark(struct cap_psn_flow *f, uint32_t psn, bool on)
{
	uint32_t b = psn % CAP_PSN_WINDOW;
	uint64_t bit = UINT64_C(1) << (b % 64);

	f->seen[b / 64] = on ? f->seen[b / 64] | bit : f->seen[b / 64] & ~bit;
}

/* PSNs from next_psn up to psn + span become the window's newest: their
 * bits, left from PSNs a window ago, start clear; then psn's own are set. */
static void advance(struct cap_psn_flow *f, uint32_t psn, uint32_t span)
{
	uint32_t end = roce_psn_add(psn, (int32_t)span);
	uint32_t n = (uint32_t)roce_psn_diff(end, f->next_psn);

	if (n >= CAP_PSN_WINDOW)
		memset(f->seen, 0, sizeof(f->seen));
	else
		for (uint32_t i = 0; i < n; i++)
			mark(f, roce_psn_add(f->next_psn, (int32_t)i), false);
	for (uint32_t i = 0; i < span && i < CAP_PSN_WINDOW; i++)
		mark(f, roce_psn_add(psn, (int32_t)i), true);
	f->covered += span;
	f->next_psn = end;
}

/* The PSNs a request takes; 0: unknown (a READ longer than the smallest
 * MTU while no MTU is known). */
static uint32_t span_of(const struct cap_psn *t, const struct roce_pkt *k)
{
	if (!roce_op_is_read_request(k->opcode) || k->dma_len <= MIN_PMTU)
		return 1;
	if (!t->pmtu)
		return 0;
	return (k->dma_len + t->pmtu - 1) / t->pmtu;
}

uint64_t cap_psn_missing(const struct cap_psn_flow *f)
{
	uint64_t span = f->started ? roce_psn_dist(f->next_psn, f->start_psn) : 0;

	return f->missing_before + (span > f->covered ? span - f->covered : 0);
}

void cap_psn_packet(struct cap_psn *t, const struct roce_pkt *k)
{
	struct cap_psn_flow *f;
	uint32_t span;
	int32_t d;

	/* FIRST and MIDDLE packets (requests and READ responses) are full:
	 * their payload is the path MTU; 0x11 is the ACK, which has none */
	if ((k->cls == ROCE_REQUEST || k->cls == ROCE_RESPONSE) && !roce_op_last(k->opcode) &&
	    !roce_op_is_read_request(k->opcode) && (k->opcode & 0x1f) != 0x11 && k->payload > t->pmtu)
		t->pmtu = k->payload;
	if (k->cls != ROCE_REQUEST)
		return;
	f = flow_of(t, k);
	if (!f) {
		t->table_full++;
		return;
	}
	f->packets++;
	span = span_of(t, k);
	if (!f->started) {
		f->started = true;
		f->first_psn = f->start_psn = f->next_psn = k->psn;
	}
	d = roce_psn_diff(k->psn, f->next_psn);
	if (d >= 0) {
		if (d > 0) {
			f->gaps++;
			f->gap_psns += (uint64_t)d;
		}
		advance(f, k->psn, span ? span : 1);
	} else if ((uint32_t)-d > CAP_PSN_WINDOW) {
		f->beyond_window++;
	} else if (seen(f, k->psn)) {
		f->retransmits++;
	} else {
		f->late++;
		/* the span runs from the lowest PSN seen, as rdmawire's does */
		if (!roce_psn_in(k->psn, f->start_psn, f->next_psn))
			f->start_psn = k->psn;
		for (uint32_t i = 0; i < (span ? span : 1); i++)
			mark(f, roce_psn_add(k->psn, (int32_t)i), true);
		f->covered += span ? span : 1;
	}
	if (!span) {
		/* where the READ's response ends is unknown: start over after it */
		f->resyncs++;
		f->missing_before = cap_psn_missing(f);
		f->started = false;
		f->covered = 0;
		memset(f->seen, 0, sizeof(f->seen));
	}
}

void cap_psn_frame(struct cap_psn *t, const uint8_t *frame, size_t len, uint32_t wire_len)
{
	struct roce_pkt k;

	switch (roce_decode(ROCE_LINK_ETHERNET, frame, len, wire_len, &k)) {
	case ROCE_OK:
		cap_psn_packet(t, &k);
		break;
	case ROCE_NOT_ROCE:
		break;
	default:
		t->undecoded++;
	}
}

void cap_psn_totals(const struct cap_psn *t, struct cap_psn_totals *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < t->nflows; i++) {
		const struct cap_psn_flow *f = &t->flows[i];

		sum->gaps += f->gaps;
		sum->gap_psns += f->gap_psns;
		sum->late += f->late;
		sum->retransmits += f->retransmits;
		sum->missing += cap_psn_missing(f);
		sum->beyond_window += f->beyond_window;
		sum->resyncs += f->resyncs;
	}
}
