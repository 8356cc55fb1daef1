/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW peak: the smallest time per WR over every window that starts at a
 * post and ends at a signaled completion, computed as the run goes.
 *
 * The definition (docs/bw-peak.md): WR i (a multiple of post_list) was
 * posted at tp[i]; a signaled completion j (every cq_mod-th WR, (j+1) %
 * cq_mod == 0, and always the last WR n-1) was polled at tc[j]. Over every
 * pair i <= j with tc[j] > tp[i] the peak interval is
 *     min (double)(tc[j] - tp[i]) / (double)(j - i + 1)      nanoseconds.
 * Seen as points P_i = (i, tp[i]) and C_j = (j + 1, tc[j]) that is the
 * smallest slope from a post point to a completion point on its right.
 *
 * pt_bw_peak_* computes it in O(1) amortised per WR when both clocks never
 * go backwards (what CLOCK_MONOTONIC_RAW guarantees): posts wait in a queue
 * until a completion at or after them has a later time, then join the upper
 * convex hull of the post points; each completion finds its tangent to that
 * hull by a pointer walk, and the hull points left of the tangent are
 * dropped for good (they can never beat the best found so far). Slopes are
 * compared exactly (128-bit integer cross products) and the best pair is
 * kept as integers, so the result is the same double the pairwise loop
 * gives as long as every window lasts less than 2^53 ns (104 days; beyond
 * that the pairwise loop's (double) of the difference rounds first).
 *
 * Memory: the queue holds the posts not yet completed (at most the WRs in
 * flight; 8 bytes each, the time: the index follows from the first) and
 * the hull the post points right of the last tangent, 16 bytes each;
 * neither depends on n for a steady run (pt_bw_peak_stats). A clock
 * that goes backwards is noticed and the result is then -ERANGE; the
 * array form, pt_bw_peak_arrays, answers any input exactly (arbitrary
 * inputs in O(n log^3 n), never the tools' case). Pure C, no verbs, no I/O. */
#ifndef PT_BW_PEAK_H
#define PT_BW_PEAK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A hull point: the WR index that starts a post list, and its time. */
struct pt_peak_point {
	uint64_t idx, t;
};

struct pt_bw_peak {
	uint64_t n;              /* WRs of the run; WR n-1 is always signaled */
	unsigned post_list, cq_mod;
	uint64_t done;           /* WRs retired so far */
	uint64_t next_x;         /* a completion reaching this count retires a
				  * signaled WR (0: the run's last is done) */
	uint64_t first_post_t, last_done_t; /* the run's ends, for its elapsed time */
	uint64_t last_query_t, moved_t; /* to notice a clock going backwards */
	bool have_query, have_moved;
	bool backwards;          /* a clock went backwards: no exact answer */
	bool have_best;
	uint64_t best_dt, best_wrs; /* the best window: ns and WRs */
	/* Posts not yet usable, their times only: pend[pend_head] is WR
	 * pend_idx, each next one post_list further. fast_left counts the
	 * posts the inline path may still store without looking at room or n. */
	uint64_t *pend;
	size_t pend_head, pend_end, pend_cap, pending_max;
	uint64_t pend_idx;
	uint64_t fast_left;
	/* The upper hull of the usable posts: hull[hull_lo .. hull_hi). */
	struct pt_peak_point *hull;
	size_t hull_lo, hull_hi, hull_cap, hull_max;
};

/* Start a run of n WRs (n >= 1, post_list >= 1, cq_mod >= 1): 0 or -EINVAL. */
int pt_bw_peak_init(struct pt_bw_peak *pk, uint64_t n, unsigned post_list, unsigned cq_mod);
void pt_bw_peak_free(struct pt_bw_peak *pk);

/* The out-of-line halves of the two calls below. */
int pt_bw_peak_post_slow(struct pt_bw_peak *pk, uint64_t t);
int pt_bw_peak_complete_slow(struct pt_bw_peak *pk, uint64_t wrs, uint64_t t);

/* The next post list (post_list WRs) was posted at time t. Posts beyond the
 * n-th WR are ignored. 0, or -ENOMEM. Inline: in the BW loops it runs once
 * per post, and most posts are a store (issue 21 counts its instructions). */
static inline int pt_bw_peak_post(struct pt_bw_peak *pk, uint64_t t)
{
	if (__builtin_expect(pk->fast_left == 0, 0))
		return pt_bw_peak_post_slow(pk, t);
	pk->fast_left--;
	pk->pend[pk->pend_end++] = t;
	return 0;
}

/* The next wrs WRs (in posting order over all QPs) were retired by a
 * completion polled at time t. 0, or -ENOMEM. Inline: a completion that
 * retires no signaled WR only counts. */
static inline int pt_bw_peak_complete(struct pt_bw_peak *pk, uint64_t wrs, uint64_t t)
{
	uint64_t done = pk->done + wrs;

	if (__builtin_expect(done < pk->next_x && wrs != 0, 1)) {
		pk->done = done;
		pk->last_done_t = t;
		return 0;
	}
	return pt_bw_peak_complete_slow(pk, wrs, t);
}

/* The peak interval in ns: 0; -EDOM when no window moved forward in time
 * (nothing completed, or every time equal); -ERANGE when a clock went
 * backwards. */
int pt_bw_peak_result(const struct pt_bw_peak *pk, double *min_ns);

/* Memory of the state: bytes now and at most during the run (points held
 * at the high-water marks: 8 bytes a pending post, 16 a hull point). */
struct pt_bw_peak_stats {
	size_t pending_max, hull_max; /* points */
	size_t bytes_now, bytes_max;
};
void pt_bw_peak_stats(const struct pt_bw_peak *pk, struct pt_bw_peak_stats *st);

/* The same value from arrays of n entries (tp read at multiples of
 * post_list, tc at the signaled j): the tracker when the times never go
 * backwards, else an exact divide and conquer. 0, -EINVAL (NULL, a step of
 * 0), -EDOM (n == 0, or no window moved forward), -ENOMEM. */
int pt_bw_peak_arrays(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		      unsigned post_list, unsigned cq_mod, double *min_ns);

/* The divide and conquer alone (any input, O(n log^3 n)): the best window
 * as integers, ns and WRs. Same errors as pt_bw_peak_arrays. */
int pt_bw_peak_general(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		       unsigned post_list, unsigned cq_mod, uint64_t *best_dt, uint64_t *best_wrs);

#endif
