/* SPDX-License-Identifier: BSD-2-Clause */
/* LSD radix sort of uint64_t on the values less the smallest, with only as
 * many digits as the largest difference has, counted for every digit in
 * one pass; a digit that all values share is skipped. The digit width is
 * the one that costs least for this n and spread: each pass costs a few
 * instructions per value plus a prefix sum over its buckets, so a few
 * thousand samples take narrow digits and millions wider ones. Small
 * inputs take an insertion sort. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "sort_u64.h"

#define SMALL 64u   /* below this an insertion sort is cheaper than the counts */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void insertion_sort(uint64_t *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		uint64_t v = a[i];
		size_t j = i;

		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

/* Cost model (instructions, measured with callgrind): per pass 17 per
 * value (count and scatter) and 10 per bucket (calloc's clearing, 4 bytes,
 * and the prefix sum, 6); an odd number of passes ends in the scratch and,
 * in place, adds a copy back (8 per value). For each number of passes the narrowest
 * digit that covers the spread (at most 16 bits: 256 KiB of counts). */
static unsigned pick_width(size_t n, unsigned spread_bits, bool in_place, unsigned *digits)
{
	unsigned best = 16;
	double best_cost = -1;

	*digits = (spread_bits + 15) / 16;
	for (unsigned d = 1; d <= 8; d++) {
		unsigned w = (spread_bits + d - 1) / d;
		double cost;

		if (w > 16)
			continue;
		cost = (double)d * (17.0 * (double)n + 10.0 * (double)(1u << w)) +
		       (d % 2 && in_place ? 8.0 * (double)n : 0);
		if (best_cost < 0 || cost < best_cost) {
			best = w;
			best_cost = cost;
			*digits = d;
		}
	}
	return best;
}

/* count[d * buckets + b]: how many values have digit d of (value - min)
 * equal to b. */
static void count_digits(const uint64_t *a, size_t n, uint64_t min, unsigned width, unsigned digits,
			 uint32_t *count)
{
	const uint64_t mask = (1u << width) - 1;
	const size_t buckets = (size_t)1 << width;

	if (digits == 1) {
		for (size_t i = 0; i < n; i++)
			count[a[i] - min]++;
	} else if (digits == 2) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = a[i] - min;

			count[v & mask]++;
			count[buckets + (v >> width)]++;
		}
	} else if (digits == 3) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = a[i] - min;

			count[v & mask]++;
			count[buckets + ((v >> width) & mask)]++;
			count[2 * buckets + (v >> (2 * width))]++;
		}
	} else if (digits == 4) {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = a[i] - min;

			count[v & mask]++;
			count[buckets + ((v >> width) & mask)]++;
			count[2 * buckets + ((v >> (2 * width)) & mask)]++;
			count[3 * buckets + (v >> (3 * width))]++;
		}
	} else {
		for (size_t i = 0; i < n; i++) {
			uint64_t v = a[i] - min;

			for (unsigned d = 0; d < digits; d++, v >>= width)
				count[d * buckets + (v & mask)]++;
		}
	}
}

/* One stable pass on digit d from src to dst; false when every value has
 * the same digit (nothing moves: the pass is skipped). */
static bool scatter(const uint64_t *src, uint64_t *dst, size_t n, uint64_t min, unsigned width,
		    unsigned d, uint32_t *count)
{
	const uint64_t mask = (1u << width) - 1;
	const unsigned shift = d * width;
	uint32_t sum = 0;

	/* every value has the digit of the first one: nothing moves */
	if (count[((src[0] - min) >> shift) & mask] == n)
		return false;
	for (size_t b = 0; b <= mask; b++) {
		uint32_t c = count[b];

		count[b] = sum;
		sum += c;
	}
	/* by fours: the loop's own test and step once per four values */
	size_t i = 0;

	for (; i + 4 <= n; i += 4) {
		uint64_t v0 = src[i], v1 = src[i + 1], v2 = src[i + 2], v3 = src[i + 3];

		dst[count[((v0 - min) >> shift) & mask]++] = v0;
		dst[count[((v1 - min) >> shift) & mask]++] = v1;
		dst[count[((v2 - min) >> shift) & mask]++] = v2;
		dst[count[((v3 - min) >> shift) & mask]++] = v3;
	}
	for (; i < n; i++) {
		uint64_t v = src[i];

		dst[count[((v - min) >> shift) & mask]++] = v;
	}
	return true;
}

void pt_sort_u64(uint64_t *a, size_t n, uint64_t *scratch)
{
	uint64_t max = 0, min = UINT64_MAX;

	if (n < SMALL) {
		insertion_sort(a, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		max = a[i] > max ? a[i] : max;
		min = a[i] < min ? a[i] : min;
	}
	pt_sort_u64_range(a, n, min, max, scratch);
}

void pt_sort_u64_range(uint64_t *a, size_t n, uint64_t min, uint64_t max, uint64_t *scratch)
{
	(void)pt_sort_u64_to(a, n, min, max, scratch, true);
}

const uint64_t *pt_sort_u64_to(uint64_t *a, size_t n, uint64_t min, uint64_t max,
			       uint64_t *scratch, bool in_place)
{
	uint32_t *count = NULL;
	uint64_t *own = NULL, *src = a, *dst;
	unsigned width, digits;

	if (n < SMALL) {
		insertion_sort(a, n);
		return a;
	}
	if (max == min)
		return a;
	in_place |= !scratch;   /* an allocated scratch is freed here */
	width = pick_width(n, 64u - (unsigned)__builtin_clzll(max - min), in_place, &digits);
	/* counts fit 32 bits; beyond that qsort (10^7 samples at most today) */
	if (n <= UINT32_MAX)
		count = calloc((size_t)digits << width, sizeof(*count));
	if (!scratch)
		scratch = own = malloc(n * sizeof(*a));
	if (!count || !scratch) {
		qsort(a, n, sizeof(*a), cmp_u64);
		free(count);
		free(own);
		return a;
	}
	dst = scratch;
	count_digits(a, n, min, width, digits, count);
	for (unsigned d = 0; d < digits; d++) {
		if (scatter(src, dst, n, min, width, d, count + ((size_t)d << width))) {
			uint64_t *t = src;

			src = dst;
			dst = t;
		}
	}
	if (src != a && in_place)
		memcpy(a, src, n * sizeof(*a));
	free(count);
	free(own);
	return in_place ? a : src;
}
