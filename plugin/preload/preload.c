/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode, the data path: the state, QP slots, the patched
 * ctx->ops post_send, post_recv and poll_cq, and the events they give the
 * recorder. Contexts, QP registration and the run are preload_ctl.c's; the
 * extended QP's builders preload_qpx.c's; contexts whose device stamps CQEs
 * poll through preload_cq.c. All three use this file, it uses none of them.
 * No symbol is interposed here (preload_sym.c does that), so a unit test can
 * drive all of this over a mock context. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "util/clock.h"
#include "util/opcodes.h"
#include "preload.h"

struct wrp_state wrp;

void wrp_emit_post(struct wrp_slot *s, uint32_t opcode, uint64_t wr_id, uint32_t bytes,
		   bool signaled, bool recv, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = s->idx,
		.first_seq = recv ? s->recv_seq++ : s->send_seq++, .count = 1,
		.opcode = recv ? PT_PLUGIN_OP_RECV : opcode, .first_wr_id = wr_id,
		.bytes = bytes, .flags = signaled ? PT_PLUGIN_POST_LAST_SIGNALED : 0, .t_ns = t,
	};

	if (recv) {
		wrp.recvs++;
		if (bytes > wrp.max_recv_bytes)
			wrp.max_recv_bytes = bytes;
	} else {
		wrp.sends++;
		if (bytes > wrp.max_bytes)
			wrp.max_bytes = bytes;
	}
	wrt_post(wrp.w, &ev);
}

struct wrp_slot *wrp_slot_of_qpx(struct ibv_qp_ex *qpx)
{
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qpx == qpx)
			return &wrp.slots[i];
	return NULL;
}

struct wrp_slot *wrp_slot_of_qp(struct ibv_qp *qp)
{
	struct wrp_slot *s = wrp.last_qp;

	if (__builtin_expect(s != NULL && s->qp == qp, 1))
		return s;
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qp == qp)
			return wrp.last_qp = &wrp.slots[i];
	return NULL;
}

static uint32_t idx_of_qpn(uint32_t qpn)
{
	static uint32_t last;

	if (last < wrp.nslots && wrp.slots[last].qpn == qpn && wrp.slots[last].qp)
		return last;
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qpn == qpn && wrp.slots[i].qp)
			return last = i;
	return UINT32_MAX; /* the recorder counts it as unmatched */
}

struct wrp_ctx *wrp_ctx_of(struct ibv_context *ctx)
{
	for (int i = 0; i < WRP_CTXS; i++)
		if (wrp.ctxs[i].ctx == ctx)
			return &wrp.ctxs[i];
	return NULL;
}

/* -------------------------------------------------------- ctx->ops -- */

/* A send or receive WR's bytes (wrp_sge_bytes); num_sge is an int there,
 * and a negative one counts none. */
#define wr_bytes(wr) wrp_sge_bytes((wr)->sg_list, (wr)->num_sge > 0 ? (size_t)(wr)->num_sge : 0)

/* A patched pointer is only ever installed on a context in the table. */
int wrp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct wrp_ctx *c = wrp_ctx_of(qp->context);
	struct wrp_slot *s;
	struct ibv_send_wr *stop;
	uint64_t t;
	int rc;

	if (!wrp.run_on)
		return c->post_send(qp, wr, bad);
	t = pt_now_ns();
	rc = c->post_send(qp, wr, bad);
	s = wrp_slot_of_qp(qp);
	stop = rc ? *bad : NULL;
	for (; s && wr && wr != stop; wr = wr->next)
		wrp_emit_post(s, pt_plugin_op_of_wr(wr->opcode), wr->wr_id, wr_bytes(wr),
			      s->sig_all || (wr->send_flags & IBV_SEND_SIGNALED), false, t);
	return rc;
}

int wrp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct wrp_ctx *c = wrp_ctx_of(qp->context);
	struct wrp_slot *s;
	struct ibv_recv_wr *stop;
	uint64_t t;
	int rc;

	if (!wrp.run_on)
		return c->post_recv(qp, wr, bad);
	t = pt_now_ns();
	rc = c->post_recv(qp, wr, bad);
	s = wrp_slot_of_qp(qp);
	stop = rc ? *bad : NULL;
	for (; s && wr && wr != stop; wr = wr->next)
		wrp_emit_post(s, PT_PLUGIN_OP_RECV, wr->wr_id, wr_bytes(wr), true, true, t);
	return rc;
}

void wrp_emit_wcs(const struct ibv_wc *wc, int n, uint64_t t, const uint64_t *hw)
{
	for (int i = 0; i < n; i++) {
		bool recv = wc[i].opcode & IBV_WC_RECV;
		struct pt_plugin_completion ev = {
			.struct_size = sizeof(ev), .qp = idx_of_qpn(wc[i].qp_num),
			.wr_id = wc[i].wr_id, .seq = PT_PLUGIN_SEQ_UNKNOWN,
			.status = (uint32_t)wc[i].status, .opcode = pt_plugin_op_of_wc(wc[i].opcode),
			.bytes = wc[i].byte_len,
			.flags = (recv ? PT_PLUGIN_COMP_RECV : 0) | (hw ? PT_PLUGIN_COMP_HW_TS : 0),
			.t_poll_ns = t, .hw_ns = hw ? hw[i] : 0,
		};

		wrt_complete(wrp.w, &ev);
	}
}

int wrp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct wrp_ctx *c = wrp_ctx_of(cq->context);
	int rc = c->poll_cq(cq, n, wc);

	if (rc <= 0 || !wrp.run_on)
		return rc;
	wrp_emit_wcs(wc, rc, pt_now_ns(), NULL);
	return rc;
}
