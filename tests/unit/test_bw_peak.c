/* SPDX-License-Identifier: BSD-2-Clause */
/* The linear BW peak (perftest/report/bw_peak.h) against the pairwise
 * definition (bw_peak_oracle.c): the same double, bit for bit, on random,
 * adversarial and exhaustive small inputs, fed as arrays and as a run. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "perftest/report/bw_peak.h"
#include "perftest/report/results.h"
#include "bw_peak_oracle.h"

static uint64_t rnd(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

/* Both answers, same code and the same bits. */
static void same_as_oracle(const uint64_t *tp, const uint64_t *tc, uint64_t n, unsigned pl,
			   unsigned cq, const char *what)
{
	double want = -1, got = -2, gen = -3;
	uint64_t dt, wrs;
	int rc_want = pt_bw_peak_oracle(tp, tc, n, pl, cq, &want);
	int rc_got = pt_bw_peak_arrays(tp, tc, n, pl, cq, &got);
	int rc_gen = pt_bw_peak_general(tp, tc, n, pl, cq, &dt, &wrs);

	if (!rc_gen)
		gen = (double)dt / (double)wrs;
	if (rc_got != rc_want || (!rc_want && memcmp(&got, &want, sizeof(got))))
		fail_msg("%s n=%llu pl=%u cq=%u: linear rc %d %.17g, oracle rc %d %.17g", what,
			 (unsigned long long)n, pl, cq, rc_got, got, rc_want, want);
	if (rc_gen != rc_want || (!rc_want && memcmp(&gen, &want, sizeof(gen))))
		fail_msg("%s n=%llu pl=%u cq=%u: general rc %d %.17g, oracle rc %d %.17g", what,
			 (unsigned long long)n, pl, cq, rc_gen, gen, rc_want, want);
}

enum shape {
	STEADY,      /* steady posting, completions a little later */
	EQUAL_TIMES, /* a coarse clock: most steps are 0 */
	STEPS_FWD,   /* the clock jumps forward now and then */
	EARLY_DONE,  /* completions stamped before their posts (both monotone) */
	BURSTS,      /* completions in bursts of one time (cq_mod, polling) */
	STEPS_BACK,  /* the clock goes backwards now and then */
	ANY,         /* any small times */
	SHAPES
};

static const char *shape_name[SHAPES] = { "steady", "equal times", "steps forward",
					  "early completions", "bursts", "steps backwards",
					  "any" };

/* Fill tp and tc (n each) of one shape. Times start near 2^62 so large
 * values are covered, windows stay below 2^53 ns. */
static void fill(enum shape sh, uint64_t *tp, uint64_t *tc, uint64_t n, unsigned pl, uint64_t *s)
{
	uint64_t t = (1ull << 62) + below(s, 1000), done = t;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t step = 1 + below(s, 200);

		if (sh == EQUAL_TIMES)
			step = below(s, 4) == 0;
		else if (sh == STEPS_FWD && below(s, 50) == 0)
			step = 1000000000ull + below(s, 1000);
		if (i % pl == 0)
			t += step;
		tp[i] = t;
		if (sh == ANY)
			tp[i] = below(s, 8);
		else if (sh == STEPS_BACK && below(s, 40) == 0)
			tp[i] = t - below(s, 5000);
	}
	for (uint64_t j = 0; j < n; j++) {
		uint64_t lag = below(s, 3000);

		switch (sh) {
		case EARLY_DONE:
			done = tp[j] - 400 + below(s, 500) > done ? tp[j] - 400 + below(s, 500) : done;
			break;
		case BURSTS:
			if (below(s, 16) == 0)
				done = tp[j] + lag > done ? tp[j] + lag : done;
			break;
		case EQUAL_TIMES:
			done = tp[j] + below(s, 3) > done ? tp[j] + below(s, 3) : done;
			break;
		default:
			done = tp[j] + lag > done ? tp[j] + lag : done;
		}
		tc[j] = done;
		if (sh == ANY)
			tc[j] = below(s, 8);
		else if (sh == STEPS_BACK && below(s, 40) == 0)
			tc[j] = done - below(s, 5000);
	}
}

