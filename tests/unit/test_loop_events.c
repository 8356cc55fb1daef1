/* SPDX-License-Identifier: BSD-2-Clause */
/* -e: the latency loops and the BW loops sleeping on the completion
 * channel of the fake device (fake_verbs.h, fake_use_events), whose model
 * says which CQE raises an event: one that comes while its CQ is armed.
 * Every run is checked for its work (iterations, WRs) and for the events:
 * each taken was acked by the run's end (the latency loops ack 64 at a
 * time, the rest at the end), each CQE that raised one had it taken, one
 * arming per CQE, and no poll spent on a CQE that had not come yet. */
#define PT_LOOP_VIEW_ONLY
#include <poll.h>
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
#include "perftest/report/results.h"
#include "fake_verbs.h"

#define ACK_BATCH 64u   /* the latency loops' (lat_wait.c) */

/* The loops' poll() of the channel, counted: this program's poll() is the
 * one the engine (linked statically) calls; it waits through ppoll. */
static int chan_fd = -1;
static unsigned chan_polls;

/* glibc declares poll's fds write-only (access attribute); the caller
 * filled them, so reading them here is sound */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { .tv_sec = timeout / 1000, .tv_nsec = (timeout % 1000) * 1000000L };

	if (n == 1 && fds[0].fd == chan_fd && chan_fd >= 0)
		chan_polls++;
	return ppoll(fds, n, timeout < 0 ? NULL : &ts, NULL);
}
#pragma GCC diagnostic pop

static int lat_send(const struct pt_loop *l, void *m) { return pt_run_lat_send(l, m); }
static int lat_read(const struct pt_loop *l, void *m) { return pt_run_lat_read(l, m); }

/* The capture under way: a failed check inside the run jumps past its
 * end, and cmocka says why on stderr; the teardown gives it back. */
static struct stderr_capture cap;
static bool capturing;

/* stderr into err while run runs; its rc. */
static int quiet_run(int (*run)(const struct pt_loop *, void *), const struct pt_loop *l,
		     void *m, char *err, size_t len)
{
	int rc;

	stderr_capture_begin(&cap);
	capturing = true;
	rc = run(l, m);
	capturing = false;
	stderr_capture_end(&cap, err, len);
	return rc;
}

static int stderr_back(void **state)
{
	char rest[4096];

	(void)state;
	if (capturing) {
		capturing = false;
		stderr_capture_end(&cap, rest, sizeof(rest));
		fputs(rest, stderr);
	}
	return 0;
}

/* Whatever the run did: every event taken was acked, none more, and every
 * get found an event (the loop sleeps before it takes one). */
static void events_acked(const struct fake *f, const struct fake_ring *r)
{
	assert_int_equal(r->ev.acked, r->ev.taken);
	assert_true(r->ev.taken <= r->ev.written);
	assert_int_equal(f->get_empty, 0);
}

/* A latency run's CQ whose loop consumed `used` CQEs, one due at a time:
 * each came on the CQ armed since the last one's poll, so raised an event
 * the loop took (but the first, which came before any arming, unless the
 * fake is late: then it too came after its arming, and the poll right
 * after that arming found nothing); one arming per CQE (the first may
 * take two, late); at most one event not taken (a CQE the loop did not
 * wait for, as a server's last pong); acked in batches. */
static void lat_cq_events(const struct fake *f, const struct fake_ring *r, uint64_t used)
{
	uint64_t want = used && !f->late ? used - 1 : used;

	events_acked(f, r);
	assert_int_equal(r->ev.taken, want);
	assert_true(r->ev.written - r->ev.taken <= 1);
	assert_true(r->ev.arms >= used && r->ev.arms <= used + (f->late ? 1 : 0));
	assert_true(r->ev.hidden_polls <= (used && f->late ? 1u : 0u));
	assert_true(r->ev.ack_calls <= r->ev.taken / ACK_BATCH + 1);
	assert_true(r->ev.unarmed <= 1);
}

/* A latency client's fake with -e: only a CQ's first CQE may come while
 * the CQ is not armed (checked as they come). */
