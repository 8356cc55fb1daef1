/* SPDX-License-Identifier: BSD-2-Clause */
/* A fake RDMA device for the loop tests (test_loop.c): a struct ibv_context
 * whose ops (post_send, post_recv, poll_cq) and ibv_qp_ex builders are these
 * functions, as a provider's are, and the resources and loop view over it
 * (fake_new). Every WR is checked as it comes against the rules the loops
 * promise (loop.h): numbering per QP, the tx_depth window, the cq_mod
 * signaling rule, opcode, length, lkey, the peer's address cycled like ours,
 * the UD AH and GRH room. Include after <cmocka.h>; one test file only.
 * -e (fake_use_events): a completion channel over a pipe, and this file
 * defines ibv_get_cq_event and ibv_ack_cq_events, which the program's own
 * code (the engine, linked statically) then calls instead of libibverbs'. */
#ifndef PT_FAKE_VERBS_H
#define PT_FAKE_VERBS_H
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "perftest/engine/loop.h"
#include "plugin/hooks/probes.h"
#include "stderr_capture.h"

#define NQP 2
#define RING 4096
#define REGION 8192u

struct fake_wr {
	uint64_t wr_id;
	enum ibv_wr_opcode op;
	unsigned flags;
	uint64_t addr, raddr;
	uint32_t len, lkey, rkey;
	struct ibv_ah *ah;
	/* the new API's setter that gave the payload: 0 none (the old API),
	 * FAKE_SGE (wr_set_sge) or FAKE_INLINE (wr_set_inline_data) */
	uint8_t setter;
};
enum { FAKE_SGE = 1, FAKE_INLINE = 2 };

/* -e, one CQ: what the channel's model did and what the loop did to it. */
struct fake_cq_events {
	bool armed;                 /* req_notify_cq'd, no CQE since */
	uint64_t arms;              /* req_notify_cq calls */
	uint64_t cqes;              /* CQEs pushed while events are on */
	uint64_t unarmed;           /* ... onto the CQ not armed */
	uint64_t written, taken;    /* events: raised, and taken by ibv_get_cq_event */
	uint64_t acked, ack_calls;  /* ibv_ack_cq_events: events acked, calls */
	uint64_t hidden_polls;      /* polls that found nothing but CQEs not yet come */
};

/* CQEs [head, vis) are visible to poll_cq; [vis, tail) have not come yet
 * (-e only: without events vis is always tail). */
struct fake_ring {
	struct ibv_wc wc[RING];
	unsigned head, tail, vis;
	struct fake_cq_events ev;
};

struct fake_qpx {
	struct ibv_qp_ex ex;
	struct fake_wr wr[64];      /* built since wr_start */
	unsigned n;
};

