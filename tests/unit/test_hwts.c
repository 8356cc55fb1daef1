/* SPDX-License-Identifier: BSD-2-Clause */
/* Hardware timestamps without hardware: capability probe, tick conversion
 * and wrap, the least-squares clock fit and its residual (synthetic paired
 * samples), sampling through a fake clock read, mlx5 clock info from a fake
 * source (conversions equal mlx5dv_ts_to_ns's, refreshed at each sample;
 * unreadable info falls back to hca_core_clock) and the domain each names
 * in the tools' run info, and the extended-CQ poller
 * against a mock struct ibv_cq_ex (its ops are function pointers), end to
 * end into the recorder's post->CQE / CQE->poll split. The mock ex-CQ
 * (mock_cqx.h) is shared with test_preload.c. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "perftest/engine/engine.h"
#include "plugin/hooks/hooks.h"
#include "util/hwts.h"
#include "mock_cqx.h"
#include "plugin/recorder/wrtrace.h"

static void test_probe(void **state)
{
	struct ibv_device_attr_ex a = { 0 };
	struct pt_hwts_caps c;

	(void)state;
	pt_hwts_probe(&a, "rxe0", &c); /* what rxe reports */
	assert_false(c.supported);
	assert_string_equal(c.why, "not supported by rxe0");
	a.completion_timestamp_mask = 0x7fffffffffffffffull;
	pt_hwts_probe(&a, "odd0", &c);
	assert_false(c.supported);
	assert_non_null(strstr(c.why, "no hca_core_clock"));
	a.hca_core_clock = 156250; /* kHz */
	pt_hwts_probe(&a, "mlx5_0", &c);
	assert_true(c.supported);
	assert_int_equal(c.hz, 156250000);
	assert_int_equal(c.mask, 0x7fffffffffffffffull);
}

static void test_ticks_to_ns(void **state)
{
	struct pt_hwclock c;

	(void)state;
	assert_int_equal(pt_hwclock_init(&c, 0, 1, NULL, NULL), -EINVAL);
	assert_int_equal(pt_hwclock_init(&c, 156250000, UINT64_MAX, NULL, NULL), 0);
	assert_int_equal(pt_hwclock_ns(&c, 5), 32);          /* 6.4 ns per tick */
	assert_int_equal(pt_hwclock_ns(&c, 156250000ull * 3 + 5), 3000000032ull);
	/* ticks since a long uptime: no overflow in the conversion */
	assert_int_equal(pt_hwclock_ns(&c, 156250000ull * 86400 * 365 * 50 + 1),
			 1000000000ull * 86400 * 365 * 50 + 6);
}

/* A 16-bit counter unwraps; an older stamp maps back without moving the clock. */
static void test_wrap(void **state)
{
	struct pt_hwclock c;

	(void)state;
	assert_int_equal(pt_hwclock_init(&c, 1000000000, 0xffff, NULL, NULL), 0);
	assert_int_equal(pt_hwclock_ns(&c, 65530), 65530);
	assert_int_equal(pt_hwclock_ns(&c, 65535), 65535);
	assert_int_equal(pt_hwclock_ns(&c, 3), 65539);
	assert_int_equal(pt_hwclock_ns(&c, 10), 65546);
	assert_int_equal(pt_hwclock_ns(&c, 65534), 65534);  /* 12 ticks older */
	assert_int_equal(pt_hwclock_ns(&c, 11), 65547);
	assert_int_equal(pt_hwclock_ns(&c, 0x10000 + 20), 65556); /* bits above the mask ignored */
}

