/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW and latency loops and the post path driven through their narrow
 * view (struct pt_loop, perftest/engine/loop.h) over a fake device: verbs
 * objects whose context ops (post_send, post_recv, poll_cq) and ibv_qp_ex
 * builders are this file's functions, as a provider's are. No device, no
 * struct pt_ctx, no options struct: PT_LOOP_VIEW_ONLY makes including the
 * context's header an error. The fake checks every WR against the rules the
 * loops promise (numbering, window, signaling, targets) as it comes. */
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
#include "plugin/hooks/hooks.h"

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
};

struct fake_ring {
	struct ibv_wc wc[RING];
	unsigned head, tail;
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
	struct fake_ring scq, rcq;
	uint64_t rfifo[NQP][RING];  /* posted receives' wr_ids */
	unsigned rhead[NQP], rtail[NQP];
	struct pt_qp qps[NQP];
	struct pt_res res;
	struct pt_run run;
	uint8_t *buf;
	/* behaviour */
	bool silent;                /* completes nothing: a dead or frozen peer */
	bool arrive;                /* a posted receive completes at once (a sender) */
	bool echo;                  /* each send brings the peer's answer */
	bool per_iteration;         /* latency: every WR is number 0 of its QP */
	uint64_t fail_sig;          /* this signaled WR (1-based) fails; 0: none */
	uint64_t interrupt_after;   /* SIGINT after this many polled CQEs; 0: never */
	int closed, finished;       /* the peer watch's answers */
	/* what it saw */
	uint64_t sends, signaled, post_calls, recvs, polled, max_inflight;
	uint64_t next_seq[NQP], retired[NQP];
	int failed_qp;              /* the failed WR's QP and sequence */
	uint64_t failed_seq;
	int closed_asked, finished_asked;
};

static struct fake *of(struct ibv_context *c) { return (struct fake *)c; }

static int qp_index(struct fake *f, const struct ibv_qp *qp)
{
	int i = (int)(qp - f->qp);

	assert_true(i >= 0 && i < f->res.num_qps);
	return i;
}

static void push(struct fake_ring *r, struct ibv_wc wc)
{
	assert_true(r->tail - r->head < RING);
	r->wc[r->tail++ % RING] = wc;
}

/* A message of the peer lands in the oldest posted receive of QP i. */
static void deliver(struct fake *f, int i)
{
	if (f->rhead[i] == f->rtail[i])
		return;
	push(&f->rcq, (struct ibv_wc){
		.wr_id = f->rfifo[i][f->rhead[i]++ % RING], .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV, .byte_len = (uint32_t)f->run.size, .qp_num = f->qp[i].qp_num,
	});
}

static bool atomic_op(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* One send WR as the NIC takes it: checked against the loops' rules. */
static void accept_wr(struct fake *f, int i, const struct fake_wr *w, const struct pt_loop *l)
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
	/* cq_mod rule: every cq_mod-th WR and the run's last one */
	assert_int_equal(sig, (seq + 1) % (uint64_t)f->run.cq_mod == 0 ||
			      (!f->per_iteration && seq + 1 == l->opt.iters) || f->per_iteration);
	if (w->op != IBV_WR_SEND) {  /* the peer's region, cycled like ours */
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
		push(&f->scq, (struct ibv_wc){
			.wr_id = w->wr_id, .qp_num = f->qp[i].qp_num, .byte_len = w->len,
			.status = fail ? IBV_WC_RETRY_EXC_ERR : IBV_WC_SUCCESS,
		});
	}
	if (f->echo)
		deliver(f, i);
}

