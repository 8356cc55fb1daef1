/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode without a device: a mock verbs context (ctx->ops,
 * verbs_context create_qp_ex, an ibv_qp_ex with mock builders) driven
 * through libibverbs' own inline ibv_post_send / ibv_wr_* / ibv_poll_cq,
 * exactly as an unmodified program calls them. Checks the patching, the
 * re-wrap after the provider resets wr_complete, and the rows recorded.
 * Then hardware CQE timestamps (preload_cq.c) over a mock device that
 * stamps CQEs: query_device_ex, query_rt_values (a NIC clock at 500 MHz),
 * create_cq_ex making mock ex-CQs (mock_cqx.h), and a mock "real"
 * ibv_create_cq for the symbol the interposer hooks. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/clock.h"
#include "mock_cqx.h"
#include "plugin/preload/preload.h"

static struct verbs_context vctx;
static struct ibv_device dev;
static struct { struct ibv_qp_ex qpx; } mqp; /* qp_base is the first member */
static struct ibv_wc queued[64];
static int nqueued, completes, completes_v2, builders;
static int fail_complete;

static int m_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)qp; (void)wr; (void)bad;
	return 0;
}
static int m_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp; (void)wr; (void)bad;
	return 0;
}
static int m_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	int k = n < nqueued ? n : nqueued;

	(void)cq;
	memcpy(wc, queued, (size_t)k * sizeof(*wc));
	memmove(queued, queued + k, (size_t)(nqueued - k) * sizeof(*wc));
	nqueued -= k;
	return k;
}
static void m_wr_start(struct ibv_qp_ex *q) { (void)q; }
static void m_wr_send(struct ibv_qp_ex *q) { (void)q; builders++; }
static void m_wr_set_sge(struct ibv_qp_ex *q, uint32_t l, uint64_t a, uint32_t n) { (void)q; (void)l; (void)a; (void)n; }
static void m_wr_abort(struct ibv_qp_ex *q) { (void)q; }
static int m_wr_complete(struct ibv_qp_ex *q) { (void)q; completes++; return fail_complete; }
static int m_wr_complete_v2(struct ibv_qp_ex *q) { (void)q; completes_v2++; return fail_complete; }
static struct ibv_qp *m_create_qp_ex(struct ibv_context *c, struct ibv_qp_init_attr_ex *a)
{
	mqp.qpx.qp_base.context = c;
	mqp.qpx.qp_base.qp_num = 0x42;
	mqp.qpx.qp_base.qp_type = a->qp_type;
	mqp.qpx.wr_start = m_wr_start;
	mqp.qpx.wr_send = m_wr_send;
	mqp.qpx.wr_set_sge = m_wr_set_sge;
	mqp.qpx.wr_complete = m_wr_complete;
	mqp.qpx.wr_abort = m_wr_abort;
	return &mqp.qpx.qp_base;
}

static void cqe(uint64_t wr_id, uint32_t qpn, enum ibv_wc_opcode op, uint32_t len)
{
	queued[nqueued++] = (struct ibv_wc){ .wr_id = wr_id, .qp_num = qpn, .opcode = op,
					     .byte_len = len, .status = IBV_WC_SUCCESS };
}

static void post_new_api(struct ibv_qp_ex *q, uint64_t id, bool sig)
{
	ibv_wr_start(q);
	q->wr_id = id;
	q->wr_flags = sig ? IBV_SEND_SIGNALED : 0;
	ibv_wr_send(q);
	ibv_wr_set_sge(q, 1, 0x1000, 100);
}

static void temp_file(char *path_template)
{
	int fd = mkstemp(path_template);

	assert_true(fd >= 0);
	close(fd);
}

/* The mock context as a provider leaves it after open: ctx->ops and create_qp_ex. */
static struct ibv_context *mock_ctx(const char *name)
{
	struct ibv_context *ctx = &vctx.context;

	strcpy(dev.name, name);
	vctx.sz = sizeof(vctx);
	vctx.create_qp_ex = m_create_qp_ex;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->device = &dev;
	ctx->ops.post_send = m_post_send;
	ctx->ops.post_recv = m_post_recv;
	ctx->ops.poll_cq = m_poll_cq;
	return ctx;
}

