/* SPDX-License-Identifier: BSD-2-Clause */
/* The pairwise BW peak, kept as the oracle of tests/unit/test_bw_peak.c,
 * tests/fuzz/fuzz_bw_peak.c and bench/peak. */
#include <errno.h>
#include <math.h>
#include <stddef.h>

#include "bw_peak_oracle.h"

int pt_bw_peak_oracle(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		      unsigned post_list, unsigned cq_mod, double *min_ns)
{
	double best = INFINITY;

	if (!tp || !tc || !min_ns || !post_list || !cq_mod)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	for (uint64_t i = 0; i < n; i += post_list) {
		/* the first signaled WR at or after i, then every cq_mod-th */
		uint64_t j = (i / cq_mod + 1) * (uint64_t)cq_mod - 1;

		for (;; j += cq_mod) {
			if (j >= n - 1)
				j = n - 1; /* the last WR is always signaled */
			/* a window that does not move forward in time counts for nothing */
			if (tc[j] > tp[i]) {
				double d = (double)(tc[j] - tp[i]) / (double)(j - i + 1);

				if (d < best)
					best = d;
			}
			if (j == n - 1)
				break;
		}
	}
	if (isinf(best))
		return -EDOM;
	*min_ns = best;
	return 0;
}