static struct fake *fake_lat_events(struct pt_loop *l, enum ibv_wr_opcode op, uint64_t iters,
				    bool qpx, bool late)
{
	struct fake *f = fake_new_lat(l, op, iters, qpx);

	fake_use_events(f, late);
	f->arm_each = true;
	return f;
}

static void stamps_rise(struct pt_lat_meas *m)
{
	assert_non_null(m->stamps);
	pt_lat_meas_ns(m);   /* a plain copy's stamps, in nanoseconds */
	for (uint64_t i = 1; i < m->n; i++)
		assert_true(m->stamps[i] >= m->stamps[i - 1]);
}

/* Which copy of a loop: plain (the default; INL: the payload inline,
 * that form's copy), or the general one by the gap between iterations or
 * immediate data (send_lat). */
enum how { PLAIN, INL, GAP, IMM };

/* send_lat with -e on one side: the client pings first and takes its
 * last pong after the loop; the server answers a first ping (delivered
 * before the run), its last send's answer left in its CQ. */
static void check_send_lat(bool qpx, bool late, uint64_t iters, bool client, enum how how)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	enum ibv_wr_opcode op = how == IMM ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	struct fake *f = fake_lat_events(&l, op, iters, qpx, late);

	l.opt.is_client = client;
	l.opt.imm = f->imm_in = how == IMM;
	l.opt.lat_gap_ns = how == GAP ? 1000 : 0;
	if (how == INL)   /* the fake checks each WR's inline flag against it */
		f->run.inline_size = (int)f->run.size;
	f->echo = true;
	assert_int_equal(pt_post_recv(&l, 0, 4), 0);
	if (!client)
		deliver(f, 0);
	assert_int_equal(pt_run_lat_send(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->rhead[0], iters);   /* every pong consumed */
	stamps_rise(&m);
	lat_cq_events(f, &f->scq, iters);
	lat_cq_events(f, &f->rcq, iters);
	pt_lat_meas_free(&m);
	fake_free(f);
}

/* send_lat -e, both post APIs, the plain copy (the payload in an SGE or
 * inline) and the general one (a gap, immediate data), late or not, client
 * and server; runs of 1, of 100 and 1000 (no multiple of the ack batch),
 * and of 128 (one). */
static void test_send_lat_events(void **state)
{
	static const uint64_t iters[] = { 1, 100, 128, 1000 };

	(void)state;
	for (int qpx = 0; qpx < 2; qpx++)
		for (int late = 0; late < 2; late++) {
			for (size_t k = 0; k < sizeof(iters) / sizeof(iters[0]); k++)
				check_send_lat(qpx, late, iters[k], true, PLAIN);
			check_send_lat(qpx, late, 100, false, PLAIN);
			check_send_lat(qpx, late, 100, true, INL);
			check_send_lat(qpx, late, 100, false, INL);
			check_send_lat(qpx, late, 100, true, GAP);
			check_send_lat(qpx, late, 100, true, IMM);
			check_send_lat(qpx, late, 70, false, IMM);
		}
}

/* read_lat / atomic_lat with -e: the client alone, one CQE per iteration
 * on the send CQ, the receive CQ never armed. */
static void check_read_lat(enum ibv_wr_opcode op, bool qpx, bool late, uint64_t iters, enum how how)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_lat_events(&l, op, iters, qpx, late);

	l.opt.lat_gap_ns = how == GAP ? 1000 : 0;
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->post_calls, iters);
	stamps_rise(&m);
	lat_cq_events(f, &f->scq, iters);
	assert_int_equal(f->rcq.ev.arms, 0);
	assert_int_equal(f->rcq.ev.taken, 0);
	pt_lat_meas_free(&m);
	fake_free(f);
}

/* READ (plain copy on both APIs, the general one with a gap) and atomics
 * (the new API's: the general copy; the old API's: plain). */
static void test_read_lat_events(void **state)
{
	static const enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD,
						  IBV_WR_ATOMIC_CMP_AND_SWP };
	static const uint64_t iters[] = { 1, 100, 1000 };

	(void)state;
	for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		for (int qpx = 0; qpx < 2; qpx++)
			for (int late = 0; late < 2; late++) {
				/* the new API has no compare-and-swap builder in the fake */
				if (qpx && ops[o] == IBV_WR_ATOMIC_CMP_AND_SWP)
					continue;
				for (size_t k = 0; k < sizeof(iters) / sizeof(iters[0]); k++)
					check_read_lat(ops[o], qpx, late, iters[k], PLAIN);
				check_read_lat(ops[o], qpx, late, 100, GAP);
			}
}

