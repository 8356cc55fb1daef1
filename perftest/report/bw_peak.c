/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW peak in linear time, as the run goes; see bw_peak.h for the
 * definition and docs/bw-peak.md for why dropping hull points is safe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bw_peak.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------- buffers -- */

/* cap is 0 or a power of two: a mask, not a division, wraps the ring */
static struct pt_peak_point *buf_at(const struct pt_peak_buf *b, size_t k)
{
	return &b->v[(b->head + k) & (b->cap - 1)];
}

/* Double the ring (rare: kept out of the inlined push). */
static __attribute__((noinline)) int buf_grow(struct pt_peak_buf *b)
{
	size_t cap = b->cap ? 2 * b->cap : 64;
	struct pt_peak_point *v = malloc(cap * sizeof(*v));

	if (!v)
		return -ENOMEM;
	/* unwrap the ring into the new array */
	for (size_t k = 0; k < b->len; k++)
		v[k] = *buf_at(b, k);
	free(b->v);
	b->v = v;
	b->head = 0;
	b->cap = cap;
	return 0;
}

static inline int buf_push(struct pt_peak_buf *b, struct pt_peak_point p)
{
	if (b->len == b->cap && buf_grow(b))
		return -ENOMEM;
	b->v[(b->head + b->len) & (b->cap - 1)] = p;
	b->len++;
	if (b->len > b->high_water)
		b->high_water = b->len;
	return 0;
}

static void buf_pop_front(struct pt_peak_buf *b)
{
	b->head = (b->head + 1) & (b->cap - 1);
	b->len--;
}

/* -------------------------------------------------------------- tracker -- */

int pt_bw_peak_init(struct pt_bw_peak *pk, uint64_t n, unsigned post_list, unsigned cq_mod)
{
	if (!pk || n == 0 || post_list == 0 || cq_mod == 0)
		return -EINVAL;
	memset(pk, 0, sizeof(*pk));
	pk->n = n;
	pk->post_list = post_list;
	pk->cq_mod = cq_mod;
	return 0;
}

void pt_bw_peak_free(struct pt_bw_peak *pk)
{
	if (!pk)
		return;
	free(pk->pending.v);
	free(pk->hull.v);
	memset(pk, 0, sizeof(*pk));
}

int pt_bw_peak_post(struct pt_bw_peak *pk, uint64_t t)
{
	uint64_t idx = pk->posted;

	pk->posted += pk->post_list;
	if (idx >= pk->n || pk->backwards)
		return 0;
	if (idx == 0)
		pk->first_post_t = t;
	else if (t < pk->last_post_t)
		pk->backwards = true;
	pk->last_post_t = t;
	return buf_push(&pk->pending, (struct pt_peak_point){ idx, t });
}

/* Append p to the upper hull: drop the last point while it lies on or
 * below the chord from the one before it to p (such a point is never a
 * better tangent than both ends of the chord). Times never decrease, so
 * every difference is >= 0. */
static int hull_push(struct pt_peak_buf *h, struct pt_peak_point p)
{
	while (h->len >= 2) {
		const struct pt_peak_point *a = buf_at(h, h->len - 2), *b = buf_at(h, h->len - 1);

		if ((u128)(b->t - a->t) * (p.idx - a->idx) > (u128)(p.t - a->t) * (b->idx - a->idx))
			break;
		h->len--;
	}
	return buf_push(h, p);
}

/* slope(a, C) <= slope(b, C) for C = (x, t) right of and above both. */
static bool slope_le(const struct pt_peak_point *a, const struct pt_peak_point *b,
		     uint64_t x, uint64_t t)
{
	return (u128)(t - a->t) * (x - b->idx) <= (u128)(t - b->t) * (x - a->idx);
}

static void consider(struct pt_bw_peak *pk, uint64_t dt, uint64_t wrs)
{
	if (!pk->have_best || (u128)dt * pk->best_wrs < (u128)pk->best_dt * wrs) {
		pk->have_best = true;
		pk->best_dt = dt;
		pk->best_wrs = wrs;
	}
}

