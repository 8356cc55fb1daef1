/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode: the ibv_qp_ex (ibv_wr_*) path. Each builder notes a WR
 * (wr_id, signaled flag, opcode) in the slot's open batch; the sge/inline
 * setters give its size; wr_complete rings the doorbell and the batch is
 * posted at the time taken just before it. wr_abort and a failed
 * wr_complete drop the batch: those WRs were never posted. */
#include <stddef.h>
#include <string.h>
#include "util/clock.h"
#include "preload.h"

static inline struct wrp_slot *slot(struct ibv_qp_ex *q)
{
	struct wrp_slot *s = wrp.last_qpx;

	if (__builtin_expect(s != NULL && s->qpx == q, 1))
		return s;
	s = wrp_slot_of_qpx(q);
	wrp.last_qpx = s;
	return s;
}

/* Post what the batch holds at time t. */
static void flush(struct wrp_slot *s, uint64_t t)
{
	for (uint32_t i = 0; i < s->npend; i++)
		wrp_emit_post(s, s->pend[i].opcode, s->pend[i].wr_id, s->pend[i].bytes,
			      s->pend[i].signaled, false, t);
	s->npend = 0;
}

static void note(struct ibv_qp_ex *q, struct wrp_slot *s, uint32_t opcode)
{
	struct wrp_pend *p;

	if (!wrp.run_on)
		return;
	if (__builtin_expect(s->npend == WRP_BATCH, 0))
		flush(s, pt_now_ns()); /* a huge batch: its first WRs get an early post time */
	p = &s->pend[s->npend++];
	p->wr_id = q->wr_id;
	p->bytes = 0;
	p->opcode = (uint8_t)opcode;
	p->signaled = s->sig_all || (q->wr_flags & IBV_SEND_SIGNALED);
}

static void set_bytes(struct wrp_slot *s, uint64_t bytes)
{
	if (s->npend)
		s->pend[s->npend - 1].bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
}

/* The slot is always found: a wrapper is only installed on a followed QP,
 * and slots are never reused. */
#define S struct wrp_slot *s = slot(q)