static void test_mock_context(void **unused)
{
	char path[] = "/tmp/test_preload.XXXXXX", spec[64];
	struct ibv_context *ctx = mock_ctx("mock0");
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .cap = { 128, 512, 1, 1, 0 } };
	struct ibv_send_wr old[5], *bad;
	struct ibv_recv_wr rw[2], *rbad;
	struct ibv_sge sge = { .length = 64 };
	struct ibv_cq cq = { .context = ctx };
	struct ibv_wc wc[16];
	struct ibv_qp *qp;
	struct ibv_qp_ex *q;
	const struct wrt_rec *r;
	const struct wrt_meta *m;
	uint64_t n, own = 0, sends = 0, recvs = 0;

	(void)unused;
	temp_file(path);
	snprintf(spec, sizeof(spec), "%s:quiet", path);
	assert_int_equal(wrp_setup(spec), 0);
	assert_int_equal(wrp_attach_context(ctx), 0);
	assert_ptr_not_equal(ctx->ops.post_send, m_post_send);
	assert_ptr_not_equal(vctx.create_qp_ex, m_create_qp_ex);
	qp = ibv_create_qp_ex(ctx, &qa); /* inline: through the patched create_qp_ex */
	assert_non_null(qp);
	assert_true(wrp.run_on);
	q = (struct ibv_qp_ex *)qp;
	wrp_wrap_qpx(&wrp.slots[0], q);
	assert_ptr_not_equal(q->wr_complete, m_wr_complete);
	/* the provider resets wr_complete on modify to RTS; the hook wraps again */
	q->wr_complete = m_wr_complete_v2;
	wrp_wrap_qpx(&wrp.slots[0], q);
	assert_ptr_not_equal(q->wr_complete, m_wr_complete_v2);

	/* new API: 10 WRs, every 5th signaled; one aborted, one failed batch */
	for (int i = 0; i < 10; i++) {
		post_new_api(q, (uint64_t)i, i % 5 == 4);
		assert_int_equal(ibv_wr_complete(q), 0);
	}
	post_new_api(q, 100, true);
	ibv_wr_abort(q);
	fail_complete = 1;
	post_new_api(q, 101, true);
	assert_int_not_equal(ibv_wr_complete(q), 0);
	fail_complete = 0;
	assert_int_equal(completes_v2, 11);
	assert_int_equal(completes, 0);
	assert_int_equal(builders, 12);
	/* old API: a list of 5, only the last signaled */
	for (int i = 0; i < 5; i++)
		old[i] = (struct ibv_send_wr){ .wr_id = 10 + (uint64_t)i, .next = i < 4 ? &old[i + 1] : NULL,
					       .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					       .send_flags = i == 4 ? IBV_SEND_SIGNALED : 0 };
	assert_int_equal(ibv_post_send(qp, old, &bad), 0);
	for (int i = 0; i < 2; i++)
		rw[i] = (struct ibv_recv_wr){ .wr_id = 50 + (uint64_t)i, .next = i ? NULL : &rw[1],
					      .sg_list = &sge, .num_sge = 1 };
	assert_int_equal(ibv_post_recv(qp, rw, &rbad), 0);

	cqe(4, 0x42, IBV_WC_SEND, 100);
	cqe(9, 0x42, IBV_WC_SEND, 100);
	cqe(50, 0x42, IBV_WC_RECV, 60);
	cqe(14, 0x42, IBV_WC_SEND, 64);
	cqe(51, 0x42, IBV_WC_RECV, 61);
	cqe(7, 0x999, IBV_WC_SEND, 1); /* a QP we never saw */
	assert_int_equal(ibv_poll_cq(&cq, 16, wc), 6);

	wrp_run_finish();
	m = wrt_meta(wrp.w);
	r = wrt_records(wrp.w, &n);
	assert_int_equal(n, 17);
	for (uint64_t i = 0; i < n; i++) {
		assert_true(r[i].flags & WRT_DONE);
		assert_true(r[i].flags & WRT_POSTED);
		assert_true(r[i].t_comp >= r[i].t_post);
		own += !!(r[i].flags & WRT_CQE);
		if (r[i].flags & WRT_RECV)
			recvs++;
		else
			sends++;
		assert_int_not_equal(r[i].wr_id, 100); /* aborted */
		assert_int_not_equal(r[i].wr_id, 101); /* failed wr_complete */
	}
	assert_int_equal(sends, 15);
	assert_int_equal(recvs, 2);
	assert_int_equal(own, 5);       /* 3 send CQEs + 2 receives; 12 sends retired FIFO-wise */
	assert_int_equal(m->unmatched, 1);
	assert_int_equal(m->untracked, 0);
	assert_int_equal(m->incomplete, 0);
	assert_int_equal(m->role, PT_PLUGIN_ROLE_CLIENT);
	assert_int_equal(m->msg_size, 100);
	assert_int_equal(m->num_qps, 1);
	assert_string_equal(m->qpns, "0x42");
	assert_string_equal(m->device, "mock0");

	wrp_detach_context(ctx);
	wrp_teardown();
	unlink(path);
}

/* --------------------------------------------- hardware CQE timestamps -- */

#define NIC_OFFSET 777000000000ull  /* NIC ns = CLOCK_MONOTONIC_RAW ns + this */
#define NIC_KHZ 500000u             /* 500 MHz: a tick is 2 ns */
#define TS IBV_WC_EX_WITH_COMPLETION_TIMESTAMP

