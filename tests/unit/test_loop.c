/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW loops and the post path driven through their narrow
 * view (struct pt_loop, perftest/engine/loop.h) over a fake device
 * (fake_verbs.h). No device, no struct pt_ctx, no options struct:
 * PT_LOOP_VIEW_ONLY makes including the context's header an error. The
 * latency loops: test_loop_lat.c (and test_loop_events.c with -e). */
#define PT_LOOP_VIEW_ONLY
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "stderr_capture.h"
#include "perftest/engine/loop.h"
#include "perftest/report/bw_peak.h"
#include "perftest/report/results.h"
#include "plugin/hooks/hooks.h"
#include "plugin/hooks/probes.h"
#include "fake_verbs.h"

/* Signaled WRs of a run of iters on one QP: every cq_mod-th and the last. */
static uint64_t signaled_per_qp(uint64_t iters, uint64_t cq_mod)
{
	return iters / cq_mod + (iters % cq_mod != 0);
}

static int bw_send(const struct pt_loop *l, void *m) { return pt_run_bw_send(l, m); }

/* The whole BW send run over 2 QPs: every WR posted once, in order, inside
 * the window (which fills), signaled by the cq_mod rule; the count and the
 * peak's per-message times come out. */
static void check_bw_send(enum ibv_wr_opcode op, bool qpx, unsigned post_list)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 1000;
	struct fake *f = fake_new(&l, NQP, op, iters, qpx);
	uint64_t want = iters * NQP;

	l.opt.post_list = post_list;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_false(m.interrupted);
	assert_int_equal(m.msgs, want);
	assert_int_equal(f->sends, want);
	assert_int_equal(f->signaled, NQP * signaled_per_qp(iters, (uint64_t)f->run.cq_mod));
	assert_int_equal(f->post_calls, want / post_list);
	assert_int_equal(f->max_inflight, (uint64_t)f->run.tx_depth);
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(f->qps[i].posted, iters);
		assert_int_equal(f->qps[i].completed, iters);
	}
	/* peak: the tracker saw every post and completion, in order */
	assert_non_null(m.peak);
	assert_true(m.peak->last_done_t >= m.peak->first_post_t);
	assert_int_equal(m.elapsed_ns, m.peak->last_done_t - m.peak->first_post_t);
	double min_ns = 0;
	assert_int_equal(pt_bw_peak_result(m.peak, &min_ns), 0);
	assert_true(min_ns >= 0);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* -O (group "dual"): the sender's counted messages split by the QPs'
 * port, QP 0 on port 1 and QP 1 on port 2; without -O all are port 1's. */
