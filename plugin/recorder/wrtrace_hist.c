/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace_hist.h: everything off the hot path. */
#include <string.h>
#include "wrtrace_hist.h"

void wrt_hist_reset(struct wrt_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void wrt_hist_merge(struct wrt_hist *dst, const struct wrt_hist *src)
{
	for (unsigned i = 0; i < WRT_HIST_BUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	if (src->count && src->min < dst->min)
		dst->min = src->min;
	if (src->count && src->max > dst->max)
		dst->max = src->max;
}

static uint64_t bucket_value(unsigned idx)
{
	unsigned j, e;

	if (idx < WRT_HIST_SUB)
		return idx;
	j = idx - WRT_HIST_SUB;
	e = j / WRT_HIST_HALF + 1u;
	return ((uint64_t)(WRT_HIST_HALF + j % WRT_HIST_HALF) << e) + (1ull << (e - 1u));
}

uint64_t wrt_hist_quantize(uint64_t v)
{
	return bucket_value(wrt_hist_index(v));
}

double wrt_hist_max_rel_error(void)
{
	/* half a bucket (2^(e-1)) over the bucket's smallest value (64 * 2^e) */
	return 1.0 / (2.0 * WRT_HIST_HALF);
}

uint64_t wrt_rank(uint64_t n, uint32_t ppm)
{
	/* ceil(ppm * n / 1e6) without overflow for any n */
	uint64_t q = n / 1000000u, r = n % 1000000u;
	uint64_t rank = q * ppm + (r * ppm + 999999u) / 1000000u;

	return rank < 1 ? 1 : rank > n ? n : rank;
}

uint64_t wrt_hist_percentile(const struct wrt_hist *h, uint32_t ppm)
{
	uint64_t want, cum = 0, v = h->max;

	if (!h->count)
		return 0;
	want = wrt_rank(h->count, ppm);
	for (unsigned i = 0; i < WRT_HIST_BUCKETS; i++) {
		cum += h->bucket[i];
		if (cum >= want) {
			v = bucket_value(i);
			break;
		}
	}
	/* the true value shares the bucket: clamping only gets closer */
	return v < h->min ? h->min : v > h->max ? h->max : v;
}