struct fake {
	struct ibv_context ctx;     /* first: every verbs object points here */
	struct ibv_cq send_cq, recv_cq;
	struct ibv_qp qp[NQP];
	struct fake_qpx qpx[NQP];
	struct ibv_mr mr;
	struct ibv_ah ah;           /* UD senders' address handle */
	struct ibv_srq srq;         /* --use-srq: receives posted here instead */
	uint64_t srq_recvs;         /* receives posted on the SRQ */
	struct fake_ring scq, rcq;
	uint64_t rfifo[NQP][RING];  /* posted receives' wr_ids */
	unsigned rhead[NQP], rtail[NQP];
	uint64_t waiting[NQP];      /* messages that found no receive: RC retries them */
	unsigned rdepth_max[NQP];   /* the most receives posted and not consumed at once */
	struct pt_qp qps[NQP];
	struct pt_res res;
	struct pt_run run;
	uint8_t *buf;
	/* behaviour */
	bool silent;                /* completes nothing: a dead or frozen peer */
	uint64_t silent_after;      /* completes nothing once this many CQEs were polled; 0: never */
	bool arrive;                /* a posted receive completes at once (a sender) */
	bool echo;                  /* each send brings the peer's answer */
	bool echo_write;            /* write_lat's peer: answers our count + 1 in our region */
	uint64_t echo_write_until;  /* with echo_write: answers this many writes only; 0: all */
	bool per_iteration;         /* latency: every WR is number 0 of its QP */
	bool imm_in;                /* the peer's messages carry immediate data */
	uint64_t fail_sig;          /* this signaled WR (1-based) fails; 0: none */
	uint64_t fail_post_from;    /* post calls from this one (1-based) fail, ENOMEM; 0: none */
	uint64_t interrupt_after;   /* SIGINT after this many polled CQEs; 0: never */
	unsigned empty_before;      /* polls that find nothing before each CQE (a slow link) */
	unsigned empty_left;        /* ... still due before the next one */
	uint64_t probes_after;      /* a tracer raises the post probe once this many CQEs
				     * were polled (USDT builds); 0: never */
	int closed, finished;       /* the peer watch's answers */
	/* what it saw */
	uint64_t sends, signaled, post_calls, recvs, polled, max_inflight;
	int poll_min[2], poll_max[2];
	uint64_t polls[2];          /* poll calls of the send [0] / recv [1] CQ */
	uint64_t polls_big[2];      /* ... that asked for more than PT_POLL_BATCH_MIN */
	uint64_t recv_calls;            /* ibv_post_recv / srq calls, and their chains */
	int chain_min, chain_max;   /* the batch asked of the send [0] / recv [1] CQ */
	uint64_t next_seq[NQP], retired[NQP];
	int failed_qp;              /* the failed WR's QP and sequence */
	uint64_t failed_seq;
	int closed_asked, finished_asked;
	/* post lists: WRs that reused the local address of an earlier WR of
	 * the same post call (upstream's bug: a whole list on one buffer) */
	uint64_t list_addr_reused;
	/* -e (fake_use_events) */
	bool events;
	bool late;                  /* every CQE comes only once its CQ is armed */
	bool arm_each;              /* a latency loop: only a CQ's first CQE may find it unarmed */
	struct ibv_comp_channel chan;   /* fd: the pipe's read end */
	int chan_wr;                /* its write end */
	uint64_t get_empty;         /* ibv_get_cq_event failed, not woken */
	uint64_t get_woken;         /* ibv_get_cq_event ended by the waker (EINTR) */
	uint64_t mute_after;        /* a CQ's CQEs past this many never come (no event); 0: all come */
};

/* Count the WRs of one post call whose local address an earlier one had. */
static inline void note_list_addrs(struct fake *f, const uint64_t *addrs, unsigned n)
{
	for (unsigned j = 1; j < n; j++)
		for (unsigned k = 0; k < j; k++)
			if (addrs[j] == addrs[k]) {
				f->list_addr_reused++;
				break;
			}
}

static inline struct fake *of(struct ibv_context *c) { return (struct fake *)c; }

static inline int qp_index(struct fake *f, const struct ibv_qp *qp)
{
	int i = (int)(qp - f->qp);

	assert_true(i >= 0 && i < f->res.num_qps);
	return i;
}

static inline struct fake_ring *ring_of(struct fake *f, const struct ibv_cq *cq)
{
	assert_true(cq == &f->send_cq || cq == &f->recv_cq);
	return cq == &f->send_cq ? &f->scq : &f->rcq;
}

/* A CQE came on an armed CQ: the CQ fires (disarmed) and its event, which
 * names the CQ (here by its address), goes into the channel. */
static inline void fake_fire(struct fake *f, struct fake_ring *r)
{
	struct ibv_cq *cq = r == &f->scq ? &f->send_cq : &f->recv_cq;

	r->ev.armed = false;
	r->ev.written++;
	assert_int_equal(write(f->chan_wr, &cq, sizeof(cq)), sizeof(cq));
}

/* -e: a CQE pushed onto an armed CQ comes later than its post, as on a
 * link: it fires the CQ and stays hidden until the loop takes the event.
 * One pushed onto an unarmed CQ came before the arming: visible at once,
 * unless it is behind hidden ones (a CQ is in order) or the fake is late
 * (then it comes at the next arming: fake_req_notify_cq). */
