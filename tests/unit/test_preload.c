/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode without a device: a mock verbs context (ctx->ops,
 * verbs_context create_qp_ex, an ibv_qp_ex with mock builders) driven
 * through libibverbs' own inline ibv_post_send / ibv_wr_* / ibv_poll_cq,
 * exactly as an unmodified program calls them. Checks the patching, the
 * re-wrap after the provider resets wr_complete, and the rows recorded. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "preload.h"

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

static void test_mock_context(void **unused)
{
	char path[] = "/tmp/test_preload.XXXXXX", spec[64];
	struct ibv_context *ctx = &vctx.context;
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
	int fd = mkstemp(path);

	(void)unused;
	assert_true(fd >= 0);
	close(fd);
	snprintf(spec, sizeof(spec), "%s:quiet", path);
	strcpy(dev.name, "mock0");
	vctx.sz = sizeof(vctx);
	vctx.create_qp_ex = m_create_qp_ex;
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->device = &dev;
	ctx->ops.post_send = m_post_send;
	ctx->ops.post_recv = m_post_recv;
	ctx->ops.poll_cq = m_poll_cq;

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

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_mock_context) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
