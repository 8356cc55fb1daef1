/* SPDX-License-Identifier: BSD-2-Clause */
/* Out-of-band wire formats, see wire.h and docs/wire-protocol.md. */
#include <endian.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wire.h"

size_t pt_key_msg_size_dv(int use_gid, int dv)
{
	if (dv)
		return use_gid ? PT_KEY_MSG_SIZE_GID_DV : PT_KEY_MSG_SIZE_DV;
	return use_gid ? PT_KEY_MSG_SIZE_GID : PT_KEY_MSG_SIZE;
}

size_t pt_key_msg_size(int use_gid)
{
	return pt_key_msg_size_dv(use_gid, 0);
}

int pt_key_encode_dv(const struct pt_key *k, int use_gid, int dv, char *buf, size_t len)
{
	char tmp[PT_KEY_MSG_MAX + 16];
	size_t want = pt_key_msg_size_dv(use_gid, dv);
	int n;

	if (!k || !buf || len < want)
		return -1;
	/* Wider values would lengthen the text and desync the stream. */
	if (k->qpn > 0xffffff || k->psn > 0xffffff)
		return -1;
	n = snprintf(tmp, sizeof(tmp), "%04x:%04x:%06x:%06x:%08x:%016llx:",
		     k->lid, k->out_reads, k->qpn, k->psn, k->rkey,
		     (unsigned long long)k->vaddr);
	if (dv)
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "%016llx:",
			      (unsigned long long)k->tail_vaddr);
	if (use_gid) {
		for (int i = 0; i < 16; i++)
			n += snprintf(tmp + n, sizeof(tmp) - (size_t)n,
				      "%02x:", k->gid[i]);
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "%08x:",
			      k->srqn);
	} else {
		n += snprintf(tmp + n, sizeof(tmp) - (size_t)n, "%08x",
			      k->srqn);
	}
	if ((size_t)n != want - 1)
		return -1;
	memcpy(buf, tmp, want); /* includes the NUL, which is sent too */
	return (int)want;
}

