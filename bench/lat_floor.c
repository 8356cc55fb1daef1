/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/hook-overhead's floor rows: the least own code that one iteration
 * of a READ, write_lat or send_lat latency loop on rdma-core's post APIs can run,
 * spinning and with -e. Each loop stamps the iteration with a bare rdtsc (no conversion),
 * builds its WR with the four ibv_wr_* calls (wr_id and flags set once),
 * waits for its CQE and checks its status; nothing else: no stop rule, no
 * signal test, no hooks, no probes. Own code per WR above these is what a
 * tool adds; below them no loop on these calls can go (issue 21's
 * "<= 0.5x" for latency loops is measured against this). Kept in a file of
 * its own: the counts leave the fake device's file out. */
#include <poll.h>
#include <stdbool.h>
#include "hook_overhead.h"

static inline uint64_t floor_stamp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return 0;
#endif
}

/* The spin's operands, kept in memory (the address escapes into an empty
 * asm): a poll reads them with its call's operands at the cost of reading
 * registers, and the registers stay free for the loop's index and stamps
 * (as perftest/engine/lat_run.h's struct lat_spin). */
struct floor_spin {
	int (*poll_fn)(struct ibv_cq *, int, struct ibv_wc *);
	struct ibv_cq *cq[2];
};

static inline __attribute__((always_inline)) void floor_spin_kept(struct floor_spin *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
}

/* Spin on CQ k for one CQE: 0 when it came and succeeded, else -1. */
static inline __attribute__((always_inline)) int floor_wait(const struct floor_spin *s, int k)
{
	struct ibv_wc wc;
	int n;

	while ((n = s->poll_fn(s->cq[k], 1, &wc)) == 0)
		;
	return n < 0 || wc.status != IBV_WC_SUCCESS ? -1 : 0;
}

__attribute__((noinline)) int floor_read_spin(struct ibv_qp_ex *qx, struct ibv_cq *cq,
					      uint64_t *stamps, uint64_t iters,
					      const struct floor_wr *w)
{
	struct floor_spin spin = { cq->context->ops.poll_cq, { cq, cq } };

	floor_spin_kept(&spin);
	for (uint64_t i = 0; i < iters; i++) {
		stamps[i] = floor_stamp();
		ibv_wr_start(qx);
		ibv_wr_rdma_read(qx, w->rkey, w->raddr);
		ibv_wr_set_sge(qx, w->lkey, w->addr, w->len);
		if (ibv_wr_complete(qx))
			return -1;
		if (floor_wait(&spin, 0))
			return -1;
	}
	return 0;
}

/* write_lat's client: wait for the peer's count in the last byte of our
 * region, put ours in the last payload byte, stamp, write, wait for the CQE. */
__attribute__((noinline)) int floor_write_spin(struct ibv_qp_ex *qx, struct ibv_cq *cq,
					       uint64_t *stamps, uint64_t iters,
					       const struct floor_wr *w, uint8_t *payload_last,
					       const volatile uint8_t *peer_last)
{
	struct floor_spin spin = { cq->context->ops.poll_cq, { cq, cq } };

	floor_spin_kept(&spin);
	for (uint64_t i = 0; i < iters; i++) {
		while (*peer_last != (uint8_t)(i + 1))
			;
		*payload_last = (uint8_t)(i + 1);
		stamps[i] = floor_stamp();
		ibv_wr_start(qx);
		ibv_wr_rdma_write(qx, w->rkey, w->raddr);
		ibv_wr_set_sge(qx, w->lkey, w->addr, w->len);
		if (ibv_wr_complete(qx))
			return -1;
		if (floor_wait(&spin, 0))
			return -1;
	}
	return 0;
}

/* The same on the old post API: one ibv_post_send of a WR built once. */
__attribute__((noinline)) int floor_read_spin_old(struct ibv_qp *qp, struct ibv_cq *cq,
						  uint64_t *stamps, uint64_t iters,
						  const struct floor_wr *w)
{
	struct floor_spin spin = { cq->context->ops.poll_cq, { cq, cq } };
	struct ibv_sge sge = { .addr = w->addr, .length = w->len, .lkey = w->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
				  .wr.rdma = { .remote_addr = w->raddr, .rkey = w->rkey } };
	struct ibv_send_wr *bad;

	floor_spin_kept(&spin);
	for (uint64_t i = 0; i < iters; i++) {
		stamps[i] = floor_stamp();
		if (ibv_post_send(qp, &wr, &bad))
			return -1;
		if (floor_wait(&spin, 0))
			return -1;
	}
	return 0;
}

/* send_lat's client: the ping (four ibv_wr_* calls), its CQE, the pong's
 * CQE and the receive posted again (one ibv_post_recv of a WR built once). */
__attribute__((noinline)) int floor_send_spin(struct ibv_qp_ex *qx, struct ibv_qp *qp,
					      struct ibv_cq *scq, struct ibv_cq *rcq,
					      uint64_t *stamps, uint64_t iters,
					      const struct floor_wr *w, struct ibv_recv_wr *recv)
{
	struct floor_spin spin = { scq->context->ops.poll_cq, { scq, rcq } };
	struct ibv_recv_wr *bad;

	floor_spin_kept(&spin);
	for (uint64_t i = 0; i < iters; i++) {
		stamps[i] = floor_stamp();
		ibv_wr_start(qx);
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, w->lkey, w->addr, w->len);
		if (ibv_wr_complete(qx))
			return -1;
		if (floor_wait(&spin, 0) || floor_wait(&spin, 1) ||
		    ibv_post_recv(qp, recv, &bad))
			return -1;
	}
	return 0;
}