static void test_bw_send_per_port(void **state)
{
	(void)state;
	for (int dual = 0; dual < 2; dual++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE, 500, true);

		l.opt.port2_first_qp = dual ? 1 : 0;
		assert_int_equal(pt_run_bw_send(&l, &m), 0);
		assert_int_equal(m.msgs, 500 * NQP);
		assert_int_equal(m.msgs_port[0], dual ? 500 : 500 * NQP);
		assert_int_equal(m.msgs_port[1], dual ? 500 : 0);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* The old post API one WR per post (bw_post.c builds the WR once and
 * stores its addresses, wr_id and flags per WR): every verb, each WR as
 * the fake checks it (opcode, addresses, keys, flags, atomics' operands). */
static void test_bw_send_old_api(void **state)
{
	static const enum ibv_wr_opcode ops[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM,
	};

	(void)state;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		check_bw_send(ops[k], false, 1);
}

static void test_bw_write_post_list(void **state)
{
	(void)state;
	check_bw_send(IBV_WR_RDMA_WRITE, false, 4);
}

static void test_bw_send_wr_api(void **state)
{
	(void)state;
	check_bw_send(IBV_WR_SEND, true, 1);
	check_bw_send(IBV_WR_RDMA_READ, true, 2);
	check_bw_send(IBV_WR_ATOMIC_FETCH_AND_ADD, true, 1);
}

/* A post that fails in the middle of a BW run, on both APIs and both post
 * paths (post_burst for one WR per post with the new API, post.c for the
 * rest): said once with the QP and its count, -1, nothing posted after it. */
static void test_bw_post_fails(void **state)
{
	(void)state;
	for (int v = 0; v < 3; v++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE, 500, v != 1);
		char err[1024] = "";

		l.opt.post_list = v == 2 ? 4 : 1;
		f->fail_post_from = 37;
		assert_int_equal(with_stderr(err, sizeof(err), bw_send, &l, &m), -1);
		assert_non_null(strstr(err, "Couldn't post send on QP "));
		assert_non_null(strstr(err, "Cannot allocate memory (posted "));
		assert_null(strstr(strstr(err, "Couldn't post") + 1, "Couldn't post"));
		assert_int_equal(f->post_calls, 37);
		assert_int_equal(f->sends, 36 * l.opt.post_list);
		assert_int_equal(f->qps[0].posted + f->qps[1].posted, 36 * l.opt.post_list);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* --send_with_imm / --write_with_imm: the WRs carry the imm opcodes, on
 * both post APIs, with every other rule unchanged. */
static void test_bw_imm_opcodes(void **state)
{
	(void)state;
	check_bw_send(IBV_WR_SEND_WITH_IMM, true, 1);
	check_bw_send(IBV_WR_SEND_WITH_IMM, false, 2);
	check_bw_send(IBV_WR_RDMA_WRITE_WITH_IMM, true, 1);
	check_bw_send(IBV_WR_RDMA_WRITE_WITH_IMM, false, 4);
}

/* --use-null-mr and --mr_per_qp: the send SGEs carry the null MR's key,
 * or the QP's own MR's, never the shared MR's (the fake checks each WR's
 * lkey against f->mr). Both post APIs. */
static void test_bw_mem_keys(void **state)
{
	struct ibv_mr shared = { .lkey = 0x9999 };

	(void)state;
	for (int api = 0; api < 2; api++)
		for (int per_qp = 0; per_qp < 2; per_qp++) {
			struct pt_loop l;
			struct pt_bw_meas m;
			struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE, 100, api);

			f->res.mr = &shared;
			for (int i = 0; i < NQP && per_qp; i++)
				f->qps[i].mr = &f->mr;
			if (!per_qp)
				f->res.null_mr = &f->mr;
			assert_int_equal(pt_qp_lkey(&f->res, &f->qps[0]), per_qp ? 0x1234 : 0x9999);
			assert_int_equal(pt_run_bw_send(&l, &m), 0);
			assert_int_equal(f->sends, 100 * NQP);
			pt_bw_meas_free(&m);
			fake_free(f);
		}
}

static int bw_recv(const struct pt_loop *l, void *m) { return pt_run_bw_recv(l, m); }

/* The receiver with imm: completions that carry it count; one without it
 * ends the run, naming what was missing. */
static void test_bw_recv_imm(void **state)
{
	for (int carry = 1; carry >= 0; carry--) {
		struct pt_loop l;
		struct pt_bw_meas m;
		char err[1024];
		struct fake *f = fake_new(&l, NQP, IBV_WR_SEND_WITH_IMM, 300, false);

		(void)state;
		l.opt.imm = true;
		f->arrive = true;
		f->imm_in = carry;
		for (int i = 0; i < NQP; i++)
			assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
		if (carry) {
			assert_int_equal(pt_run_bw_recv(&l, &m), 0);
			assert_int_equal(m.msgs, 300 * NQP);
		} else {
			assert_int_equal(with_stderr(err, sizeof(err), bw_recv, &l, &m), -1);
			assert_non_null(strstr(err, "without immediate data"));
		}
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* --recv_post_list: receives go in chains of N, reposted once N are
 * consumed, the run's last few as a shorter chain; with an SRQ too. */
static void test_bw_recv_post_list(void **state)
{
	for (int srq = 0; srq < 2; srq++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		const uint64_t iters = 302;   /* 64 pre-posted, then 59 lists of 4 and 2 */
		struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, false);

		(void)state;
		if (srq)
			f->res.srq = &f->srq;
		l.opt.recv_post_list = 4;
		f->arrive = true;
		for (int i = 0; i < NQP; i++)
			assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
		assert_int_equal(f->recv_calls, 16 * NQP);
		assert_int_equal(pt_run_bw_recv(&l, &m), 0);
		assert_int_equal(m.msgs, iters * NQP);
		assert_int_equal(f->recvs, iters * NQP);
		assert_int_equal(f->recv_calls, (16 + 59 + 1) * NQP);
		assert_int_equal(f->chain_max, 4);
		assert_int_equal(f->chain_min, 2);
		for (int i = 0; i < NQP; i++)
			assert_int_equal(f->qps[i].recv_posted, iters);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* --use-srq: every receive goes to the SRQ (none to a QP), RC and UD
 * (GRH room kept), and the receiver counts them all. */
static void test_bw_recv_srq(void **state)
{
	(void)state;
	for (int ud = 0; ud < 2; ud++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		const uint64_t iters = 300;
		struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, false);

		l.opt.ud = ud;
		f->res.srq = &f->srq;
		f->arrive = true;
		for (int i = 0; i < NQP; i++)
			assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth / NQP), 0);
		assert_int_equal(pt_run_bw_recv(&l, &m), 0);
		assert_int_equal(m.msgs, iters * NQP);
		assert_int_equal(f->srq_recvs, iters * NQP);
		assert_int_equal(f->recvs, iters * NQP);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* A failed completion ends the run; the message names the side, the QP
 * and WR, the status, the QP's counts and that the peer has gone. */
static void test_bw_send_wc_error(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, 1000, false);
	char err[2048], want[128];

	(void)state;
	f->fail_sig = 13;
	f->closed = 1;
	assert_int_equal(with_stderr(err, sizeof(err), bw_send, &l, &m), -1);
	assert_non_null(strstr(err, "Completion with error at client"));
	assert_non_null(strstr(err, ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR)));
	assert_non_null(strstr(err, "scnt="));
	assert_non_null(strstr(err, "it went away during the run"));
	snprintf(want, sizeof(want), "on QP %d (QPN 0x%06x), send WR #%llu (wr_id 0x%llx)",
		 f->failed_qp, f->qp[f->failed_qp].qp_num, (unsigned long long)f->failed_seq,
		 (unsigned long long)pt_wrid(f->failed_qp, f->failed_seq));
	assert_non_null(strstr(err, want));
	assert_true(f->closed_asked >= 1);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* No completion ever comes and the peer's connection has closed: the run
 * ends after the probe delay, saying so, long before the stall timeout. */
static void test_bw_send_peer_gone(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_SEND, 1000, false);
	uint64_t t0 = pt_now_ns();
	char err[1024];

	(void)state;
	f->silent = true;
	f->closed = 1;
	assert_int_equal(with_stderr(err, sizeof(err), bw_send, &l, &m), -1);
	assert_non_null(strstr(err, "The peer went away during the run"));
	assert_true(pt_now_ns() - t0 >= PT_PEER_PROBE_NS);
	assert_true(pt_now_ns() - t0 < l.opt.stall_ns);
	assert_true(f->closed_asked >= 1);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* The peer stays but nothing completes: the stall timeout ends the run. */
static void test_bw_send_stall(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_SEND, 1000, false);
	uint64_t t0 = pt_now_ns();
	char err[1024];

	(void)state;
	f->silent = true;
	l.opt.stall_ns = 300000000ull;
	assert_int_equal(with_stderr(err, sizeof(err), bw_send, &l, &m), -1);
	assert_non_null(strstr(err, "No send completion for"));
	assert_null(strstr(err, "went away"));
	assert_true(pt_now_ns() - t0 >= l.opt.stall_ns);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* SIGINT mid-run: the loop stops with what it measured so far. */
static void test_bw_send_interrupted(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, 1000, false);

	(void)state;
	f->interrupt_after = 20;
	assert_int_equal(pt_run_bw_send(&l, &m), -1);
	assert_true(m.interrupted);
	assert_true(m.msgs > 0 && m.msgs < 2000);
	assert_true(m.elapsed_ns > 0);
	pt_bw_meas_free(&m);
	fake_free(f);
}

struct period_seen {
	struct fake *f;
	int rows;
	uint64_t msgs, ns;
};

static void on_period(void *arg, uint64_t msgs, uint64_t ns)
{
	struct period_seen *p = arg;

	if (!p->rows++) {          /* the first period's figures */
		p->msgs = msgs;
		p->ns = ns;
	}
	p->f->silent = true;    /* then the peer stops ... */
	p->f->finished = 1;     /* ... and says so on its connection */
}

/* --run_infinitely: the row callback gets the period's messages with its
 * own argument; the run ends when the peer has finished. */
static void test_bw_send_period_row(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, 1, IBV_WR_SEND, 0, false);
	struct period_seen seen = { .f = f };

	(void)state;
	l.opt.duration = l.opt.infinite = true;   /* as the options set them */
	l.opt.peak = false;
	l.opt.duration_s = 1;
	l.period_row = on_period;
	l.period_arg = &seen;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_true(seen.rows >= 1);    /* one, unless the host stalled us for a period */
	assert_true(seen.msgs > 0);
	assert_true(seen.ns >= 1000000000ull);
	assert_true(f->finished_asked >= 1);
	assert_null(m.peak);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* A UD receiver: receives pre-posted as the tools do, each consumed one
 * reposted while more are due; the GRH room is in every receive. */
static void test_bw_recv_ud(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 500;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, false);

	(void)state;
	l.opt.ud = true;
	f->arrive = true;
	for (int i = 0; i < NQP; i++)
		assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
	assert_int_equal(pt_run_bw_recv(&l, &m), 0);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(m.lost, 0);
	assert_true(m.elapsed_ns > 0);
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(f->qps[i].received, iters);
		assert_int_equal(f->qps[i].recv_posted, iters);
	}
	assert_int_equal(f->recvs, iters * NQP);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* -D: only the window counts; its length is the measured time; no peak
 * arrays; no WR is the last (no iteration count). */
static void test_bw_send_duration(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, 0, false);

	(void)state;
	l.opt.duration = true;
	l.opt.peak = false;
	l.opt.duration_s = 1;
	l.opt.margin_s = 0;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(m.elapsed_ns, 1000000000ull);
	assert_true(m.msgs > 0);
	assert_true(m.msgs <= f->sends);
	assert_null(m.peak);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* -b, the client's side: it sends first (the peer's messages come only
 * as answers), sends and receives both counted to the end; the
 * measurement is the sends'. */
