/* SPDX-License-Identifier: BSD-2-Clause */
/* The 6.28+ parameter negotiation block N (docs/wire-protocol.md §7): 312 or 320
 * bytes from the peer, then the comparison with ours.
 * fuzz-sources: perftest/wire/wire.c perftest/wire/negotiate.c
 * fuzz-flags: -max_len=400
 *
 * Input: the peer's block (any length). Properties: a rejected block leaves
 * the result zeroed; an accepted one has only 312 or 320 bytes, every value
 * in range, and re-encodes to the same bytes but for the padding at 28..31;
 * the comparison with itself finds nothing, with any other block exactly
 * the fields that differ, and its text never overruns a small buffer. */
#include "fuzz.h"
#include "perftest/wire/negotiate.h"

static void check(const uint8_t *data, size_t n)
{
	struct pt_negotiate k, mine;
	uint8_t again[PT_NEG_SIZE_MLX5DV];
	char why[48];
	int diff = 0;

	memset(&k, 0xa5, sizeof(k));
	if (pt_neg_parse(data, n, &k)) {
		for (size_t i = 0; i < sizeof(k); i++)
			FUZZ_ASSERT(((const uint8_t *)&k)[i] == 0);
		return;
	}
	FUZZ_ASSERT(n == PT_NEG_SIZE || n == PT_NEG_SIZE_MLX5DV);
	FUZZ_ASSERT(pt_neg_encode(&k, n, again) == (int)n);
	for (size_t i = 0; i < n; i++)
		FUZZ_ASSERT((i >= 28 && i < 32) || again[i] == data[i]);
	FUZZ_ASSERT(pt_neg_compare(&k, &k, why, sizeof(why)) == 0 && why[0] == '\0');
	/* ours: the same block with a few terms changed as data says */
	mine = k;
	for (int f = 0; f < PT_NEG_NFIELDS; f++)
		if (data[n - 1 - (size_t)f] & 1) {
			mine.v[f] = mine.v[f] ? 0 : 1;
			diff++;
		}
	FUZZ_ASSERT(pt_neg_compare(&mine, &k, why, sizeof(why)) == diff);
	FUZZ_ASSERT(strlen(why) < sizeof(why));
	FUZZ_ASSERT(!diff || strstr(why, "mismatch") || strlen(why) == sizeof(why) - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	if (size > PT_NEG_SIZE_MLX5DV)
		check(data, PT_NEG_SIZE_MLX5DV);
	if (size > PT_NEG_SIZE)
		check(data, PT_NEG_SIZE);
	return 0;
}