static uint64_t dev_mask;           /* what query_device_ex reports */
static struct mock_cq mcq[4];       /* the provider's ex-CQs, in creation order */
static struct ibv_cq plain[4];      /* the real ibv_create_cq's CQs */
static int ncq_ex, ncq_plain, fail_ts, destroys, ex_calls;
static struct ibv_cq_init_attr_ex last_ex;
static char captured[4096];
static int saved_err = -1;
static FILE *cap;

static int m_query_device_ex(struct ibv_context *c, const struct ibv_query_device_ex_input *in,
			     struct ibv_device_attr_ex *a, size_t len)
{
	(void)c; (void)in;
	assert_true(len >= sizeof(*a));
	memset(a, 0, sizeof(*a));
	a->completion_timestamp_mask = dev_mask;
	a->hca_core_clock = dev_mask ? NIC_KHZ : 0;
	return 0;
}

static uint64_t nic_ticks(uint64_t sw_ns) { return (sw_ns + NIC_OFFSET) / 2; }

static int m_query_rt_values(struct ibv_context *c, struct ibv_values_ex *v)
{
	(void)c;
	assert_int_equal(v->comp_mask, IBV_VALUES_MASK_RAW_CLOCK);
	v->raw_clock.tv_sec = 0; /* as mlx5: the cycle count in tv_nsec */
	v->raw_clock.tv_nsec = (long)nic_ticks(pt_now_ns());
	return 0;
}

/* The saved original the interposer must call (libibverbs' __lib_ibv_create_cq_ex). */
static struct ibv_cq_ex *m_create_cq_ex(struct ibv_context *c, struct ibv_cq_init_attr_ex *a)
{
	struct mock_cq *m;

	last_ex = *a;
	ex_calls++;
	if (fail_ts && (a->wc_flags & TS)) {
		errno = EOPNOTSUPP; /* mlx5 with real-time stamps only (docs/hw-timestamps.md §4) */
		return NULL;
	}
	assert_true(ncq_ex < 4);
	m = &mcq[ncq_ex++];
	mock_cqx_init(m, a->wc_flags);
	m->ex.context = c;
	m->ex.cq_context = a->cq_context;
	m->ex.channel = a->channel;
	m->ex.cqe = (int)a->cqe;
	return &m->ex;
}

static struct ibv_cq *m_real_create_cq(struct ibv_context *c, int cqe, void *cq_context,
				       struct ibv_comp_channel *ch, int vec)
{
	struct ibv_cq *cq = &plain[ncq_plain++];

	(void)vec;
	*cq = (struct ibv_cq){ .context = c, .cq_context = cq_context, .channel = ch, .cqe = cqe };
	return cq;
}

static int m_real_destroy_cq(struct ibv_cq *cq)
{
	(void)cq;
	destroys++;
	return 0;
}

static void cap_start(void)
{
	fflush(stderr);
	cap = tmpfile();
	assert_non_null(cap);
	saved_err = dup(2);
	dup2(fileno(cap), 2);
}

static const char *cap_end(void)
{
	size_t n;

	fflush(stderr);
	dup2(saved_err, 2);
	close(saved_err);
	rewind(cap);
	n = fread(captured, 1, sizeof(captured) - 1, cap);
	captured[n] = '\0';
	fclose(cap);
	return captured;
}

/* A fresh process state and a mock device reporting mask; WRTRACE_OUT is
 * path plus opts; the context is attached with its stderr kept in captured. */
static struct ibv_context *hw_ctx(const char *name, uint64_t mask, char *path, const char *opts)
{
	struct ibv_context *ctx;
	char spec[128];

	temp_file(path);
	memset(&wrp, 0, sizeof(wrp));
	memset(&vctx, 0, sizeof(vctx));
	memset(mcq, 0, sizeof(mcq));
	nqueued = ncq_ex = ncq_plain = fail_ts = destroys = ex_calls = 0;
	dev_mask = mask;
	ctx = mock_ctx(name);
	vctx.create_cq_ex = m_create_cq_ex;
	vctx.query_device_ex = m_query_device_ex;
	vctx.query_rt_values = m_query_rt_values;
	snprintf(spec, sizeof(spec), "%s:quiet%s", path, opts);
	assert_int_equal(wrp_setup(spec), 0);
	cap_start();
	assert_int_equal(wrp_attach_context(ctx), 0);
	cap_end();
	return ctx;
}

static struct ibv_qp *hw_qp(struct ibv_context *ctx)
{
	struct ibv_qp_init_attr_ex qa = { .qp_type = IBV_QPT_RC, .comp_mask = IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .cap = { 128, 512, 1, 1, 0 } };
	struct ibv_qp *qp = ibv_create_qp_ex(ctx, &qa);

	assert_non_null(qp);
	assert_true(wrp.run_on);
	return qp;
}