static inline void push(struct fake *f, struct fake_ring *r, struct ibv_wc wc)
{
	assert_true(r->tail - r->head < RING);
	r->wc[r->tail++ % RING] = wc;
	if (!f->events) {
		r->vis = r->tail;
		return;
	}
	if (f->mute_after && r->ev.cqes >= f->mute_after)
		return;   /* a link gone quiet: hidden for good, no event */
	r->ev.cqes++;
	if (r->ev.armed) {
		fake_fire(f, r);
		return;
	}
	/* a latency loop arms a CQ from one CQE's poll to the next CQE: one
	 * that forgot fails here, not after 100 ms sleeps for every CQE */
	assert_true(++r->ev.unarmed <= 1 || !f->arm_each);
	if (r->vis + 1 == r->tail && !f->late)
		r->vis = r->tail;
}

/* A message of the peer lands in the oldest posted receive of QP i, or
 * waits for the next one (RC's receiver-not-ready retry). */
static inline void deliver(struct fake *f, int i)
{
	if (f->rhead[i] == f->rtail[i]) {
		f->waiting[i]++;
		return;
	}
	push(f, &f->rcq, (struct ibv_wc){
		.wr_id = f->rfifo[i][f->rhead[i]++ % RING], .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV, .byte_len = (uint32_t)f->run.size, .qp_num = f->qp[i].qp_num,
		.wc_flags = f->imm_in ? IBV_WC_WITH_IMM : 0, .imm_data = 0,
	});
}

static inline bool atomic_op(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* One send WR as the NIC takes it: checked against the loops' rules. */
static inline void accept_wr(struct fake *f, int i, const struct fake_wr *w,
			     const struct pt_loop *l)
{
	const struct pt_qp *q = &f->qps[i];
	uint64_t seq = pt_wrid_index(w->wr_id), off = w->addr - (uint64_t)(uintptr_t)q->send_buf;
	bool sig = w->flags & IBV_SEND_SIGNALED;

	assert_int_equal(pt_wrid_qp(w->wr_id), i);
	assert_int_equal(seq, f->per_iteration ? 0 : f->next_seq[i]);
	f->next_seq[i] = seq + 1;
	/* the window: never more than tx_depth unretired WRs on a QP */
	assert_true(f->next_seq[i] - f->retired[i] <= (uint64_t)f->run.tx_depth);
	if (f->next_seq[i] - f->retired[i] > f->max_inflight)
		f->max_inflight = f->next_seq[i] - f->retired[i];
	assert_int_equal(w->op, l->opt.opcode);
	assert_int_equal(w->len, atomic_op(w->op) ? 8 : f->run.size);
	assert_true(off + w->len <= REGION);
	if (!(w->flags & IBV_SEND_INLINE))
		assert_int_equal(w->lkey, f->mr.lkey);
	/* the new API's payload: inline data exactly where the flag says so */
	if (w->setter)
		assert_int_equal(w->setter == FAKE_INLINE, !!(w->flags & IBV_SEND_INLINE));
	/* inline: SEND and WRITE (with or without immediate) up to the inline size */
	assert_int_equal(!!(w->flags & IBV_SEND_INLINE),
			 (w->op == IBV_WR_SEND || w->op == IBV_WR_SEND_WITH_IMM ||
			  w->op == IBV_WR_RDMA_WRITE || w->op == IBV_WR_RDMA_WRITE_WITH_IMM) &&
			 f->run.size <= (uint64_t)f->run.inline_size);
	/* the cycle buffer: a message up to half a page takes WR seq's slot,
	 * (seq mod slots) steps of the size rounded up to a cache line */
	if (!l->opt.lat && f->run.size <= (uint64_t)f->run.page_size / 2) {
		uint64_t line = (uint64_t)f->run.cache_line;
		uint64_t step = f->run.size ? (f->run.size + line - 1) / line * line : line;

		assert_int_equal(off, seq % ((uint64_t)f->run.page_size / step) * step);
	} else {
		assert_int_equal(off, 0);
	}
	/* cq_mod rule: every cq_mod-th WR and the run's last one */
	assert_int_equal(sig, (seq + 1) % (uint64_t)f->run.cq_mod == 0 ||
			      (!f->per_iteration && seq + 1 == l->opt.iters) || f->per_iteration);
	if (w->op != IBV_WR_SEND && w->op != IBV_WR_SEND_WITH_IMM) { /* the peer's region, cycled */
		assert_int_equal(w->raddr, q->remote_addr + off);
		assert_int_equal(w->rkey, q->remote_rkey);
	}
	if (l->opt.ud)
		assert_ptr_equal(w->ah, q->ah);
	f->sends++;
	if (sig) {
		bool fail = ++f->signaled == f->fail_sig;

		if (fail) {
			f->failed_qp = i;
			f->failed_seq = seq;
		}
		push(f, &f->scq, (struct ibv_wc){
			.wr_id = w->wr_id, .qp_num = f->qp[i].qp_num, .byte_len = w->len,
			.status = fail ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS,
		});
	}
	if (f->echo)
		deliver(f, i);
	if (f->echo_write && w->op == IBV_WR_RDMA_WRITE &&
	    (!f->echo_write_until || f->sends <= f->echo_write_until)) {
		uint8_t count = *(const uint8_t *)(uintptr_t)(w->addr + w->len - 1);

		assert_int_equal(count, (uint8_t)f->sends);   /* iteration i writes i + 1 */
		q->recv_buf[f->run.size - 1] = (uint8_t)(count + 1);
	}
}

static const struct pt_loop *cur_loop;   /* the view under test, for the checks */

static inline int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
				 struct ibv_send_wr **bad)
{
	struct fake *f = of(qp->context);
	int i = qp_index(f, qp);

