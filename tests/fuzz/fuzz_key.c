/* SPDX-License-Identifier: BSD-2-Clause */
/* The key message K (docs/wire-protocol.md §5): 59-byte text, or 108 with the GID.
 * fuzz-sources: perftest/wire/wire.c
 * fuzz-flags: -max_len=256
 *
 * Properties: a rejected message leaves the key zeroed; an accepted one
 * re-encodes to the same text (hex case aside); any key with 24-bit QPN/PSN
 * survives encode -> parse unchanged, and wider ones are refused. The raw
 * rdma_cm layouts (56 and 64 bytes, docs/wire-protocol.md §9.2) likewise: an accepted struct
 * re-encodes to the same bytes but for padding and the tail-marker address,
 * which we never use. */
#include <ctype.h>
#include "fuzz.h"
#include "perftest/wire/wire.h"

/* Parse exactly n bytes at data and check what the parser claims. */
static void parse_and_check(const uint8_t *data, size_t n, int use_gid)
{
	char *buf = fuzz_dup(data, n);
	char again[PT_KEY_MSG_MAX];
	struct pt_key k;

	memset(&k, 0xa5, sizeof(k));
	if (pt_key_parse(buf, n, use_gid, &k)) {
		FUZZ_ASSERT(fuzz_all_zero(&k, sizeof(k)));
		free(buf);
		return;
	}
	FUZZ_ASSERT(n == pt_key_msg_size(use_gid));
	FUZZ_ASSERT(k.qpn <= 0xffffff && k.psn <= 0xffffff);
	FUZZ_ASSERT(pt_key_encode(&k, use_gid, again, sizeof(again)) == (int)n);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT(tolower((unsigned char)buf[i]) == again[i]);
	free(buf);
}

/* Build a key from raw bytes and check encode/parse agree. */
static void encode_and_check(const uint8_t *data, size_t size, int use_gid)
{
	struct pt_key k, back;
	char buf[PT_KEY_MSG_MAX];
	int n;

	memset(&k, 0, sizeof(k));
	memcpy(&k.lid, data, 2);
	memcpy(&k.out_reads, data + 2, 2);
	memcpy(&k.qpn, data + 4, 4);
	memcpy(&k.psn, data + 8, 4);
	memcpy(&k.rkey, data + 12, 4);
	memcpy(&k.vaddr, data + 16, 8);
	memcpy(&k.srqn, data + 24, 4);
	if (size >= 44)
		memcpy(k.gid, data + 28, 16);
	/* a too small buffer is refused, never overrun */
	FUZZ_ASSERT(pt_key_encode(&k, use_gid, buf, pt_key_msg_size(use_gid) - 1) == -1);
	n = pt_key_encode(&k, use_gid, buf, sizeof(buf));
	if (k.qpn > 0xffffff || k.psn > 0xffffff) {
		FUZZ_ASSERT(n == -1);
		return;
	}
	FUZZ_ASSERT(n == (int)pt_key_msg_size(use_gid));
	FUZZ_ASSERT(buf[n - 1] == '\0' && strlen(buf) == (size_t)n - 1);
	FUZZ_ASSERT(pt_key_parse(buf, (size_t)n, use_gid, &back) == 0);
	if (!use_gid)
		memset(k.gid, 0, sizeof(k.gid));
	FUZZ_ASSERT(memcmp(&k, &back, sizeof(k)) == 0);
}

/* Bytes of the raw layout the encoder writes as zero (padding, and in the
 * 64-byte layout the tail-marker address). */
static int raw_ignored(size_t layout, size_t i)
{
	return (i >= 20 && i < 24) || (layout == PT_CM_KEY_SIZE_629 && i >= 32 && i < 40);
}

static void raw_parse_and_check(const uint8_t *data, size_t n, size_t layout)
{
	uint8_t again[PT_CM_KEY_MAX];
	struct pt_key k;

	memset(&k, 0xa5, sizeof(k));
	if (pt_key_raw_parse(data, n, layout, &k)) {
		FUZZ_ASSERT(fuzz_all_zero(&k, sizeof(k)));
		return;
	}
	FUZZ_ASSERT(n == layout);
	FUZZ_ASSERT(k.qpn <= 0xffffff && k.psn <= 0xffffff);
	FUZZ_ASSERT(pt_key_raw_encode(&k, layout, again) == (int)layout);
	for (size_t i = 0; i < layout; i++)
		FUZZ_ASSERT(raw_ignored(layout, i) || again[i] == data[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	raw_parse_and_check(data, size, PT_CM_KEY_SIZE);
	raw_parse_and_check(data, size, PT_CM_KEY_SIZE_629);
	if (size > PT_CM_KEY_SIZE_629)
		raw_parse_and_check(data, PT_CM_KEY_SIZE_629, PT_CM_KEY_SIZE_629);
	/* the whole input, whatever its length, in both forms */
	parse_and_check(data, size, 0);
	parse_and_check(data, size, 1);
	/* a message's worth from the start, as the OOB reader would take it */
	if (size > PT_KEY_MSG_SIZE)
		parse_and_check(data, PT_KEY_MSG_SIZE, 0);
	if (size > PT_KEY_MSG_SIZE_GID)
		parse_and_check(data, PT_KEY_MSG_SIZE_GID, 1);
	if (size >= 28) {
		encode_and_check(data, size, 0);
		encode_and_check(data, size, 1);
	}
	return 0;
}
