/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW peak for any input, clocks going backwards included: an exact
 * divide and conquer (docs/bw-peak.md). The tools never need it (their
 * clock never goes backwards); pt_bw_peak_arrays falls back to it so the
 * array form answers every input as the pairwise definition does.
 *
 * A window pairs a post point P = (i, tp[i]) with a completion point
 * C = (j + 1, tc[j]) right of it and strictly above it. Halving the WR
 * range settles "right of": the posts of the left half against the
 * completions of the right half. Halving those by time settles "above":
 * posts below a pivot time against completions at or above it are all
 * windows, and the smallest slope from a set of points to a point right
 * of them all is its tangent to their upper hull. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bw_peak.h"

typedef __int128 i128;
typedef unsigned __int128 u128;

struct gpoint {
	uint64_t x, t;
};

struct gbest {
	bool have;
	uint64_t dt, wrs;
};

static void take(struct gbest *b, uint64_t dt, uint64_t wrs)
{
	if (!b->have || (u128)dt * b->wrs < (u128)b->dt * wrs) {
		b->have = true;
		b->dt = dt;
		b->wrs = wrs;
	}
}

/* slope(a, c) < slope(b, c), c right of and above both */
static bool slope_lt(const struct gpoint *a, const struct gpoint *b, const struct gpoint *c)
{
	return (u128)(c->t - a->t) * (c->x - b->x) < (u128)(c->t - b->t) * (c->x - a->x);
}

/* Every a (sorted by x) is left of and below every b: each b's tangent to
 * the upper hull of A, found by binary search (the slope falls, then rises). */
static int all_pairs(const struct gpoint *a, size_t na, const struct gpoint *b, size_t nb,
		     struct gbest *best)
{
	struct gpoint *h;
	size_t len = 0;

	if (!na || !nb)
		return 0;
	h = malloc(na * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t k = 0; k < na; k++) {
		/* times go any way here: signed, |dt| < 2^64 and dx < 2^63 */
		while (len >= 2) {
			const struct gpoint *p = &h[len - 2], *q = &h[len - 1];

			if (((i128)q->t - (i128)p->t) * (i128)(a[k].x - p->x) >
			    ((i128)a[k].t - (i128)p->t) * (i128)(q->x - p->x))
				break;
			len--;
		}
		h[len++] = a[k];
	}
	for (size_t k = 0; k < nb; k++) {
		size_t lo = 0, hi = len - 1;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (slope_lt(&h[mid + 1], &h[mid], &b[k]))
				lo = mid + 1;
			else
				hi = mid;
		}
		take(best, b[k].t - h[lo].t, b[k].x - h[lo].x);
	}
	free(h);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Every a (sorted by x) is left of every b; pairs need t_a < t_b. */
static int pairs_above(const struct gpoint *a, size_t na, const struct gpoint *b, size_t nb,
		       struct gbest *best)
{
	uint64_t amin = UINT64_MAX, amax = 0, bmin = UINT64_MAX, bmax = 0, pivot, *times;
	size_t total = na + nb, n_alo = 0, n_ahi = 0, n_blo = 0, n_bhi = 0;
	struct gpoint *alo, *ahi, *blo, *bhi;
	int rc;

	if (!na || !nb)
		return 0;
	for (size_t k = 0; k < na; k++) {
		amin = a[k].t < amin ? a[k].t : amin;
		amax = a[k].t > amax ? a[k].t : amax;
	}
	for (size_t k = 0; k < nb; k++) {
		bmin = b[k].t < bmin ? b[k].t : bmin;
		bmax = b[k].t > bmax ? b[k].t : bmax;
	}
	if (amin >= bmax)
		return 0;
	if (amax < bmin)
		return all_pairs(a, na, b, nb, best);
	/* Pivot: the median time, or the next time above the smallest, so
	 * both sides of it hold a point and each part below is smaller. */
	times = malloc(total * sizeof(*times));
	alo = malloc(2 * total * sizeof(*alo));
	if (!times || !alo) {
		free(times);
		free(alo);
		return -ENOMEM;
	}
	for (size_t k = 0; k < na; k++)
		times[k] = a[k].t;
	for (size_t k = 0; k < nb; k++)
		times[na + k] = b[k].t;
	qsort(times, total, sizeof(*times), cmp_u64);
	pivot = times[total / 2];
	for (size_t k = 1; pivot == times[0] && k < total; k++)
		pivot = times[k];
	free(times);
	ahi = alo + na;
	blo = alo + 2 * na;
	bhi = blo + nb;
	for (size_t k = 0; k < na; k++) /* stable: each part stays sorted by x */
		if (a[k].t < pivot)
			alo[n_alo++] = a[k];
		else
			ahi[n_ahi++] = a[k];
	for (size_t k = 0; k < nb; k++)
		if (b[k].t < pivot)
			blo[n_blo++] = b[k];
		else
			bhi[n_bhi++] = b[k];
	rc = all_pairs(alo, n_alo, bhi, n_bhi, best);
	if (!rc)
		rc = pairs_above(alo, n_alo, blo, n_blo, best);
	if (!rc)
		rc = pairs_above(ahi, n_ahi, bhi, n_bhi, best);
	free(alo);
	return rc;
}

/* Posts p (x = i) and completions c (x = j + 1) of the WRs [lo, hi). */
static int windows_in(const struct gpoint *p, size_t np, const struct gpoint *c, size_t nc,
		      uint64_t lo, uint64_t hi, struct gbest *best)
{
	uint64_t mid = lo + (hi - lo) / 2;
	size_t pm = 0, cm = 0;
	int rc;

	if (!np || !nc)
		return 0;
	if (hi - lo == 1) { /* post and completion of the same WR */
		if (c[0].t > p[0].t)
			take(best, c[0].t - p[0].t, 1);
		return 0;
	}
	while (pm < np && p[pm].x < mid)
		pm++;
	while (cm < nc && c[cm].x - 1 < mid)
		cm++;
	if ((rc = windows_in(p, pm, c, cm, lo, mid, best)) ||
	    (rc = windows_in(p + pm, np - pm, c + cm, nc - cm, mid, hi, best)))
		return rc;
	return pairs_above(p, pm, c + cm, nc - cm, best);
}

int pt_bw_peak_general(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		       unsigned post_list, unsigned cq_mod, uint64_t *best_dt, uint64_t *best_wrs)
{
	struct gbest best = { 0 };
	struct gpoint *p, *c;
	size_t np = 0, nc = 0;
	int rc;

	if (!tp || !tc || !best_dt || !best_wrs || !post_list || !cq_mod || n > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	if (n > SIZE_MAX / sizeof(*p) / 2)
		return -ENOMEM;
	p = malloc(((size_t)n / post_list + 1) * sizeof(*p));
	c = malloc(((size_t)n / cq_mod + 1) * sizeof(*c));
	if (!p || !c) {
		free(p);
		free(c);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < n; i += post_list)
		p[np++] = (struct gpoint){ i, tp[i] };
	for (uint64_t j = 0; j < n; j++)
		if (j == n - 1 || (j + 1) % cq_mod == 0)
			c[nc++] = (struct gpoint){ j + 1, tc[j] };
	rc = windows_in(p, np, c, nc, 0, n, &best);
	free(p);
	free(c);
	if (rc)
		return rc;
	if (!best.have)
		return -EDOM;
	*best_dt = best.dt;
	*best_wrs = best.wrs;
	return 0;
}