/* n signaled sends with wr_ids id0.. in one post; the time just after it. */
static uint64_t hw_post(struct ibv_qp *qp, uint64_t id0, int n)
{
	static struct ibv_sge sge = { .length = 64 };
	struct ibv_send_wr w[4], *bad;

	for (int i = 0; i < n; i++)
		w[i] = (struct ibv_send_wr){ .wr_id = id0 + (uint64_t)i, .next = i < n - 1 ? &w[i + 1] : NULL,
					     .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
					     .send_flags = IBV_SEND_SIGNALED };
	assert_int_equal(ibv_post_send(qp, w, &bad), 0);
	return pt_now_ns();
}

/* A CQE of QP 0x42 on a mock ex-CQ, stamped at software time sw_ns. */
static struct fake_cqe *hw_cqe(struct mock_cq *m, uint64_t wr_id, enum ibv_wc_opcode op,
			       uint64_t sw_ns, enum ibv_wc_status st)
{
	struct fake_cqe *e = &m->cqe[m->n];

	add(m, wr_id, nic_ticks(sw_ns), st);
	e->opcode = op;
	e->qp_num = 0x42;
	e->wc_flags = 0;
	return e;
}

static void hw_finish(struct ibv_context *ctx, char *path, struct wrt_trace *t)
{
	char err[512];

	wrp_run_finish();
	wrp_detach_context(ctx);
	wrp_teardown();
	assert_int_equal(wrt_read(path, t, err, sizeof(err)), 0);
	assert_int_equal(t->nruns, 1);
	unlink(path);
}

/* A WR's bytes, both post APIs: the list's sum, saturated at the row's 32 bits. */
static void test_sge_bytes(void **unused)
{
	const struct ibv_sge two[2] = { { .length = 64 }, { .length = 4032 } };
	const struct ibv_sge big[2] = { { .length = UINT32_MAX }, { .length = 1 } };

	(void)unused;
	assert_int_equal(wrp_sge_bytes(two, 2), 4096);
	assert_int_equal(wrp_sge_bytes(two, 1), 64);
	assert_int_equal(wrp_sge_bytes(two, 0), 0);
	assert_int_equal(wrp_sge_bytes(big, 2), UINT32_MAX);
}

/* The device stamps CQEs: ibv_create_cq becomes an ex-CQ through the saved
 * create_cq_ex, ibv_poll_cq on it gives ibv_poll_cq's results from the ex
 * API, each row carries its NIC time, and the fit splits the latency. */
