/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops (perftest/engine/run_lat.c, run_lat_send.c) driven
 * through their narrow view (struct pt_loop) over the fake device
 * (fake_verbs.h), spinning: each loop's copies (the general one, the plain
 * ones per post form, watched or not) post what the fake checks, stamp
 * every iteration, and end on an error, a stall, a gone peer or a signal
 * with what they measured. -e: test_loop_events.c; traced:
 * test_lat_trace.c. */
#define PT_LOOP_VIEW_ONLY
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "perftest/engine/loop.h"
#include "perftest/engine/lat_run.h"
#include "perftest/report/results.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"
#include "util/clock.h"
#include "util/tsc.h"
#include "fake_verbs.h"

static int lat_read(const struct pt_loop *l, void *m) { return pt_run_lat_read(l, m); }

/* send_lat's client: ping, wait for the send, wait for the pong; every
 * iteration stamped in order; one receive reposted per pong. */
static void test_lat_send_pingpong(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	const uint64_t iters = 200;
	struct fake *f = fake_new_lat(&l, IBV_WR_SEND, iters, false);

	(void)state;
	f->echo = true;
	assert_int_equal(pt_post_recv(&l, 0, 4), 0);
	assert_int_equal(pt_run_lat_send(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->qps[0].recv_posted, iters);
	assert_int_equal(f->rhead[0], iters);           /* every pong consumed */
	assert_non_null(m.stamps);
	pt_lat_meas_ns(&m);   /* what a plain copy stamped, in nanoseconds */
	for (uint64_t i = 1; i < iters; i++)
		assert_true(m.stamps[i] >= m.stamps[i - 1]);
	pt_lat_meas_free(&m);
	fake_free(f);
}

static int lat_send(const struct pt_loop *l, void *m) { return pt_run_lat_send(l, m); }

/* send_lat's reposts, one per received message while fewer than -n are
 * posted, none after: the spinning copy, built per post form, splits its
 * loop there (run_lat_send.c). Client and server, every form, runs shorter
 * and longer than the receives posted before: each run posts exactly -n
 * receives (or those before it), numbered in order, never more at once
 * than the queue had, and no message finds no receive. */
static void check_send_reposts(bool client, bool qpx, bool inl, uint64_t iters, unsigned pre)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_new_lat(&l, IBV_WR_SEND, iters, qpx);
	const uint64_t posts = iters > pre ? iters : pre;

	l.opt.is_client = client;
	if (inl)
		f->run.inline_size = 64;
	f->echo = true;
	assert_int_equal(pt_post_recv(&l, 0, pre), 0);
	if (!client)
		deliver(f, 0);   /* the client's first ping */
	assert_int_equal(pt_run_lat_send(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->qps[0].recv_posted, posts);
	assert_int_equal(f->recv_calls, posts);   /* one receive a call */
	assert_true(f->rdepth_max[0] <= pre);
	for (uint64_t k = 0; k < posts; k++)
		assert_int_equal(f->rfifo[0][k % RING], pt_wrid(0, k));
	/* the server's last pong brings one ping more, which no receive awaits
	 * when every one was posted before the run */
	assert_int_equal(f->waiting[0], !client && iters >= pre ? 1 : 0);
	assert_int_equal(f->rhead[0], client ? iters : posts < iters + 1 ? posts : iters + 1);
	pt_lat_meas_free(&m);
	fake_free(f);
}

static void test_lat_send_reposts(void **state)
{
	static const uint64_t iters[] = { 1, 2, 3, 4, 5, 9, 61 };

	(void)state;
	for (int client = 0; client < 2; client++)
		for (int qpx = 0; qpx < 2; qpx++)
			for (int inl = 0; inl < 2; inl++)
				for (size_t k = 0; k < sizeof(iters) / sizeof(iters[0]); k++) {
					check_send_reposts(client, qpx, inl, iters[k], 1);
					check_send_reposts(client, qpx, inl, iters[k], 4);
				}
}

/* send_lat --send_with_imm and write_lat --write_with_imm: the ping-pong on
 * receive completions; a pong without immediate data ends the run. */
static void test_lat_imm_pingpong(void **state)
{
	enum ibv_wr_opcode ops[] = { IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM };

	(void)state;
	for (int k = 0; k < 4; k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		char err[1024];
		struct fake *f = fake_new_lat(&l, ops[k % 2], 100, k % 2);

		l.opt.imm = true;
		f->echo = true;
		f->imm_in = k < 2;
		assert_int_equal(pt_post_recv(&l, 0, 4), 0);
		if (f->imm_in) {
			assert_int_equal(pt_run_lat_send(&l, &m), 0);
			assert_int_equal(m.n, 100);
			assert_int_equal(f->sends, 100);
		} else {
			assert_int_equal(with_stderr(err, sizeof(err), lat_send, &l, &m), -1);
			assert_non_null(strstr(err, "without immediate data"));
		}
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* write_lat's client: wait for the peer's count in our region, write ours
 * (i + 1 in the last payload byte, checked by the fake), one WR each. */
static void test_lat_write_pingpong(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	const uint64_t iters = 150;
	struct fake *f = fake_new_lat(&l, IBV_WR_RDMA_WRITE, iters, false);

	(void)state;
	f->echo_write = true;
	f->qps[0].recv_buf[f->run.size - 1] = 1;   /* the server wrote first */
	assert_int_equal(pt_run_lat_write(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->qps[0].send_buf[f->run.size - 1], (uint8_t)iters);
	pt_lat_meas_free(&m);
	fake_free(f);
}

static int lat_write(const struct pt_loop *l, void *m) { return pt_run_lat_write(l, m); }

/* One latency run of verb op with the post API qpx and inline or not: every
 * WR checked by the fake (opcode, length, lkey, target, flags), one post
 * call per iteration. post_fail: post calls from this one fail; the run
 * then ends with -1 and says so, its earlier iterations kept. */
static void check_lat_run_n(enum ibv_wr_opcode op, bool qpx, bool inl, uint64_t iters,
			    uint64_t post_fail)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_new_lat(&l, op, iters, qpx);
	int (*run)(const struct pt_loop *, void *) = op == IBV_WR_SEND ? lat_send :
						     op == IBV_WR_RDMA_WRITE ? lat_write : lat_read;
	char err[1024] = "";
	int rc;

	if (inl)
		f->run.inline_size = 64;
	f->echo = op == IBV_WR_SEND;
	if (op == IBV_WR_RDMA_WRITE) {
		f->echo_write = true;
		f->qps[0].recv_buf[f->run.size - 1] = 1;   /* the server wrote first */
	}
	if (op == IBV_WR_SEND)
		assert_int_equal(pt_post_recv(&l, 0, 4), 0);
	f->fail_post_from = post_fail;
	rc = with_stderr(err, sizeof(err), run, &l, &m);
	if (post_fail) {
		assert_int_equal(rc, -1);
		assert_non_null(strstr(err, "Couldn't post send on QP 0: Cannot allocate memory"));
		assert_int_equal(f->sends, post_fail - 1);
		assert_int_equal(m.n, post_fail);   /* stamped, then its post failed */
	} else {
		assert_int_equal(rc, 0);
		assert_string_equal(err, "");
		assert_int_equal(m.n, iters);
		assert_int_equal(f->sends, iters);
		assert_int_equal(f->post_calls, iters);
	}
	pt_lat_meas_free(&m);
	fake_free(f);
}

static void check_lat_run(enum ibv_wr_opcode op, bool qpx, bool inl, uint64_t post_fail)
{
	check_lat_run_n(op, qpx, inl, 120, post_fail);
}

/* read_lat's and atomic_lat's spinning copies run two iterations a bound
 * test (lat_read_pairs), an odd count's first alone; on both clocks (the
 * TSC where the CPU has an invariant one): every count runs all of -n,
 * and a post that fails in the one alone, in a pair's first or in its
 * second ends the run there, its earlier iterations kept. */
static void test_lat_read_pairs(void **state)
{
	static const uint64_t fails[] = { 0, 2, 3, 9, 10, 121 };

	(void)state;
	for (int tsc = 0; tsc < 2; tsc++) {
		if (tsc && (!pt_clock_tsc_invariant("/proc/cpuinfo") ||
			    pt_clock_setup(PT_CLOCK_TSC, "/proc/cpuinfo", NULL) != 0)) {
			print_message("no invariant TSC here: the clock_gettime copies only\n");
			break;
		}
		for (uint64_t iters = 1; iters <= 5; iters++)
			check_lat_run_n(IBV_WR_RDMA_READ, true, false, iters, 0);
		for (size_t k = 0; k < sizeof(fails) / sizeof(fails[0]); k++)
			for (uint64_t iters = 120; iters <= 121; iters++) {
				uint64_t fail = fails[k] > iters ? 0 : fails[k];

				check_lat_run_n(IBV_WR_RDMA_READ, true, false, iters, fail);
				check_lat_run_n(IBV_WR_RDMA_READ, false, false, iters, fail);
				check_lat_run_n(IBV_WR_ATOMIC_FETCH_AND_ADD, true, false, iters, fail);
			}
		assert_int_equal(pt_now_raw_fixed_ok(), tsc == 1);
		pt_clock_reset();
	}
}

/* The latency loops' posts on both APIs: the new API's verbs are built
 * inline in the plain copies (READ, WRITE, SEND and the two atomics, each
 * atomic in copies of its own), else in post.c; the fake checks every WR
 * either way, inline data and the atomics' operands included. */
static void test_lat_post_apis(void **state)
{
	const enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_READ, IBV_WR_RDMA_WRITE, IBV_WR_SEND,
					   IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP };

	(void)state;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		for (int qpx = 0; qpx < 2; qpx++)
			for (int inl = 0; inl < 2; inl++) {
				bool can_inline = ops[k] == IBV_WR_RDMA_WRITE || ops[k] == IBV_WR_SEND;

				if (inl && !can_inline)
					continue;
				check_lat_run(ops[k], qpx, inl, 0);
				check_lat_run(ops[k], qpx, inl, 9);
			}
}

/* A tracer attached: the kernel raises one per-WR probe's semaphore (a
 * half of pt_probe_wr_semaphores). The plain copies then run each
 * iteration watched (every probe tested, send_lat's reposts through
 * post.c while post_recv's is raised), with the same posts and stamps,
 * and a failed post said the same. Lab test 85 shows the probes fire. */
static void test_lat_probes_raised(void **state)
{
	(void)state;
#if PT_PROBES
	for (unsigned half = 0; half < 4; half++) {
		pt_probe_wr_semaphores.one[half] = 1;
		check_lat_run(IBV_WR_RDMA_READ, true, false, 0);
		check_lat_run(IBV_WR_RDMA_READ, false, false, 0);
		check_lat_run(IBV_WR_ATOMIC_CMP_AND_SWP, true, false, 0);
		check_lat_run(IBV_WR_RDMA_WRITE, true, true, 0);
		check_lat_run(IBV_WR_SEND, true, true, 0);
		check_lat_run(IBV_WR_SEND, false, false, 0);
		check_lat_run(IBV_WR_SEND, true, false, 9);
		pt_probe_wr_semaphores.one[half] = 0;
	}
#else
	skip();
#endif
}

/* The loops and copies the tests below run each of: read_lat's plain
 * copy on the new post API and the old one, atomic_lat's (fetch-and-add),
 * send_lat's and write_lat's. */
static const struct lat_case {
	enum ibv_wr_opcode op;
	bool qpx;
} lat_cases[] = {
	{ IBV_WR_RDMA_READ, true }, { IBV_WR_RDMA_READ, false },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, true }, { IBV_WR_SEND, true }, { IBV_WR_RDMA_WRITE, true },
};

/* A fake for case c's loop with its peer (send_lat's answers and its
 * first receives, write_lat's counts, the server's first write); *run the
 * loop to run. */
static struct fake *fake_lat_case(struct pt_loop *l, const struct lat_case *c, uint64_t iters,
				  int (**run)(const struct pt_loop *, void *))
{
	struct fake *f = fake_new_lat(l, c->op, iters, c->qpx);

	*run = c->op == IBV_WR_SEND ? lat_send : c->op == IBV_WR_RDMA_WRITE ? lat_write : lat_read;
	f->echo = c->op == IBV_WR_SEND;
	f->echo_write = c->op == IBV_WR_RDMA_WRITE;
	f->qps[0].recv_buf[f->run.size - 1] = 1;   /* write: the server wrote first */
	if (c->op == IBV_WR_SEND)
		assert_int_equal(pt_post_recv(l, 0, 4), 0);
	return f;
}

/* A tracer attached in mid-run, on a slow link: a spinning plain copy's
 * iterations test no probe; its stop rules' looks (every
 * LAT_SPINS_PER_CHECK empty polls) do, and lower the loop's bound when one
 * rose. The iterations after that look are watched (only the post probe is
 * raised: one fires per iteration), and the run still takes all of -n (the
 * bound restored). Without a tracer none fires, and the run is the same. */
static void test_lat_probes_mid_run(void **state)
{
	(void)state;
#if PT_PROBES
	for (size_t k = 0; k < sizeof(lat_cases) / sizeof(lat_cases[0]) * 4; k++)
		for (int tracer = 0; tracer < 2; tracer++) {
			const struct lat_case *c = &lat_cases[k / 4];
			const uint64_t iters = 120 + k % 2, at = 40 + k / 2 % 2;
			struct pt_loop l;
			struct pt_lat_meas m;
			int (*run)(const struct pt_loop *, void *);
			struct fake *f = fake_lat_case(&l, c, iters, &run);
			/* CQEs polled per iteration: send_lat's client takes its
			 * send's and the peer's message */
			const uint64_t per = c->op == IBV_WR_SEND ? 2 : 1;
			/* read's and atomic's loops test their bound after a
			 * pair (lat_read_pairs): the pairs' first iterations
			 * have -n's parity */
			const bool pairs = c->op != IBV_WR_SEND && c->op != IBV_WR_RDMA_WRITE;
			char err[1024] = "";

			f->empty_before = f->empty_left = LAT_SPINS_PER_CHECK + 10;
			f->probes_after = tracer ? at : 0;
			pt_probes_fired = 0;
			assert_int_equal(with_stderr(err, sizeof(err), run, &l, &m), 0);
			assert_string_equal(err, "");
			assert_int_equal(m.n, iters);
			assert_int_equal(f->sends, iters);
			if (!tracer) {
				assert_int_equal(pt_probes_fired, 0);
			} else {
				/* raised in the poll that takes CQE at, iteration
				 * (at - 1) / per's; the next iteration's wait looks
				 * (more than LAT_SPINS_PER_CHECK empty polls), so
				 * the iteration after it is watched, or the one
				 * after that where the look fell in a pair's first */
				uint64_t look = (at - 1) / per + 1;
				uint64_t from = look + 1 + (pairs && look % 2 == iters % 2);

				assert_int_equal(pt_probes_fired, iters - from);
			}
			pt_probe_wr_semaphores.one[0] = 0;
			pt_lat_meas_free(&m);
			fake_free(f);
		}
#else
	skip();
#endif
}

/* SIGINT in a latency run whose CQEs come at once (a fast link: no wait
 * ever long enough to look at the stop rules): the run still ends at the
 * next iteration, with what it measured and m.interrupted, on every loop
 * and copy (read: the plain copy on the new API and the old one, the
 * general copy for atomics on the new API; send; write). */
static void test_lat_interrupted(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(lat_cases) / sizeof(lat_cases[0]); k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		int (*run)(const struct pt_loop *, void *);
		struct fake *f = fake_lat_case(&l, &lat_cases[k], 100000, &run);
		char err[1024] = "";

		f->interrupt_after = 40;
		assert_int_equal(with_stderr(err, sizeof(err), run, &l, &m), -1);
		assert_true(m.interrupted);
		/* the CQE that came with the signal ends its iteration; one more
		 * loop test, no more posts */
		assert_true(f->polled >= 40 && f->polled <= 41);
		assert_true(m.n >= 20 && m.n <= 41);
		assert_true(f->sends <= 41);
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* read_lat: a failed READ names its iteration as the WR number. */
static void test_lat_read_error(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_RDMA_READ, 100, false);
	char err[2048];

	(void)state;
	l.opt.lat = true;
	f->per_iteration = true;
	f->fail_sig = 38;
	assert_int_equal(with_stderr(err, sizeof(err), lat_read, &l, &m), -1);
	assert_int_equal(m.n, 38);
	assert_non_null(strstr(err, "send WR #37 "));
	assert_null(strstr(err, "scnt="));              /* BW counts only */
	assert_null(strstr(err, "went away"));
	pt_lat_meas_free(&m);
	fake_free(f);
}

/* read_lat's slow paths on both copies of the loop (qpx: the plain one,
 * which stamps into the array only and sets the iteration under way and
 * the last progress when a slow path needs them): a failed READ names its
 * iteration; a peer that goes away after 30 iterations is said with the
 * iteration under way; a peer that stays silent ends the run by the stall
 * rule, its time counted from the last stamp. */
static void test_lat_read_slow_paths(void **state)
{
	(void)state;
	for (int qpx = 0; qpx < 2; qpx++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		struct fake *f = fake_new_lat(&l, IBV_WR_RDMA_READ, 100, qpx);
		char err[2048];
		uint64_t t0;

		f->fail_sig = 38;
		assert_int_equal(with_stderr(err, sizeof(err), lat_read, &l, &m), -1);
		assert_int_equal(m.n, 38);
		assert_non_null(strstr(err, "send WR #37 "));
		pt_lat_meas_free(&m);
		fake_free(f);

		f = fake_new_lat(&l, IBV_WR_RDMA_READ, 100, qpx);
		f->silent_after = 30;
		f->closed = 1;
		assert_int_equal(with_stderr(err, sizeof(err), lat_read, &l, &m), -1);
		assert_int_equal(m.n, 31);
		assert_non_null(strstr(err, "went away during the run"));
		assert_non_null(strstr(err, ": 30 of 100 iterations done"));
		pt_lat_meas_free(&m);
		fake_free(f);

		f = fake_new_lat(&l, IBV_WR_RDMA_READ, 100, qpx);
		f->silent_after = 10;
		l.opt.stall_ns = 200000000ull;
		t0 = pt_now_ns();
		assert_int_equal(with_stderr(err, sizeof(err), lat_read, &l, &m), -1);
		assert_int_equal(m.n, 11);
		assert_non_null(strstr(err, "No completion for"));
		/* from iteration 10's stamp, after t0 */
		pt_lat_meas_ns(&m);
		assert_true(m.stamps[10] > t0);
		assert_true(pt_now_ns() - m.stamps[10] >= l.opt.stall_ns);
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* write_lat's waits for the peer's count, on both copies of the loop: the
 * peer answers 20 writes and then nothing; the 21st write's answer is
 * waited for out of line, and the stall rule ends the run (its time counted
 * from the last stamp), or the peer's going away does, said with the
 * iteration under way. */
static void test_lat_write_slow_paths(void **state)
{
	(void)state;
	for (int qpx = 0; qpx < 2; qpx++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		struct fake *f = fake_new_lat(&l, IBV_WR_RDMA_WRITE, 100, qpx);
		char err[2048];

		f->echo_write = true;
		f->echo_write_until = 20;
		f->qps[0].recv_buf[f->run.size - 1] = 1;   /* the server wrote first */
		l.opt.stall_ns = 200000000ull;
		assert_int_equal(with_stderr(err, sizeof(err), lat_write, &l, &m), -1);
		assert_int_equal(m.n, 21);                   /* the 21st write was answered */
		assert_int_equal(f->sends, 21);
		assert_non_null(strstr(err, "No write from the peer for"));
		pt_lat_meas_ns(&m);
		assert_true(pt_now_ns() - m.stamps[20] >= l.opt.stall_ns);
		pt_lat_meas_free(&m);
		fake_free(f);

		f = fake_new_lat(&l, IBV_WR_RDMA_WRITE, 100, qpx);
		f->echo_write = true;
		f->echo_write_until = 30;
		f->qps[0].recv_buf[f->run.size - 1] = 1;
		f->closed = 1;
		assert_int_equal(with_stderr(err, sizeof(err), lat_write, &l, &m), -1);
		assert_int_equal(m.n, 31);
		assert_non_null(strstr(err, "went away during the run"));
		assert_non_null(strstr(err, ": 30 of 100 iterations done"));   /* 31st under way */
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* A plain copy's count of stamps (lat_stamped): the prefix of set stamps
 * of a run that grows by 0, 1, a few or many at a time between looks, up
 * to its end, as a linear count gives it; from the last count and from
 * none (a run's first look). */
static void test_lat_stamped(void **state)
{
	static const uint64_t lens[] = { 1, 2, 3, 7, 64, 1000, 4097 };

	(void)state;
	srand(21);
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		const uint64_t n = lens[k];
		struct pt_lat_meas m = { .stamps = calloc(n, sizeof(uint64_t)) };
		struct pt_loop l = { .opt = { .iters = n } };
		struct lat_run r = { .l = &l, .m = &m }, fresh;
		uint64_t set = 0;

		assert_non_null(m.stamps);
		assert_int_equal(lat_stamped(&r), 0);
		while (set < n) {
			int kind = rand() % 4;
			uint64_t step = kind == 0 ? 0 : kind == 1 ? 1 : kind == 2 ? (uint64_t)(rand() % 5) :
				(uint64_t)rand() % (n + 1);

			for (uint64_t j = 0; j < step && set < n; j++)   /* no clock reads 0 */
				m.stamps[set++] = j % 2 ? UINT64_MAX : 1 + (uint64_t)rand();
			assert_int_equal(lat_stamped(&r), set);
			fresh = (struct lat_run){ .l = &l, .m = &m };
			assert_int_equal(lat_stamped(&fresh), set);
		}
		assert_int_equal(lat_stamped(&r), n);
		free(m.stamps);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_stamped),
		cmocka_unit_test(test_lat_send_pingpong),
		cmocka_unit_test(test_lat_send_reposts),
		cmocka_unit_test(test_lat_write_pingpong),
		cmocka_unit_test(test_lat_write_slow_paths),
		cmocka_unit_test(test_lat_imm_pingpong),
		cmocka_unit_test(test_lat_read_error),
		cmocka_unit_test(test_lat_interrupted),
		cmocka_unit_test(test_lat_post_apis),
		cmocka_unit_test(test_lat_probes_raised),
		cmocka_unit_test(test_lat_probes_mid_run),
		cmocka_unit_test(test_lat_read_pairs),
		cmocka_unit_test(test_lat_read_slow_paths),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