int pt_key_encode(const struct pt_key *k, int use_gid, char *buf, size_t len)
{
	return pt_key_encode_dv(k, use_gid, 0, buf, len);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly width hex digits at *p (bounded by end), then advance. */
static int take_hex(const char **p, const char *end, unsigned width,
		    uint64_t *out)
{
	uint64_t v = 0;

	if ((size_t)(end - *p) < width)
		return -1;
	for (unsigned i = 0; i < width; i++) {
		int d = hexval((*p)[i]);

		if (d < 0)
			return -1;
		v = v << 4 | (uint64_t)d;
	}
	*p += width;
	*out = v;
	return 0;
}

static int take_char(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -1;
	(*p)++;
	return 0;
}

/* Offsets of the raw struct: 4-byte ints, vaddr 8-aligned, then (6.29) the
 * tail-marker address, the GID, srqn and gid_index. */
#define RAW_LID 0
#define RAW_OUT_READS 4
#define RAW_QPN 8
#define RAW_PSN 12
#define RAW_RKEY 16
#define RAW_VADDR 24
#define RAW_GID(l) ((l) == PT_CM_KEY_SIZE_629 ? 40 : 32)

int pt_key_raw_encode(const struct pt_key *k, size_t layout, uint8_t *out)
{
	size_t g = RAW_GID(layout);

	if (!k || !out || (layout != PT_CM_KEY_SIZE && layout != PT_CM_KEY_SIZE_629) ||
	    k->qpn > 0xffffff || k->psn > 0xffffff)
		return -1;
	memset(out, 0, layout);
	pt_be32_put(k->lid, out + RAW_LID);
	pt_be32_put(k->out_reads, out + RAW_OUT_READS);
	pt_be32_put(k->qpn, out + RAW_QPN);
	pt_be32_put(k->psn, out + RAW_PSN);
	pt_be32_put(k->rkey, out + RAW_RKEY);
	pt_be64_put(k->vaddr, out + RAW_VADDR);
	memcpy(out + g, k->gid, 16);
	pt_be32_put(k->srqn, out + g + 16);
	pt_be32_put((uint32_t)k->gid_index, out + g + 20);
	return (int)layout;
}

int pt_key_raw_parse(const void *buf, size_t len, size_t layout, struct pt_key *k)
{
	const uint8_t *in = buf;
	uint32_t lid, out_reads, qpn, psn;
	size_t g = RAW_GID(layout);

	if (!k)
		return -1;
	memset(k, 0, sizeof(*k));
	if (!buf || len != layout || (layout != PT_CM_KEY_SIZE && layout != PT_CM_KEY_SIZE_629))
		return -1;
	lid = pt_be32_get(in + RAW_LID);
	out_reads = pt_be32_get(in + RAW_OUT_READS);
	qpn = pt_be32_get(in + RAW_QPN);
	psn = pt_be32_get(in + RAW_PSN);
	if (lid > 0xffff || out_reads > 0xffff || qpn > 0xffffff || psn > 0xffffff)
		return -1;
	k->lid = (uint16_t)lid;
	k->out_reads = (uint16_t)out_reads;
	k->qpn = qpn;
	k->psn = psn;
	k->rkey = pt_be32_get(in + RAW_RKEY);
	k->vaddr = pt_be64_get(in + RAW_VADDR);
	memcpy(k->gid, in + g, 16);
	k->srqn = pt_be32_get(in + g + 16);
	k->gid_index = (int32_t)pt_be32_get(in + g + 20);
	return 0;
}

int pt_key_parse(const void *buf, size_t len, int use_gid, struct pt_key *k)
{
	return pt_key_parse_dv(buf, len, use_gid, 0, k);
}

int pt_key_parse_dv(const void *buf, size_t len, int use_gid, int dv, struct pt_key *k)
{
	static const unsigned widths[] = { 4, 4, 6, 6, 8, 16, 16 };
	const unsigned nfields = dv ? 7 : 6;   /* dv: tail_vaddr after vaddr */
	const char *s = buf, *p = buf, *end;
	uint64_t v[7] = { 0 }, x;

	if (!k)
		return -1;
	memset(k, 0, sizeof(*k));
	if (!buf || len != pt_key_msg_size_dv(use_gid, dv))
		return -1;
	/* NUL at the end; an earlier NUL fails the field walk below. */
	if (s[len - 1] != '\0')
		return -1;
	end = s + len - 1;
	for (unsigned i = 0; i < nfields; i++)
		if (take_hex(&p, end, widths[i], &v[i]) ||
		    take_char(&p, end, ':'))
			goto bad;
	if (use_gid) {
		for (unsigned i = 0; i < 16; i++) {
			if (take_hex(&p, end, 2, &x) || take_char(&p, end, ':'))
				goto bad;
			k->gid[i] = (uint8_t)x;
		}
	}
	if (take_hex(&p, end, 8, &x))
		goto bad;
	if (use_gid && take_char(&p, end, ':'))
		goto bad;
	if (p != end)
		goto bad;
	k->lid = (uint16_t)v[0];
	k->out_reads = (uint16_t)v[1];
	k->qpn = (uint32_t)v[2];
	k->psn = (uint32_t)v[3];
	k->rkey = (uint32_t)v[4];
	k->vaddr = v[5];
	k->tail_vaddr = v[6];
	k->srqn = (uint32_t)x;
	return 0;
bad:
	memset(k, 0, sizeof(*k));
	return -1;
}

void pt_version_encode(const char *ver, uint8_t out[PT_VERSION_LEN])
{
	memset(out, 0, PT_VERSION_LEN);
	if (ver)
		memcpy(out, ver, strnlen(ver, PT_VERSION_LEN));
}

void pt_version_decode(const uint8_t raw[PT_VERSION_LEN],
		       char out[PT_VERSION_LEN + 1])
{
	memcpy(out, raw, PT_VERSION_LEN);
	out[PT_VERSION_LEN] = '\0';
}

void pt_str_printable(const char *s, char *out, size_t outlen)
{
	size_t i = 0;

	if (!outlen)
		return;
	for (; s && s[i] && i + 1 < outlen; i++) {
		unsigned char c = (unsigned char)s[i];

		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[i] = '\0';
}

int pt_peer_rules_init(struct pt_peer_rules *r, const char *peer,
		       const char *ours)
{
	float f;
	double our_ver;

	memset(r, 0, sizeof(*r));
	if (!ours)
		ours = WIRE_VERSION;
	if (!peer) {
		/* --dont_xchg_versions: upstream would compare "" and abort;
		 * we trust the user and assume a modern compatible peer. S and
		 * M are skipped, as upstream skips them in that mode. */
		r->compatible = 1;
		r->cm_key_size = atof(ours) >= 6.29 ? PT_CM_KEY_SIZE_629 : PT_CM_KEY_SIZE;
		r->mtu_msg_size = 2;
		r->iters_size = 8;
		return 0;
	}
	r->known = 1;
	snprintf(r->version, sizeof(r->version), "%.*s", PT_VERSION_LEN, peer);
	pt_str_printable(r->version, r->shown, sizeof(r->shown));
	r->ver = atof(r->version);
	if (!isfinite(r->ver)) /* "nan"/"inf" would slip past comparisons */
		r->ver = 0;
	/* Upstream passes atof through a float for these three checks:
	 * (float)5.31 < 5.31, so "5.31" counts as older than 5.31. */
	f = (float)r->ver;
	r->mtu_xchg = (double)f >= 5.1;
	r->mtu_msg_size = (double)f >= 5.31 ? 2 : 4;
	r->iters_size = (double)f >= 5.33 ? 8 : 4;
	r->sysdata = r->ver >= 5.32;
	r->peer_is_628plus = r->ver >= 6.28;
	r->neg_629 = r->ver >= 6.29;
	/* A 6.29+ build sends and parses the 64-byte layout whoever its peer
	 * is. We announce 6.06, so the peer decides; a test announcing 6.29
	 * plays such a build. */
	r->cm_key_size = r->ver >= 6.29 || atof(ours) >= 6.29 ? PT_CM_KEY_SIZE_629 : PT_CM_KEY_SIZE;
	/* the same rule for 6.29's longer text keys with --data_validation */
	r->key_dv_629 = r->ver >= 6.29 || atof(ours) >= 6.29;
	/* A 6.28 build always negotiates, 6.29+ only with a peer that announces
	 * 6.28 or later. We announce 6.06, so only a 6.28 peer makes us speak N;
	 * a test announcing 6.28 plays such a build and negotiates with anyone. */
	our_ver = atof(ours);
	r->negotiate = (r->peer_is_628plus && (r->ver < 6.29 || our_ver >= 6.28)) ||
		       (our_ver >= 6.28 && our_ver < 6.29);
	if (!(r->ver >= 5.70)) {
		snprintf(r->why, sizeof(r->why),
			 "peer perftest version '%s' is older than %s, the oldest compatible with this build (we are %.16s)",
			 r->shown, PT_OLDEST_PEER, ours);
		return -1;
	}
	r->compatible = 1;
	return 0;
}

int pt_mtu_encode(int mtu, size_t msg_size, char *buf)
{
	if (!buf || mtu < 1 || mtu > 5 || (msg_size != 2 && msg_size != 4))
		return -1;
	memset(buf, 0, msg_size);
	buf[0] = (char)('0' + mtu);
	return (int)msg_size;
}

int pt_mtu_parse(const void *buf, size_t len, int *mtu)
{
	const char *s = buf;

	if (!buf || !mtu || len < 2 || len > PT_MTU_MSG_MAX)
		return -1;
	/* One digit 1..5 then NUL; the bytes after the NUL are padding. */
	if (s[0] < '1' || s[0] > '5' || s[1] != '\0')
		return -1;
	*mtu = s[0] - '0';
	return 0;
}

void pt_be32_put(uint32_t v, uint8_t out[4])
{
	v = htobe32(v);
	memcpy(out, &v, 4);
}

uint32_t pt_be32_get(const uint8_t in[4])
{
	uint32_t v;

	memcpy(&v, in, 4);
	return be32toh(v);
}

void pt_be64_put(uint64_t v, uint8_t out[8])
{
	v = htobe64(v);
	memcpy(out, &v, 8);
}

uint64_t pt_be64_get(const uint8_t in[8])
{
	uint64_t v;

	memcpy(&v, in, 8);
	return be64toh(v);
}

void pt_double_put(double d, uint8_t out[8])
{
	uint64_t v;

	memcpy(&v, &d, 8);
	pt_be64_put(v, out);
}

double pt_double_get(const uint8_t in[8])
{
	uint64_t v = pt_be64_get(in);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

void pt_sysdata_encode(int32_t v, uint8_t out[4])
{
	pt_be32_put((uint32_t)v, out);
}

int pt_sysdata_parse(const uint8_t in[4], int32_t *v)
{
	int32_t x = (int32_t)pt_be32_get(in);

	if (x <= 0 || x > PT_SYSDATA_MAX)
		return -1;
	*v = x;
	return 0;
}

int pt_bw_field_encode(const struct pt_bw_report *r, enum pt_bw_field f,
		       size_t iters_size, uint8_t out[8])
{
	switch (f) {
	case PT_BW_SIZE:
		pt_be64_put(r->size, out);
		return 8;
	case PT_BW_ITERS:
		if (iters_size == 8) {
			pt_be64_put(r->iters, out);
			return 8;
		}
		if (iters_size == 4) {
			pt_be32_put((uint32_t)r->iters, out);
			return 4;
		}
		return -1;
	case PT_BW_PEAK:
		pt_double_put(r->bw_peak, out);
		return 8;
	case PT_BW_AVG:
		pt_double_put(r->bw_avg, out);
		return 8;
	case PT_BW_MSGRATE:
		pt_double_put(r->msg_rate, out);
		return 8;
	case PT_BW_AVG_P1:
	case PT_BW_AVG_P2:
		pt_double_put(r->bw_avg_port[f == PT_BW_AVG_P2], out);
		return 8;
	case PT_BW_MSGRATE_P1:
	case PT_BW_MSGRATE_P2:
		pt_double_put(r->msg_rate_port[f == PT_BW_MSGRATE_P2], out);
		return 8;
	default:
		return -1;
	}
}

int pt_bw_field_decode(struct pt_bw_report *r, enum pt_bw_field f,
		       size_t iters_size, const uint8_t in[8])
{
	switch (f) {
	case PT_BW_SIZE:
		r->size = pt_be64_get(in);
		return 8;
	case PT_BW_ITERS:
		if (iters_size == 8) {
			r->iters = pt_be64_get(in);
			return 8;
		}
		if (iters_size == 4) {
			r->iters = pt_be32_get(in);
			return 4;
		}
		return -1;
	case PT_BW_PEAK:
		r->bw_peak = pt_double_get(in);
		return 8;
	case PT_BW_AVG:
		r->bw_avg = pt_double_get(in);
		return 8;
	case PT_BW_MSGRATE:
		r->msg_rate = pt_double_get(in);
		return 8;
	case PT_BW_AVG_P1:
	case PT_BW_AVG_P2:
		r->bw_avg_port[f == PT_BW_AVG_P2] = pt_double_get(in);
		return 8;
	case PT_BW_MSGRATE_P1:
	case PT_BW_MSGRATE_P2:
		r->msg_rate_port[f == PT_BW_MSGRATE_P2] = pt_double_get(in);
		return 8;
	default:
		return -1;
	}
}

int pt_bw_report_check(const struct pt_bw_report *r, char *why, size_t len)
{
	const struct { const char *name; double v; } f[] = {
		{ "peak bandwidth", r->bw_peak },
		{ "average bandwidth", r->bw_avg },
		{ "message rate", r->msg_rate },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		/* written so that NaN fails too */
		if (f[i].v >= 0 && f[i].v <= PT_BW_REPORT_MAX)
			continue;
		if (why && len)
			snprintf(why, len, "%s %g is not a number in 0..%g",
				 f[i].name, f[i].v, PT_BW_REPORT_MAX);
		return -1;
	}
	return 0;
}