	uint64_t addrs[64];
	unsigned n = 0;

	(void)bad;
	f->post_calls++;
	if (f->fail_post_from && f->post_calls >= f->fail_post_from)
		return ENOMEM;
	for (; wr; wr = wr->next) {
		if (n < 64)
			addrs[n++] = wr->sg_list[0].addr;
		struct fake_wr w = {
			.wr_id = wr->wr_id, .op = wr->opcode, .flags = wr->send_flags,
			.addr = wr->sg_list[0].addr, .len = wr->sg_list[0].length,
			.lkey = wr->sg_list[0].lkey, .ah = wr->wr.ud.ah,
		};

		assert_int_equal(wr->num_sge, 1);
		assert_int_equal(wr->imm_data, 0);
		if (atomic_op(wr->opcode)) {
			w.raddr = wr->wr.atomic.remote_addr;
			w.rkey = wr->wr.atomic.rkey;
			/* fetch-and-add adds 1; compare-and-swap compares 0, swaps 0 */
			assert_int_equal(wr->wr.atomic.compare_add,
					 wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0);
			assert_int_equal(wr->wr.atomic.swap, 0);
		} else if (!cur_loop->opt.ud) {
			w.raddr = wr->wr.rdma.remote_addr;
			w.rkey = wr->wr.rdma.rkey;
		}
		accept_wr(f, i, &w, cur_loop);
	}
	note_list_addrs(f, addrs, n);
	return 0;
}

static inline int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
				 struct ibv_recv_wr **bad)
{
	struct fake *f = of(qp->context);
	int i = qp_index(f, qp);
	size_t grh = cur_loop->opt.ud ? PT_UD_GRH : 0;
	uint64_t base = (uint64_t)(uintptr_t)f->qps[i].recv_buf;

	int chain = 0;

	(void)bad;
	for (struct ibv_recv_wr *w = wr; w; w = w->next)
		chain++;
	f->recv_calls++;
	if (!f->chain_min || chain < f->chain_min)
		f->chain_min = chain;
	if (chain > f->chain_max)
		f->chain_max = chain;
	for (; wr; wr = wr->next) {
		assert_int_equal(pt_wrid_qp(wr->wr_id), i);
		assert_int_equal(wr->sg_list[0].length, f->run.size + grh);
		assert_int_equal(wr->sg_list[0].lkey, f->mr.lkey);
		/* UD: the payload after the GRH starts on a cache line */
		if (grh)
			assert_int_equal(wr->sg_list[0].addr + grh, base + (uint64_t)f->run.cache_line);
		assert_true(f->rtail[i] - f->rhead[i] < RING);
		f->rfifo[i][f->rtail[i]++ % RING] = wr->wr_id;
		if (f->rtail[i] - f->rhead[i] > f->rdepth_max[i])
			f->rdepth_max[i] = f->rtail[i] - f->rhead[i];
		f->recvs++;
		if (f->waiting[i]) {
			f->waiting[i]--;
			deliver(f, i);
		} else if (f->arrive) {
			deliver(f, i);
		}
	}
	return 0;
}

