/* SPDX-License-Identifier: BSD-2-Clause */
/* Helper "pace": the SW rate limiter's arithmetic (units, bursts, the
 * schedule), its effect on a BW run over the fake device, the HW limiter's
 * refusals from the device's packet pacing caps, and --latency_gap's pause
 * in a latency run (perftest/tools/ib_send_bw.1). */
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
#include "util/clock.h"
#include "perftest/engine/engine.h"
#include "perftest/engine/loop.h"
#include "fake_verbs.h"

static const uint64_t ms = 1000000ull;

/* Units as upstream's help says: M = MiB/s (2^20 bytes), g = 10^9 bit/s, p = messages/s. */
static void test_units(void **state)
{
	struct pt_pace_params r = { .rate_limit = 10, .rate_units = PT_RATE_MIBPS };

	(void)state;
	assert_true(pt_pace_bytes_ps(&r) == 10 * 1048576.0);
	/* 10 MiB/s of 1 KiB messages: 10240 per second */
	assert_true(pt_pace_rate_pps(0, pt_pace_bytes_ps(&r), 1024) == 10240.0);
	r.rate_units = PT_RATE_GBPS;
	r.rate_limit = 1;
	assert_true(pt_pace_bytes_ps(&r) == 125000000.0);
	assert_true(pt_pace_kbps(&r) == 1000000.0);
	assert_true(pt_pace_rate_pps(0, pt_pace_bytes_ps(&r), 1000) == 125000.0);
	r.rate_units = PT_RATE_PPS;
	assert_true(pt_pace_bytes_ps(&r) == 0);
	assert_true(pt_pace_rate_pps(500, 0, 65536) == 500.0);   /* p: the size does not matter */
	assert_true(pt_pace_rate_pps(0, 0, 64) == 0);            /* off */
}

/* Bursts of 10 every 10 ms at 1000/s; a late burst keeps the schedule, one
 * later than a gap restarts it; a post list may overdraw, later bursts repay. */
static void test_pacer_schedule(void **state)
{
	struct pt_pacer pc;
	int n = 0;

	(void)state;
	assert_int_equal(pt_pacer_init(&pc, 1000, 10, 0), 0);
	assert_int_equal(pc.gap_ns, 10 * ms);
	while (n < 100 && pt_pacer_allow(&pc, 1, 0))   /* bounded: a broken pacer fails, not hangs */
		n++;
	assert_int_equal(n, 10);
	assert_false(pt_pacer_allow(&pc, 1, 10 * ms - 1));
	for (n = 0; n < 100 && pt_pacer_allow(&pc, 1, 10 * ms); n++)
		;
	assert_int_equal(n, 10);
	/* 5 ms late: the next burst stays due at 30 ms */
	assert_true(pt_pacer_allow(&pc, 10, 25 * ms));
	assert_false(pt_pacer_allow(&pc, 1, 30 * ms - 1));
	assert_true(pt_pacer_allow(&pc, 10, 30 * ms));
	/* 70 ms late: a new schedule from 100 ms, no catch-up */
	assert_true(pt_pacer_allow(&pc, 10, 100 * ms));
	assert_false(pt_pacer_allow(&pc, 1, 105 * ms));
	assert_true(pt_pacer_allow(&pc, 10, 110 * ms));
	/* burst 4, lists of 10: 10 WRs per 2.5 gaps on average */
	assert_int_equal(pt_pacer_init(&pc, 400, 4, 0), 0);
	assert_true(pt_pacer_allow(&pc, 10, 0));           /* credit 4 - 10 = -6 */
	assert_false(pt_pacer_allow(&pc, 10, 10 * ms));    /* -2 */
	assert_true(pt_pacer_allow(&pc, 10, 20 * ms));     /* 2, then -8 */
	/* the first burst 3 ms after the pacer was set up: the schedule runs
	 * from it (the run's span starts at its first post), not from set-up */
	assert_int_equal(pt_pacer_init(&pc, 1000, 10, 0), 0);
	assert_true(pt_pacer_allow(&pc, 10, 3 * ms));
	assert_false(pt_pacer_allow(&pc, 1, 13 * ms - 1));
	assert_true(pt_pacer_allow(&pc, 1, 13 * ms));
	/* and it never goes before the set-up's time */
	assert_int_equal(pt_pacer_init(&pc, 1000, 10, 5 * ms), 0);
	assert_false(pt_pacer_allow(&pc, 1, 4 * ms));
	assert_true(pt_pacer_allow(&pc, 1, 5 * ms));
	/* bad input */
	assert_int_equal(pt_pacer_init(&pc, 0, 4, 0), -1);
	assert_int_equal(pt_pacer_init(&pc, 100, 0, 0), -1);
}