static void w_wr_atomic_cmp_swp(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t c, uint64_t sw)
{
	S; note(q, s, PT_PLUGIN_OP_ATOMIC_CS); set_bytes(s, 8); s->orig.wr_atomic_cmp_swp(q, rkey, ra, c, sw);
}
static void w_wr_atomic_fetch_add(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, uint64_t add)
{
	S; note(q, s, PT_PLUGIN_OP_ATOMIC_FA); set_bytes(s, 8); s->orig.wr_atomic_fetch_add(q, rkey, ra, add);
}
static void w_wr_bind_mw(struct ibv_qp_ex *q, struct ibv_mw *mw, uint32_t rkey,
			 const struct ibv_mw_bind_info *bi)
{
	S; note(q, s, PT_PLUGIN_OP_OTHER); s->orig.wr_bind_mw(q, mw, rkey, bi);
}
static void w_wr_local_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	S; note(q, s, PT_PLUGIN_OP_OTHER); s->orig.wr_local_inv(q, rkey);
}
static void w_wr_rdma_read(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{
	S; note(q, s, PT_PLUGIN_OP_READ); s->orig.wr_rdma_read(q, rkey, ra);
}
static void w_wr_rdma_write(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra)
{
	S; note(q, s, PT_PLUGIN_OP_WRITE); s->orig.wr_rdma_write(q, rkey, ra);
}
static void w_wr_rdma_write_imm(struct ibv_qp_ex *q, uint32_t rkey, uint64_t ra, __be32 imm)
{
	S; note(q, s, PT_PLUGIN_OP_WRITE_IMM); s->orig.wr_rdma_write_imm(q, rkey, ra, imm);
}
static void w_wr_send(struct ibv_qp_ex *q)
{
	S; note(q, s, PT_PLUGIN_OP_SEND); s->orig.wr_send(q);
}
static void w_wr_send_imm(struct ibv_qp_ex *q, __be32 imm)
{
	S; note(q, s, PT_PLUGIN_OP_SEND_IMM); s->orig.wr_send_imm(q, imm);
}
static void w_wr_send_inv(struct ibv_qp_ex *q, uint32_t rkey)
{
	S; note(q, s, PT_PLUGIN_OP_SEND); s->orig.wr_send_inv(q, rkey);
}
static void w_wr_send_tso(struct ibv_qp_ex *q, void *hdr, uint16_t hdr_sz, uint16_t mss)
{
	S; note(q, s, PT_PLUGIN_OP_SEND); s->orig.wr_send_tso(q, hdr, hdr_sz, mss);
}
static void w_wr_set_inline_data(struct ibv_qp_ex *q, void *addr, size_t len)
{
	S; set_bytes(s, len); s->orig.wr_set_inline_data(q, addr, len);
}
static void w_wr_set_inline_data_list(struct ibv_qp_ex *q, size_t n, const struct ibv_data_buf *b)
{
	uint64_t sum = 0;

	S;
	for (size_t i = 0; i < n; i++)
		sum += b[i].length;
	set_bytes(s, sum);
	s->orig.wr_set_inline_data_list(q, n, b);
}
static void w_wr_set_sge(struct ibv_qp_ex *q, uint32_t lkey, uint64_t addr, uint32_t len)
{
	S; set_bytes(s, len); s->orig.wr_set_sge(q, lkey, addr, len);
}
static void w_wr_set_sge_list(struct ibv_qp_ex *q, size_t n, const struct ibv_sge *sg)
{
	S; set_bytes(s, wrp_sge_bytes(sg, n)); s->orig.wr_set_sge_list(q, n, sg);
}
static void w_wr_start(struct ibv_qp_ex *q)
{
	S; s->npend = 0; s->orig.wr_start(q);
}
static int w_wr_complete(struct ibv_qp_ex *q)
{
	S;
	uint64_t t = s->npend ? pt_now_ns() : 0;
	int rc = s->orig.wr_complete(q);

	if (rc == 0)
		flush(s, t);
	s->npend = 0; /* on failure nothing of the batch was posted */
	return rc;
}
static void w_wr_abort(struct ibv_qp_ex *q)
{
	S; s->npend = 0; s->orig.wr_abort(q);
}

typedef void (*wrp_fn)(void);

/* Where each pointer sits in ibv_qp_ex and in our copy, and its wrapper. */
static const struct {
	size_t qpx_off, orig_off;
	wrp_fn wrapper;
} hooks[] = {
#define H(f) { offsetof(struct ibv_qp_ex, f), offsetof(struct wrp_qpx_orig, f), (wrp_fn)w_##f }
	H(wr_atomic_cmp_swp), H(wr_atomic_fetch_add), H(wr_bind_mw), H(wr_local_inv),
	H(wr_rdma_read), H(wr_rdma_write), H(wr_rdma_write_imm), H(wr_send), H(wr_send_imm),
	H(wr_send_inv), H(wr_send_tso), H(wr_set_inline_data), H(wr_set_inline_data_list),
	H(wr_set_sge), H(wr_set_sge_list), H(wr_start), H(wr_complete), H(wr_abort),
#undef H
};

void wrp_wrap_qpx(struct wrp_slot *s, struct ibv_qp_ex *qpx)
{
	s->qpx = qpx;
	for (size_t i = 0; i < sizeof(hooks) / sizeof(hooks[0]); i++) {
		wrp_fn cur;

		memcpy(&cur, (char *)qpx + hooks[i].qpx_off, sizeof(cur));
		/* NULL: the provider has no such op for this QP; ours: already wrapped */
		if (!cur || cur == hooks[i].wrapper)
			continue;
		memcpy((char *)&s->orig + hooks[i].orig_off, &cur, sizeof(cur));
		memcpy((char *)qpx + hooks[i].qpx_off, &hooks[i].wrapper, sizeof(cur));
	}
}