static void test_hwts_upgrade(void **unused)
{
	char path[] = "/tmp/test_preload_hw.XXXXXX", line[512];
	struct timespec ms = { 0, 1000000 };
	struct ibv_context *ctx = hw_ctx("mockts0", 0xffffffffffffull, path, "");
	struct wrp_ctx *c = wrp_ctx_of(ctx);
	int cookie, rc;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc[16];
	struct wrt_trace t;
	struct wrt_gaps gaps = { 0 };
	struct wrt_derived d;
	uint64_t t_sent, t_cqe, stamps = 0;

	(void)unused;
	assert_non_null(strstr(captured, "wrtrace: CQE timestamps on for mockts0: CQs read through "
				"the extended CQ API, NIC clock (hca-free-running: ticks / 500000000 "
				"Hz hca_core_clock) fitted"));
	assert_ptr_equal(ctx->ops.poll_cq, wrp_poll_cq_hw);
	assert_ptr_not_equal(vctx.create_cq_ex, m_create_cq_ex);
	assert_int_equal(c->clk.nsamples, 2);
	cq = wrp_create_cq(ctx, 256, &cookie, NULL, 3, m_real_create_cq);
	assert_ptr_equal(cq, ibv_cq_ex_to_cq(&mcq[0].ex));
	assert_int_equal(ncq_ex, 1);
	assert_int_equal(ncq_plain, 0);
	assert_int_equal(last_ex.wc_flags, IBV_WC_STANDARD_FLAGS | TS);
	assert_int_equal(last_ex.cqe, 256);
	assert_int_equal(last_ex.comp_vector, 3);
	assert_ptr_equal(cq->cq_context, &cookie);

	qp = hw_qp(ctx);
	assert_int_equal(wrt_meta(wrp.w)->hw_ts, PT_PLUGIN_HW_TS_ON);
	assert_int_equal(wrt_meta(wrp.w)->fit.samples, 3); /* 2 at open, 1 at run start */
	t_sent = hw_post(qp, 10, 3);
	nanosleep(&ms, NULL);
	t_cqe = t_sent + 200000; /* the NIC stamps 200 us after the post, the poll comes later */
	hw_cqe(&mcq[0], 10, IBV_WC_SEND, t_cqe, IBV_WC_SUCCESS);
	hw_cqe(&mcq[0], 11, IBV_WC_SEND, t_cqe + 1000, IBV_WC_REM_ACCESS_ERR);
	hw_cqe(&mcq[0], 12, IBV_WC_SEND, t_cqe + 2000, IBV_WC_SUCCESS)->byte_len = 64;

	/* ibv_poll_cq's contract: at most n, the error CQE keeps its ids */
	assert_int_equal(ibv_poll_cq(cq, 2, wc), 2);
	assert_int_equal(wc[0].wr_id, 10);
	assert_int_equal(wc[0].opcode, IBV_WC_SEND);
	assert_int_equal(wc[0].qp_num, 0x42);
	assert_int_equal(wc[0].status, IBV_WC_SUCCESS);
	assert_int_equal(wc[0].src_qp, 0x88);
	assert_int_equal(wc[1].wr_id, 11);
	assert_int_equal(wc[1].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(wc[1].vendor_err, 0x42);
	assert_int_equal(wc[1].qp_num, 0x42);
	assert_int_equal(mcq[0].reads_on_error, 0);
	c->clk.next_sample_ns = 0; /* the period is up: the next poll refits */
	assert_int_equal(ibv_poll_cq(cq, 16, wc), 1);
	assert_int_equal(wc[0].wr_id, 12);
	assert_int_equal(wc[0].byte_len, 64);
	assert_int_equal(c->clk.nsamples, 4);
	assert_int_equal(wrt_meta(wrp.w)->fit.samples, 4);
	assert_int_equal(ibv_poll_cq(cq, 16, wc), 0);
	assert_int_equal(ibv_poll_cq(cq, 0, wc), 0);
	mcq[0].start_err = EIO;
	rc = ibv_poll_cq(cq, 16, wc);
	assert_int_equal(rc, -EIO);
	assert_int_equal(mcq[0].ends, 2); /* no end_poll after a failed start */
	assert_int_equal(ncq_plain, 0);
	assert_int_equal(wrp_destroy_cq(cq, m_real_destroy_cq), 0);
	assert_int_equal(destroys, 1);
	assert_null(wrp.cqs[0].cq);

	hw_finish(ctx, path, &t);
	assert_int_equal(t.runs[0].n, 3);
	assert_int_equal(t.runs[0].meta.hw_ts, PT_PLUGIN_HW_TS_ON);
	assert_int_equal(t.runs[0].meta.hw_hz, NIC_KHZ * 1000ull);
	assert_string_equal(t.runs[0].meta.hw_domain, PT_HWCLOCK_DOMAIN_HCA);
	assert_true(t.runs[0].meta.has_fit);
	assert_true(fabs(t.runs[0].meta.fit.slope - 1) < 1e-3);
	assert_true(t.runs[0].meta.fit.residual_max_ns < 50000);
	for (uint64_t i = 0; i < t.runs[0].n; i++) {
		const struct wrt_rec *r = &t.runs[0].recs[i];
		uint64_t want = nic_ticks(t_cqe + 1000 * (r->wr_id - 10)) * 2;

		assert_int_equal(r->wr_id, 10 + i);
		assert_true(r->flags & WRT_HW);
		assert_int_equal(r->hw_ns, want);
		stamps++;
		wrt_derive(r, &t.runs[0].meta, &gaps, &d);
		assert_true(d.has_split);
		/* post (before t_sent) -> NIC stamp: 200 us plus that WR's offset,
		 * within the fit's error; the stamp -> the poll after the sleep */
		assert_true(d.post_to_cqe_ns > 150000 + 1000 * (int64_t)i);
		assert_true(d.post_to_cqe_ns < 250000 + 1000 * (int64_t)i);
		assert_true(d.cqe_to_poll_ns > 500000);
		assert_int_equal(d.post_to_cqe_ns + d.cqe_to_poll_ns, d.lat_ns);
		if (i)
			assert_int_equal(d.gap_hw_ns, 1000);
	}
	assert_int_equal(t.runs[0].recs[1].status, IBV_WC_REM_ACCESS_ERR);
	assert_int_equal(stamps, 3);
	wrt_hw_line(line, sizeof(line), &t.runs[0].meta);
	assert_non_null(strstr(line, "mockts0, hca-free-running clock at 500000000 Hz; fit onto"));
	wrt_trace_free(&t);
}

/* An mlx5 device (wrp_clock_info_of replaced, with clock info by hand:
 * 2 ns a tick on another time line): the open line and the run name the
 * mlx5 conversion and rows carry mlx5dv_ts_to_ns's values. Unreadable
 * clock info: hca_core_clock, said with why. */
static int fake_info_err;
#ifdef HAVE_MLX5DV
static struct mlx5dv_clock_info fake_ci;
#endif
static int m_clock_info(void *ctx, struct mlx5dv_clock_info *ci)
{
	(void)ctx;
#ifdef HAVE_MLX5DV
	if (!fake_info_err)
		*ci = fake_ci;
#else
	(void)ci;
#endif
	return fake_info_err;
}
static pt_hwclock_info_fn m_clock_info_of(struct ibv_context *ctx)
{
	assert_non_null(ctx->device);
	return m_clock_info;
}

/* the real lookup back after the test, even after a failed assert */
static pt_hwclock_info_fn (*saved_lookup)(struct ibv_context *);
static int save_lookup(void **unused)
{
	(void)unused;
	saved_lookup = wrp_clock_info_of;
	return 0;
}
static int restore_lookup(void **unused)
{
	(void)unused;
	wrp_clock_info_of = saved_lookup;
	return 0;
}

static void test_hwts_mlx5_clock_info(void **unused)
{
	char path[] = "/tmp/test_preload_ci.XXXXXX", path2[] = "/tmp/test_preload_ci2.XXXXXX";
	struct ibv_context *ctx;
	struct ibv_cq *cq;
	struct ibv_wc wc[4];
	struct wrt_trace t;
	uint64_t t_cqe;

	(void)unused;
	wrp_clock_info_of = m_clock_info_of;
	fake_info_err = 0;
#ifdef HAVE_MLX5DV
	fake_ci = (struct mlx5dv_clock_info){ .nsec = 1700000000000000000ull,
					      .last_cycles = nic_ticks(pt_now_ns()),
					      .mult = 1u << 21, .shift = 20, .mask = UINT64_MAX };
	ctx = hw_ctx("mockmlx5", 0xffffffffffffull, path, "");
	assert_non_null(strstr(captured, "CQE timestamps on for mockmlx5: CQs read through the "
				"extended CQ API, NIC clock (mlx5-clock-info: ticks to ns by the "
				"kernel's mlx5 clock info) fitted onto CLOCK_MONOTONIC_RAW"));
	cq = wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq);
	hw_post(hw_qp(ctx), 30, 1);
	t_cqe = pt_now_ns();
	hw_cqe(&mcq[0], 30, IBV_WC_SEND, t_cqe, IBV_WC_SUCCESS);
	assert_int_equal(ibv_poll_cq(cq, 4, wc), 1);
	hw_finish(ctx, path, &t);
	assert_string_equal(t.runs[0].meta.hw_domain, PT_HWCLOCK_DOMAIN_MLX5);
	assert_int_equal(t.runs[0].recs[0].hw_ns, mlx5dv_ts_to_ns(&fake_ci, nic_ticks(t_cqe)));
	assert_true(t.runs[0].recs[0].hw_ns > 1700000000000000000ull);
	assert_true(t.runs[0].meta.has_fit);
	assert_true(fabs(t.runs[0].meta.fit.slope - 1) < 1e-3);
	wrt_trace_free(&t);
#else
	(void)cq; (void)wc; (void)t_cqe;
	temp_file(path);
	unlink(path);
#endif
	fake_info_err = -EOPNOTSUPP;
	ctx = hw_ctx("mockmlx5b", 0xffffffffffffull, path2, "");
	assert_non_null(strstr(captured, "NIC clock (hca-free-running: ticks / 500000000 Hz "
				"hca_core_clock; mlx5 clock info unreadable: "));
	assert_non_null(strstr(captured, strerror(EOPNOTSUPP)));
	assert_non_null(wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq));
	hw_qp(ctx);
	hw_finish(ctx, path2, &t);
	assert_int_equal(t.runs[0].meta.hw_ts, PT_PLUGIN_HW_TS_ON);
	assert_string_equal(t.runs[0].meta.hw_domain, PT_HWCLOCK_DOMAIN_HCA);
	wrt_trace_free(&t);
}