/* A BW run over the fake device (completions at once): paced at 20000/s in
 * bursts of 10, 200 messages are 20 bursts 0.5 ms apart, so at least 9.5 ms,
 * and the rate (messages / elapsed) at most 20/19 of the limit; unpaced the
 * fake does the same run far faster. */
static void test_pacer_bw_run(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_RDMA_WRITE, 200, false);
	uint64_t paced_ns;

	(void)state;
	l.opt.pace_bytes_ps = 20000.0 * 64;   /* 64-byte messages: 20000/s */
	l.opt.pace_burst = 10;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(m.msgs, 200);
	paced_ns = m.elapsed_ns;
	if (paced_ns < 95 * ms / 10)
		fail_msg("paced run took %llu ns, less than 20 bursts 0.5 ms apart", (unsigned long long)paced_ns);
	assert_true(200.0 / ((double)paced_ns / 1e9) <= 20000.0 * 20 / 19 * 1.001);
	pt_bw_meas_free(&m);
	fake_free(f);

	f = fake_new(&l, 1, IBV_WR_RDMA_WRITE, 200, false);
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_true(m.elapsed_ns * 4 < paced_ns);
	pt_bw_meas_free(&m);
	/* the warm-up pass is not paced (31 gaps of 10 ms if it were) */
	f->next_seq[0] = f->retired[0] = 0;
	l.opt.pace_pps = 100;
	l.opt.pace_burst = 1;
	{
		uint64_t t0 = pt_now_ns();

		assert_int_equal(pt_run_bw_warm_up(&l), 0);
		assert_true(pt_now_ns() - t0 < 100 * ms);
	}
	fake_free(f);
}

/* HW: refused from the caps, before anything else (rxe has none). */
static void test_hw_caps(void **state)
{
	struct pt_params p;
	struct ibv_device_attr_ex a;
	FILE *saved = stderr, *tmp = tmpfile();
	char out[1024];
	size_t n;

	(void)state;
	memset(&p, 0, sizeof(p));
	memset(&a, 0, sizeof(a));
	p.conn.type = PT_CONN_RC;
	p.pace.rate_limit = 0.05;             /* 50000 kb/s */
	p.pace.rate_units = PT_RATE_GBPS;
	p.pace.limit_type = PT_RATE_LIMIT_SW;
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), 0);   /* SW: no caps needed */
	p.pace.limit_type = PT_RATE_LIMIT_HW;
	assert_non_null(tmp);
	stderr = tmp;
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), -1);
	a.packet_pacing_caps.qp_rate_limit_min = 1000;
	a.packet_pacing_caps.qp_rate_limit_max = 100000;
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), -1);  /* no QP type paced */
	a.packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RC;
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), 0);
	p.conn.type = PT_CONN_UD;
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), -1);
	p.conn.type = PT_CONN_RC;
	p.pace.rate_limit = 1;                /* 10^6 kb/s: above the max */
	assert_int_equal(pt_pace_hw_check(&p, &a, "fake0"), -1);
	stderr = saved;
	rewind(tmp);
	n = fread(out, 1, sizeof(out) - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	assert_non_null(strstr(out, "fake0 has no packet pacing"));
	assert_non_null(strstr(out, "qp_rate_limit_max 0"));
	assert_non_null(strstr(out, "supported_qpts 0x0"));
	assert_non_null(strstr(out, "1000000 kb/s is outside fake0's packet pacing range 1000..100000"));
}

/* --latency_gap: every round trip (stamp to stamp) holds the pause. */
static void test_latency_gap(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_RDMA_READ, 20, false);

	(void)state;
	l.opt.lat = true;
	f->per_iteration = true;
	l.opt.lat_gap_ns = 2 * ms;
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	assert_int_equal(m.n, 20);
	pt_lat_meas_ns(&m);
	for (uint64_t i = 1; i < m.n; i++)
		assert_true(m.stamps[i] - m.stamps[i - 1] >= 2 * ms);
	pt_lat_meas_free(&m);
	l.opt.lat_gap_ns = 0;
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	pt_lat_meas_ns(&m);   /* the plain copy's stamps */
	assert_true(m.stamps[m.n - 1] - m.stamps[0] < 19 * 2 * ms);
	pt_lat_meas_free(&m);
	fake_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_pacer_schedule),
		cmocka_unit_test(test_pacer_bw_run),
		cmocka_unit_test(test_hw_caps),
		cmocka_unit_test(test_latency_gap),
	};

	return cmocka_run_group_tests_name("pace", tests, NULL, NULL);
}