static void test_bw_bidir(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 400;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, false);

	(void)state;
	f->echo = true;
	for (int i = 0; i < NQP; i++)
		assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
	assert_int_equal(pt_run_bw_bidir(&l, &m), 0);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(f->sends, iters * NQP);
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(f->qps[i].completed, iters);
		assert_int_equal(f->qps[i].received, iters);
	}
	assert_true(m.elapsed_ns > 0);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* --cqe_poll / --disable_dynamic_polling: a fixed batch is what every poll
 * asks for; the dynamic batch starts at 16 and grows under load. */
static void test_bw_poll_batch(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f;

	(void)state;
	f = fake_new(&l, NQP, IBV_WR_SEND, 400, false);
	l.opt.poll_batch = 3;
	l.opt.poll_dynamic = false;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(f->poll_min[0], 3);
	assert_int_equal(f->poll_max[0], 3);
	pt_bw_meas_free(&m);
	fake_free(f);

	f = fake_new(&l, NQP, IBV_WR_SEND, 400, false);
	l.opt.poll_batch = 40000;  /* above the CQ depth: still asked as given */
	l.opt.poll_dynamic = false;
	for (int i = 0; i < NQP; i++)
		assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
	f->echo = true;
	assert_int_equal(pt_run_bw_bidir(&l, &m), 0);
	assert_int_equal(f->poll_min[0], 40000);
	/* the receive side asks at most for what it still wants (poll_recv) */
	assert_int_equal(f->poll_max[1], 400 * NQP);
	assert_true(f->poll_min[1] >= 1);
	pt_bw_meas_free(&m);
	fake_free(f);

	f = fake_new(&l, NQP, IBV_WR_SEND, 400, false);
	l.opt.poll_batch = PT_POLL_BATCH_MIN;
	l.opt.poll_dynamic = true;
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(f->poll_min[0], 16);
	assert_true(f->poll_max[0] <= (int)PT_POLL_BATCH_MAX);
	pt_bw_meas_free(&m);
	fake_free(f);

	/* a sender waiting on an empty CQ (its spin in poll_send): the
	 * dynamic batch halves after each empty poll, 64 -> 32 -> 16, then
	 * stays; the stall rule still ends the run */
	f = fake_new(&l, 1, IBV_WR_SEND, 400, false);
	l.opt.poll_batch = 64;
	l.opt.poll_dynamic = true;
	l.opt.stall_ns = 50000000ull;
	f->silent = true;
	{
		char err[512];

		assert_int_equal(with_stderr(err, sizeof(err), bw_send, &l, &m), -1);
		assert_non_null(strstr(err, "No send completion for"));
	}
	assert_int_equal(f->poll_max[0], 64);
	assert_int_equal(f->poll_min[0], 16);
	assert_true(f->polls[0] > 64);
	assert_int_equal(f->polls_big[0], 2);   /* one at 64, one at 32 */
	pt_bw_meas_free(&m);
	fake_free(f);

	/* the rule itself: full doubles, under half halves, within 16..1024 */
	assert_int_equal(pt_poll_batch_next(16, 16, true), 32);
	assert_int_equal(pt_poll_batch_next(1024, 1024, true), 1024);
	assert_int_equal(pt_poll_batch_next(64, 31, true), 32);
	assert_int_equal(pt_poll_batch_next(16, 0, true), 16);
	assert_int_equal(pt_poll_batch_next(64, 40, true), 64);
	assert_int_equal(pt_poll_batch_next(16, 16, false), 16);
	assert_int_equal(pt_poll_batch_next(5, 0, false), 5);
}