/* The ex-CQ cannot be made (a real-time-only mlx5): the real ibv_create_cq
 * makes a plain CQ, later CQs are not tried again, polling it is the plain
 * path, and the run says the stamps were not used. */
static void test_hwts_fallback(void **unused)
{
	char path[] = "/tmp/test_preload_fb.XXXXXX";
	struct ibv_context *ctx = hw_ctx("mockts1", 0xffffffffffffull, path, "");
	struct ibv_cq *cq, *cq2;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	struct wrt_trace t;

	(void)unused;
	fail_ts = 1;
	cap_start();
	cq = wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq);
	cap_end();
	assert_ptr_equal(cq, &plain[0]);
	assert_int_equal(last_ex.wc_flags, IBV_WC_STANDARD_FLAGS | TS); /* tried first */
	assert_non_null(strstr(captured, "CQE timestamps off for mockts1 from here on"));
	assert_non_null(strstr(captured, strerror(EOPNOTSUPP)));
	cq2 = wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq);
	assert_ptr_equal(cq2, &plain[1]);
	assert_int_equal(ex_calls, 1); /* one format per context: no second try */
	assert_int_equal(ncq_plain, 2);
	qp = hw_qp(ctx);
	assert_int_equal(wrt_meta(wrp.w)->hw_ts, PT_PLUGIN_HW_TS_OFF);
	hw_post(qp, 20, 1);
	cqe(20, 0x42, IBV_WC_SEND, 64);
	assert_int_equal(ibv_poll_cq(cq, 4, wc), 1); /* the provider's own poll_cq */
	assert_int_equal(nqueued, 0);
	assert_int_equal(wc[0].wr_id, 20);
	hw_finish(ctx, path, &t);
	assert_int_equal(t.runs[0].n, 1);
	assert_true(t.runs[0].recs[0].flags & WRT_DONE);
	assert_false(t.runs[0].recs[0].flags & WRT_HW);
	assert_int_equal(t.runs[0].meta.hw_ts, PT_PLUGIN_HW_TS_OFF);
	wrt_trace_free(&t);
}

