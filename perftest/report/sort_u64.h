/* SPDX-License-Identifier: BSD-2-Clause */
/* Sorting the latency samples (results.c): a least-significant-digit radix
 * sort, O(n) for the few digits that latencies in ns use, where qsort pays
 * a comparator call per comparison, n log n of them (bench/README.md,
 * "bench/instructions": the report phase of ib_send_lat and ib_read_lat). */
#ifndef PT_SORT_U64_H
#define PT_SORT_U64_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sort a[0..n) ascending. scratch: room for n values the sort may use, or
 * NULL to have it allocated (qsort when that fails). */
void pt_sort_u64(uint64_t *a, size_t n, uint64_t *scratch);
/* The same when the caller knows the smallest and largest value (a pass
 * of its own found them): the sort needs no pass for them. */
void pt_sort_u64_range(uint64_t *a, size_t n, uint64_t min, uint64_t max, uint64_t *scratch);
/* The same, returning where the sorted values are: a, or (in_place false,
 * scratch given) scratch when the last pass left them there, so no copy
 * back is made. */
const uint64_t *pt_sort_u64_to(uint64_t *a, size_t n, uint64_t min, uint64_t max,
			       uint64_t *scratch, bool in_place);

#endif
