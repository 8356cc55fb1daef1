/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests' check that two recorders (wrtrace) kept the same rows, in the
 * same order, and the same counts. One comparison for the tests that play
 * one script several ways (test_wrtrace_defer.c) and the latency loops
 * traced several ways (test_lat_trace.c), so both hold the recorders to the
 * same fields. Include after <cmocka.h>. */
#ifndef TESTS_RECORDER_COMPARE_H
#define TESTS_RECORDER_COMPARE_H
#include <stdbool.h>
#include <stdint.h>
#include "plugin/recorder/wrtrace.h"

/* with_times: also every time (post, completion, NIC), for recorders fed
 * one script. Without: only whether a row has a completion, for separate
 * runs of the real loops, each of which stamps times of its own. */
static inline void recorders_agree(struct wrt *x, struct wrt *y, bool with_times)
{
	const struct wrt_meta *ma = wrt_meta(x), *mb = wrt_meta(y);
	const struct wrt_rec *a, *b;
	uint64_t na, nb;

	a = wrt_records(x, &na);
	b = wrt_records(y, &nb);
	assert_int_equal(na, nb);
	for (uint64_t i = 0; i < na; i++) {
		assert_int_equal(a[i].qp, b[i].qp);
		assert_int_equal(a[i].seq, b[i].seq);
		assert_int_equal(a[i].wr_id, b[i].wr_id);
		assert_int_equal(a[i].bytes, b[i].bytes);
		assert_int_equal(a[i].opcode, b[i].opcode);
		assert_int_equal(a[i].status, b[i].status);
		assert_int_equal(a[i].flags, b[i].flags);
		assert_int_equal(!a[i].t_comp, !b[i].t_comp);
		if (with_times) {
			assert_int_equal(a[i].t_post, b[i].t_post);
			assert_int_equal(a[i].t_comp, b[i].t_comp);
			assert_int_equal(a[i].hw_ns, b[i].hw_ns);
		}
	}
	assert_int_equal(ma->wrs, mb->wrs);
	assert_int_equal(ma->recorded, mb->recorded);
	assert_int_equal(ma->dropped, mb->dropped);
	assert_int_equal(ma->untracked, mb->untracked);
	assert_int_equal(ma->unmatched, mb->unmatched);
	assert_int_equal(ma->incomplete, mb->incomplete);
	assert_int_equal(ma->recv_pending, mb->recv_pending);
	assert_int_equal(ma->errors, mb->errors);
}

#endif