/* Known line plus +-30 ns noise (+ - - + per 4 samples): slope, intercept and residuals come back. */
static void test_fit_synthetic(void **state)
{
	struct pt_clock_sample s[40];
	struct pt_plugin_clock_fit f;
	const uint64_t hw0 = 1700000000000000000ull, sw0 = 5000000000ull;
	const double slope = 0.99998;

	(void)state;
	for (int i = 0; i < 40; i++) {
		uint64_t dhw = (uint64_t)i * 100000000ull;

		s[i].hw_ns = hw0 + dhw;
		s[i].sw_ns = sw0 + 250 + (uint64_t)llround(slope * (double)dhw) +
			    (i % 4 == 0 || i % 4 == 3 ? 30 : -30); /* mean 0, uncorrelated with dhw */
	}
	assert_int_equal(pt_clock_fit_compute(s, 40, &f), 0);
	assert_int_equal(f.samples, 40);
	assert_true(fabs(f.slope - slope) < 1e-10);
	assert_true(fabs(f.residual_max_ns - 30) < 1.0);
	assert_true(fabs(f.residual_rms_ns - 30) < 1.0);
	/* the mapped NIC time of a sample lands within the noise of its pair */
	for (int i = 0; i < 40; i += 13)
		assert_true(fabs(pt_plugin_hw_to_sw(&f, s[i].hw_ns) - (double)s[i].sw_ns) < 31);
	/* beyond the samples too: 10 s later */
	assert_true(fabs(pt_plugin_hw_to_sw(&f, hw0 + 14000000000ull) -
			 (double)(sw0 + 250 + llround(slope * 14e9))) < 5);
	/* degenerate inputs */
	assert_int_equal(pt_clock_fit_compute(s, 0, &f), -1);
	assert_int_equal(pt_clock_fit_compute(s, 1, &f), 0);
	assert_true(f.slope == 1.0 && f.residual_max_ns == 0);
	s[1].hw_ns = s[0].hw_ns;
	assert_int_equal(pt_clock_fit_compute(s, 2, &f), -1);
}

/* A fake NIC clock 1% fast with an offset, read through the sampler. */
static int fake_read(void *arg, uint64_t *ticks)
{
	int *fail = arg;
	struct timespec ts;

	if (*fail)
		return -EOPNOTSUPP;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	*ticks = (uint64_t)((double)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) * 1.01) +
		 123456789;
	return 0;
}

static int frozen_read(void *arg, uint64_t *ticks)
{
	(void)arg;
	*ticks = 424242;
	return 0;
}

static void test_hwclock_sampling(void **state)
{
	struct timespec gap = { 0, 3000000 };
	struct pt_hwclock c;
	int fail = 0;
	uint64_t next;

	(void)state;
	assert_int_equal(pt_hwclock_init(&c, 1000000000, UINT64_MAX, fake_read, &fail), 0);
	assert_int_equal(c.nsamples, 2);
	for (int i = 0; i < 4; i++) {
		nanosleep(&gap, NULL);
		assert_int_equal(pt_hwclock_sample(&c), 0);
	}
	assert_int_equal(c.fit.samples, 6);
	assert_true(fabs(c.fit.slope - 1 / 1.01) < 1e-3);
	assert_true(c.fit.residual_max_ns < 200000); /* generous: shared, virtual CPUs */
	/* periodic: nothing before the period, one sample after */
	next = c.next_sample_ns;
	assert_int_equal(pt_hwclock_tick(&c, next - 1), 0);
	assert_int_equal(c.nsamples, 6);
	assert_int_equal(pt_hwclock_tick(&c, next), 1);
	assert_int_equal(c.nsamples, 7);
	/* a failing read is reported, not hidden */
	fail = 1;
	assert_int_equal(pt_hwclock_sample(&c), -EOPNOTSUPP);
	assert_int_equal(c.last_error, -EOPNOTSUPP);
	assert_int_equal(pt_hwclock_init(&c, 1000000000, UINT64_MAX, fake_read, &fail), -EOPNOTSUPP);
	/* a NIC clock that does not move: no fit (not a slope of 0) */
	assert_int_equal(pt_hwclock_init(&c, 1000000000, UINT64_MAX, frozen_read, NULL), -EDOM);
	assert_int_equal(c.fit.samples, 1);
	assert_true(c.fit.slope == 1.0);
}

/* A fake source of mlx5 clock info: hands out *cur, or fails with err. */
struct fake_info {
	int calls, err;
#ifdef HAVE_MLX5DV
	struct mlx5dv_clock_info cur;
#endif
};

static int fake_info(void *arg, struct mlx5dv_clock_info *ci)
{
	struct fake_info *f = arg;

	f->calls++;
	if (f->err)
		return f->err;
#ifdef HAVE_MLX5DV
	*ci = f->cur;
#else
	(void)ci;
#endif
	return 0;
}

