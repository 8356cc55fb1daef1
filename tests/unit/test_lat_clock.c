/* SPDX-License-Identifier: BSD-2-Clause */
/* The latency loops' plain copies stamp raw TSC ticks (pt_now_raw) and keep
 * the conversion out of their iterations; pt_lat_meas_ns makes them
 * nanoseconds before the report reads them, exactly as pt_now_ns() would
 * have read them. With the TSC on (skipped where the CPU has no invariant
 * one), each loop's stamps, once converted, lie between the clock read
 * before the run and the one after, in order; unconverted they do not.
 * With the TSC off, the copies built for clock_gettime stamp nanoseconds. */
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

#include "stderr_capture.h"
#include "perftest/engine/loop.h"
#include "util/clock.h"
#include "util/tsc.h"
#include "fake_verbs.h"

/* A client's run of op's loop over the fake (the peer's part played by
 * it), iters WRs; *t0 and *t1 the clock read by now() before and after. */
static struct fake *run_loop(enum ibv_wr_opcode op, uint64_t iters, bool qpx, struct pt_loop *l,
			     struct pt_lat_meas *m, uint64_t (*now)(void), uint64_t *t0,
			     uint64_t *t1)
{
	struct fake *f = fake_new_lat(l, op, iters, qpx);
	int rc;

	if (op == IBV_WR_SEND) {
		f->echo = true;
		assert_int_equal(pt_post_recv(l, 0, 4), 0);
	}
	if (op == IBV_WR_RDMA_WRITE) {
		f->echo_write = true;
		f->qps[0].recv_buf[f->run.size - 1] = 1;   /* the server wrote first */
	}
	*t0 = now();
	rc = op == IBV_WR_SEND ? pt_run_lat_send(l, m) :
	     op == IBV_WR_RDMA_WRITE ? pt_run_lat_write(l, m) : pt_run_lat_read(l, m);
	*t1 = now();
	assert_int_equal(rc, 0);
	assert_int_equal(m->n, iters);
	return f;
}

static uint64_t now_ns(void)
{
	return pt_now_ns();
}

static uint64_t raw_ns(void)
{
	return pt_clock_raw_ns();
}

static void check_raw_run(enum ibv_wr_opcode op, bool qpx, uint64_t iters)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	uint64_t t0, t1, raw0;
	struct fake *f = run_loop(op, iters, qpx, &l, &m, now_ns, &t0, &t1);

	assert_true(m.raw);
	raw0 = m.stamps[0];
	/* ticks are not nanoseconds on this line: unconverted, the report
	 * would read nonsense */
	assert_true(raw0 < t0 || raw0 > t1);
	pt_lat_meas_ns(&m);
	assert_false(m.raw);
	assert_int_equal(m.stamps[0], pt_raw_to_ns(raw0));
	for (uint64_t k = 0; k < m.n; k++) {
		assert_true(m.stamps[k] >= t0 && m.stamps[k] <= t1);
		if (k)
			assert_true(m.stamps[k] >= m.stamps[k - 1]);
	}
	pt_lat_meas_ns(&m);   /* twice: nothing more */
	assert_int_equal(m.stamps[0], pt_raw_to_ns(raw0));
	pt_lat_meas_free(&m);
	fake_free(f);
}

static int tsc_on(void **state)
{
	(void)state;
	return 0;
}

static void test_lat_raw_stamps(void **state)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
						  IBV_WR_ATOMIC_FETCH_AND_ADD };

	(void)state;
	if (!pt_clock_tsc_invariant("/proc/cpuinfo") ||
	    pt_clock_setup(PT_CLOCK_TSC, "/proc/cpuinfo", NULL) != 0)
		skip();
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		check_raw_run(ops[k], true, 200);
		check_raw_run(ops[k], true, 201);   /* read's and atomic's pairs and one alone */
	}
	check_raw_run(IBV_WR_RDMA_READ, false, 201);   /* the old post API's copy */
	pt_clock_reset();
}

/* With the TSC off (PERFTEST_CLOCK=raw, or a CPU without an invariant
 * TSC, as the lab's guests) the spinning plain copies are the ones built
 * for clock_gettime (LAT_PLAIN_RAW): their stamps are what clock_gettime
 * wrote, a struct timespec each (m.ts), and pt_lat_meas_ns makes them
 * nanoseconds between the reads before and after the run, in order (TSC
 * ticks would not be, on this machine, nor would the words unconverted). */
static void check_clock_gettime_run(enum ibv_wr_opcode op, bool qpx)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	const uint64_t iters = 100;
	uint64_t t0, t1;
	struct fake *f = run_loop(op, iters, qpx, &l, &m, raw_ns, &t0, &t1);
	struct timespec last = ((const struct timespec *)(void *)m.stamps)[iters - 1];

	assert_true(m.raw && m.ts);   /* a plain copy's, with clock_gettime */
	assert_true(last.tv_nsec >= 0 && last.tv_nsec < 1000000000);
	pt_lat_meas_ns(&m);
	assert_false(m.raw || m.ts);
	assert_int_equal(m.stamps[iters - 1],
			 (uint64_t)last.tv_sec * 1000000000ull + (uint64_t)last.tv_nsec);
	for (uint64_t k = 0; k < m.n; k++) {
		assert_true(m.stamps[k] >= t0 && m.stamps[k] <= t1);
		if (k)
			assert_true(m.stamps[k] >= m.stamps[k - 1]);
	}
	pt_lat_meas_ns(&m);   /* twice: nothing more */
	assert_true(m.stamps[0] >= t0 && m.stamps[iters - 1] <= t1);
	pt_lat_meas_free(&m);
	fake_free(f);
}

static void test_lat_plain_clock_gettime(void **state)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
						  IBV_WR_ATOMIC_FETCH_AND_ADD };

	(void)state;
	assert_int_equal(pt_clock_setup(PT_CLOCK_RAW, "/proc/cpuinfo", NULL), 0);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		check_clock_gettime_run(ops[k], true);
	check_clock_gettime_run(IBV_WR_RDMA_READ, false);   /* the old post API's copy */
	check_clock_gettime_run(IBV_WR_SEND, false);
	pt_clock_reset();
}

/* The general copies (the old post API here) stamp nanoseconds: nothing
 * to convert. */
static void test_lat_general_stamps_ns(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f;
	uint64_t t0, t1;

	(void)state;
	if (!pt_clock_tsc_invariant("/proc/cpuinfo") ||
	    pt_clock_setup(PT_CLOCK_TSC, "/proc/cpuinfo", NULL) != 0)
		skip();
	f = fake_new_lat(&l, IBV_WR_RDMA_READ, 100, false);
	l.opt.lat_gap_ns = 1;   /* a gap: the general copy */
	t0 = pt_now_ns();
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	t1 = pt_now_ns();
	assert_false(m.raw);
	assert_true(m.stamps[0] >= t0 && m.stamps[99] <= t1);
	pt_lat_meas_free(&m);
	fake_free(f);
	pt_clock_reset();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lat_raw_stamps),
		cmocka_unit_test(test_lat_general_stamps_ns),
		cmocka_unit_test(test_lat_plain_clock_gettime),
	};

	return cmocka_run_group_tests(tests, tsc_on, NULL);
}