static const struct pt_loop *cur_loop;   /* the view under test, for the checks */

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fake *f = of(qp->context);
	int i = qp_index(f, qp);

	(void)bad;
	f->post_calls++;
	for (; wr; wr = wr->next) {
		struct fake_wr w = {
			.wr_id = wr->wr_id, .op = wr->opcode, .flags = wr->send_flags,
			.addr = wr->sg_list[0].addr, .len = wr->sg_list[0].length,
			.lkey = wr->sg_list[0].lkey, .ah = wr->wr.ud.ah,
		};

		assert_int_equal(wr->num_sge, 1);
		if (atomic_op(wr->opcode)) {
			w.raddr = wr->wr.atomic.remote_addr;
			w.rkey = wr->wr.atomic.rkey;
		} else if (!cur_loop->opt.ud) {
			w.raddr = wr->wr.rdma.remote_addr;
			w.rkey = wr->wr.rdma.rkey;
		}
		accept_wr(f, i, &w, cur_loop);
	}
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fake *f = of(qp->context);
	int i = qp_index(f, qp);
	size_t grh = cur_loop->opt.ud ? PT_UD_GRH : 0;
	uint64_t base = (uint64_t)(uintptr_t)f->qps[i].recv_buf;

	(void)bad;
	for (; wr; wr = wr->next) {
		assert_int_equal(pt_wrid_qp(wr->wr_id), i);
		assert_int_equal(wr->sg_list[0].length, f->run.size + grh);
		assert_int_equal(wr->sg_list[0].lkey, f->mr.lkey);
		/* UD: the payload after the GRH starts on a cache line */
		if (grh)
			assert_int_equal(wr->sg_list[0].addr + grh, base + (uint64_t)f->run.cache_line);
		assert_true(f->rtail[i] - f->rhead[i] < RING);
		f->rfifo[i][f->rtail[i]++ % RING] = wr->wr_id;
		f->recvs++;
		if (f->arrive)
			deliver(f, i);
	}
	return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fake *f = of(cq->context);
	struct fake_ring *r = cq == &f->send_cq ? &f->scq : &f->rcq;
	int k = 0;

	if (f->silent)
		return 0;
	for (; k < n && r->head != r->tail; k++) {
		wc[k] = r->wc[r->head++ % RING];
		if (r == &f->scq && wc[k].status == IBV_WC_SUCCESS && !f->per_iteration)
			f->retired[pt_wrid_qp(wc[k].wr_id)] = pt_wrid_index(wc[k].wr_id) + 1;
	}
	f->polled += (uint64_t)k;
	if (f->interrupt_after && f->polled >= f->interrupt_after)
		pt_interrupted = SIGINT;
	return k;
}

/* The ibv_wr_* path: builders open a WR, setters fill it, complete hands
 * them all to the NIC. */
static struct fake_qpx *X(struct ibv_qp_ex *qx) { return (struct fake_qpx *)qx; }
static struct fake_wr *last(struct ibv_qp_ex *qx) { return &X(qx)->wr[X(qx)->n - 1]; }
static void x_open(struct ibv_qp_ex *qx, enum ibv_wr_opcode op, uint32_t rkey, uint64_t raddr)
{
	assert_true(X(qx)->n < 64);
	X(qx)->wr[X(qx)->n++] = (struct fake_wr){ .wr_id = qx->wr_id, .flags = qx->wr_flags,
						  .op = op, .rkey = rkey, .raddr = raddr };
}
static void x_start(struct ibv_qp_ex *qx) { X(qx)->n = 0; }
static void x_send(struct ibv_qp_ex *qx) { x_open(qx, IBV_WR_SEND, 0, 0); }
static void x_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	x_open(qx, IBV_WR_RDMA_WRITE, rkey, raddr);
}
static void x_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	x_open(qx, IBV_WR_RDMA_READ, rkey, raddr);
}
static void x_fadd(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	(void)add;
	x_open(qx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, raddr);
}
static void x_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	last(qx)->lkey = lkey;
	last(qx)->addr = addr;
	last(qx)->len = len;
}
static void x_inline(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	last(qx)->addr = (uint64_t)(uintptr_t)addr;
	last(qx)->len = (uint32_t)len;
}
static void x_ud(struct ibv_qp_ex *qx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	(void)qpn;
	(void)qkey;
	last(qx)->ah = ah;
}
static int x_complete(struct ibv_qp_ex *qx)
{
	struct fake *f = of(qx->qp_base.context);
	int i = (int)(X(qx) - f->qpx);

	f->post_calls++;
	for (unsigned j = 0; j < X(qx)->n; j++)
		accept_wr(f, i, &X(qx)->wr[j], cur_loop);
	return 0;
}

static int watch_closed(void *arg)
{
	struct fake *f = arg;

	f->closed_asked++;
	return f->closed;
}

static int watch_finished(void *arg)
{
	struct fake *f = arg;

	f->finished_asked++;
	return f->finished;
}

/* A fake device with nqp QPs and the view over it: 64-byte messages,
 * window 32, a signaled WR every 8th, the old post API unless qpx. */
