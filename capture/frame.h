/* SPDX-License-Identifier: BSD-2-Clause */
/* Ethernet / IPv4 / UDP frames as the capture engine sees them: the parser
 * every backend's bytes go through (fuzzed: tests/fuzz/fuzz_capframe.c), and
 * the frame the `ud` backend rebuilds from a GRH so that its pcap decodes as
 * RoCE v2 (capture/rdmacap.8, "ud"). */
#ifndef CAP_FRAME_H
#define CAP_FRAME_H
#include <stddef.h>
#include <stdint.h>

#define CAP_ETH_LEN 14
#define CAP_IP_LEN 20
#define CAP_UDP_LEN 8
#define CAP_ROCE_PORT 4791
/* BTH (12) + DETH (8): what a UD SEND carries in front of its payload. */
#define CAP_BTH_DETH_LEN 20
#define CAP_GRH_LEN 40
/* Ethernet + IPv4 + UDP + BTH + DETH of a rebuilt UD frame. */
#define CAP_UD_WIRE_HDR (CAP_ETH_LEN + CAP_IP_LEN + CAP_UDP_LEN + CAP_BTH_DETH_LEN)

/* What the engine needs of one frame; addresses in network order. */
struct cap_frame {
	uint32_t src, dst;      /* IPv4 */
	uint16_t sport, dport;  /* UDP, host order */
	size_t app_off;         /* first byte after the UDP header */
	size_t app_len;         /* UDP payload bytes present in the frame */
};

/* Parse an Ethernet frame (one 802.1Q tag allowed) carrying IPv4/UDP.
 * Returns 0, or -1 when the frame is not IPv4/UDP or is cut short. */
int cap_frame_parse(const uint8_t *buf, size_t len, struct cap_frame *f);

/* Write the Ethernet + IPv4 + UDP(4791) + BTH + DETH headers (CAP_UD_WIRE_HDR
 * bytes) of a UD SEND received with GRH grh (40 bytes, IPv4 in its last 20:
 * RoCE v2), payload_len bytes after it. PSN is not known to verbs: 0.
 * Returns 0, or -1 when the GRH holds no IPv4 header. */
int cap_frame_from_grh(uint8_t *out, const uint8_t *grh, uint32_t src_qp, uint32_t qkey,
		       size_t payload_len);

#endif
