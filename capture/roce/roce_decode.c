/* SPDX-License-Identifier: BSD-2-Clause */
/* Frame -> RoCE v2 packet. Every read is checked against the captured
 * length first; the IP and UDP lengths bound what follows (Ethernet pads
 * short frames, so the frame may be longer than the datagram). */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "roce_decode.h"

enum {
	ETH_HLEN_ = 14, VLAN_HLEN = 4, SLL_HLEN = 16, SLL2_HLEN = 20,
	IP4_MIN = 20, IP6_HLEN = 40, UDP_HLEN = 8,
	BTH_LEN = 12, RETH_LEN = 16, AETH_LEN = 4, DETH_LEN = 8, IMM_LEN = 4, IETH_LEN = 4,
	ATOMIC_ETH_LEN = 28, ATOMIC_ACK_LEN = 8, CNP_RSVD = 16, ICRC_LEN = 4,
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* Extension headers after the BTH, by the low five bits of the opcode of
 * the reliable/unreliable connected transports (IBA vol. 1, table of
 * opcodes). */
enum { X_RETH = 1, X_AETH = 2, X_IMM = 4, X_IETH = 8, X_ATOMIC = 16, X_ATOMIC_ACK = 32, X_DETH = 64 };

static int rc_ext(uint8_t low)
{
	switch (low) {
	case 0x03: case 0x05: return X_IMM;             /* SEND_LAST/ONLY with immediate */
	case 0x06: case 0x0a: case 0x0c: return X_RETH; /* WRITE_FIRST, WRITE_ONLY, READ request */
	case 0x09: return X_IMM;                        /* WRITE_LAST with immediate */
	case 0x0b: return X_RETH | X_IMM;               /* WRITE_ONLY with immediate */
	case 0x0d: case 0x0f: case 0x10: case 0x11: return X_AETH;
	case 0x12: return X_AETH | X_ATOMIC_ACK;
	case 0x13: case 0x14: return X_ATOMIC;          /* compare & swap, fetch & add */
	case 0x16: case 0x17: return X_IETH;            /* SEND with invalidate */
	default: return 0;
	}
}

static bool rc_known(uint8_t low)
{
	return low <= 0x14 || low == 0x16 || low == 0x17;
}

static bool uc_known(uint8_t low)
{
	return low <= 0x0b;     /* SEND and WRITE only */
}

static enum roce_class class_of(uint8_t op)
{
	uint8_t low = op & 0x1f;

	if (op == ROCE_OP_CNP)
		return ROCE_CNP;
	if ((op & 0xe0) == ROCE_TR_RC || (op & 0xe0) == ROCE_TR_XRC)
		return (low >= 0x0d && low <= 0x12) ? ROCE_RESPONSE : ROCE_REQUEST;
	if ((op & 0xe0) == ROCE_TR_UC)
		return ROCE_REQUEST;
	return ROCE_OTHER;      /* UD is decoded but has no PSN order to follow */
}

/* The transport headers from p (len bytes: the UDP payload). */
/* len: the UDP payload's length; avail: how much of it was captured (a
 * snap length may cut the payload: the headers are enough). */
static enum roce_verdict decode_ib(const uint8_t *p, size_t len, size_t avail, struct roce_pkt *k)
{
	bool cut = avail < len;

	size_t off = BTH_LEN, need;
	uint8_t op, low;
	int ext = 0;