static void test_random_shapes(void **state)
{
	uint64_t s = 21, *tp = malloc(1500 * sizeof(*tp)), *tc = malloc(1500 * sizeof(*tc));
	static const unsigned pls[] = { 1, 2, 3, 8 }, cqs[] = { 1, 2, 5, 16, 100, 1000 };

	(void)state;
	assert_non_null(tp);
	assert_non_null(tc);
	for (int round = 0; round < 400; round++) {
		enum shape sh = (enum shape)(round % SHAPES);
		uint64_t n = 1 + below(&s, round % 4 ? 60 : 1500);
		unsigned pl = pls[below(&s, 4)], cq = cqs[below(&s, 6)];

		fill(sh, tp, tc, n, pl, &s);
		same_as_oracle(tp, tc, n, pl, cq, shape_name[sh]);
	}
	free(tp);
	free(tc);
}

/* Every input of n <= 4 WRs with times 0..3 (n <= 3) or 0..2 (n = 4). */
static void test_exhaustive_small(void **state)
{
	uint64_t tp[4], tc[4];

	(void)state;
	for (uint64_t n = 1; n <= 4; n++) {
		uint64_t base = n < 4 ? 4 : 3, combos = 1;

		for (uint64_t k = 0; k < 2 * n; k++)
			combos *= base;
		for (uint64_t code = 0; code < combos; code++) {
			uint64_t c = code;

			for (uint64_t k = 0; k < n; k++, c /= base)
				tp[k] = c % base;
			for (uint64_t k = 0; k < n; k++, c /= base)
				tc[k] = c % base;
			for (unsigned pl = 1; pl <= 3; pl++)
				for (unsigned cq = 1; cq <= 4; cq++)
					same_as_oracle(tp, tc, n, pl, cq, "exhaustive");
		}
	}
}

/* A run as run_bw.c drives the tracker: qps QPs round robin, each with at
 * most depth WRs in flight, posts of pl WRs, one CQE per signaled WR of a
 * QP (its every cq-th and its last), each retiring all earlier WRs of the
 * QP. The arrays the old loop kept are rebuilt beside, for the oracle. */
static void run_like_engine(unsigned qps, unsigned depth, unsigned pl, unsigned cq, uint64_t iters,
			    uint64_t *s, struct pt_bw_peak_stats *st)
{
	uint64_t n = qps * iters, gposted = 0, gdone = 0, t = 1000;
	uint64_t *tp = malloc(n * sizeof(*tp)), *tc = malloc(n * sizeof(*tc));
	uint64_t posted[8] = { 0 }, completed[8] = { 0 }, cqe_next[8] = { 0 };
	struct pt_bw_peak pk;
	double want = 0, got = 0;

	assert_true(qps <= 8 && iters % pl == 0);
	assert_non_null(tp);
	assert_non_null(tc);
	assert_int_equal(pt_bw_peak_init(&pk, n, pl, cq), 0);
	while (gdone < n) {
		unsigned q;

		for (q = 0; q < qps; q++)
			while (posted[q] < iters && posted[q] + pl <= depth + completed[q]) {
				t += below(s, 50) + (below(s, 100) == 0 ? 100000 : 0);
				for (unsigned k = 0; k < pl; k++)
					tp[gposted + k] = t;
				assert_int_equal(pt_bw_peak_post(&pk, t), 0);
				posted[q] += pl;
				gposted += pl;
			}
		/* poll: a few CQEs, all stamped with one time */
		t += below(s, 400);
		for (unsigned polls = 1 + (unsigned)below(s, 4); polls; polls--) {
			uint64_t k, credit;

			q = (unsigned)below(s, qps);
			for (unsigned tries = 0; tries < qps; tries++, q = (q + 1) % qps) {
				k = cqe_next[q] ? cqe_next[q] : cq - 1; /* its next signaled WR */
				if (k >= iters)
					k = iters - 1;
				if (k < posted[q] && k >= completed[q])
					break;
			}
			if (!(k < posted[q] && k >= completed[q]))
				break;
			credit = k + 1 - completed[q];
			completed[q] = k + 1;
			cqe_next[q] = k + cq;
			for (uint64_t j = 0; j < credit; j++)
				tc[gdone + j] = t;
			assert_int_equal(pt_bw_peak_complete(&pk, credit, t), 0);
			gdone += credit;
		}
	}
	assert_int_equal(pt_bw_peak_oracle(tp, tc, n, pl, cq, &want), 0);
	assert_int_equal(pt_bw_peak_result(&pk, &got), 0);
	if (memcmp(&got, &want, sizeof(got)))
		fail_msg("run of %u QPs depth %u pl %u cq %u n %llu: tracker %.17g, oracle %.17g", qps,
			 depth, pl, cq, (unsigned long long)n, got, want);
	/* what run_bw.c reports as the elapsed time */
	assert_int_equal(pk.last_done_t - pk.first_post_t, tc[n - 1] - tp[0]);
	pt_bw_peak_stats(&pk, st);
	pt_bw_peak_free(&pk);
	free(tp);
	free(tc);
}

