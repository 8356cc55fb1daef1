/* SPDX-License-Identifier: BSD-2-Clause */
/* A --trace file of the same run joined with the wire: each WR with its
 * packets (QPN + PSN range), its first packet out, the ACK that retired it,
 * the retransmissions and NAKs between. The trace records QPNs (run
 * metadata) but no PSNs: the range of a send WR is derived from its QP's
 * starting PSN and the WRs before it; docs/capture-roce.md gives the
 * derivation and its assumptions, and every WR is checked against the
 * opcodes on the wire ("fits"). */
#ifndef PT_ROCE_JOIN_H
#define PT_ROCE_JOIN_H
#include "plugin/recorder/wrtrace.h"
#include "roce_wire.h"

/* A starting PSN given by the user (the "local address" line of our tools:
 * "QPN 0x0011 PSN 0x3a5f2c"): the local QP's first send PSN. */
struct roce_psn_hint {
	uint32_t qpn, psn;
};

/* What the trace does not say and the wire may not tell apart: the lab's
 * guests often give their QPs the same numbers, so a QPN can be a
 * destination in both directions. */
struct roce_join_opts {
	const struct roce_psn_hint *hints;
	size_t nhints;
	bool has_local;             /* the traced tool's host address is known */
	uint8_t local_version, local[16];
};

struct roce_wr {
	uint32_t run, qp, qpn, bytes;
	uint64_t seq, wr_id;
	uint8_t opcode, status;             /* the trace's (enum pt_plugin_opcode) */
	bool recv, posted, done;
	uint64_t t_post, t_comp;            /* trace clock (CLOCK_MONOTONIC_RAW of the tool's host) */
	bool found, fits;                   /* packets found; opcodes at both ends as derived */
	uint32_t psn_first, psn_last;
	long req_flow, resp_flow;
	uint64_t t_first_out, t_last_out, t_ack;  /* capture clock; 0: none */
	uint32_t packets, retransmits, naks[ROCE_AETH_KINDS];
	uint32_t first_nak_frame;           /* 0: none */
	uint32_t ack_frame;
};

struct roce_join {
	struct roce_wr *w;
	size_t n;
	/* capture clock - trace clock: bounded by "no packet before its post"
	 * (upper) and "no completion before its last ACK" (lower) */
	bool has_offset;
	int64_t offset_ns, offset_lo_ns, offset_hi_ns;
	uint64_t found, unfit, missing, with_retransmits, with_naks, failed;
	char why_missing[256];              /* the first reason a WR found no packets */
};

/* Join every WR of t with c. 0, or -1 with err (out of memory). */
int roce_join(const struct roce_capture *c, const struct wrt_trace *t,
	      const struct roce_join_opts *o, struct roce_join *j, char *err, size_t err_len);
void roce_join_free(struct roce_join *j);

/* Packets a send WR of bytes becomes at the path MTU (pmtu 0: one). */
uint32_t roce_wr_packets(uint32_t bytes, uint32_t pmtu);
/* The WR's time in the capture's clock (the offset applied). */
static inline uint64_t roce_wr_to_capture(const struct roce_join *j, uint64_t t)
{
	return (uint64_t)((int64_t)t + j->offset_ns);
}

#endif