/* --perform_warm_up: tx_depth WRs per QP, then the run counts only its own */
static void test_bw_warm_up(void **state)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 200;
	struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE, iters, false);

	(void)state;
	assert_int_equal(pt_warm_up_iters(&l), (uint64_t)f->run.tx_depth);
	assert_int_equal(pt_run_bw_warm_up(&l), 0);
	assert_int_equal(f->sends, (uint64_t)f->run.tx_depth * NQP);
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(f->qps[i].completed, (uint64_t)f->run.tx_depth);
		f->next_seq[i] = f->retired[i] = 0;  /* the run numbers its WRs from 0 again */
	}
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(f->sends, (iters + (uint64_t)f->run.tx_depth) * NQP);
	for (int i = 0; i < NQP; i++)
		assert_int_equal(f->qps[i].completed, iters);
	pt_bw_meas_free(&m);
	/* whole post lists, at least one */
	l.opt.post_list = 5;
	assert_int_equal(pt_warm_up_iters(&l), 30);
	f->run.tx_depth = 3;
	assert_int_equal(pt_warm_up_iters(&l), 5);
	fake_free(f);
}

/* --perform_warm_up --write_with_imm, the receiver: the peer's warm-up
 * writes (tx_depth per QP) are consumed and their receives reposted, so the
 * run starts with its preposted receives and counts exactly its own.
 * early: the run's first writes are already in the CQ behind the warm-up's
 * when the warm-up pass polls (a receiver that lags, as in a loaded lab):
 * the pass takes the warm-up's completions and not one more. */
