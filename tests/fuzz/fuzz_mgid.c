/* SPDX-License-Identifier: BSD-2-Clause */
/* The -M MGID parser (docs/upstream-behaviour.md §4.2): dotted IPv4, 16 byte tokens,
 * IPv6 text.
 * fuzz-sources: perftest/cli/mgid.c
 * fuzz-flags: -max_len=128
 *
 * Properties: every refusal has a message and leaves the output alone;
 * every accepted MGID is multicast, prints as IPv6 text and parses back
 * to the same 16 bytes. */
#include "fuzz.h"
#include "perftest/cli/mgid.h"

static int is_multicast(const uint8_t g[16])
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (g[0] == 0xff)
		return 1;
	return !memcmp(g, v4mapped, 12) && g[12] >= 224 && g[12] <= 239;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	uint8_t mgid[16], back[16];
	char err[160], shown[PT_MGID_STRLEN], small[8];
	struct in_addr group;

	memset(mgid, 0x5a, sizeof(mgid));
	memset(err, 'x', sizeof(err));
	if (pt_mgid_parse(text, mgid, err, sizeof(err))) {
		FUZZ_ASSERT(err[0] != '\0' && memchr(err, '\0', sizeof(err)));
		for (int i = 0; i < 16; i++)
			FUZZ_ASSERT(mgid[i] == 0x5a);
		/* a short error buffer is truncated, never overrun */
		FUZZ_ASSERT(pt_mgid_parse(text, mgid, small, sizeof(small)) == -1);
		FUZZ_ASSERT(memchr(small, '\0', sizeof(small)));
		FUZZ_ASSERT(pt_mgid_parse(text, mgid, NULL, 0) == -1);
		free(text);
		return 0;
	}
	FUZZ_ASSERT(err[0] == '\0');
	FUZZ_ASSERT(strlen(text) <= PT_MGID_TEXT_MAX);
	FUZZ_ASSERT(is_multicast(mgid));
	FUZZ_ASSERT(pt_mgid_format(mgid, shown, sizeof(shown)) == 0);
	FUZZ_ASSERT(pt_mgid_format(mgid, small, sizeof(small)) == -1);
	FUZZ_ASSERT(pt_mgid_parse(shown, back, err, sizeof(err)) == 0);
	FUZZ_ASSERT(memcmp(mgid, back, 16) == 0);
	if (pt_mgid_ipv4(mgid, &group))
		FUZZ_ASSERT(memcmp(&group.s_addr, mgid + 12, 4) == 0);
	free(text);
	return 0;
}