/* Clock info that cannot be read at init (not an mlx5 after all, or a
 * build without mlx5dv): hca_core_clock converts, the domain says so, and
 * the info is never asked again. */
static void test_info_fallback(void **state)
{
	struct fake_info f = { .err = -EOPNOTSUPP };
	struct pt_hwclock c;
	int fail = 0;

	(void)state;
	assert_int_equal(pt_hwclock_init_ex(&c, 156250000, UINT64_MAX, NULL, NULL, fake_info, &f), 0);
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_HCA);
	assert_false(c.use_ci);
	assert_int_equal(c.info_error, -EOPNOTSUPP);
	assert_int_equal(pt_hwclock_ns(&c, 5), 32);
	assert_int_equal(pt_hwclock_ns(&c, 156250000ull * 3 + 5), 3000000032ull);
	assert_int_equal(pt_hwclock_init_ex(&c, 1000000000, UINT64_MAX, fake_read, &fail, fake_info, &f),
			 0);
	assert_int_equal(pt_hwclock_sample(&c), 0);
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_HCA);
	assert_int_equal(pt_hwclock_ns(&c, 777), 777);
#ifdef HAVE_MLX5DV
	assert_int_equal(f.calls, 2); /* once per init, none per sample */
#endif
	/* no source at all: hca too, no error to report */
	assert_int_equal(pt_hwclock_init(&c, 156250000, UINT64_MAX, NULL, NULL), 0);
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_HCA);
	assert_int_equal(c.info_error, 0);
}

#ifdef HAVE_MLX5DV
/* A 156.25 MHz clock as the kernel describes it: 6.4 ns a cycle as
 * mult / 2^shift, a 41-bit counter, a PHC time line far from the ticks. */
static struct mlx5dv_clock_info info_156(uint64_t last_cycles, uint64_t nsec)
{
	return (struct mlx5dv_clock_info){ .nsec = nsec, .last_cycles = last_cycles,
					   .frac = 0x5a5a5, .mult = 53687091, .shift = 23,
					   .mask = (1ull << 41) - 1 };
}

/* Every conversion is mlx5dv_ts_to_ns's, not ticks / hz. */
static void test_info_conversion(void **state)
{
	struct fake_info f = { .cur = info_156(0x1fffff00000ull, 1700000000123456789ull) };
	struct mlx5dv_clock_info ref = f.cur;
	const uint64_t ticks[] = { 0x1fffff00000ull, 0x1fffff00001ull, 0x1fffff00000ull + 156250000,
				   0x1ffffe00000ull, 5, 0x1fffff00000ull | (7ull << 41), 0x1ffffffffffull };
	struct pt_hwclock c;

	(void)state;
	assert_int_equal(pt_hwclock_init_ex(&c, 156250000, UINT64_MAX, NULL, NULL, fake_info, &f), 0);
	assert_true(c.use_ci);
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_MLX5);
	assert_int_equal(c.info_error, 0);
	for (size_t i = 0; i < sizeof(ticks) / sizeof(ticks[0]); i++)
		assert_int_equal(pt_hwclock_ns(&c, ticks[i]), mlx5dv_ts_to_ns(&ref, ticks[i]));
	/* by hand: one second of cycles after last_cycles, and 0x100000 before */
	assert_int_equal(pt_hwclock_ns(&c, 0x1fffff00000ull + 156250000),
			 1700000000123456789ull + ((156250000ull * 53687091 + 0x5a5a5) >> 23));
	assert_int_equal(pt_hwclock_ns(&c, 0x1ffffe00000ull),
			 1700000000123456789ull - ((0x100000ull * 53687091 - 0x5a5a5) >> 23));
	/* past the counter's wrap: still forward */
	assert_int_equal(pt_hwclock_ns(&c, 5), 1700000000123456789ull +
			 (((0x100005ull) * 53687091 + 0x5a5a5) >> 23));
}

/* A NIC counter stopped at *arg ticks. */
static int fixed_read(void *arg, uint64_t *ticks)
{
	*ticks = *(uint64_t *)arg;
	return 0;
}