/* An SRQ receive: wr_id names the QP whose share it is; the fake keeps
 * one FIFO per QP, so it lands there as a QP receive would. */
static inline int fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
				     struct ibv_recv_wr **bad)
{
	struct fake *f = of(srq->context);

	assert_ptr_equal(srq, &f->srq);
	for (struct ibv_recv_wr *w = wr; w; w = w->next)
		f->srq_recvs++;
	/* a chain (--recv_post_list) is one QP's share */
	return fake_post_recv(&f->qp[pt_wrid_qp(wr->wr_id)], wr, bad);
}

static inline int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fake *f = of(cq->context);
	struct fake_ring *r = cq == &f->send_cq ? &f->scq : &f->rcq;
	int k = 0;

	int side = r == &f->rcq;

	f->polls[side]++;
	f->polls_big[side] += n > (int)PT_POLL_BATCH_MIN;
	if (!f->poll_max[side] || n < f->poll_min[side])
		f->poll_min[side] = n;
	if (n > f->poll_max[side])
		f->poll_max[side] = n;
	if (r->head == r->vis && r->vis != r->tail)
		r->ev.hidden_polls++;
	if (f->silent || (f->silent_after && f->polled >= f->silent_after))
		return 0;
	if (r->head != r->vis && f->empty_left) {
		f->empty_left--;
		return 0;
	}
	for (; k < n && r->head != r->vis; k++) {
		wc[k] = r->wc[r->head++ % RING];
		if (r == &f->scq && wc[k].status == IBV_WC_SUCCESS && !f->per_iteration)
			f->retired[pt_wrid_qp(wc[k].wr_id)] = pt_wrid_index(wc[k].wr_id) + 1;
	}
	f->polled += (uint64_t)k;
	if (k)
		f->empty_left = f->empty_before;
	if (f->interrupt_after && f->polled >= f->interrupt_after && !pt_interrupted)
		pt_interrupt(SIGINT);   /* what the tools' handler does */
#if PT_PROBES
	if (f->probes_after && f->polled >= f->probes_after)
		pt_probe_wr_semaphores.one[0] = 1;   /* what the kernel does on attach */
#endif
	return k;
}

/* The ibv_wr_* path: builders open a WR, setters fill it, complete hands
 * them all to the NIC. */
static inline struct fake_qpx *X(struct ibv_qp_ex *qx) { return (struct fake_qpx *)qx; }
static inline struct fake_wr *last(struct ibv_qp_ex *qx) { return &X(qx)->wr[X(qx)->n - 1]; }
static inline void x_open(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey,
			  uint64_t raddr)
{
	assert_true(X(qx)->n < 64);
	X(qx)->wr[X(qx)->n++] = (struct fake_wr){ .wr_id = qx->wr_id, .flags = qx->wr_flags,
						  .op = op, .rkey = rkey, .raddr = raddr };
}
static inline void x_start(struct ibv_qp_ex *qx) { X(qx)->n = 0; }
static inline void x_send(struct ibv_qp_ex *qx) { x_open(qx, IBV_WR_SEND, 0, 0); }
static inline void x_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	assert_int_equal(imm, 0);
	x_open(qx, IBV_WR_SEND_WITH_IMM, 0, 0);
}
static inline void x_write_imm(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, __be32 imm)
{
	assert_int_equal(imm, 0);
	x_open(qx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr);
}
static inline void x_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	x_open(qx, IBV_WR_RDMA_WRITE, rkey, raddr);
}
static inline void x_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	x_open(qx, IBV_WR_RDMA_READ, rkey, raddr);
}
static inline void x_fadd(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	assert_int_equal(add, 1);
	x_open(qx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr);
}
static inline void x_cswp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t compare,
			  uint64_t swap)
{
	assert_int_equal(compare, 0);   /* as the old API's WR (above) */
	assert_int_equal(swap, 0);
	x_open(qx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, raddr);
}
static inline void x_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	last(qx)->lkey = lkey;
	last(qx)->addr = addr;
	last(qx)->len = len;
	last(qx)->setter = FAKE_SGE;
}
static inline void x_inline(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	last(qx)->addr = (uint64_t)(uintptr_t)addr;
	last(qx)->len = (uint32_t)len;
	last(qx)->setter = FAKE_INLINE;
}
static inline void x_ud(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)qpn;
	(void)qkey;
	last(qx)->ah = ah;
}
static inline int x_complete(struct ibv_qp_ex *qx)
{
	struct fake *f = of(qx->qp_base.context);
	int i = (int)(X(qx) - f->qpx);

	uint64_t addrs[64];

	f->post_calls++;
	if (f->fail_post_from && f->post_calls >= f->fail_post_from)
		return ENOMEM;
	for (unsigned j = 0; j < X(qx)->n; j++) {
		accept_wr(f, i, &X(qx)->wr[j], cur_loop);
		addrs[j] = X(qx)->wr[j].addr;
	}
	note_list_addrs(f, addrs, X(qx)->n);
	return 0;
}

