/* SPDX-License-Identifier: BSD-2-Clause */
/* RoCE v2 frames as they cross the wire (Ethernet / IPv4 or IPv6 / UDP 4791 /
 * InfiniBand transport headers): one captured frame in, one decoded packet
 * out, or the reason it is not one. Header layouts: the InfiniBand
 * Architecture Specification vol. 1 (BTH, RETH, AETH, DETH, AtomicETH) and
 * its RoCE v2 annex (UDP port 4791, CNP opcode 0x81); docs/capture-roce.md
 * lists what is decoded. Reads only the bytes it is given (fuzzed:
 * tests/fuzz/fuzz_roce.c). */
#ifndef PT_ROCE_DECODE_H
#define PT_ROCE_DECODE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ROCE_UDP_PORT 4791
#define ROCE_PSN_MASK 0xffffffu

/* Link types of pcap files (the numbers are libpcap's DLT_ values). */
enum roce_link { ROCE_LINK_ETHERNET = 1, ROCE_LINK_LINUX_SLL = 113, ROCE_LINK_LINUX_SLL2 = 276 };

enum roce_verdict {
	ROCE_OK = 0,
	ROCE_NOT_ROCE,      /* a good frame of something else (ARP, TCP, other UDP) */
	ROCE_TRUNCATED,     /* a RoCE frame cut short (snap length, damage) */
	ROCE_MALFORMED,     /* UDP 4791 that does not hold a valid transport header */
};

/* What a packet is to its queue pair. */
enum roce_class {
	ROCE_REQUEST,       /* SEND, WRITE, READ request, atomic: requester -> responder */
	ROCE_RESPONSE,      /* ACK/NAK, READ response, atomic ACK: responder -> requester */
	ROCE_CNP,           /* congestion notification (opcode 0x81) */
	ROCE_OTHER,         /* a transport/opcode we do not follow */
};

/* The AETH syndrome, by kind. */
enum roce_aeth_kind {
	ROCE_ACK,
	ROCE_NAK_RNR,
	ROCE_NAK_PSN_SEQ,   /* PSN sequence error: the responder wants the PSN it names */
	ROCE_NAK_INVALID,   /* invalid request (a requester sees completion status 9) */
	ROCE_NAK_ACCESS,    /* remote access error (status 10) */
	ROCE_NAK_OPERATION, /* remote operational error (status 11) */
	ROCE_NAK_OTHER,     /* invalid RD request, reserved codes */
	ROCE_AETH_KINDS,
};

/* BTH opcodes we name (the transport is the top three bits). */
enum {
	ROCE_TR_RC = 0x00, ROCE_TR_UC = 0x20, ROCE_TR_RD = 0x40, ROCE_TR_UD = 0x60,
	ROCE_TR_CNP = 0x80, ROCE_TR_XRC = 0xa0,
	ROCE_OP_CNP = 0x81,
};

struct roce_pkt {
	uint32_t frame_len;         /* bytes on the wire */
	uint8_t ip_version;         /* 4 or 6 */
	uint8_t src[16], dst[16];   /* IPv4 in the first 4 bytes */
	uint16_t sport, dport;
	/* BTH */
	uint8_t opcode, pad;
	bool solicited, ack_req;
	uint16_t pkey;
	uint32_t dest_qp, psn;
	/* extension headers present */
	bool has_reth, has_aeth, has_deth, has_imm, has_atomic;
	uint64_t va;                /* RETH or AtomicETH */
	uint32_t rkey, dma_len;     /* RETH (dma_len) */
	uint8_t syndrome;           /* AETH */
	uint32_t msn;
	uint32_t qkey, src_qp;      /* DETH */
	uint32_t payload;           /* bytes after the headers, before pad and ICRC */
	enum roce_class cls;
};

/* Decode one frame of a capture whose link type is link. pkt is filled
 * only for ROCE_OK; a frame of another link type is ROCE_MALFORMED. */
enum roce_verdict roce_decode(int link, const uint8_t *frame, size_t caplen, uint32_t wire_len,
			      struct roce_pkt *pkt);

/* "SEND_FIRST", "RC_ACK", ... ("0x5f" style for unnamed ones, in buf). */
const char *roce_opcode_name(uint8_t opcode, char *buf, size_t len);

/* Message position of a request or read-response opcode. */
bool roce_op_first(uint8_t opcode);     /* FIRST or ONLY (or a READ request, an atomic) */
bool roce_op_last(uint8_t opcode);      /* LAST or ONLY (or a READ request, an atomic) */
/* The last packet of a message that consumes a receive WQE (SEND, WRITE with immediate). */
bool roce_op_consumes_recv(uint8_t opcode);
bool roce_op_is_read_request(uint8_t opcode);

enum roce_aeth_kind roce_aeth_kind(uint8_t syndrome);
const char *roce_aeth_kind_name(enum roce_aeth_kind k);
/* An RNR NAK's timer: the wait it asks for, in microseconds. */
uint32_t roce_rnr_wait_us(uint8_t syndrome);

/* 24-bit PSN arithmetic: a - b as a signed distance (-2^23 .. 2^23-1). */
static inline int32_t roce_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

/* The PSNs from b forward to a (0 .. 2^24-1): a span's length, where a
 * signed distance would turn negative past 2^23. */
static inline uint32_t roce_psn_dist(uint32_t a, uint32_t b)
{
	return (a - b) & ROCE_PSN_MASK;
}

/* Whether psn lies in the span from start forward to end (end excluded). */
static inline bool roce_psn_in(uint32_t psn, uint32_t start, uint32_t end)
{
	return roce_psn_dist(psn, start) < roce_psn_dist(end, start);
}

static inline uint32_t roce_psn_add(uint32_t a, int32_t n)
{
	return (a + (uint32_t)n) & ROCE_PSN_MASK;
}

/* Address text: dotted IPv4 or IPv6. */
void roce_addr_text(uint8_t ip_version, const uint8_t *addr, char *buf, size_t len);

#endif
