/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW peak by its definition (perftest/report/bw_peak.h): every
 * (post, signaled completion) pair, O(n^2 / cq_mod). The test oracle for
 * the linear tracker; the tools never call it. */
#ifndef PT_BW_PEAK_ORACLE_H
#define PT_BW_PEAK_ORACLE_H
#include <stdint.h>

/* Smallest (tc[j] - tp[i]) / (j - i + 1) in double over i = 0, post_list,
 * ... and signaled j >= i ((j+1) % cq_mod == 0 or j == n-1) with
 * tc[j] > tp[i]. 0; -EINVAL (NULL, a step of 0); -EDOM (n == 0, or no such
 * pair). */
int pt_bw_peak_oracle(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		      unsigned post_list, unsigned cq_mod, double *min_ns);

#endif
