/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW peak in linear time, as the run goes; see bw_peak.h for the
 * definition and docs/bw-peak.md for why dropping hull points is safe. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bw_peak.h"

typedef unsigned __int128 u128;

/* ------------------------------------------------------------- storage -- */

/* Room for one more element at *hi of an array of cap elements of size
 * elem whose live ones are [*lo, *hi): they move to the front when half
 * the array is spent, else it doubles (from 64). Rare: out of line. */
static __attribute__((noinline)) int array_room(void **v, size_t *lo, size_t *hi, size_t *cap,
						size_t elem)
{
	size_t live = *hi - *lo, ncap;
	char *nv;

	if (*hi < *cap)
		return 0;
	if (*cap && *lo >= *cap / 2) {
		memmove(*v, (char *)*v + *lo * elem, live * elem);
	} else {
		ncap = *cap ? 2 * *cap : 64;
		nv = malloc(ncap * elem);
		if (!nv)
			return -ENOMEM;
		if (live)
			memcpy(nv, (char *)*v + *lo * elem, live * elem);
		free(*v);
		*v = nv;
		*cap = ncap;
	}
	*lo = 0;
	*hi = live;
	return 0;
}

static int pend_room(struct pt_bw_peak *pk)
{
	void *v = pk->pend;
	int rc = array_room(&v, &pk->pend_head, &pk->pend_end, &pk->pend_cap, sizeof(*pk->pend));

	pk->pend = v;
	return rc;
}

static int hull_room(struct pt_bw_peak *pk)
{
	void *v = pk->hull;
	int rc = array_room(&v, &pk->hull_lo, &pk->hull_hi, &pk->hull_cap, sizeof(*pk->hull));

	pk->hull = v;
	return rc;
}

/* A clock went backwards: no exact answer any more, and nothing more is
 * kept (every later post takes the slow path, which drops it). */
static void went_backwards(struct pt_bw_peak *pk)
{
	pk->backwards = true;
	pk->pend_head = pk->pend_end = 0;
	pk->fast_left = 0;
}

/* The pending posts' times never decrease, nor fall below the last one
 * moved to the hull. */
static bool pend_monotone(const struct pt_bw_peak *pk)
{
	uint64_t prev = pk->moved_t;

	for (size_t k = pk->pend_head; k < pk->pend_end; k++) {
		if (pk->pend[k] < prev)
			return false;
		prev = pk->pend[k];
	}
	return true;
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
	pk->next_x = cq_mod < n ? cq_mod : n;
	return 0; /* fast_left 0: the first post takes the slow path */
}

void pt_bw_peak_free(struct pt_bw_peak *pk)
{
	if (!pk)
		return;
	free(pk->pend);
	free(pk->hull);
	memset(pk, 0, sizeof(*pk));
}

/* A post the inline path could not store: the first, one beyond n, or one
 * that needs room. Then sets how many the inline path may store. */
int pt_bw_peak_post_slow(struct pt_bw_peak *pk, uint64_t t)
{
	uint64_t pl = pk->post_list;
	uint64_t posted = pk->pend_idx + (pk->pend_end - pk->pend_head) * pl, left;
	int rc;

	if (posted >= pk->n || pk->backwards)
		return 0;
	if (posted == 0)
		pk->first_post_t = t;
	/* the queue's times so far: amortised O(1) a post, and it bounds the
	 * queue when a clock steps back behind a post not yet usable */
	if (!pend_monotone(pk)) {
		went_backwards(pk);
		return 0;
	}
	if ((rc = pend_room(pk)))
		return rc;
	pk->pend[pk->pend_end++] = t;
	posted += pl;
	left = posted >= pk->n ? 0 : (pk->n - posted + pl - 1) / pl;
	pk->fast_left = pk->pend_cap - pk->pend_end < left ? pk->pend_cap - pk->pend_end : left;
	return 0;
}

/* slope(a, C) <= slope(b, C) for C = (x, t) right of and above both. */
static inline bool slope_le(const struct pt_peak_point *a, const struct pt_peak_point *b,
			    uint64_t x, uint64_t t)
{
	return (u128)(t - a->t) * (x - b->idx) <= (u128)(t - b->t) * (x - a->idx);
}

