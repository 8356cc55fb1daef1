/* SPDX-License-Identifier: BSD-2-Clause */
/* Log-linear histogram for the recorder's hot path: an index and an
 * increment per value, no division (results.h's pt_hist keeps a running
 * mean and costs a division per sample). Values below 128 are exact; above,
 * each power of two has 64 buckets and a value reads back as its bucket's
 * midpoint: relative error <= 1/128 (0.78%). min and max are exact. */
#ifndef PT_WRTRACE_HIST_H
#define PT_WRTRACE_HIST_H
#include <stdint.h>

#define WRT_HIST_SUB_BITS 7u
#define WRT_HIST_SUB (1u << WRT_HIST_SUB_BITS)
#define WRT_HIST_HALF (WRT_HIST_SUB / 2u)
#define WRT_HIST_BUCKETS (WRT_HIST_SUB + (64u - WRT_HIST_SUB_BITS) * WRT_HIST_HALF)

struct wrt_hist {
	uint64_t count, min, max;
	uint64_t bucket[WRT_HIST_BUCKETS];
};

static inline unsigned wrt_hist_index(uint64_t v)
{
	unsigned e;

	if (v < WRT_HIST_SUB)
		return (unsigned)v;
	/* e >= 1 leaves v >> e in [64, 128) */
	e = 63u - (unsigned)__builtin_clzll(v) - (WRT_HIST_SUB_BITS - 1u);
	return WRT_HIST_SUB + (e - 1u) * WRT_HIST_HALF + (unsigned)((v >> e) - WRT_HIST_HALF);
}

static inline void wrt_hist_add(struct wrt_hist *h, uint64_t v)
{
	h->bucket[wrt_hist_index(v)]++;
	h->count++;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void wrt_hist_reset(struct wrt_hist *h);
void wrt_hist_merge(struct wrt_hist *dst, const struct wrt_hist *src);
/* Midpoint of v's bucket (v itself below 128). */
uint64_t wrt_hist_quantize(uint64_t v);
/* Bound on |wrt_hist_quantize(v) - v| / v. */
double wrt_hist_max_rel_error(void);
/* Nearest-rank percentile (ppm: parts per million), clamped to [min, max]. */
uint64_t wrt_hist_percentile(const struct wrt_hist *h, uint32_t ppm);
/* 1-based nearest rank ceil(ppm * n / 1e6), clamped to [1, n] (n > 0). */
uint64_t wrt_rank(uint64_t n, uint32_t ppm);

#endif