static void test_engine_runs(void **state)
{
	uint64_t s = 7;
	struct pt_bw_peak_stats st;

	(void)state;
	for (int round = 0; round < 120; round++) {
		unsigned qps = 1 + (unsigned)below(&s, 4), pl = 1 + (unsigned)below(&s, 4);
		unsigned cq = 1 + (unsigned)below(&s, 40);
		/* as the tools require, a CQE is due before the window closes */
		unsigned depth = cq + pl * (1 + (unsigned)below(&s, 64));
		uint64_t iters = pl * (1 + below(&s, round % 8 ? 200 : 1500));

		run_like_engine(qps, depth, pl, cq, iters, &s, &st);
		/* the queue never holds more than the WRs in flight */
		assert_true(st.pending_max <= (uint64_t)qps * depth / pl + 1);
	}
}

/* Memory does not grow with the run: the same steady run at 2e4 and 2e5
 * WRs holds about as many points (few, and far from n). */
static void test_memory_bounded(void **state)
{
	uint64_t s = 3;
	struct pt_bw_peak_stats small, big;

	(void)state;
	run_like_engine(2, 128, 1, 100, 10000, &s, &small);
	run_like_engine(2, 128, 1, 100, 100000, &s, &big);
	print_message("# peak state: 2e4 WRs: queue %zu, hull %zu points, %zu B; 2e5 WRs: queue %zu, hull %zu points, %zu B\n",
		      small.pending_max, small.hull_max, small.bytes_max, big.pending_max,
		      big.hull_max, big.bytes_max);
	assert_true(big.pending_max <= 2 * 128 + 1);
	assert_true(big.hull_max <= 64);
	assert_true(big.bytes_max <= 4 * small.bytes_max);
}

/* Named cases: n = 1 and 2, post lists, moderation, ties, no window. */
static void test_cases(void **state)
{
	uint64_t tp[10], tc[10];
	double min = 0;

	(void)state;
	/* n = 1: one window, 1 WR */
	tp[0] = 100, tc[0] = 350;
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 1, 1, 1, &min), 0);
	assert_true(min == 250.0);
	/* n = 2, cq_mod 1: windows [0,0] 100, [0,1] 150/2, [1,1] 90 -> 75 */
	tp[0] = 0, tp[1] = 60, tc[0] = 100, tc[1] = 150;
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 2, 1, 1, &min), 0);
	assert_true(min == 75.0);
	/* the same with cq_mod 2: j = 1 only, [0,1] 75 and [1,1] 90 */
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 2, 1, 2, &min), 0);
	assert_true(min == 75.0);
	/* a late post of WR 1 makes [1,9] best, (1900-550)/9 = 150; with
	 * post_list 2 only even i start a window: [0,9] 190 */
	for (unsigned i = 0; i < 10; i++)
		tp[i] = 100ull * i, tc[i] = 100ull * i + 1000;
	tp[1] = 550;
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 1, 1, &min), 0);
	assert_true(min == 150.0);
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 2, 1, &min), 0);
	assert_true(min == 190.0);
	/* unsignaled times are never read, even when they would win */
	tp[1] = 100;
	for (unsigned j = 0; j < 10; j++)
		if ((j + 1) % 5)
			tc[j] = 1;
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 1, 5, &min), 0);
	assert_true(min == 190.0);
	/* nothing moves forward: -EDOM; bad arguments: -EINVAL */
	for (unsigned i = 0; i < 10; i++)
		tp[i] = tc[i] = 5;
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 1, 1, &min), -EDOM);
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 0, 1, 1, &min), -EDOM);
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 0, 1, &min), -EINVAL);
	assert_int_equal(pt_bw_peak_arrays(tp, tc, 10, 1, 0, &min), -EINVAL);
	assert_int_equal(pt_bw_peak_arrays(NULL, tc, 10, 1, 1, &min), -EINVAL);
}

/* The tracker itself: bad arguments, a clock going backwards, and what
 * pt_bw_compute makes of it. */