/* The kernel's view changes (ptp4l stepped and slowed the PHC): each sample
 * re-reads it before reading the counter, later conversions use it; a
 * failed re-read keeps the last. */
static void test_info_refresh(void **state)
{
	struct timespec now;
	struct fake_info f;
	struct mlx5dv_clock_info old, cur;
	struct pt_hwclock c;
	uint64_t x, fixed;
	int fail = 0;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC_RAW, &now);
	/* about fake_read's ticks now: 1.01 per ns plus an offset */
	x = (uint64_t)((double)((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec) * 1.01) +
	    123456789;
	f = (struct fake_info){ .cur = info_156(x, 1700000000000000000ull) };
	f.cur.mask = UINT64_MAX;
	old = f.cur;
	assert_int_equal(pt_hwclock_init_ex(&c, 156250000, UINT64_MAX, fake_read, &fail, fake_info, &f),
			 0);
	assert_int_equal(f.calls, 3); /* init, then each of its two samples */
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_MLX5);
	cur = info_156(x + 1000000, 1700000000000000000ull + 7000000);
	cur.mult = 53687000;
	cur.mask = UINT64_MAX;
	f.cur = cur;
	assert_int_equal(pt_hwclock_ns(&c, x + 5000000), mlx5dv_ts_to_ns(&old, x + 5000000));
	/* the sample's own reading converts with the info it just read */
	fixed = x + 3000000;
	c.read = fixed_read;
	c.read_arg = &fixed;
	assert_int_equal(pt_hwclock_sample(&c), 0);
	assert_int_equal(f.calls, 4);
	assert_int_equal(c.samples[(c.next + PT_HWCLOCK_SAMPLES - 1) % PT_HWCLOCK_SAMPLES].hw_ns,
			 mlx5dv_ts_to_ns(&cur, fixed));
	assert_int_equal(pt_hwclock_ns(&c, x + 5000000), mlx5dv_ts_to_ns(&cur, x + 5000000));
	assert_true(mlx5dv_ts_to_ns(&cur, x + 5000000) != mlx5dv_ts_to_ns(&old, x + 5000000));
	/* the re-read fails: the sample still counts, the last info stays */
	c.read = fake_read;
	c.read_arg = &fail;
	f.err = -EIO;
	f.cur = old;
	assert_int_equal(pt_hwclock_sample(&c), 0);
	assert_int_equal(c.info_error, -EIO);
	assert_int_equal(c.info_failures, 1);
	assert_string_equal(c.domain, PT_HWCLOCK_DOMAIN_MLX5);
	assert_int_equal(pt_hwclock_ns(&c, x + 5000000), mlx5dv_ts_to_ns(&cur, x + 5000000));
	/* without a clock read, the period still refreshes the info (no refit) */
	f.err = 0;
	assert_int_equal(pt_hwclock_init_ex(&c, 156250000, UINT64_MAX, NULL, NULL, fake_info, &f), 0);
	f.cur = cur;
	assert_int_equal(pt_hwclock_tick(&c, 1), 0);
	assert_true(c.next_sample_ns > 1);
	assert_int_equal(c.nsamples, 0);
	assert_int_equal(pt_hwclock_ns(&c, x + 5000000), mlx5dv_ts_to_ns(&cur, x + 5000000));
}
#endif

