/* SPDX-License-Identifier: BSD-2-Clause */
/* The verbs resources a run posts and polls on, and the run's shape: what
 * the loops (loop.h) and the context (engine.h) share. Knows no options and
 * no peer: a unit test can fill these over fake verbs objects. */
#ifndef PT_RES_H
#define PT_RES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "util/hwts.h"
#include "chan_wait.h"

#define PT_UD_GRH 40            /* a UD receive buffer starts with the GRH */

/* One data QP and what the peer told us about its counterpart. */
struct pt_qp {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;      /* NULL with --use_old_post_send */
	struct ibv_ah *ah;          /* UD senders */
	uint32_t psn;
	uint32_t remote_qpn;
	uint32_t remote_qkey;       /* UD: PT_QKEY, or rdma_cm's with -R */
	uint64_t remote_addr;       /* RDMA verbs: the peer's region and its */
	uint32_t remote_rkey;       /* key (from its key message: pt_loop_view) */
	uint8_t *send_buf;          /* local region: what we send */
	uint8_t *recv_buf;          /* peer-visible region: what we receive */
	struct ibv_mr *mr;          /* --mr_per_qp: this QP's own; NULL: the shared one */
	/* per run */
	uint64_t posted, completed;
	/* pt_post_send's place in the run, set at its first post: the next
	 * WR's offset in the cycle buffer, the WRs before the next one the
	 * cq_mod rule signals, the local key */
	size_t send_off;
	uint32_t send_unsig, send_lkey;
	uint64_t recv_posted, received;
	uint64_t recv_owed;         /* consumed, not yet reposted (--recv_post_list) */
};

/* This run's shape, settled with the peer: what the loops size by. */
struct pt_run {
	enum ibv_mtu mtu;           /* after the exchange with the peer */
	int page_size, cache_line;  /* max of both sides */
	uint64_t size;              /* message size of the current run */
	uint64_t max_size;          /* buffers are sized for this */
	int tx_depth, rx_depth, cq_mod, inline_size;
	int out_reads;              /* READ/ATOMIC in flight we accept (-o); else 1 */
};

/* The verbs resources the loops post and poll on (pt_resources_create). */
struct pt_res {
	struct ibv_pd *pd;
	/* --no_lock: a thread domain and the parent domain over pd and it; QPs
	 * and CQs are created in the parent domain, MRs on pd */
	struct ibv_td *td;
	struct ibv_pd *parent_pd;
	uint8_t *buf;
	size_t region;              /* bytes per region; 2 per QP */
	size_t buf_len;
	struct ibv_mr *mr;
	/* issue 18, memory group */
	size_t map_len;             /* buf is mmap'd (huge pages, --mmap): its length */
	struct ibv_mr **qp_mrs;     /* --mr_per_qp: one per QP (mr is the first) */
	struct ibv_mr *null_mr;     /* --use-null-mr: the local SGEs' key */
	uint8_t *pattern;           /* --payload_file_path: the words, little endian */
	size_t pattern_len;
	struct ibv_comp_channel *channel;
	struct pt_chan_waker waker; /* -e: wakes a sleep on channel (chan_wait.h) */
	struct ibv_cq *send_cq, *recv_cq;
	struct ibv_srq *srq;        /* --use-srq: every QP's receives; NULL without */
	int num_qps;
	struct pt_qp *qps;
	/* What every send WR of the run shares (post.c, set at a QP's first
	 * post of a run): the cycle buffer's step and length (0: one address),
	 * the WR's length, the inline flag. */
	struct pt_send_plan {
		size_t step, wrap;
		uint32_t len;
		unsigned flags;
	} send_plan;
	/* hardware CQE timestamps: with a plugin listening on a device that
	 * stamps CQEs, both CQs are ex-CQs polled through these (hwts.h) */
	bool hwts;
	struct pt_cqx send_cqx, recv_cqx;
	struct pt_hwclock *hwclock;
	char hwts_note[160];        /* why there are none, for the run info */
};

/* The key of QP q's regions, for receives (and READ/atomic results). */
static inline uint32_t pt_qp_lkey(const struct pt_res *r, const struct pt_qp *q)
{
	return (q->mr ? q->mr : r->mr)->lkey;
}
/* The key of what QP q sends from: the null MR with --use-null-mr. */
static inline uint32_t pt_qp_send_lkey(const struct pt_res *r, const struct pt_qp *q)
{
	return r->null_mr ? r->null_mr->lkey : pt_qp_lkey(r, q);
}

/* hwts_cq.c: the ex-CQ poll. */
int pt_poll_cq_hw(struct pt_res *r, bool recv, int n, struct ibv_wc *wc, uint64_t *hw_ns);
/* What the loops poll with: ibv_poll_cq, or with hardware timestamps the
 * ex-CQ, hw_ns[k] then holding completion k's NIC time in ns. Sees only the
 * resources. */
static inline int pt_poll_cq(struct pt_res *r, bool recv, int n, struct ibv_wc *wc,
			     uint64_t *hw_ns)
{
	if (__builtin_expect(!r->hwts, 1))
		return ibv_poll_cq(recv ? r->recv_cq : r->send_cq, n, wc);
	return pt_poll_cq_hw(r, recv, n, wc, hw_ns);
}
/* A provider's poll function, as the context's ops hold it. */
typedef int (*pt_poll_fn)(struct ibv_cq *, int, struct ibv_wc *);
/* Up to turns polls of cq for n completions while it is empty; the last
 * poll's result. The caller holds fn and cq (the inline ibv_poll_cq
 * reloads both through the CQ's context at every call), so a poll of the
 * spin is a call and two tests (run_lat.c, run_bw.c). */
static inline int pt_spin_poll(pt_poll_fn fn, struct ibv_cq *cq, int n, struct ibv_wc *wc,
			       unsigned turns)
{
	int got;

	do
		got = fn(cq, n, wc);
	while (got == 0 && --turns);
	return got;
}
/* For the hooks: &hw_ns[k] when completion k has a NIC time, else NULL. */
static inline const uint64_t *pt_hw_ns(const struct pt_res *r, const uint64_t *hw_ns, int k)
{
	return r->hwts ? &hw_ns[k] : NULL;
}

/* A WR's wr_id: the QP index in the top 16 bits, the WR's sequence on
 * that QP below (post.c sets it, completions are decoded with these). */
#define PT_WRID_QP_SHIFT 48
#define PT_WRID_IDX_MASK ((1ull << PT_WRID_QP_SHIFT) - 1)
static inline uint64_t pt_wrid(int qp, uint64_t seq)
{
	return ((uint64_t)qp << PT_WRID_QP_SHIFT) | (seq & PT_WRID_IDX_MASK);
}
static inline int pt_wrid_qp(uint64_t wr_id)
{
	return (int)(wr_id >> PT_WRID_QP_SHIFT);
}
static inline uint64_t pt_wrid_index(uint64_t wr_id)
{
	return wr_id & PT_WRID_IDX_MASK;
}

#endif