	if (avail < BTH_LEN)
		return cut ? ROCE_TRUNCATED : ROCE_MALFORMED;
	op = p[0];
	low = op & 0x1f;
	k->opcode = op;
	k->solicited = p[1] & 0x80;
	k->pad = (p[1] >> 4) & 3;
	if ((p[1] & 0x0f) != 0)         /* transport header version 0 is the only one */
		return ROCE_MALFORMED;
	k->pkey = be16(p + 2);
	k->dest_qp = be24(p + 5);
	k->ack_req = p[8] & 0x80;
	k->psn = be24(p + 9);
	switch (op & 0xe0) {
	case ROCE_TR_RC:
		if (!rc_known(low))
			return ROCE_MALFORMED;
		ext = rc_ext(low);
		break;
	case ROCE_TR_UC:
		if (!uc_known(low))
			return ROCE_MALFORMED;
		ext = rc_ext(low);
		break;
	case ROCE_TR_UD:
		if (low != 0x04 && low != 0x05)
			return ROCE_MALFORMED;
		ext = X_DETH | (low == 0x05 ? X_IMM : 0);
		break;
	case ROCE_TR_CNP:
		if (op != ROCE_OP_CNP)
			return ROCE_MALFORMED;
		off += CNP_RSVD;
		break;
	default:
		break;                  /* RD, XRC, vendor: BTH only */
	}
	k->cls = class_of(op);
	need = off + (ext & X_DETH ? DETH_LEN : 0) + (ext & X_RETH ? RETH_LEN : 0) +
	       (ext & X_ATOMIC ? ATOMIC_ETH_LEN : 0) + (ext & X_AETH ? AETH_LEN : 0) +
	       (ext & X_ATOMIC_ACK ? ATOMIC_ACK_LEN : 0) + (ext & X_IMM ? IMM_LEN : 0) +
	       (ext & X_IETH ? IETH_LEN : 0);
	if (len < need + ICRC_LEN)
		return ROCE_MALFORMED;
	if (avail < need)
		return ROCE_TRUNCATED;
	if (ext & X_DETH) {
		k->has_deth = true;
		k->qkey = be32(p + off);
		k->src_qp = be24(p + off + 5);
		off += DETH_LEN;
	}
	if (ext & X_RETH) {
		k->has_reth = true;
		k->va = be64(p + off);
		k->rkey = be32(p + off + 8);
		k->dma_len = be32(p + off + 12);
		off += RETH_LEN;
	}
	if (ext & X_ATOMIC) {
		k->has_atomic = true;
		k->va = be64(p + off);
		k->rkey = be32(p + off + 8);
		k->dma_len = 8;
		off += ATOMIC_ETH_LEN;
	}
	if (ext & X_AETH) {
		k->has_aeth = true;
		k->syndrome = p[off];
		k->msn = be24(p + off + 1);
		off += AETH_LEN;
	}
	if (ext & X_ATOMIC_ACK)
		off += ATOMIC_ACK_LEN;
	if (ext & (X_IMM | X_IETH)) {
		k->has_imm = true;
		off += IMM_LEN;
	}
	if (len - off - ICRC_LEN < k->pad)
		return ROCE_MALFORMED;
	k->payload = (uint32_t)(len - off - ICRC_LEN - k->pad);
	return ROCE_OK;
}

/* From the network header: IP version, UDP 4791, lengths. */
static enum roce_verdict decode_ip(uint16_t ethertype, const uint8_t *p, size_t cap, struct roce_pkt *k)
{
	size_t ihl, ip_len, udp_len;
	const uint8_t *udp;

	if (ethertype == 0x0800) {
		if (cap < IP4_MIN)
			return ROCE_NOT_ROCE;   /* too short to tell: not ours to count */
		if ((p[0] >> 4) != 4 || (ihl = (size_t)(p[0] & 0x0f) * 4) < IP4_MIN || p[9] != 17)
			return ROCE_NOT_ROCE;
		if ((be16(p + 6) & 0x3fff) != 0)
			return ROCE_NOT_ROCE;   /* a fragment: RoCE never fragments */
		ip_len = be16(p + 2);
		if (ip_len < ihl + UDP_HLEN || cap < ihl + UDP_HLEN)
			return ROCE_NOT_ROCE;
		k->ip_version = 4;
		memcpy(k->src, p + 12, 4);
		memcpy(k->dst, p + 16, 4);
	} else if (ethertype == 0x86dd) {
		if (cap < IP6_HLEN + UDP_HLEN || (p[0] >> 4) != 6 || p[6] != 17)
			return ROCE_NOT_ROCE;
		ihl = IP6_HLEN;
		ip_len = IP6_HLEN + be16(p + 4);
		k->ip_version = 6;
		memcpy(k->src, p + 8, 16);
		memcpy(k->dst, p + 24, 16);
	} else {
		return ROCE_NOT_ROCE;
	}
	udp = p + ihl;
	k->sport = be16(udp);
	k->dport = be16(udp + 2);
	if (k->dport != ROCE_UDP_PORT)
		return ROCE_NOT_ROCE;
	udp_len = be16(udp + 4);
	if (udp_len < UDP_HLEN || ihl + udp_len > ip_len)
		return ROCE_MALFORMED;
	/* the datagram as far as it was captured */
	return decode_ib(udp + UDP_HLEN, udp_len - UDP_HLEN,
			 cap >= ihl + udp_len ? udp_len - UDP_HLEN : cap - ihl - UDP_HLEN, k);
}

enum roce_verdict roce_decode(int link, const uint8_t *f, size_t cap, uint32_t wire_len,
			      struct roce_pkt *k)
{
	size_t off;
	uint16_t type;