/* The signaled completion of WR j, polled at t. */
static int query(struct pt_bw_peak *pk, uint64_t j, uint64_t t)
{
	struct pt_peak_buf *h = &pk->hull;
	const struct pt_peak_point *first;
	uint64_t x = j + 1;
	int rc;

	if (pk->have_query && t < pk->last_query_t)
		pk->backwards = true;
	pk->have_query = true;
	pk->last_query_t = t;
	if (pk->backwards)
		return 0;
	/* Posts at or before j with an earlier time become usable; times
	 * never decrease, so they are a prefix of the queue. */
	while (pk->pending.len) {
		struct pt_peak_point p = *buf_at(&pk->pending, 0);

		if (p.idx > j || p.t >= t)
			break;
		buf_pop_front(&pk->pending);
		if ((rc = hull_push(h, p)))
			return rc;
	}
	if (!h->len)
		return 0;
	/* The slope to C falls along the hull up to the tangent, then rises:
	 * walk to it and forget the points before it. */
	while (h->len >= 2 && slope_le(buf_at(h, 1), buf_at(h, 0), x, t))
		buf_pop_front(h);
	first = buf_at(h, 0);
	consider(pk, t - first->t, x - first->idx);
	return 0;
}

int pt_bw_peak_complete(struct pt_bw_peak *pk, uint64_t wrs, uint64_t t)
{
	uint64_t a = pk->done, b, j;

	if (wrs == 0 || a >= pk->n)
		return 0;
	pk->done += wrs;
	pk->last_done_t = t;
	b = pk->done - 1 < pk->n - 1 ? pk->done - 1 : pk->n - 1;
	/* Only the last signaled WR of the batch matters: the same time over
	 * more WRs, from a superset of the posts, is a smaller slope. */
	if (b == pk->n - 1)
		j = b;
	else if ((b + 1) / pk->cq_mod == 0)
		return 0;
	else
		j = (b + 1) / pk->cq_mod * pk->cq_mod - 1;
	if (j < a)
		return 0;
	return query(pk, j, t);
}

int pt_bw_peak_result(const struct pt_bw_peak *pk, double *min_ns)
{
	if (!pk || !min_ns)
		return -EINVAL;
	if (pk->backwards)
		return -ERANGE;
	if (!pk->have_best)
		return -EDOM;
	/* the same expression as the pairwise definition (bw_peak.h) */
	*min_ns = (double)pk->best_dt / (double)pk->best_wrs;
	return 0;
}

void pt_bw_peak_stats(const struct pt_bw_peak *pk, struct pt_bw_peak_stats *st)
{
	size_t pt = sizeof(struct pt_peak_point);

	st->pending_max = pk->pending.high_water;
	st->hull_max = pk->hull.high_water;
	st->bytes_now = sizeof(*pk) + (pk->pending.cap + pk->hull.cap) * pt;
	/* a buffer's capacity is the first power of two (from 64) >= its high-water mark */
	st->bytes_max = sizeof(*pk);
	for (int k = 0; k < 2; k++) {
		size_t hw = k ? pk->hull.high_water : pk->pending.high_water, cap = 0;

		while (cap < hw)
			cap = cap ? 2 * cap : 64;
		st->bytes_max += cap * pt;
	}
}

/* --------------------------------------------------------------- arrays -- */

static bool signaled(uint64_t j, uint64_t n, unsigned cq_mod)
{
	return j == n - 1 || (j + 1) % cq_mod == 0;
}

static bool monotone(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		     unsigned post_list, unsigned cq_mod)
{
	for (uint64_t i = post_list; i < n; i += post_list)
		if (tp[i] < tp[i - post_list])
			return false;
	for (uint64_t j = 0, prev = 0, seen = 0; j < n; j++)
		if (signaled(j, n, cq_mod)) {
			if (seen && tc[j] < prev)
				return false;
			prev = tc[j];
			seen = 1;
		}
	return true;
}

int pt_bw_peak_arrays(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		      unsigned post_list, unsigned cq_mod, double *min_ns)
{
	struct pt_bw_peak pk;
	uint64_t i = 0, dt, wrs;
	int rc;

	if (!tp || !tc || !min_ns || !post_list || !cq_mod || n > (uint64_t)INT64_MAX)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	if (!monotone(tp, tc, n, post_list, cq_mod)) {
		rc = pt_bw_peak_general(tp, tc, n, post_list, cq_mod, &dt, &wrs);
		if (!rc)
			*min_ns = (double)dt / (double)wrs;
		return rc;
	}
	pt_bw_peak_init(&pk, n, post_list, cq_mod);
	rc = 0;
	for (uint64_t j = 0; j < n && !rc; j++) {
		if (!signaled(j, n, cq_mod))
			continue;
		for (; i <= j && !rc; i += post_list)
			rc = pt_bw_peak_post(&pk, tp[i]);
		if (!rc)
			rc = pt_bw_peak_complete(&pk, j + 1 - pk.done, tc[j]);
	}
	if (!rc)
		rc = pt_bw_peak_result(&pk, min_ns);
	pt_bw_peak_free(&pk);
	return rc;
}