static void test_cqx_poll_batches(void **state)
{
	struct mock_cq m;
	struct pt_hwclock clk;
	struct pt_cqx p = { .cq = &m.ex, .clk = &clk };
	struct ibv_wc wc[4];
	uint64_t hw[4];

	(void)state;
	mock_init(&m, true);
	pt_hwclock_init(&clk, 156250000, 0xffffffffffffull, NULL, NULL);
	for (uint64_t i = 0; i < 5; i++)
		add(&m, i, 1000 + 10 * i, i == 3 ? IBV_WC_REM_ACCESS_ERR : IBV_WC_SUCCESS);
	assert_int_equal(pt_cqx_poll(&p, 3, wc, hw), 3);
	assert_int_equal(m.ends, 1);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(wc[k].wr_id, k);
		assert_int_equal(wc[k].status, IBV_WC_SUCCESS);
		assert_int_equal(wc[k].opcode, IBV_WC_RECV);
		assert_int_equal(wc[k].byte_len, 1000 + k);
		assert_int_equal(wc[k].qp_num, 0x77);
		assert_int_equal(wc[k].src_qp, 0x88);
		assert_int_equal(wc[k].slid, 9);
		assert_int_equal(wc[k].sl, 3);
		assert_int_equal(wc[k].dlid_path_bits, 1);
		assert_int_equal(hw[k], (uint64_t)(1000 + 10 * k) * 64 / 10);
	}
	assert_int_equal(wc[1].wc_flags, IBV_WC_WITH_IMM);
	assert_int_equal(wc[1].imm_data, 0xabcd);
	assert_int_equal(wc[0].imm_data, 0);
	/* the rest, including an error CQE: only its valid fields were read */
	assert_int_equal(pt_cqx_poll(&p, 4, wc, hw), 2);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(wc[0].vendor_err, 0x42);
	assert_int_equal(wc[0].qp_num, 0x77);
	assert_int_equal(wc[0].byte_len, 0);
	assert_int_equal(m.reads_on_error, 0);
	assert_int_equal(wc[1].wr_id, 4);
	assert_int_equal(m.ends, 2);
	/* empty: ENOENT from start, and no end_poll */
	assert_int_equal(pt_cqx_poll(&p, 4, wc, hw), 0);
	assert_int_equal(m.starts, 3);
	assert_int_equal(m.ends, 2);
	assert_int_equal(pt_cqx_poll(&p, 0, wc, hw), 0);
	assert_int_equal(m.starts, 3);
}

/* start_poll failing: its errno comes back and end_poll is not called. */
static void test_cqx_start_error(void **state)
{
	struct mock_cq m;
	struct pt_cqx p = { .cq = &m.ex };
	struct ibv_wc wc[2];

	(void)state;
	mock_init(&m, false);
	add(&m, 1, 0, IBV_WC_SUCCESS);
	m.start_err = EIO;
	assert_int_equal(pt_cqx_poll(&p, 2, wc, NULL), -EIO);
	assert_int_equal(m.ends, 0);
	/* without a clock the timestamp reader (NULL here) is never touched */
	m.start_err = 0;
	assert_int_equal(pt_cqx_poll(&p, 2, wc, NULL), 1);
	assert_int_equal(wc[0].wr_id, 1);
}

/* A reader kept aside (read_completion_ts hidden from the program) is used
 * instead of the CQ's own pointer, here NULL. */
static void test_cqx_read_ts_aside(void **state)
{
	struct mock_cq m;
	struct pt_hwclock clk;
	struct pt_cqx p = { .cq = &m.ex, .clk = &clk, .read_ts = m_ts };
	struct ibv_wc wc[2];
	uint64_t hw[2];

	(void)state;
	mock_init(&m, false);
	assert_null(m.ex.read_completion_ts);
	pt_hwclock_init(&clk, 1000000000, UINT64_MAX, NULL, NULL);
	add(&m, 5, 777, IBV_WC_SUCCESS);
	assert_int_equal(pt_cqx_poll(&p, 2, wc, hw), 1);
	assert_int_equal(hw[0], 777);
}

/* The tools' poll path (engine.h pt_poll_cq, hwts_cq.c): with hwts on, the
 * send CQ is read through the ex API, each completion gets its NIC time,
 * and the NIC clock is re-sampled once its period is up. */
