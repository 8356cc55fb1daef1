/* SPDX-License-Identifier: BSD-2-Clause */
/* The linear BW peak (perftest/report/bw_peak.h) against the pairwise
 * oracle (tests/unit/bw_peak_oracle.c): same return code, same double bit
 * for bit, on any post and completion times.
 * fuzz-sources: perftest/report/bw_peak.c perftest/report/bw_peak_general.c tests/unit/bw_peak_oracle.c
 * fuzz-libs: -lm
 * fuzz-flags: -max_len=600
 *
 * Input: byte 0 = post_list - 1 (low 2 bits) and the form (bits 2-4),
 * byte 1 = cq_mod - 1 (mod 64), then one byte pair per WR:
 *   form 0  raw times (any order: clocks going backwards, the divide and
 *           conquer)
 *   form 1  steps: each post and each completion time adds its byte to the
 *           one before (never backwards: the tracker); a completion is
 *           never earlier than its post
 *   form 2  steps as form 1, completions may come before their posts
 *   form 3  a run fed as run_bw.c feeds it: post steps, then completions in
 *           batches (a byte's low 3 bits: WRs retired, high 5: time step)
 *           given to the tracker one batch at a time
 *   forms 4-7 as 0-3 with every time near 2^63 (wide values). */
#include <errno.h>
#include "fuzz.h"
#include "perftest/report/bw_peak.h"
#include "tests/unit/bw_peak_oracle.h"

#define MAX_WRS 300

static void same(int rc_a, double a, int rc_b, double b)
{
	FUZZ_ASSERT(rc_a == rc_b);
	FUZZ_ASSERT(rc_a || memcmp(&a, &b, sizeof(a)) == 0);
}

/* form 3: the tracker fed batch by batch, the arrays built beside */
static void as_a_run(const uint8_t *d, uint64_t n, unsigned pl, unsigned cq, uint64_t base,
		     uint64_t *tp, uint64_t *tc)
{
	struct pt_bw_peak pk;
	uint64_t t = base, done = 0, posted = 0;
	double want = 0, got = 0;
	int rc_want, rc_got;

	FUZZ_ASSERT(pt_bw_peak_init(&pk, n, pl, cq) == 0);
	for (uint64_t k = 0; done < n; k++) {
		uint8_t b = d[2 * (k % n) + 1];
		uint64_t wrs = 1 + (b & 7);

		/* post what the next batch retires (a window of up to 8 WRs) */
		while (posted < n && posted < done + wrs + (b >> 6)) {
			t += d[2 * (posted % n)];
			for (uint64_t i = posted; i < posted + pl && i < n; i++)
				tp[i] = t;
			FUZZ_ASSERT(pt_bw_peak_post(&pk, t) == 0);
			posted += pl;
		}
		if (wrs > (posted < n ? posted : n) - done)
			wrs = (posted < n ? posted : n) - done;
		t += b >> 3;
		for (uint64_t j = done; j < done + wrs; j++)
			tc[j] = t;
		FUZZ_ASSERT(pt_bw_peak_complete(&pk, wrs, t) == 0);
		done += wrs;
	}
	rc_want = pt_bw_peak_oracle(tp, tc, n, pl, cq, &want);
	rc_got = pt_bw_peak_result(&pk, &got);
	same(rc_got, got, rc_want, want);
	FUZZ_ASSERT(pk.last_done_t - pk.first_post_t == tc[n - 1] - tp[0]);
	pt_bw_peak_free(&pk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t tp[MAX_WRS], tc[MAX_WRS], n, base, dt = 0, wrs = 1;
	unsigned pl, cq, form;
	double want = 0, got = 0, general = 0;
	int rc_want, rc_got, rc_gen;

	if (size < 4)
		return 0;
	pl = 1 + (data[0] & 3);
	form = (data[0] >> 2) & 7;
	cq = 1 + data[1] % 64;
	n = (size - 2) / 2;
	if (n > MAX_WRS)
		n = MAX_WRS;
	data += 2;
	base = form & 4 ? (1ull << 63) + data[0] : 0;
	form &= 3;
	if (form == 3) {
		as_a_run(data, n, pl, cq, base, tp, tc);
		return 0;
	}
	for (uint64_t i = 0, p = base, c = base; i < n; i++) {
		if (form == 0) {
			tp[i] = base + data[2 * i];
			tc[i] = base + data[2 * i + 1];
			continue;
		}
		p += data[2 * i];
		c += data[2 * i + 1];
		if (form == 1 && c < p)
			c = p;
		tp[i] = p;
		tc[i] = c;
	}
	rc_want = pt_bw_peak_oracle(tp, tc, n, pl, cq, &want);
	rc_got = pt_bw_peak_arrays(tp, tc, n, pl, cq, &got);
	rc_gen = pt_bw_peak_general(tp, tc, n, pl, cq, &dt, &wrs);
	if (!rc_gen)
		general = (double)dt / (double)wrs;
	same(rc_got, got, rc_want, want);
	same(rc_gen, general, rc_want, want);
	return 0;
}
