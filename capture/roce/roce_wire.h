/* SPDX-License-Identifier: BSD-2-Clause */
/* A pcap file as RoCE flows: every RoCE v2 packet of the file, grouped by
 * (source IP, destination IP, destination QP, request or response), with
 * per-flow figures (packets, bytes, PSNs, retransmissions, gaps, NAKs by
 * kind, RNR waits) and each request flow paired with the flow that answers
 * it (docs/capture-roce.md: how, and what "retransmitted" and "gap" mean). */
#ifndef PT_ROCE_WIRE_H
#define PT_ROCE_WIRE_H
#include <stdio.h>
#include "roce_decode.h"

/* One packet of a flow, kept for the join and the plot. */
struct roce_rec {
	uint64_t t_ns;              /* capture time, ns since the epoch (the capture's clock) */
	uint32_t frame;             /* frame number in the file, from 1 (as tshark counts) */
	uint32_t psn, frame_len, payload, dma_len, msn;
	uint8_t opcode, syndrome;
	bool ack_req, has_aeth, retransmit;
};

/* PSN ranges, as found (merged when they touch). */
struct roce_ranges {
	uint32_t (*r)[2];
	size_t n, cap;
};

struct roce_flow {
	uint8_t ip_version, src[16], dst[16];
	uint32_t dest_qp;
	enum roce_class cls;
	struct roce_rec *p;
	size_t n, cap;
	uint64_t bytes, payload;
	uint32_t first_psn, last_psn;     /* of the first and the last packet in time */
	uint32_t start_psn, next_psn;     /* lowest PSN and one past the highest (requests) */
	uint64_t messages;                /* requests: first transmissions of a FIRST/ONLY */
	uint64_t retransmits;             /* requests: packets of a PSN seen before */
	struct roce_ranges retrans_psns;  /* ... and those PSNs */
	uint64_t gaps, gap_psns;          /* requests: forward jumps, PSNs jumped over */
	uint64_t late;                    /* requests: a PSN's first packet after a higher one */
	uint64_t missing;                 /* requests: PSNs of the span never seen */
	uint64_t reframed;                /* requests: PSNs sent again with another opcode or length */
	uint32_t reframed_frame;          /* ... the first such retransmission (frame number) */
	uint64_t acks, naks[ROCE_AETH_KINDS];
	uint64_t rnr_wait_us;             /* responses: sum of the RNR NAKs' timers */
	long peer;                        /* index of the paired flow, -1: none */
	uint32_t *by_psn;                 /* requests: packet indices by PSN (from start), then time */
};

struct roce_capture {
	const char *path;
	int link;
	bool nanosecond;                  /* the file's stamps are ns (else µs) */
	uint64_t frames, roce, other, truncated, malformed, ud, cnps;
	uint64_t first_ns, last_ns;
	uint32_t pmtu;                    /* payload of FIRST/MIDDLE packets: the path MTU (0: none seen) */
	struct roce_flow *flows;
	size_t nflows;
};

/* Read and decode a pcap file (libpcap, nanosecond precision). Returns 0, or
 * -1 with a message in err. */
int roce_capture_read(const char *path, struct roce_capture *c, char *err, size_t err_len);
/* The same from decoded packets (tests, the fuzz target); t_ns per packet. */
int roce_capture_add(struct roce_capture *c, const struct roce_pkt *k, uint64_t t_ns, uint32_t frame);
/* After the last add: figures, PSN index, pairing. */
int roce_capture_finish(struct roce_capture *c);
void roce_capture_free(struct roce_capture *c);

/* PSNs a request packet consumes: a READ request one per response packet. */
uint32_t roce_psns_of(const struct roce_capture *c, const struct roce_rec *r);
/* The transmissions of psn in a request flow: *first index into by_psn, count. */
size_t roce_flow_find_psn(const struct roce_flow *f, uint32_t psn, size_t *first);
/* "198.18.0.1 -> 198.18.0.2 qp 0x000011" */
void roce_flow_name(const struct roce_flow *f, char *buf, size_t len);

#endif
