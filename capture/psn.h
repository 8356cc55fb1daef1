/* SPDX-License-Identifier: BSD-2-Clause */
/* Live loss accounting for RoCE from packet sequence numbers (rdmacap
 * packet --roce; capture/rdmacap.8, "PSN accounting"). Each request flow
 * (source IP, destination IP, destination QP of an RC or UC QP) is followed
 * as it arrives, with the meanings rdmawire gives the same words after the
 * fact (docs/capture-roce.md), so a live capture and a later rdmawire of
 * its pcap agree:
 *   gap          a PSN beyond the next expected one (the PSNs between were
 *                lost before the capture point, or not captured);
 *   late         a PSN seen for the first time behind the next expected one
 *                (such a lost packet, sent again);
 *   retransmit   a packet of a PSN seen before;
 *   missing      PSNs of the span (lowest to highest PSN seen) never seen
 *                (so far).
 * Whether a PSN was seen is kept for the last CAP_PSN_WINDOW PSNs of a
 * flow; a packet further behind is counted as "beyond window", not
 * guessed. A READ request takes as many PSNs as its response has packets:
 * its length over the path MTU, learnt from full (FIRST/MIDDLE) packets;
 * while no MTU is known a READ longer than the smallest MTU (256) makes the
 * flow start over at its next packet ("resyncs"), so nothing is invented.
 * Responses (ACKs coalesce PSNs) and UD are not followed. Memory: a fixed
 * table of flows; flows beyond it are counted (table_full). */
#ifndef CAP_PSN_H
#define CAP_PSN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "capture/roce/roce_decode.h"

#define CAP_PSN_WINDOW 16384u   /* PSNs; a power of two */
#define CAP_PSN_FLOWS 256       /* request flows followed by one capture */

struct cap_psn_flow {
	uint8_t ip_version, src[16], dst[16];
	uint32_t dest_qp;
	uint8_t transport;          /* ROCE_TR_RC or ROCE_TR_UC */
	bool started;
	uint32_t first_psn, start_psn, next_psn;
	uint64_t packets;
	uint64_t gaps, gap_psns, late, retransmits, beyond_window, resyncs;
	uint64_t covered;           /* PSNs of the current span seen at least once */
	uint64_t missing_before;    /* missing PSNs of spans closed by a resync */
	uint64_t seen[CAP_PSN_WINDOW / 64];  /* bit psn % WINDOW: seen, for PSNs behind next_psn */
};

struct cap_psn {
	struct cap_psn_flow *flows;
	unsigned nflows, max_flows;
	uint32_t pmtu;              /* payload of full packets: the path MTU (0: none seen yet) */
	uint64_t table_full;        /* request packets of flows beyond the table */
	uint64_t undecoded;         /* UDP 4791 frames cut short or malformed */
};

int cap_psn_init(struct cap_psn *t, unsigned max_flows);
void cap_psn_free(struct cap_psn *t);
/* One decoded RoCE packet (any class; only RC/UC requests are followed). */
void cap_psn_packet(struct cap_psn *t, const struct roce_pkt *k);
/* One Ethernet frame as captured: decoded, then as above; other traffic is
 * ignored, a RoCE frame that does not decode is counted (undecoded). */
void cap_psn_frame(struct cap_psn *t, const uint8_t *frame, size_t len, uint32_t wire_len);
/* PSNs of the flow's spans never seen, so far. */
uint64_t cap_psn_missing(const struct cap_psn_flow *f);

struct cap_psn_totals {
	uint64_t gaps, gap_psns, late, retransmits, missing, beyond_window, resyncs;
};
void cap_psn_totals(const struct cap_psn *t, struct cap_psn_totals *sum);

#endif
