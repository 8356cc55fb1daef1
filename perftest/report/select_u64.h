/* SPDX-License-Identifier: BSD-2-Clause */
/* The values at a few ranks of the latency samples without sorting them:
 * a latency row needs about ten order statistics (the largest kept, the
 * median, six percentiles, the dropped tail), not the order of all n.
 * A radix select does a histogram of the high bits, then looks again only
 * into the buckets that hold a wanted rank (results.c; bench/README.md,
 * "The latency report phase"). */
#ifndef PT_SELECT_U64_H
#define PT_SELECT_U64_H
#include <stddef.h>
#include <stdint.h>

/* out[j] = the value of 0-based rank ranks[j] in a[0..n), for m ranks in
 * ascending order, each < n. lo and hi: the smallest and largest value
 * (a pass of the caller's found them). a is used as room and left in any
 * order; scratch: room for n values, or NULL to have it allocated.
 * 0, or -ENOMEM. */
int pt_select_u64(uint64_t *a, size_t n, uint64_t lo, uint64_t hi, const uint64_t *ranks,
		  size_t m, uint64_t *out, uint64_t *scratch);

#endif