static void test_tracker(void **state)
{
	struct pt_bw_peak pk;
	struct pt_bw_result r;
	struct pt_bw_input in = { .size = 65536, .iters = 4, .msgs = 4, .elapsed_ns = 400, .peak = &pk };
	double min;

	(void)state;
	assert_int_equal(pt_bw_peak_init(&pk, 0, 1, 1), -EINVAL);
	assert_int_equal(pt_bw_peak_init(&pk, 4, 0, 1), -EINVAL);
	assert_int_equal(pt_bw_peak_init(&pk, 4, 1, 0), -EINVAL);
	assert_int_equal(pt_bw_peak_init(&pk, 4, 1, 2), 0);
	assert_int_equal(pt_bw_peak_result(&pk, &min), -EDOM); /* nothing yet */
	for (int i = 0; i < 4; i++)
		assert_int_equal(pt_bw_peak_post(&pk, 100 * (uint64_t)i), 0);
	assert_int_equal(pt_bw_peak_post(&pk, 1), 0); /* beyond n: ignored */
	assert_int_equal(pt_bw_peak_complete(&pk, 2, 300), 0);
	assert_int_equal(pt_bw_peak_complete(&pk, 2, 500), 0);
	assert_int_equal(pt_bw_peak_result(&pk, &min), 0);
	assert_true(min == 125.0); /* [0,3]: 500/4 beats [2,3] 300/2 and [0,1] 150 */
	assert_int_equal(pt_bw_compute(&in, &r), 0);
	assert_true(r.bw_peak == 65536 * 1e9 / 125.0 / 1048576.0);
	assert_int_equal(pk.last_done_t - pk.first_post_t, 500);
	pt_bw_peak_free(&pk);

	/* a completion stamped earlier than the one before: no peak */
	assert_int_equal(pt_bw_peak_init(&pk, 4, 1, 1), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pt_bw_peak_post(&pk, 100 * (uint64_t)i), 0);
	assert_int_equal(pt_bw_peak_complete(&pk, 1, 300), 0);
	assert_int_equal(pt_bw_peak_complete(&pk, 1, 299), 0);
	assert_int_equal(pt_bw_peak_result(&pk, &min), -ERANGE);
	assert_int_equal(pt_bw_compute(&in, &r), -ERANGE);
	assert_non_null(strstr(pt_results_strerror(-ERANGE), "backwards"));
	pt_bw_peak_free(&pk);
	/* and a post stamped earlier than the one before */
	assert_int_equal(pt_bw_peak_init(&pk, 4, 1, 1), 0);
	assert_int_equal(pt_bw_peak_post(&pk, 100), 0);
	assert_int_equal(pt_bw_peak_post(&pk, 50), 0);
	assert_int_equal(pt_bw_peak_result(&pk, &min), -ERANGE);
	pt_bw_peak_free(&pk);
}

/* A post clock that steps back behind a post no completion can reach yet
 * (a jump forward, then back): the inline path stores posts without
 * comparing them, yet the step is found within one array's worth of posts
 * and the queue stays that small; the result is -ERANGE. Dropping the
 * slow path's scan makes the queue hold every post. */
static void test_backwards_bounded(void **state)
{
	struct pt_bw_peak pk;
	struct pt_bw_peak_stats st;
	const uint64_t n = 200000;
	double min;

	(void)state;
	assert_int_equal(pt_bw_peak_init(&pk, n, 1, 1), 0);
	assert_int_equal(pt_bw_peak_post(&pk, 1000000000000ull), 0);
	for (uint64_t i = 1; i < n; i++) {
		assert_int_equal(pt_bw_peak_post(&pk, 10 * i), 0);
		assert_int_equal(pt_bw_peak_complete(&pk, 1, 10 * i + 5), 0);
	}
	assert_int_equal(pt_bw_peak_complete(&pk, 1, 10 * n + 5), 0);
	pt_bw_peak_stats(&pk, &st);
	assert_true(st.pending_max <= 128);
	assert_true(st.bytes_max < 4096);
	assert_int_equal(pt_bw_peak_result(&pk, &min), -ERANGE);
	pt_bw_peak_free(&pk);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_tracker),
		cmocka_unit_test(test_exhaustive_small),
		cmocka_unit_test(test_random_shapes),
		cmocka_unit_test(test_engine_runs),
		cmocka_unit_test(test_memory_bounded),
		cmocka_unit_test(test_backwards_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
