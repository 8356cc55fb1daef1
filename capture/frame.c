/* SPDX-License-Identifier: BSD-2-Clause */
#include <string.h>
#include "frame.h"

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

int cap_frame_parse(const uint8_t *buf, size_t len, struct cap_frame *f)
{
	size_t off = 12;
	uint16_t type;

	if (len < CAP_ETH_LEN)
		return -1;
	type = be16(buf + off);
	off += 2;
	if (type == 0x8100) {
		if (len < off + 4)
			return -1;
		type = be16(buf + off + 2);
		off += 4;
	}
	if (type != 0x0800 || len < off + CAP_IP_LEN)
		return -1;
	const uint8_t *ip = buf + off;
	size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
	size_t tot = be16(ip + 2);

	if ((ip[0] >> 4) != 4 || ihl < CAP_IP_LEN || ip[9] != 17 || len < off + ihl + CAP_UDP_LEN)
		return -1;
	/* fragments after the first carry no UDP header */
	if (be16(ip + 6) & 0x1fff)
		return -1;
	memcpy(&f->src, ip + 12, 4);
	memcpy(&f->dst, ip + 16, 4);
	const uint8_t *udp = ip + ihl;

	f->sport = be16(udp);
	f->dport = be16(udp + 2);
	f->app_off = off + ihl + CAP_UDP_LEN;
	f->app_len = len - f->app_off;
	/* the IP length may be shorter than the frame (Ethernet padding) */
	if (tot >= ihl + CAP_UDP_LEN && off + tot < len)
		f->app_len = off + tot - f->app_off;
	return 0;
}

int cap_frame_from_grh(uint8_t *out, const uint8_t *grh, uint32_t src_qp, uint32_t qkey,
		       size_t payload_len)
{
	const uint8_t *ip = grh + CAP_GRH_LEN - CAP_IP_LEN;
	size_t udp_len = CAP_UDP_LEN + CAP_BTH_DETH_LEN + payload_len + 4;  /* + ICRC */
	uint8_t *o = out;

	if ((ip[0] >> 4) != 4 || udp_len + CAP_IP_LEN > 0xffff)
		return -1;
	/* Ethernet: the group's IPv4 multicast MAC, a zero source (verbs hide it) */
	memset(o, 0, CAP_ETH_LEN);
	o[0] = 0x01; o[1] = 0x00; o[2] = 0x5e;
	o[3] = ip[17] & 0x7f; o[4] = ip[18]; o[5] = ip[19];
	put16(o + 12, 0x0800);
	o += CAP_ETH_LEN;
	memcpy(o, ip, CAP_IP_LEN);
	o[0] = 0x45;
	put16(o + 2, (uint16_t)(CAP_IP_LEN + udp_len));
	o[6] = 0x40;  /* one whole datagram: DF, no fragment offset */
	o[7] = 0;
	o[9] = 17;
	/* checksum recomputed over the rebuilt header */
	o[10] = o[11] = 0;
	uint32_t sum = 0;

	for (int i = 0; i < CAP_IP_LEN; i += 2)
		sum += be16(o + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(o + 10, (uint16_t)~sum);
	o += CAP_IP_LEN;
	put16(o, 0xc000);  /* rxe's source port range starts there */
	put16(o + 2, CAP_ROCE_PORT);
	put16(o + 4, (uint16_t)udp_len);
	put16(o + 6, 0);
	o += CAP_UDP_LEN;
	/* BTH: SEND Only on UD (0x64), P_Key 0xffff, dest QP 0xffffff (multicast) */
	memset(o, 0, CAP_BTH_DETH_LEN);
	o[0] = 0x64;
	put16(o + 2, 0xffff);
	put32(o + 4, 0xffffff);
	put32(o + 12, qkey);
	put32(o + 16, src_qp & 0xffffff);
	return 0;
}