/* Runs back to back on the same CQs (-a, one run per size): the next
 * run's first CQE finds the CQ armed by the last one's wait, so it raises
 * an event the new run has not counted on; that run still takes and acks
 * each event, its first poll finding the CQE not come. */
static void test_lat_events_back_to_back(void **state)
{
	(void)state;
	for (int k = 0; k < 4; k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		bool send = k >= 2;
		const uint64_t iters = 100;
		struct fake *f = fake_lat_events(&l, send ? IBV_WR_SEND : IBV_WR_RDMA_READ, iters,
						 k % 2, false);

		f->echo = send;
		for (int run = 0; run < 3; run++) {
			if (send) {
				f->qps[0].recv_posted = 0;
				assert_int_equal(pt_post_recv(&l, 0, 4), 0);
			}
			assert_int_equal(send ? pt_run_lat_send(&l, &m) : pt_run_lat_read(&l, &m), 0);
			assert_int_equal(m.n, iters);
			stamps_rise(&m);
			pt_lat_meas_free(&m);
			/* all but the very first CQE of each CQ came with an event */
			events_acked(f, &f->scq);
			assert_int_equal(f->scq.ev.taken, (run + 1) * iters - 1);
			assert_int_equal(f->scq.ev.hidden_polls, (uint64_t)run);
			if (send) {
				events_acked(f, &f->rcq);
				assert_int_equal(f->rcq.ev.taken, (run + 1) * iters - 1);
			}
		}
		fake_free(f);
	}
}

/* A failed CQE under -e (the 38th send, send_lat's or read_lat's): -1,
 * said with its iteration, the iterations before it kept, and the events
 * taken up to it all acked (pt_lat_done on the error's way out). */