static void warm_up_recv(bool early)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 300;
	struct fake *f = fake_new(&l, NQP, IBV_WR_RDMA_WRITE_WITH_IMM, iters, false);
	uint64_t pre = (uint64_t)f->run.rx_depth, warm;

	l.opt.imm = true;
	f->imm_in = 1;
	/* a batch that does not divide the warm-up's count: its last poll
	 * could reach past it */
	l.opt.poll_batch = 50;
	l.opt.poll_dynamic = false;
	warm = pt_warm_up_iters(&l);
	for (int i = 0; i < NQP; i++)
		assert_int_equal(pt_post_recv(&l, i, pre), 0);
	/* as on the wire: the sender's warm-up on every QP ends before its run */
	for (int i = 0; i < NQP; i++)
		for (uint64_t k = 0; k < warm; k++)
			deliver(f, i);
	/* the run's writes: the outstanding receives (those beyond wait for
	 * their reposts), then each as reposted */
	for (int i = 0; early && i < NQP; i++)
		for (uint64_t k = 0; k < pre; k++)
			deliver(f, i);
	assert_int_equal(pt_run_bw_warm_up_recv(&l, pre), 0);
	assert_int_equal(f->recvs, (pre + warm) * NQP);   /* each warm-up receive reposted */
	for (int i = 0; i < NQP; i++) {
		assert_int_equal(f->qps[i].received, warm);
		assert_int_equal(f->qps[i].recv_posted, pre);   /* as if just preposted */
		if (!early)
			assert_int_equal(f->rtail[i] - f->rhead[i], pre);   /* all outstanding */
	}
	for (int i = 0; !early && i < NQP; i++)
		for (uint64_t k = 0; k < pre; k++)
			deliver(f, i);
	f->arrive = true;
	assert_int_equal(pt_run_bw_recv(&l, &m), 0);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(f->recvs, (iters + warm) * NQP);
	for (int i = 0; i < NQP; i++)
		assert_int_equal(f->qps[i].received, iters);
	pt_bw_meas_free(&m);
	fake_free(f);
}