static inline int watch_closed(void *arg)
{
	struct fake *f = arg;

	f->closed_asked++;
	return f->closed;
}

static inline int watch_finished(void *arg)
{
	struct fake *f = arg;

	f->finished_asked++;
	return f->finished;
}

/* A fake device with nqp QPs and the view over it: 64-byte messages,
 * window 32, a signaled WR every 8th, the old post API unless qpx. */
static inline struct fake *fake_new(struct pt_loop *l, int nqp, enum ibv_wr_opcode op,
				    uint64_t iters, bool qpx)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = calloc(2 * NQP, REGION);
	assert_non_null(f->buf);
	f->ctx.ops.post_send = fake_post_send;
	f->ctx.ops.post_recv = fake_post_recv;
	f->ctx.ops.poll_cq = fake_poll_cq;
	f->ctx.ops.post_srq_recv = fake_post_srq_recv;
	f->srq.context = &f->ctx;
	f->send_cq.context = f->recv_cq.context = &f->ctx;
	f->mr.lkey = 0x1234;
	f->run = (struct pt_run){ .page_size = 4096, .cache_line = 64, .size = 64, .max_size = 64,
				  .tx_depth = 32, .rx_depth = 64, .cq_mod = 8, .inline_size = 0 };
	for (int i = 0; i < nqp; i++) {
		struct ibv_qp_ex *x = &f->qpx[i].ex;

		f->qp[i].context = &f->ctx;
		f->qp[i].qp_num = 0x100u + (uint32_t)i;
		x->qp_base.context = &f->ctx;
		x->wr_start = x_start;
		x->wr_send = x_send;
		x->wr_send_imm = x_send_imm;
		x->wr_rdma_write_imm = x_write_imm;
		x->wr_rdma_write = x_write;
		x->wr_rdma_read = x_read;
		x->wr_atomic_fetch_add = x_fadd;
		x->wr_atomic_cmp_swp = x_cswp;
		x->wr_set_sge = x_sge;
		x->wr_set_inline_data = x_inline;
		x->wr_set_ud_addr = x_ud;
		x->wr_complete = x_complete;
		f->qps[i] = (struct pt_qp){
			.qp = &f->qp[i], .qpx = qpx ? x : NULL, .ah = &f->ah,
			.remote_qpn = 0x200u + (uint32_t)i, .remote_qkey = 0x11111111u,
			.remote_addr = 0x7000000ull * (uint64_t)(i + 1), .remote_rkey = 0x900u + (uint32_t)i,
			.send_buf = f->buf + 2 * (size_t)i * REGION,
			.recv_buf = f->buf + (2 * (size_t)i + 1) * REGION,
		};
	}
	f->res = (struct pt_res){ .buf = f->buf, .region = REGION, .mr = &f->mr,
				  .send_cq = &f->send_cq, .recv_cq = &f->recv_cq,
				  .num_qps = nqp, .qps = f->qps };
	*l = (struct pt_loop){
		.res = &f->res, .run = &f->run,
		.opt = { .iters = iters, .post_list = 1, .duration_s = 5, .stall_ns = 5000000000ull,
			 .peak = true, .is_client = true, .opcode = op },
		.peer = { .closed = watch_closed, .finished = watch_finished, .arg = f },
	};
	cur_loop = l;
	pt_interrupted = 0;
	return f;
}