static void test_lat_events_error(void **state)
{
	(void)state;
	for (int k = 0; k < 6; k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		bool send = k >= 4;
		enum ibv_wr_opcode op = send ? IBV_WR_SEND :
					k >= 2 ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_RDMA_READ;
		struct fake *f = fake_lat_events(&l, op, 100, k % 2, false);
		char err[2048];

		f->echo = send;
		if (send)
			assert_int_equal(pt_post_recv(&l, 0, 4), 0);
		f->fail_sig = 38;
		assert_int_equal(quiet_run(send ? lat_send : lat_read, &l, &m, err, sizeof(err)), -1);
		assert_int_equal(m.n, 38);
		assert_non_null(strstr(err, "send WR #37 "));
		assert_true(f->scq.ev.taken >= 37);
		events_acked(f, &f->scq);
		events_acked(f, &f->rcq);
		if (send)
			assert_true(f->rcq.ev.taken >= 36);
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* -e, a link gone quiet after 10 CQEs, the stall rule at 50 ms: the wait
 * that finds no event looks at the stop rules after the waker's first
 * signal ended its read, not after a second one. No wait poll()s the
 * channel: each of the 9 events after the first is one read; plain
 * copies on both APIs and the general one. */
static void test_lat_events_idle(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		struct fake *f = fake_lat_events(&l, IBV_WR_RDMA_READ, 100, k % 2, false);
		char err[1024] = "";

		f->mute_after = 10;
		l.opt.stall_ns = 50000000ull;
		l.opt.lat_gap_ns = k == 2 ? 1000 : 0;   /* the general copy */
		chan_fd = f->chan.fd;
		chan_polls = 0;
		assert_int_equal(quiet_run(lat_read, &l, &m, err, sizeof(err)), -1);
		chan_fd = -1;
		assert_non_null(strstr(err, "No completion for 0 seconds"));
		assert_int_equal(m.n, 11);
		assert_int_equal(chan_polls, 0);
		assert_int_equal(f->get_woken, 1);
		assert_true(f->res.waker.wakes >= 1);
		assert_int_equal(f->scq.ev.taken, 9);
		events_acked(f, &f->scq);
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* SIGINT under -e (after 40 CQEs): the run ends at the next iteration
 * with what it measured, m.interrupted, and its events all acked; every
 * loop and copy (read: plain on both APIs; atomics on the new API:
 * general; send, plain and with immediate data). */
static void test_lat_events_interrupted(void **state)
{
	static const struct {
		enum ibv_wr_opcode op;
		bool qpx;
	} runs[] = {
		{ IBV_WR_RDMA_READ, true }, { IBV_WR_RDMA_READ, false },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, true }, { IBV_WR_SEND, true }, { IBV_WR_SEND, false },
		{ IBV_WR_SEND_WITH_IMM, true },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		struct pt_loop l;
		struct pt_lat_meas m;
		enum ibv_wr_opcode op = runs[k].op;
		bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
		struct fake *f = fake_lat_events(&l, op, 100000, runs[k].qpx, k % 2);
		char err[1024] = "";

		f->echo = send;
		l.opt.imm = f->imm_in = op == IBV_WR_SEND_WITH_IMM;
		if (send)
			assert_int_equal(pt_post_recv(&l, 0, 4), 0);
		f->interrupt_after = 40;
		assert_int_equal(quiet_run(send ? lat_send : lat_read, &l, &m, err, sizeof(err)), -1);
		assert_true(m.interrupted);
		assert_true(f->polled >= 40 && f->polled <= 41);
		assert_true(m.n >= 20 && m.n <= 41);
		assert_true(f->sends <= 41);
		/* every CQE polled but each CQ's first came with an event */
		assert_true(f->scq.ev.taken + f->rcq.ev.taken + 2 >= f->polled);
		events_acked(f, &f->scq);
		events_acked(f, &f->rcq);
		pt_lat_meas_free(&m);
		fake_free(f);
	}
}

/* A BW run's CQ under -e (the fake late: a CQE comes only once its CQ is
 * armed, so the loop waits): events taken, each acked at once, at most one
 * left in the channel; at most two polls per event that found the CQ's
 * CQEs not come (the one after the arming, the one before the sleep). */
static void bw_cq_events(const struct fake *f, const struct fake_ring *r)
{
	events_acked(f, r);
	assert_true(r->ev.taken > 0);
	assert_int_equal(r->ev.ack_calls, r->ev.taken);
	assert_true(r->ev.written - r->ev.taken <= 1);
	assert_true(r->ev.arms >= r->ev.taken);
	assert_true(r->ev.hidden_polls <= 2 * r->ev.written + 1);
}

/* The BW sender with -e over 2 QPs: every WR posted and completed. */
static void check_bw_send(enum ibv_wr_opcode op, bool qpx, unsigned post_list)
{
	struct pt_loop l;
	struct pt_bw_meas m;
	const uint64_t iters = 1000;
	struct fake *f = fake_new(&l, NQP, op, iters, qpx);

	fake_use_events(f, true);
	l.opt.post_list = post_list;
	l.opt.stall_ns = 2000000000ull;   /* a loop that never arms: fails in 2 s */
	assert_int_equal(pt_run_bw_send(&l, &m), 0);
	assert_false(m.interrupted);
	assert_int_equal(m.msgs, iters * NQP);
	assert_int_equal(f->sends, iters * NQP);
	for (int i = 0; i < NQP; i++)
		assert_int_equal(f->qps[i].completed, iters);
	bw_cq_events(f, &f->scq);
	assert_int_equal(f->rcq.ev.arms, 0);
	pt_bw_meas_free(&m);
	fake_free(f);
}

static void test_bw_send_events(void **state)
{
	(void)state;
	for (int qpx = 0; qpx < 2; qpx++) {
		check_bw_send(IBV_WR_SEND, qpx, 1);
		check_bw_send(IBV_WR_RDMA_READ, qpx, 4);
		check_bw_send(IBV_WR_ATOMIC_FETCH_AND_ADD, qpx, 1);
	}
}

/* The BW receiver with -e (ib_send_bw's server): every message received
 * and its receive reposted; the send CQ never armed. */
static void test_bw_recv_events(void **state)
{
	(void)state;
	for (int srq = 0; srq < 2; srq++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		const uint64_t iters = 500;
		struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, false);

		fake_use_events(f, true);
		l.opt.stall_ns = 2000000000ull;
		if (srq)
			f->res.srq = &f->srq;
		f->arrive = true;
		for (int i = 0; i < NQP; i++)
			assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth / NQP), 0);
		assert_int_equal(pt_run_bw_recv(&l, &m), 0);
		assert_int_equal(m.msgs, iters * NQP);
		for (int i = 0; i < NQP; i++)
			assert_int_equal(f->qps[i].received, iters);
		bw_cq_events(f, &f->rcq);
		assert_int_equal(f->scq.ev.arms, 0);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* -b with -e: one wait arms both CQs; both directions done, both CQs'
 * events acked. */
static void test_bw_bidir_events(void **state)
{
	(void)state;
	for (int qpx = 0; qpx < 2; qpx++) {
		struct pt_loop l;
		struct pt_bw_meas m;
		const uint64_t iters = 400;
		struct fake *f = fake_new(&l, NQP, IBV_WR_SEND, iters, qpx);

		fake_use_events(f, true);
		l.opt.stall_ns = 2000000000ull;
		f->echo = true;
		for (int i = 0; i < NQP; i++)
			assert_int_equal(pt_post_recv(&l, i, (uint64_t)f->run.rx_depth), 0);
		assert_int_equal(pt_run_bw_bidir(&l, &m), 0);
		assert_int_equal(m.msgs, iters * NQP);
		for (int i = 0; i < NQP; i++) {
			assert_int_equal(f->qps[i].completed, iters);
			assert_int_equal(f->qps[i].received, iters);
		}
		/* either CQ's event may be the one a wait took: both were taken */
		events_acked(f, &f->scq);
		events_acked(f, &f->rcq);
		assert_true(f->scq.ev.taken > 0 && f->rcq.ev.taken > 0);
		assert_int_equal(f->scq.ev.arms, f->rcq.ev.arms);
		pt_bw_meas_free(&m);
		fake_free(f);
	}
}

/* The fake's own calls are ours: the engine, linked statically, calls the
 * ibv_get_cq_event and ibv_ack_cq_events that fake_verbs.h defines (a
 * call of libibverbs' would count nothing here), and without -e nothing
 * arms, sleeps or takes an event. */
static void test_events_linked(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	struct fake *f = fake_new_lat(&l, IBV_WR_RDMA_READ, 10, true);
	struct ibv_cq *cq;
	void *ctx;

	(void)state;
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	assert_int_equal(f->scq.vis, f->scq.tail);
	assert_int_equal(f->scq.ev.cqes + f->scq.ev.arms + f->scq.ev.written, 0);
	pt_lat_meas_free(&m);
	fake_free(f);

	f = fake_new_lat(&l, IBV_WR_RDMA_READ, 10, true);
	fake_use_events(f, false);
	/* none yet: a get on the pipe made non-blocking for it fails */
	assert_int_equal(fcntl(f->chan.fd, F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(ibv_get_cq_event(&f->chan, &cq, &ctx), -1);
	assert_int_equal(fcntl(f->chan.fd, F_SETFL, 0), 0);
	assert_int_equal(f->get_empty, 1);
	f->get_empty = 0;
	assert_int_equal(pt_run_lat_read(&l, &m), 0);
	assert_int_equal(f->scq.ev.taken, 9);
	assert_int_equal(f->scq.ev.acked, 9);
	pt_lat_meas_free(&m);
	fake_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_linked),
		cmocka_unit_test(test_send_lat_events),
		cmocka_unit_test(test_read_lat_events),
		cmocka_unit_test(test_lat_events_back_to_back),
		cmocka_unit_test_teardown(test_lat_events_error, stderr_back),
		cmocka_unit_test_teardown(test_lat_events_interrupted, stderr_back),
		cmocka_unit_test_teardown(test_lat_events_idle, stderr_back),
		cmocka_unit_test(test_bw_send_events),
		cmocka_unit_test(test_bw_recv_events),
		cmocka_unit_test(test_bw_bidir_events),
	};

	return cmocka_run_group_tests_name("loops with -e", tests, NULL, NULL);
}