static void test_bw_warm_up_recv(void **state)
{
	(void)state;
	warm_up_recv(false);
}

static void test_bw_warm_up_recv_early(void **state)
{
	(void)state;
	warm_up_recv(true);
}

/* The hooks fire from the narrow loop: one post event per WR (post_one
 * for the plain ones), one completion per CQE. */
struct hook_counts {
	uint64_t posts, post_ones, completions, last_flags;
};

static struct hook_counts hooked;

static int h_init(const char *args, void **st, char *err, size_t len)
{
	(void)args, (void)err, (void)len;
	memset(&hooked, 0, sizeof(hooked));
	*st = &hooked;
	return 0;
}
static void h_post(void *st, const struct pt_plugin_post *ev)
{
	((struct hook_counts *)st)->posts += ev->count;
	((struct hook_counts *)st)->last_flags = ev->flags;
}
static void h_post_one(void *st, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t)
{
	(void)qp, (void)seq, (void)wr_id, (void)t;
	((struct hook_counts *)st)->post_ones++;
}
static void h_completion(void *st, const struct pt_plugin_completion *ev)
{
	(void)ev;
	((struct hook_counts *)st)->completions++;
}

static void test_bw_send_hooks(void **state)
{
	static const struct pt_plugin_ops ops = {
		.abi_version = PT_PLUGIN_ABI_VERSION, .struct_size = sizeof(ops), .name = "count",
		.init = h_init, .post = h_post, .completion = h_completion, .post_one = h_post_one,
	};
	uint32_t qpn[NQP] = { 0x100, 0x101 };
	struct pt_plugin_run_info info = {
		.struct_size = sizeof(info), .tool = "test_loop", .device = "fake0",
		.directions = PT_PLUGIN_DIR_SEND, .num_qps = NQP, .qp_nums = qpn, .msg_size = 64,
		.iterations = 300, .tx_depth = 32, .cq_mod = 8, .post_list = 1,
		.hw_clock_domain = "none", .sw_clock = "CLOCK_MONOTONIC_RAW",
		.send_opcode = PT_PLUGIN_OP_SEND,
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct pt_loop l;
	struct pt_bw_meas m;
	struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, 300, false);
	char err[256];

	(void)state;
	assert_int_equal(pt_hooks_load_builtin(&ops, "count (test)", "", err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_run_start(&info, err, sizeof(err)), 0);
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	pt_hooks_unload_all();
	/* the last WR of each QP is a post event marked last-signaled */
	assert_int_equal(hooked.post_ones + hooked.posts, 300 * NQP);
	assert_int_equal(hooked.posts, NQP);
	assert_int_equal(hooked.last_flags, PT_PLUGIN_POST_LAST_SIGNALED);
	assert_int_equal(hooked.completions, f->signaled);
	pt_bw_meas_free(&m);
	fake_free(f);
}

/* Regressions of upstream bugs users hit (users-asks.md): with a post list
 * every WR of a list has its own buffer (upstream put a whole list on the
 * first one), and the message rate counts each message once, not once per
 * list entry or per post call. Both post APIs, SEND and WRITE. */
static void test_bw_post_list_regressions(void **state)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_SEND, IBV_WR_RDMA_WRITE };
	(void)state;

	for (int k = 0; k < 4; k++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		struct pt_bw_result r;
		const uint64_t iters = 800;
		struct fake *f = fake_new(&l, NQP, ops[k % 2], iters, k >= 2);
		struct pt_bw_input in = { .size = 64, .iters = iters };

		l.opt.post_list = 8;      /* 8 * 64 B fits the 4 KiB cycle: 8 addresses */
		f->run.cq_mod = 8;
		f->run.inline_size = k == 1 || k == 2 ? 64 : 0; /* inline, both APIs */
		assert_int_equal(pt_run_bw_send(&l, &m), 0);
		assert_int_equal(f->post_calls, iters * NQP / 8);
		assert_int_equal(f->list_addr_reused, 0);
		in.msgs = m.msgs;
		in.elapsed_ns = m.elapsed_ns;
		assert_int_equal(pt_bw_compute(&in, &r), 0);
		/* Mpps = messages / microseconds, every message once */
		assert_int_equal(m.msgs, iters * NQP);
		assert_true(fabs(r.msg_rate * (double)m.elapsed_ns / 1e3 - (double)(iters * NQP)) < 1e-6);
		assert_true(r.bw_avg >= 0 && r.msg_rate >= 0);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_send_old_api),
		cmocka_unit_test(test_bw_poll_batch),
		cmocka_unit_test(test_bw_warm_up),
		cmocka_unit_test(test_bw_warm_up_recv),
		cmocka_unit_test(test_bw_warm_up_recv_early),
		cmocka_unit_test(test_bw_recv_post_list),
		cmocka_unit_test(test_bw_write_post_list),
		cmocka_unit_test(test_bw_post_list_regressions),
		cmocka_unit_test(test_bw_send_wr_api),
		cmocka_unit_test(test_bw_post_fails),
		cmocka_unit_test(test_bw_imm_opcodes),
		cmocka_unit_test(test_bw_mem_keys),
		cmocka_unit_test(test_bw_recv_srq),
		cmocka_unit_test(test_bw_recv_imm),
		cmocka_unit_test(test_bw_send_wc_error),
		cmocka_unit_test(test_bw_send_peer_gone),
		cmocka_unit_test(test_bw_send_stall),
		cmocka_unit_test(test_bw_send_interrupted),
		cmocka_unit_test(test_bw_send_period_row),
		cmocka_unit_test(test_bw_recv_ud),
		cmocka_unit_test(test_bw_send_duration),
		cmocka_unit_test(test_bw_bidir),
		cmocka_unit_test(test_bw_send_hooks),
		cmocka_unit_test(test_bw_send_per_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
