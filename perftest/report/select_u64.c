/* SPDX-License-Identifier: BSD-2-Clause */
/* Radix select: a level counts the values by their high bits (of v - lo),
 * finds the buckets that hold a wanted rank, gathers only those into the
 * room array (at the offsets a sorted array would give them) and goes on
 * in each with the next bits; a small or single-valued bucket ends it. Per
 * level two passes over its values; the buckets of the ranks a latency row
 * wants are a fraction of the samples, so the whole costs a few passes of
 * a few instructions per sample, against a sort's digits each way. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "select_u64.h"
#include "sort_u64.h"

#define SMALL 32u          /* at most this many values: sorted */
#define MAX_BITS 11u       /* at most 2048 buckets a level (8 KiB of counts) */
#define MAX_RANKS 24u      /* ranks in one call */
#define NONE UINT32_MAX    /* a bucket that holds no wanted rank */

static unsigned bits_of(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

/* A bucket that holds wanted ranks: where its values go (the offset of its
 * first rank), how many, its number, and its ranks r[r0 .. r0 + rn). */
struct target {
	uint32_t start, count, bucket, r0, rn;
};

/* a[0..n): values in [lo, lo + 2^width); r[0..m): ascending ranks < n;
 * room: n free values beside a (the next level's a; a is its room). */
static void select_level(uint64_t *a, size_t n, uint64_t lo, unsigned width, const uint64_t *r,
			 size_t m, uint64_t *out, uint64_t *room, uint32_t *counts)
{
	struct target t[MAX_RANKS];
	uint64_t rel[MAX_RANKS];
	size_t nt = 0, start = 0, j = 0, nb;
	unsigned b, s;

	if (width == 0 || n <= SMALL) {
		if (width)   /* below sort_u64's SMALL: an insertion sort */
			pt_sort_u64(a, n, NULL);
		for (size_t k = 0; k < m; k++)
			out[k] = width ? a[r[k]] : lo;
		return;
	}
	b = bits_of(n) - 2;   /* about n / 4 buckets (n > SMALL: b >= 4) */
	if (b > MAX_BITS)
		b = MAX_BITS;
	if (b > width)
		b = width;
	s = width - b;
	nb = (size_t)1 << b;
	memset(counts, 0, nb * sizeof(*counts));
	for (size_t i = 0; i < n; i++)
		counts[(a[i] - lo) >> s]++;
	/* counts become each wanted bucket's next offset, NONE elsewhere */
	for (size_t k = 0; k < nb; k++) {
		size_t c = counts[k];

		if (j < m && r[j] < start + c) {
			t[nt] = (struct target){ .start = (uint32_t)start, .count = (uint32_t)c,
						 .bucket = (uint32_t)k, .r0 = (uint32_t)j };
			while (j < m && r[j] < start + c)
				j++;
			t[nt].rn = (uint32_t)(j - t[nt].r0);
			nt++;
			counts[k] = (uint32_t)start;
		} else {
			counts[k] = NONE;
		}
		start += c;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t v = a[i];
		uint32_t *d = &counts[(v - lo) >> s];

		if (*d != NONE)
			room[(*d)++] = v;
	}
	/* counts is free again: each target goes on with it */
	for (size_t k = 0; k < nt; k++) {
		const struct target *x = &t[k];

		for (size_t q = 0; q < x->rn; q++)
			rel[q] = r[x->r0 + q] - x->start;
		select_level(room + x->start, x->count, lo + ((uint64_t)x->bucket << s), s, rel, x->rn,
			     out + x->r0, a + x->start, counts);
	}
}

int pt_select_u64(uint64_t *a, size_t n, uint64_t lo, uint64_t hi, const uint64_t *ranks,
		  size_t m, uint64_t *out, uint64_t *scratch)
{
	uint32_t counts[1u << MAX_BITS];
	uint64_t *room = scratch;

	if (!a || !ranks || !out || m > MAX_RANKS || n >= NONE || hi < lo)
		return -EINVAL;
	for (size_t k = 0; k < m; k++)
		if (ranks[k] >= n || (k && ranks[k] < ranks[k - 1]))
			return -EINVAL;
	if (m == 0)
		return 0;
	if (!room && !(room = malloc(n * sizeof(*room))))
		return -ENOMEM;
	select_level(a, n, lo, bits_of(hi - lo), ranks, m, out, room, counts);
	if (room != scratch)
		free(room);
	return 0;
}
