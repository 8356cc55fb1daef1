/* SPDX-License-Identifier: BSD-2-Clause */
/* A mock struct ibv_cq_ex for the unit tests (test_hwts.c, test_preload.c):
 * a queue of fake CQEs behind start/next/end_poll, and read_* pointers
 * installed only for the wc_flags asked, as providers do (docs/hw-timestamps.md §1): a
 * read of a field not asked for jumps through NULL, as on hardware. Include
 * after <cmocka.h>. */
#ifndef PT_MOCK_CQX_H
#define PT_MOCK_CQX_H
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

struct fake_cqe {
	uint64_t wr_id, ticks;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len, qp_num, src_qp, vendor_err, slid, imm;
	unsigned wc_flags;
	uint8_t sl, dlid_bits;
};

struct mock_cq {
	struct ibv_cq_ex ex;        /* first: the ops get &ex */
	struct fake_cqe cqe[16];
	int n, pos;
	int start_err;              /* start_poll returns this instead of polling */
	int starts, nexts, ends, reads_on_error;
	bool polling;
	uint64_t wc_flags;          /* as created */
};

static inline struct mock_cq *M(struct ibv_cq_ex *cq) { return (struct mock_cq *)cq; }
static inline struct fake_cqe *cur(struct ibv_cq_ex *cq)
{
	struct mock_cq *m = M(cq);

	assert_true(m->polling); /* read_* only between start and end */
	if (m->cqe[m->pos].status != IBV_WC_SUCCESS)
		m->reads_on_error++;
	return &m->cqe[m->pos];
}

static inline void load(struct mock_cq *m)
{
	m->ex.wr_id = m->cqe[m->pos].wr_id;
	m->ex.status = m->cqe[m->pos].status;
}

static inline int m_start(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	struct mock_cq *m = M(cq);

	assert_int_equal(attr->comp_mask, 0);
	assert_false(m->polling);
	m->starts++;
	if (m->start_err)
		return m->start_err;
	if (m->pos == m->n)
		return ENOENT;
	m->polling = true;
	load(m);
	return 0;
}

static inline int m_next(struct ibv_cq_ex *cq)
{
	struct mock_cq *m = M(cq);

	m->nexts++;
	if (m->pos + 1 == m->n) {
		m->pos++;
		return ENOENT;
	}
	m->pos++;
	load(m);
	return 0;
}

static inline void m_end(struct ibv_cq_ex *cq)
{
	struct mock_cq *m = M(cq);

	assert_true(m->polling);
	m->polling = false;
	m->ends++;
	/* a batch cut short by the caller consumed the current CQE too */
	if (m->pos < m->n)
		m->pos++;
}

static inline enum ibv_wc_opcode m_opcode(struct ibv_cq_ex *cq) { return cur(cq)->opcode; }
static inline uint32_t m_byte_len(struct ibv_cq_ex *cq) { return cur(cq)->byte_len; }
static inline __be32 m_imm(struct ibv_cq_ex *cq) { return cur(cq)->imm; }
static inline uint32_t m_src_qp(struct ibv_cq_ex *cq) { return cur(cq)->src_qp; }
static inline unsigned m_flags(struct ibv_cq_ex *cq) { return cur(cq)->wc_flags; }
static inline uint32_t m_slid(struct ibv_cq_ex *cq) { return cur(cq)->slid; }
static inline uint8_t m_sl(struct ibv_cq_ex *cq) { return cur(cq)->sl; }
static inline uint8_t m_dlid(struct ibv_cq_ex *cq) { return cur(cq)->dlid_bits; }
static inline uint64_t m_ts(struct ibv_cq_ex *cq) { return M(cq)->cqe[M(cq)->pos].ticks; }
/* valid on error CQEs too: not counted */
static inline uint32_t m_vendor_err(struct ibv_cq_ex *cq) { return M(cq)->cqe[M(cq)->pos].vendor_err; }
static inline uint32_t m_qp_num(struct ibv_cq_ex *cq) { return M(cq)->cqe[M(cq)->pos].qp_num; }

/* The pointers a provider installs for wc_flags (mlx5_cq_fill_pfns). */
static inline void mock_cqx_init(struct mock_cq *m, uint64_t f)
{
	memset(m, 0, sizeof(*m));
	m->wc_flags = f;
	m->ex.start_poll = m_start;
	m->ex.next_poll = m_next;
	m->ex.end_poll = m_end;
	m->ex.read_opcode = m_opcode;
	m->ex.read_vendor_err = m_vendor_err;
	m->ex.read_wc_flags = m_flags;
	m->ex.read_byte_len = f & IBV_WC_EX_WITH_BYTE_LEN ? m_byte_len : NULL;
	m->ex.read_imm_data = f & IBV_WC_EX_WITH_IMM ? m_imm : NULL;
	m->ex.read_qp_num = f & IBV_WC_EX_WITH_QP_NUM ? m_qp_num : NULL;
	m->ex.read_src_qp = f & IBV_WC_EX_WITH_SRC_QP ? m_src_qp : NULL;
	m->ex.read_slid = f & IBV_WC_EX_WITH_SLID ? m_slid : NULL;
	m->ex.read_sl = f & IBV_WC_EX_WITH_SL ? m_sl : NULL;
	m->ex.read_dlid_path_bits = f & IBV_WC_EX_WITH_DLID_PATH_BITS ? m_dlid : NULL;
	m->ex.read_completion_ts = f & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP ? m_ts : NULL;
}

/* The standard fields, plus the completion timestamp when ts. */
static inline void mock_init(struct mock_cq *m, bool ts)
{
	mock_cqx_init(m, IBV_WC_STANDARD_FLAGS | (ts ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0));
}

static inline void add(struct mock_cq *m, uint64_t wr_id, uint64_t ticks, enum ibv_wc_status st)
{
	assert_true(m->n < (int)(sizeof(m->cqe) / sizeof(m->cqe[0])));
	m->cqe[m->n++] = (struct fake_cqe){
		.wr_id = wr_id, .ticks = ticks, .status = st, .opcode = IBV_WC_RECV,
		.byte_len = 1000 + (uint32_t)wr_id, .qp_num = 0x77, .src_qp = 0x88, .vendor_err = 0x42,
		.slid = 9, .imm = 0xabcd, .wc_flags = wr_id == 1 ? IBV_WC_WITH_IMM : 0, .sl = 3,
		.dlid_bits = 1,
	};
}

#endif