static void test_engine_poll(void **state)
{
	static struct pt_ctx c;   /* large: not on the stack */
	struct mock_cq ms, mr;
	struct pt_hwclock clk;
	struct ibv_wc wc[4];
	uint64_t hw[4];
	int fail = 0;
	unsigned before;

	(void)state;
	memset(&c, 0, sizeof(c));
	mock_init(&ms, true);
	mock_init(&mr, true);
	assert_int_equal(pt_hwclock_init(&clk, 1000000000, UINT64_MAX, fake_read, &fail), 0);
	c.res.hwts = true;
	c.res.hwclock = &clk;
	c.res.send_cqx = (struct pt_cqx){ .cq = &ms.ex, .clk = &clk };
	c.res.recv_cqx = (struct pt_cqx){ .cq = &mr.ex, .clk = &clk };
	add(&ms, 7, 5000, IBV_WC_SUCCESS);
	add(&mr, 8, 6000, IBV_WC_SUCCESS);
	before = clk.nsamples;
	clk.next_sample_ns = UINT64_MAX;    /* not yet due */
	assert_int_equal(pt_poll_cq(&c.res, false, 4, wc, hw), 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_equal(hw[0], 5000);      /* 1 GHz: ticks are ns */
	assert_ptr_equal(pt_hw_ns(&c.res, hw, 0), &hw[0]);
	assert_int_equal(clk.nsamples, before);
	clk.next_sample_ns = 0;             /* due: the next poll samples */
	assert_int_equal(pt_poll_cq(&c.res, true, 4, wc, hw), 1);
	assert_int_equal(wc[0].wr_id, 8);
	assert_int_equal(hw[0], 6000);
	assert_int_equal(clk.nsamples, before + 1);
	assert_int_equal(ms.starts, 1);
	assert_int_equal(mr.starts, 1);
	c.res.hwts = false;
	assert_null(pt_hw_ns(&c.res, hw, 0));
}

/* Mock CQ -> poller -> hooks -> built-in recorder -> CSV: the split. */
static void test_split_end_to_end(void **state)
{
	char dir[] = "/tmp/test_hwts.XXXXXX", path[128], arg[160], err[512];
	struct pt_clock_sample smp[4];
	struct mock_cq m;
	struct pt_hwclock clk;
	struct pt_cqx p = { .cq = &m.ex, .clk = &clk };
	uint32_t qpn = 0x77;
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "test", .device = "mock_cq", .num_qps = 1,
		.qp_nums = &qpn, .msg_size = 64, .iterations = 2, .tx_depth = 4, .cq_mod = 1,
		.post_list = 1, .hw_ts = PT_PLUGIN_HW_TS_ON, .hw_clock_hz = 156250000,
		.hw_clock_domain = PT_HWCLOCK_DOMAIN_HCA, .sw_clock = "CLOCK_MONOTONIC_RAW",
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct wrt_trace t;
	struct wrt_derived d;
	struct wrt_gaps gaps = { 0 };
	struct ibv_wc wc[4];
	uint64_t hw[4];
	int n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	snprintf(arg, sizeof(arg), "%s:quiet", path);
	mock_init(&m, true);
	pt_hwclock_init(&clk, 156250000, 0xffffffffffffull, NULL, NULL);
	/* NIC ns = software ns + 950000, exactly */
	for (int i = 0; i < 4; i++)
		smp[i] = (struct pt_clock_sample){ .hw_ns = 1000000 + i * 1000000ull,
						   .sw_ns = 50000 + i * 1000000ull };
	assert_int_equal(pt_clock_fit_compute(smp, 4, &clk.fit), 0);
	add(&m, 0, 461016, IBV_WC_SUCCESS); /* 2950502.4 ns -> sw 2000502 */
	add(&m, 1, 461172, IBV_WC_SUCCESS); /* 2951500.8 ns -> sw 2001500 */
	m.cqe[0].opcode = m.cqe[1].opcode = IBV_WC_SEND;
	assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), arg, err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_run_start(&in, err, sizeof(err)), 0);
	pt_hooks_clock_fit(&clk.fit);
	pt_hook_post(0, 0, 1, PT_PLUGIN_OP_SEND, 0, 1, 64, 1, 0, 2000000);
	pt_hook_post(0, 1, 1, PT_PLUGIN_OP_SEND, 1, 1, 64, 1, 0, 2000100);
	n = pt_cqx_poll(&p, 4, wc, hw);
	assert_int_equal(n, 2);
	pt_hook_wc(0, 0, &wc[0], false, 2001000, &hw[0]);
	pt_hook_wc(0, 1, &wc[1], false, 2002000, &hw[1]);
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	pt_hooks_unload_all();
	assert_int_equal(wrt_read(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.runs[0].n, 2);
	assert_int_equal(t.runs[0].recs[0].hw_ns, 2950502);
	wrt_derive(&t.runs[0].recs[0], &t.runs[0].meta, &gaps, &d);
	assert_int_equal(d.post_to_cqe_ns, 502);
	assert_int_equal(d.cqe_to_poll_ns, 498);
	wrt_derive(&t.runs[0].recs[1], &t.runs[0].meta, &gaps, &d);
	assert_int_equal(d.post_to_cqe_ns, 1400);
	assert_int_equal(d.cqe_to_poll_ns, 500);
	assert_true(d.has_gap_hw);
	assert_int_equal(d.gap_hw_ns, 998);
	assert_int_equal(d.gap_sw_ns, 1000);
	assert_int_equal(t.runs[0].meta.fit.samples, 4);
	assert_true(t.runs[0].meta.fit.residual_max_ns < 1e-6);
	assert_string_equal(t.runs[0].meta.hw_domain, PT_HWCLOCK_DOMAIN_HCA);
	wrt_trace_free(&t);
	unlink(path);
	rmdir(dir);
}