/* A latency client's fake, as the latency tools run: one QP, every WR
 * number 0 of its iteration, one WR in flight (tx_depth 1). */
static inline struct fake *fake_new_lat(struct pt_loop *l, enum ibv_wr_opcode op, uint64_t iters,
					bool qpx)
{
	struct fake *f = fake_new(l, 1, op, iters, qpx);

	l->opt.lat = true;
	f->per_iteration = true;
	f->run.tx_depth = 1;
	return f;
}

/* ibv_req_notify_cq: the CQ armed; CQEs that have not come yet and that
 * no event already covers (a late fake's) come now, after the arming. */
static inline int fake_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	struct fake *f = of(cq->context);
	struct fake_ring *r = ring_of(f, cq);

	assert_true(f->events);
	assert_int_equal(solicited_only, 0);
	r->ev.arms++;
	if (r->vis != r->tail && r->ev.written == r->ev.taken)
		fake_fire(f, r);
	else
		r->ev.armed = true;
	return 0;
}

/* libibverbs' own reads the event through the provider's private ops,
 * which the fake has not: this one reads the pipe, blocking as a real
 * channel's read (the waker's signal ends it: EINTR, counted in
 * get_woken; any other failure in get_empty), and the CQ's CQEs that had
 * not come are there now. */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct fake *f = of(channel->context);
	struct ibv_cq *ev;
	struct fake_ring *r;

	assert_ptr_equal(channel, &f->chan);
	if (read(channel->fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev)) {
		if (errno == EINTR)
			f->get_woken++;
		else
			f->get_empty++;
		return -1;
	}
	r = ring_of(f, ev);
	r->ev.taken++;
	r->vis = r->tail;
	*cq = ev;
	*cq_context = ev->cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct fake_ring *r = ring_of(of(cq->context), cq);

	r->ev.acked += nevents;
	r->ev.ack_calls++;
	assert_true(r->ev.acked <= r->ev.taken);   /* never one not taken */
}

/* -e: the completion channel over a pipe, the CQs on it, req_notify_cq.
 * late: every CQE comes only after its CQ is armed (else only those pushed
 * while it is armed come late). A BW loop needs it to wait at all: it arms
 * only once a poll found nothing, which on a fake whose CQEs are there at
 * once never happens; and a loop that waits without arming waits for ever. */
static inline void fake_use_events(struct fake *f, bool late)
{
	int fd[2];

	assert_int_equal(pipe(fd), 0);
	/* the read end blocks, as a channel's; the waker ends its sleeps */
	assert_int_equal(fcntl(fd[1], F_SETFL, O_NONBLOCK), 0);
	f->chan = (struct ibv_comp_channel){ .context = &f->ctx, .fd = fd[0], .refcnt = 2 };
	f->chan_wr = fd[1];
	f->events = true;
	f->late = late;
	f->ctx.ops.req_notify_cq = fake_req_notify_cq;
	f->send_cq.channel = f->recv_cq.channel = &f->chan;
	f->res.channel = &f->chan;
	assert_int_equal(pt_chan_waker_start(&f->res.waker), 0);
}

static inline void fake_free(struct fake *f)
{
	if (f->events) {
		pt_chan_waker_stop(&f->res.waker);
		close(f->chan.fd);
		close(f->chan_wr);
	}
	pt_interrupted = 0;
	free(f->buf);
	free(f);
}

/* stderr into a file while fn runs on the view l; the text comes back in out. */
static inline int with_stderr(char *out, size_t len, int (*fn)(const struct pt_loop *, void *),
		       const struct pt_loop *l, void *m)
{
	struct stderr_capture cap;
	int rc;

	stderr_capture_begin(&cap);
	rc = fn(l, m);
	stderr_capture_end(&cap, out, len);
	return rc;
}

#endif
