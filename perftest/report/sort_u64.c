/* SPDX-License-Identifier: BSD-2-Clause */
/* LSD radix sort of uint64_t on the values less the smallest, with only as
 * many digits as the largest difference has, counted for every digit in
 * one pass; a digit that all values share is skipped. The digit width is
 * the one that costs least for this n and spread: each pass costs a few
 * instructions per value plus a prefix sum over its buckets, so a few
 * thousand samples take 8-bit digits and millions 12 or 16. Small inputs
 * take an insertion sort. */
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
 * value (count and scatter) and 5 per bucket (clear and prefix sum); an odd
 * number of passes ends in the scratch and adds a copy back (8 per value). */
static unsigned pick_width(size_t n, unsigned spread_bits, unsigned *digits)
{
	static const unsigned widths[] = { 8, 11, 12, 16 };
	unsigned best = 8;
	double best_cost = 0;

	for (unsigned k = 0; k < sizeof(widths) / sizeof(widths[0]); k++) {
		unsigned w = widths[k], d = (spread_bits + w - 1) / w;
		double cost = (double)d * (17.0 * (double)n + 5.0 * (double)(1u << w)) +
			      (d % 2 ? 8.0 * (double)n : 0);

		if (k == 0 || cost < best_cost) {
			best = w;
			best_cost = cost;
		}
	}
	*digits = (spread_bits + best - 1) / best;
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

	for (size_t b = 0; b <= mask; b++) {
		uint32_t c = count[b];

		if (c == n)
			return false;
		count[b] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t v = src[i];

		dst[count[((v - min) >> shift) & mask]++] = v;
	}
	return true;
}

void pt_sort_u64(uint64_t *a, size_t n, uint64_t *scratch)
{
	uint32_t *count = NULL;
	uint64_t *own = NULL, *src = a, *dst, max = 0, min = UINT64_MAX;
	unsigned width, digits;

	if (n < SMALL) {
		insertion_sort(a, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		max = a[i] > max ? a[i] : max;
		min = a[i] < min ? a[i] : min;
	}
	if (max == min)
		return;
	width = pick_width(n, 64u - (unsigned)__builtin_clzll(max - min), &digits);
	/* counts fit 32 bits; beyond that qsort (10^7 samples at most today) */
	if (n <= UINT32_MAX)
		count = calloc((size_t)digits << width, sizeof(*count));
	if (!scratch)
		scratch = own = malloc(n * sizeof(*a));
	if (!count || !scratch) {
		qsort(a, n, sizeof(*a), cmp_u64);
		free(count);
		free(own);
		return;
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
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
	free(count);
	free(own);
}