/* The tools' run info (trace.c) names the domain of the clock hwts_cq.c
 * set up; a device without stamps says none. Through the recorder's file. */
static void test_trace_domain(void **state)
{
	static struct pt_ctx c;
	static struct pt_params p;
	static struct ibv_qp qp = { .qp_num = 0x77 };
	static struct pt_qp q = { .qp = &qp };
	char dir[] = "/tmp/test_hwts_dom.XXXXXX", path[128], arg[160], err[512];
	struct fake_info f = { .err = -ENODEV };
	struct pt_hwclock clk;
	struct wrt_trace t;
	const char *want[3];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.csv", dir);
	snprintf(arg, sizeof(arg), "%s:quiet", path);
	memset(&c, 0, sizeof(c));
	pt_params_defaults(pt_tool_find("ib_send_lat"), &p);
	c.p = &p;
	c.res.num_qps = 1;
	c.res.qps = &q;
	c.run.size = 64;
	c.run.tx_depth = c.run.rx_depth = 16;
	c.run.cq_mod = 1;
	snprintf(c.dev.devname, sizeof(c.dev.devname), "mock0");
	c.dev.dev_attr.completion_timestamp_mask = UINT64_MAX;
	c.dev.dev_attr.hca_core_clock = 156250;
#ifdef HAVE_MLX5DV
	f = (struct fake_info){ .cur = info_156(0, 0) };
	want[0] = PT_HWCLOCK_DOMAIN_MLX5;
#else
	want[0] = PT_HWCLOCK_DOMAIN_HCA;
#endif
	want[1] = PT_HWCLOCK_DOMAIN_HCA; /* the CQs are plain: no clock */
	want[2] = "none";
	assert_int_equal(pt_hwclock_init_ex(&clk, 156250000, UINT64_MAX, NULL, NULL, fake_info, &f), 0);
	for (int i = 0; i < 3; i++) {
		c.res.hwts = i == 0;
		c.res.hwclock = i == 0 ? &clk : NULL;
		if (i == 2)
			c.dev.dev_attr.completion_timestamp_mask = 0;
		assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), arg, err, sizeof(err)), 0);
		assert_int_equal(pt_trace_begin(&c, true, false), 0);
		assert_int_equal(pt_trace_end(0, 1000), 0);
		pt_hooks_unload_all();
		assert_int_equal(wrt_read(path, &t, err, sizeof(err)), 0);
		assert_string_equal(t.runs[0].meta.hw_domain, want[i]);
		wrt_trace_free(&t);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_ticks_to_ns),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_fit_synthetic),
		cmocka_unit_test(test_hwclock_sampling),
		cmocka_unit_test(test_info_fallback),
#ifdef HAVE_MLX5DV
		cmocka_unit_test(test_info_conversion),
		cmocka_unit_test(test_info_refresh),
#endif
		cmocka_unit_test(test_cqx_poll_batches),
		cmocka_unit_test(test_cqx_start_error),
		cmocka_unit_test(test_cqx_read_ts_aside),
		cmocka_unit_test(test_engine_poll),
		cmocka_unit_test(test_split_end_to_end),
		cmocka_unit_test(test_trace_domain),
	};
	return cmocka_run_group_tests_name("hwts", tests, NULL, NULL);
}
