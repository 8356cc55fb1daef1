/* SPDX-License-Identifier: BSD-2-Clause */
/* The version exchange rules (pt_peer_rules, docs/wire-protocol.md §3) and
 * the messages whose size they decide: MTU M and sys data S.
 * fuzz-sources: perftest/wire/wire.c
 * fuzz-flags: -max_len=64
 *
 * Input: byte 0 picks the version we announce, the next 16 bytes are the
 * peer's raw version message (zero-padded if short), the rest is the peer's
 * MTU message and then a sys data value. */
#include <math.h>
#include "fuzz.h"
#include "perftest/wire/wire.h"

static const char *const ours_choices[] = {
	NULL, "6.06", "5.70", "6.28", "6.29", "6.3", "7.0", "",
};

static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static void check_rules(const char *peer, const char *ours)
{
	struct pt_peer_rules r;
	int rc = pt_peer_rules_init(&r, peer, ours);

	FUZZ_ASSERT(rc == 0 || rc == -1);
	FUZZ_ASSERT(r.compatible == (rc == 0));
	FUZZ_ASSERT(r.mtu_msg_size == 2 || r.mtu_msg_size == 4);
	FUZZ_ASSERT(r.iters_size == 4 || r.iters_size == 8);
	FUZZ_ASSERT(memchr(r.why, '\0', sizeof(r.why)));
	if (!peer) {
		FUZZ_ASSERT(rc == 0 && !r.known && !r.sysdata && !r.mtu_xchg);
		return;
	}
	FUZZ_ASSERT(r.known);
	FUZZ_ASSERT(memchr(r.version, '\0', sizeof(r.version)));
	FUZZ_ASSERT(strncmp(r.version, peer, PT_VERSION_LEN) == 0);
	FUZZ_ASSERT(strlen(r.shown) == strlen(r.version) && printable(r.shown));
	FUZZ_ASSERT(isfinite(r.ver));
	if (rc) {
		FUZZ_ASSERT(r.why[0] != '\0');
	} else {
		FUZZ_ASSERT(r.ver >= 5.70);
		/* every compatible peer gets the modern message sizes */
		FUZZ_ASSERT(r.sysdata && r.mtu_xchg);
		FUZZ_ASSERT(r.mtu_msg_size == 2 && r.iters_size == 8);
	}
	/* the size rules only ever grow with the version */
	FUZZ_ASSERT(!r.sysdata || r.mtu_xchg);
	FUZZ_ASSERT(r.iters_size == 4 || r.mtu_msg_size == 2);
	/* N is spoken only when a side is 6.28+, always with a 6.28 peer */
	FUZZ_ASSERT(!r.negotiate || r.peer_is_628plus || atof(ours ? ours : "") >= 6.28);
	if (r.ver >= 6.28 && r.ver < 6.29)
		FUZZ_ASSERT(r.negotiate);
}

static void check_mtu(const uint8_t *msg, size_t avail, size_t msg_size)
{
	uint8_t buf[PT_MTU_MSG_MAX] = { 0 };
	char enc[PT_MTU_MSG_MAX];
	int mtu = -7;

	memcpy(buf, msg, avail < msg_size ? avail : msg_size);
	if (pt_mtu_parse(buf, msg_size, &mtu) == 0) {
		FUZZ_ASSERT(mtu >= 1 && mtu <= 5);
		FUZZ_ASSERT(buf[0] == '0' + mtu && buf[1] == 0);
		FUZZ_ASSERT(pt_mtu_min(5, mtu) == mtu && pt_mtu_min(mtu, 1) == 1);
		FUZZ_ASSERT(pt_mtu_encode(mtu, msg_size, enc) == (int)msg_size);
		FUZZ_ASSERT(memcmp(enc, buf, 2) == 0);
	} else {
		FUZZ_ASSERT(mtu == -7);
	}
	/* lengths other than 2..4 are refused */
	FUZZ_ASSERT(pt_mtu_parse(buf, 1, &mtu) == -1);
	FUZZ_ASSERT(pt_mtu_parse(buf, PT_MTU_MSG_MAX + 1, &mtu) == -1);
}

static void check_sysdata(const uint8_t *in)
{
	int32_t v = -7;
	uint8_t out[4];

	if (pt_sysdata_parse(in, &v) == 0) {
		FUZZ_ASSERT(v > 0 && v <= PT_SYSDATA_MAX);
		pt_sysdata_encode(v, out);
		FUZZ_ASSERT(memcmp(in, out, 4) == 0);
		FUZZ_ASSERT(pt_sysdata_max(v, 1) == v);
	} else {
		FUZZ_ASSERT(v == -7);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t raw[PT_VERSION_LEN] = { 0 }, sys[4] = { 0 };
	char peer[PT_VERSION_LEN + 1], *text;
	struct pt_peer_rules r;
	const char *ours;
	size_t used;

	if (size < 1)
		return 0;
	ours = ours_choices[data[0] % (sizeof(ours_choices) / sizeof(ours_choices[0]))];
	used = size - 1 < PT_VERSION_LEN ? size - 1 : PT_VERSION_LEN;
	memcpy(raw, data + 1, used);
	pt_version_decode(raw, peer);
	FUZZ_ASSERT(peer[PT_VERSION_LEN] == '\0');
	check_rules(peer, ours);
	check_rules(NULL, ours);
	/* the whole input as a string: only 16 characters may count */
	text = fuzz_str(data + 1, size - 1);
	check_rules(text, ours);
	free(text);

	pt_peer_rules_init(&r, peer, ours);
	data += 1 + used;
	size -= 1 + used;
	check_mtu(data, size, r.mtu_msg_size);
	if (size > r.mtu_msg_size) {
		size_t n = size - r.mtu_msg_size;

		memcpy(sys, data + r.mtu_msg_size, n < 4 ? n : 4);
	}
	check_sysdata(sys);
	return 0;
}