/* -e: armed before the first post and again before each poll, so the next
 * CQE raises its event; one event means one CQE (one CQ, one WR in flight);
 * events acked 64 at a time. Blocks in ibv_get_cq_event: no stop rule.
 * watched (a constant in each copy): with what lets a run stop on its
 * rules (a stall, the peer gone, a signal) while it sleeps, a poll() of
 * the channel, 100 ms at most, before each event (a timeout here just
 * fails the loop). */
static inline __attribute__((always_inline)) int floor_events(struct ibv_qp_ex *qx, struct ibv_cq *cq,
							     struct ibv_comp_channel *ch,
							     uint64_t *stamps, uint64_t iters,
							     const struct floor_wr *w, bool watched)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	unsigned unacked = 0;
	void *ev_ctx;
	int rc = ibv_req_notify_cq(cq, 0) ? -1 : 0;

	for (uint64_t i = 0; !rc && i < iters; i++) {
		stamps[i] = floor_stamp();
		ibv_wr_start(qx);
		ibv_wr_rdma_read(qx, w->rkey, w->raddr);
		ibv_wr_set_sge(qx, w->lkey, w->addr, w->len);
		if (ibv_wr_complete(qx) || (watched && poll(&pfd, 1, 100) != 1) ||
		    ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
			rc = -1;
			break;
		}
		if (++unacked == 64) {
			ibv_ack_cq_events(cq, unacked);
			unacked = 0;
		}
		if (ibv_req_notify_cq(cq, 0) || ibv_poll_cq(cq, 1, &wc) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			rc = -1;
	}
	if (unacked)
		ibv_ack_cq_events(cq, unacked);
	return rc;
}

__attribute__((noinline)) int floor_read_events(struct ibv_qp_ex *qx, struct ibv_cq *cq,
						struct ibv_comp_channel *ch, uint64_t *stamps,
						uint64_t iters, const struct floor_wr *w)
{
	return floor_events(qx, cq, ch, stamps, iters, w, false);
}

__attribute__((noinline)) int floor_read_events_watched(struct ibv_qp_ex *qx, struct ibv_cq *cq,
							struct ibv_comp_channel *ch, uint64_t *stamps,
							uint64_t iters, const struct floor_wr *w)
{
	return floor_events(qx, cq, ch, stamps, iters, w, true);
}

/* send_lat's client with -e: the ping, then its two CQEs (its own and the
 * pong's, on two CQs of one channel, in whichever order their events
 * come): per event the ack count, the arming of that CQ and one poll of
 * it; then the receive posted again. watched: a poll() of the channel
 * before each event, as in floor_events. */
static inline __attribute__((always_inline)) int floor_send_ev(struct ibv_qp_ex *qx, struct ibv_qp *qp,
							      struct ibv_cq *scq, struct ibv_cq *rcq,
							      struct ibv_comp_channel *ch,
							      uint64_t *stamps, uint64_t iters,
							      const struct floor_wr *w,
							      struct ibv_recv_wr *recv, bool watched)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_recv_wr *bad;
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	unsigned unacked[2] = { 0, 0 };
	void *ev_ctx;
	int rc = ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0) ? -1 : 0;

	for (uint64_t i = 0; !rc && i < iters; i++) {
		stamps[i] = floor_stamp();
		ibv_wr_start(qx);
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, w->lkey, w->addr, w->len);
		if (ibv_wr_complete(qx)) {
			rc = -1;
			break;
		}
		for (unsigned k = 0; !rc && k < 2; k++) {
			bool r;

			if ((watched && poll(&pfd, 1, 100) != 1) ||
			    ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
				rc = -1;
				break;
			}
			r = ev_cq == rcq;
			if (++unacked[r] == 64) {
				ibv_ack_cq_events(ev_cq, unacked[r]);
				unacked[r] = 0;
			}
			if (ibv_req_notify_cq(ev_cq, 0) || ibv_poll_cq(ev_cq, 1, &wc) != 1 ||
			    wc.status != IBV_WC_SUCCESS)
				rc = -1;
		}
		if (!rc && ibv_post_recv(qp, recv, &bad))
			rc = -1;
	}
	if (unacked[0])
		ibv_ack_cq_events(scq, unacked[0]);
	if (unacked[1])
		ibv_ack_cq_events(rcq, unacked[1]);
	return rc;
}

__attribute__((noinline)) int floor_send_events(struct ibv_qp_ex *qx, struct ibv_qp *qp,
						struct ibv_cq *scq, struct ibv_cq *rcq,
						struct ibv_comp_channel *ch, uint64_t *stamps,
						uint64_t iters, const struct floor_wr *w,
						struct ibv_recv_wr *recv)
{
	return floor_send_ev(qx, qp, scq, rcq, ch, stamps, iters, w, recv, false);
}

__attribute__((noinline)) int floor_send_events_watched(struct ibv_qp_ex *qx, struct ibv_qp *qp,
							struct ibv_cq *scq, struct ibv_cq *rcq,
							struct ibv_comp_channel *ch, uint64_t *stamps,
							uint64_t iters, const struct floor_wr *w,
							struct ibv_recv_wr *recv)
{
	return floor_send_ev(qx, qp, scq, rcq, ch, stamps, iters, w, recv, true);
}