/* The program's own ex-CQs: the stamp flag is added where it asked for
 * none, its attributes and read_* pointers stay as it asked; its ex API
 * polling works; ibv_poll_cq on one with the standard fields is emulated
 * with NIC times. */
static void test_hwts_app_cq_ex(void **unused)
{
	char path[] = "/tmp/test_preload_app.XXXXXX", path2[] = "/tmp/test_preload_app2.XXXXXX";
	struct ibv_context *ctx = hw_ctx("mockts2", 0xffffffffffffull, path, "");
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_cq_ex *lean, *std, *own, *wall;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	struct wrt_trace t;
	uint64_t now;

	(void)unused;
	lean = ibv_create_cq_ex(ctx, &a); /* inline: through the patched create_cq_ex */
	assert_ptr_equal(lean, &mcq[0].ex);
	assert_int_equal(mcq[0].wc_flags, IBV_WC_EX_WITH_BYTE_LEN | TS);
	assert_int_equal(a.wc_flags, IBV_WC_EX_WITH_BYTE_LEN);
	assert_null(lean->read_completion_ts); /* not asked: kept aside */
	assert_non_null(lean->read_byte_len);
	assert_null(lean->read_qp_num);
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	std = ibv_create_cq_ex(ctx, &a);
	assert_int_equal(mcq[1].wc_flags, IBV_WC_STANDARD_FLAGS | TS);
	assert_null(std->read_completion_ts);
	a.wc_flags = IBV_WC_STANDARD_FLAGS | TS;
	own = ibv_create_cq_ex(ctx, &a);
	assert_int_equal(mcq[2].wc_flags, IBV_WC_STANDARD_FLAGS | TS);
	assert_non_null(own->read_completion_ts); /* asked: its own */
	a.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	wall = ibv_create_cq_ex(ctx, &a);
	assert_int_equal(mcq[3].wc_flags, a.wc_flags); /* nothing added to a stamp it chose */
	(void)wall;

	qp = hw_qp(ctx);
	hw_post(qp, 30, 3);
	now = pt_now_ns();
	/* the program's ex API on its lean CQ (not traced) */
	add(&mcq[0], 7, nic_ticks(now), IBV_WC_SUCCESS);
	assert_int_equal(ibv_start_poll(lean, &pa), 0);
	assert_int_equal(lean->wr_id, 7);
	assert_int_equal(ibv_wc_read_byte_len(lean), 1007);
	ibv_end_poll(lean);
	assert_int_equal(ibv_start_poll(lean, &pa), ENOENT);
	/* ibv_poll_cq on the lean CQ cannot be emulated: the provider's poll_cq */
	cqe(30, 0x42, IBV_WC_SEND, 64);
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(lean), 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 30);
	assert_int_equal(nqueued, 0);
	/* on the standard ones it is, with the stamp kept aside or its own */
	hw_cqe(&mcq[1], 31, IBV_WC_SEND, now + 100, IBV_WC_SUCCESS);
	hw_cqe(&mcq[2], 32, IBV_WC_SEND, now + 200, IBV_WC_SUCCESS);
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(std), 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 31);
	assert_int_equal(ibv_poll_cq(ibv_cq_ex_to_cq(own), 4, wc), 1);
	assert_int_equal(wc[0].wr_id, 32);
	assert_int_equal(wrt_meta(wrp.w)->hw_ts, PT_PLUGIN_HW_TS_ON);
	hw_finish(ctx, path, &t);
	assert_int_equal(t.runs[0].n, 3);
	for (int i = 0; i < 3; i++)
		assert_true(t.runs[0].recs[i].flags & WRT_DONE);
	assert_false(t.runs[0].recs[0].flags & WRT_HW); /* software time only */
	assert_int_equal(t.runs[0].recs[1].hw_ns, nic_ticks(now + 100) * 2);
	assert_int_equal(t.runs[0].recs[2].hw_ns, nic_ticks(now + 200) * 2);
	assert_true(t.runs[0].recs[2].flags & WRT_HW);
	wrt_trace_free(&t);

	/* adding the flag fails: the program still gets its CQ, as asked */
	ctx = hw_ctx("mockts3", 0xffffffffffffull, path2, "");
	fail_ts = 1;
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	cap_start();
	lean = ibv_create_cq_ex(ctx, &a);
	cap_end();
	assert_ptr_equal(lean, &mcq[0].ex);
	assert_int_equal(mcq[0].wc_flags, IBV_WC_STANDARD_FLAGS);
	assert_non_null(strstr(captured, "CQE timestamps off for mockts3 from here on"));
	assert_false(wrp_ctx_of(ctx)->upgrade);
	wrp_detach_context(ctx);
	wrp_teardown();
	unlink(path2);
}