	memset(k, 0, sizeof(*k));
	k->frame_len = wire_len;
	switch (link) {
	case ROCE_LINK_ETHERNET:
		if (cap < ETH_HLEN_)
			return ROCE_NOT_ROCE;
		type = be16(f + 12);
		off = ETH_HLEN_;
		/* 802.1Q / 802.1ad tags, stacked */
		while ((type == 0x8100 || type == 0x88a8) && cap >= off + VLAN_HLEN) {
			type = be16(f + off + 2);
			off += VLAN_HLEN;
		}
		if (type == 0x8100 || type == 0x88a8)
			return ROCE_NOT_ROCE;
		break;
	case ROCE_LINK_LINUX_SLL:
		if (cap < SLL_HLEN)
			return ROCE_NOT_ROCE;
		type = be16(f + 14);
		off = SLL_HLEN;
		break;
	case ROCE_LINK_LINUX_SLL2:
		if (cap < SLL2_HLEN)
			return ROCE_NOT_ROCE;
		type = be16(f);
		off = SLL2_HLEN;
		break;
	default:
		return ROCE_MALFORMED;
	}
	return decode_ip(type, f + off, cap - off, k);
}

static const char *const rc_names[0x18] = {
	"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_IMM", "SEND_ONLY", "SEND_ONLY_IMM",
	"WRITE_FIRST", "WRITE_MIDDLE", "WRITE_LAST", "WRITE_LAST_IMM", "WRITE_ONLY",
	"WRITE_ONLY_IMM", "READ_REQUEST", "READ_RESPONSE_FIRST", "READ_RESPONSE_MIDDLE",
	"READ_RESPONSE_LAST", "READ_RESPONSE_ONLY", "ACK", "ATOMIC_ACK", "COMPARE_SWAP",
	"FETCH_ADD", NULL, "SEND_LAST_INV", "SEND_ONLY_INV",
};

const char *roce_opcode_name(uint8_t op, char *buf, size_t len)
{
	const char *tr = NULL;
	uint8_t low = op & 0x1f;

	switch (op & 0xe0) {
	case ROCE_TR_RC: tr = "RC"; break;
	case ROCE_TR_UC: tr = uc_known(low) ? "UC" : NULL; break;
	case ROCE_TR_UD: tr = (low == 4 || low == 5) ? "UD" : NULL; break;
	case ROCE_TR_XRC: tr = "XRC"; break;
	default: break;
	}
	if (op == ROCE_OP_CNP)
		snprintf(buf, len, "CNP");
	else if (tr && low < 0x18 && rc_names[low])
		snprintf(buf, len, "%s_%s", tr, rc_names[low]);
	else
		snprintf(buf, len, "0x%02x", op);
	return buf;
}

bool roce_op_first(uint8_t op)
{
	uint8_t low = op & 0x1f;

	return low == 0x00 || low == 0x04 || low == 0x05 || low == 0x06 || low == 0x0a ||
	       low == 0x0b || low == 0x0c || low == 0x0d || low == 0x10 || low == 0x13 ||
	       low == 0x14 || low == 0x17;
}

bool roce_op_last(uint8_t op)
{
	uint8_t low = op & 0x1f;

	return (low >= 0x02 && low <= 0x05) || (low >= 0x08 && low <= 0x0c) || low == 0x0f ||
	       low == 0x10 || low == 0x13 || low == 0x14 || low == 0x16 || low == 0x17;
}

bool roce_op_consumes_recv(uint8_t op)
{
	uint8_t low = op & 0x1f;

	/* a SEND's last (or only) packet, or the WRITE's that carries immediate data */
	return (low >= 0x02 && low <= 0x05) || low == 0x16 || low == 0x17 || low == 0x09 || low == 0x0b;
}

bool roce_op_is_read_request(uint8_t op)
{
	return (op & 0x1f) == 0x0c && (op & 0xe0) != ROCE_TR_UC;
}

enum roce_aeth_kind roce_aeth_kind(uint8_t syn)
{
	switch ((syn >> 5) & 3) {
	case 0: return ROCE_ACK;
	case 1: return ROCE_NAK_RNR;
	case 3:
		switch (syn & 0x1f) {
		case 0: return ROCE_NAK_PSN_SEQ;
		case 1: return ROCE_NAK_INVALID;
		case 2: return ROCE_NAK_ACCESS;
		case 3: return ROCE_NAK_OPERATION;
		default: return ROCE_NAK_OTHER;
		}
	default: return ROCE_NAK_OTHER;
	}
}

const char *roce_aeth_kind_name(enum roce_aeth_kind k)
{
	static const char *const names[ROCE_AETH_KINDS] = {
		"ack", "rnr", "psn_sequence_error", "invalid_request", "remote_access_error",
		"remote_operational_error", "other_nak",
	};

	return k < ROCE_AETH_KINDS ? names[k] : "?";
}

uint32_t roce_rnr_wait_us(uint8_t syn)
{
	/* the RNR timer encoding (the same table ibv_modify_qp's min_rnr_timer uses) */
	static const uint32_t us[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920,
		122880, 163840, 245760, 327680, 491520,
	};

	return us[syn & 0x1f];
}

void roce_addr_text(uint8_t v, const uint8_t *a, char *buf, size_t len)
{
	if (!inet_ntop(v == 6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}