static struct fake *fake_new(struct pt_loop *l, int nqp, enum ibv_wr_opcode op, uint64_t iters,
			     bool qpx)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->buf = calloc(2 * NQP, REGION);
	assert_non_null(f->buf);
	f->ctx.ops.post_send = fake_post_send;
	f->ctx.ops.post_recv = fake_post_recv;
	f->ctx.ops.poll_cq = fake_poll_cq;
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
		x->wr_rdma_write = x_write;
		x->wr_rdma_read = x_read;
		x->wr_atomic_fetch_add = x_fadd;
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

static void fake_free(struct fake *f)
{
	pt_interrupted = 0;
	free(f->buf);
	free(f);
}

/* Signaled WRs of a run of iters on one QP: every cq_mod-th and the last. */
static uint64_t signaled_per_qp(uint64_t iters, uint64_t cq_mod)
{
	return iters / cq_mod + (iters % cq_mod != 0);
}

/* stderr into a file while fn runs; the text comes back in out. */
static int with_stderr(char *out, size_t len, int (*fn)(const struct pt_loop *, void *),
		       const struct pt_loop *l, void *m)
{
	FILE *tmp = tmpfile();
	int saved = dup(2), rc;
	size_t n;

	assert_non_null(tmp);
	fflush(stderr);
	assert_true(dup2(fileno(tmp), 2) >= 0);
	rc = fn(l, m);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
	return rc;
}

static int bw_send(const struct pt_loop *l, void *m) { return pt_run_bw_send(l, m); }
static int lat_read(const struct pt_loop *l, void *m) { return pt_run_lat_read(l, m); }

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
	/* peak: a post and a completion time per message, in order */
	assert_non_null(m.tposted);
	assert_non_null(m.tcompleted);
	assert_true(m.tcompleted[want - 1] >= m.tposted[0]);
	assert_int_equal(m.elapsed_ns, m.tcompleted[want - 1] - m.tposted[0]);
	pt_bw_meas_free(&m);
	fake_free(f);
}

static void test_bw_send_old_api(void **state)
{
	(void)state;
	check_bw_send(IBV_WR_SEND, false, 1);
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

	p->rows++;
	p->msgs = msgs;
	p->ns = ns;
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
	assert_int_equal(seen.rows, 1);
	assert_true(seen.msgs > 0);
	assert_true(seen.ns >= 1000000000ull);
	assert_true(f->finished_asked >= 1);
	assert_null(m.tposted);
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

/* send_lat's client: ping, wait for the send, wait for the pong; every
 * iteration stamped in order; one receive reposted per pong. */
static void test_lat_send_pingpong(void **state)
{
	struct pt_loop l;
	struct pt_lat_meas m;
	const uint64_t iters = 200;
	struct fake *f = fake_new(&l, 1, IBV_WR_SEND, iters, false);

	(void)state;
	l.opt.lat = true;
	f->echo = true;
	f->per_iteration = true;
	f->run.tx_depth = 1;
	assert_int_equal(pt_post_recv(&l, 0, 4), 0);
	assert_int_equal(pt_run_lat_send(&l, &m), 0);
	assert_int_equal(m.n, iters);
	assert_int_equal(f->sends, iters);
	assert_int_equal(f->qps[0].recv_posted, iters);
	assert_int_equal(f->rhead[0], iters);           /* every pong consumed */
	assert_non_null(m.stamps);
	for (uint64_t i = 1; i < iters; i++)
		assert_true(m.stamps[i] >= m.stamps[i - 1]);
	pt_lat_meas_free(&m);
	fake_free(f);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_send_old_api),
		cmocka_unit_test(test_bw_write_post_list),
		cmocka_unit_test(test_bw_send_wr_api),
		cmocka_unit_test(test_bw_send_wc_error),
		cmocka_unit_test(test_bw_send_peer_gone),
		cmocka_unit_test(test_bw_send_stall),
		cmocka_unit_test(test_bw_send_interrupted),
		cmocka_unit_test(test_bw_send_period_row),
		cmocka_unit_test(test_bw_recv_ud),
		cmocka_unit_test(test_lat_send_pingpong),
		cmocka_unit_test(test_lat_read_error),
		cmocka_unit_test(test_bw_send_hooks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