/* No stamps (rxe), or :nohwts: the context keeps today's plain path. */
static void test_hwts_untouched(void **unused)
{
	char path[] = "/tmp/test_preload_rxe.XXXXXX", path2[] = "/tmp/test_preload_off.XXXXXX";
	struct ibv_context *ctx = hw_ctx("mockrxe0", 0, path, "");
	struct ibv_cq_init_attr_ex a = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_cq_ex *x;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_wc wc[4];
	struct wrt_trace t;

	(void)unused;
	assert_non_null(strstr(captured, "wrtrace: CQE timestamps not supported by mockrxe0: "
				"software times only"));
	assert_ptr_equal(ctx->ops.poll_cq, wrp_poll_cq);
	assert_ptr_equal(vctx.create_cq_ex, m_create_cq_ex);
	cq = wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq);
	assert_ptr_equal(cq, &plain[0]);
	assert_int_equal(ncq_ex, 0);
	x = ibv_create_cq_ex(ctx, &a);
	assert_int_equal(mcq[0].wc_flags, IBV_WC_STANDARD_FLAGS);
	assert_ptr_equal(x->read_completion_ts, NULL);
	qp = hw_qp(ctx);
	assert_int_equal(wrt_meta(wrp.w)->hw_ts, PT_PLUGIN_HW_TS_NONE);
	hw_post(qp, 40, 1);
	cqe(40, 0x42, IBV_WC_SEND, 64);
	assert_int_equal(ibv_poll_cq(cq, 4, wc), 1);
	assert_int_equal(mcq[0].starts, 0);
	for (int i = 0; i < WRP_CQS; i++)
		assert_null(wrp.cqs[i].cq);
	hw_finish(ctx, path, &t);
	assert_int_equal(t.runs[0].n, 1);
	assert_false(t.runs[0].recs[0].flags & WRT_HW);
	assert_int_equal(t.runs[0].meta.hw_ts, PT_PLUGIN_HW_TS_NONE);
	wrt_trace_free(&t);

	/* a device with stamps, turned off: the same, said why */
	ctx = hw_ctx("mockts4", 0xffffffffffffull, path2, ":nohwts");
	assert_non_null(strstr(captured, "CQE timestamps off for mockts4: turned off by :nohwts"));
	assert_ptr_equal(ctx->ops.poll_cq, wrp_poll_cq);
	assert_ptr_equal(vctx.create_cq_ex, m_create_cq_ex);
	assert_ptr_equal(wrp_create_cq(ctx, 64, NULL, NULL, 0, m_real_create_cq), &plain[0]);
	qp = hw_qp(ctx);
	assert_int_equal(wrt_meta(wrp.w)->hw_ts, PT_PLUGIN_HW_TS_OFF);
	hw_finish(ctx, path2, &t);
	wrt_trace_free(&t);
}

/* :nohwts is ours, anywhere among the recorder's options; a typo is refused
 * with the options of both. */
static void test_nohwts_option(void **unused)
{
	char path[] = "/tmp/test_preload_opt.XXXXXX", spec[128];

	(void)unused;
	temp_file(path);
	snprintf(spec, sizeof(spec), "%s:max=7:nohwts:quiet", path);
	assert_int_equal(wrp_setup(spec), 0);
	assert_true(wrp.no_hwts);
	wrp_teardown();
	snprintf(spec, sizeof(spec), "%s:quiet", path);
	assert_int_equal(wrp_setup(spec), 0);
	assert_false(wrp.no_hwts);
	wrp_teardown();
	snprintf(spec, sizeof(spec), "%s:nohwt", path);
	cap_start();
	assert_int_equal(wrp_setup(spec), -1);
	cap_end();
	assert_non_null(strstr(captured, "unknown option 'nohwt'"));
	assert_non_null(strstr(captured, "(and here nohwts)"));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mock_context),
		cmocka_unit_test(test_sge_bytes),
		cmocka_unit_test(test_hwts_upgrade),
		cmocka_unit_test(test_hwts_fallback),
		cmocka_unit_test_setup_teardown(test_hwts_mlx5_clock_info, save_lookup, restore_lookup),
		cmocka_unit_test(test_hwts_app_cq_ex),
		cmocka_unit_test(test_hwts_untouched),
		cmocka_unit_test(test_nohwts_option),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