/* The signaled completion of WR j, polled at t. */
static int query(struct pt_bw_peak *pk, uint64_t j, uint64_t t)
{
	const uint64_t pl = pk->post_list, *pend = pk->pend;
	uint64_t idx = pk->pend_idx, moved = pk->moved_t, x = j + 1, bi = 0, bt = 0;
	size_t h = pk->pend_head, e = pk->pend_end, live = e - h;
	/* the hull in locals for the loop; hull_room reloads them */
	struct pt_peak_point *hull = pk->hull, *first;
	size_t lo = pk->hull_lo, hi = pk->hull_hi, most = pk->hull_max;
	int rc;

	if (pk->have_query && t < pk->last_query_t)
		went_backwards(pk);
	pk->have_query = true;
	pk->last_query_t = t;
	if (pk->backwards)
		return 0;
	if (live > pk->pending_max) /* the queue is at its longest before a query */
		pk->pending_max = live;
	/* the posts at or before j: the first (j - idx) / pl + 1 of the queue */
	if (idx > j)
		e = h;
	else if ((j - idx) / pl < live)
		e = h + (j - idx) / pl + 1;
	if (hi > lo)
		bi = hull[hi - 1].idx, bt = hull[hi - 1].t;
	/* Of those, the ones with an earlier time become usable; times never
	 * decrease, so they are a prefix. Each joins the upper hull: its last
	 * point (bi, bt) goes while it lies on or below the chord from the
	 * one before it to the new one (it can never be a better tangent than
	 * both ends of the chord). */
	for (; h < e; h++, idx += pl) {
		uint64_t tp = pend[h];

		if (tp >= t)
			break;
		if (tp < moved) {
			went_backwards(pk);
			return 0;
		}
		moved = tp;
		while (hi - lo >= 2) {
			const struct pt_peak_point *a = &hull[hi - 2];

			if ((u128)(bt - a->t) * (idx - a->idx) > (u128)(tp - a->t) * (bi - a->idx))
				break;
			hi--;
			bi = a->idx, bt = a->t;
		}
		if (hi == pk->hull_cap) {
			pk->hull_lo = lo, pk->hull_hi = hi;
			if ((rc = hull_room(pk)))
				return rc;
			hull = pk->hull, lo = pk->hull_lo, hi = pk->hull_hi;
		}
		hull[hi].idx = bi = idx;
		hull[hi].t = bt = tp;
		if (++hi - lo > most)
			most = hi - lo;
	}
	pk->pend_head = h;
	pk->pend_idx = idx;
	pk->moved_t = moved;
	pk->hull_max = most;
	if (hi == lo) {
		pk->hull_lo = lo, pk->hull_hi = hi;
		return 0;
	}
	/* The slope to C falls along the hull up to the tangent, then rises:
	 * walk to it and forget the points before it (they can never beat
	 * the best found so far, docs/bw-peak.md). */
	while (hi - lo >= 2 && slope_le(&hull[lo + 1], &hull[lo], x, t))
		lo++;
	pk->hull_lo = lo, pk->hull_hi = hi;
	first = &hull[lo];
	if (!pk->have_best ||
	    (u128)(t - first->t) * pk->best_wrs < (u128)pk->best_dt * (x - first->idx)) {
		pk->have_best = true;
		pk->best_dt = t - first->t;
		pk->best_wrs = x - first->idx;
	}
	return 0;
}

/* A completion that retires a signaled WR (or none at all, or one past
 * the run). Only the last signaled WR of the batch matters: the same time
 * over more WRs, from a superset of the posts, is a smaller slope. */
int pt_bw_peak_complete_slow(struct pt_bw_peak *pk, uint64_t wrs, uint64_t t)
{
	uint64_t a = pk->done, done = a + wrs, x;

	if (wrs == 0 || a >= pk->n)
		return 0;
	pk->done = done;
	pk->last_done_t = t;
	if (done < pk->next_x)
		return 0;
	/* the largest signaled count reached: a multiple of cq_mod, or n */
	x = done >= pk->n ? pk->n : done - done % pk->cq_mod;
	pk->next_x = x == pk->n ? 0 : (pk->n - x > pk->cq_mod ? x + pk->cq_mod : pk->n);
	return query(pk, x - 1, t);
}

int pt_bw_peak_result(const struct pt_bw_peak *pk, double *min_ns)
{
	if (!pk || !min_ns)
		return -EINVAL;
	if (pk->backwards || !pend_monotone(pk))
		return -ERANGE;
	if (!pk->have_best)
		return -EDOM;
	/* the same expression as the pairwise definition (bw_peak.h) */
	*min_ns = (double)pk->best_dt / (double)pk->best_wrs;
	return 0;
}

void pt_bw_peak_stats(const struct pt_bw_peak *pk, struct pt_bw_peak_stats *st)
{
	size_t live = pk->pend_end - pk->pend_head;

	st->pending_max = live > pk->pending_max ? live : pk->pending_max;
	st->hull_max = pk->hull_max;
	/* the arrays only grow: their sizes now are the most they held */
	st->bytes_now = sizeof(*pk) + pk->pend_cap * sizeof(*pk->pend) +
			pk->hull_cap * sizeof(*pk->hull);
	st->bytes_max = st->bytes_now;
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
