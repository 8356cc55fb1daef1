/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode of libwrtrace.so: internals shared by preload.c (contexts,
 * QPs, ctx->ops post/poll, the run), preload_qpx.c (ibv_qp_ex builders) and
 * preload_cq.c (CQs upgraded for hardware CQE timestamps).
 *
 * Objects: a context table (original ctx->ops and verbs_context pointers,
 * saved per context) and a QP slot table. A slot's index is the recorder's
 * QP index; slots live for the whole process (never reused), so a wrapper
 * can always find the originals it must call. Both tables are static: the
 * hot path never allocates. One recorder run spans from the first QP
 * created to ibv_close_device of its context (or process exit).
 *
 * Threads: control verbs take a mutex; the data path assumes one thread
 * posts and polls (as perftest's BW and latency loops do). */
#ifndef PT_PRELOAD_H
#define PT_PRELOAD_H
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "util/hwts.h"
#include "plugin/recorder/wrtrace.h"

#define WRP_SLOTS 32      /* QPs followed per process */
#define WRP_CTXS 8        /* contexts open at once */
#define WRP_CQS 64        /* CQs read through the extended API at once */
#define WRP_POLL_MAX 64   /* completions one emulated poll_cq returns at most */
#define WRP_BATCH 64      /* WRs between wr_start and wr_complete kept for one post time */
#define WRP_ENV_OUT "WRTRACE_OUT"
#define WRP_OPT_NOHWTS "nohwts" /* WRTRACE_OUT option: keep the program's CQs as they are */

/* The ibv_qp_ex pointers we wrap, as the provider set them. */
struct wrp_qpx_orig {
	void (*wr_atomic_cmp_swp)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t, uint64_t);
	void (*wr_atomic_fetch_add)(struct ibv_qp_ex *, uint32_t, uint64_t, uint64_t);
	void (*wr_bind_mw)(struct ibv_qp_ex *, struct ibv_mw *, uint32_t, const struct ibv_mw_bind_info *);
	void (*wr_local_inv)(struct ibv_qp_ex *, uint32_t);
	void (*wr_rdma_read)(struct ibv_qp_ex *, uint32_t, uint64_t);
	void (*wr_rdma_write)(struct ibv_qp_ex *, uint32_t, uint64_t);
	void (*wr_rdma_write_imm)(struct ibv_qp_ex *, uint32_t, uint64_t, __be32);
	void (*wr_send)(struct ibv_qp_ex *);
	void (*wr_send_imm)(struct ibv_qp_ex *, __be32);
	void (*wr_send_inv)(struct ibv_qp_ex *, uint32_t);
	void (*wr_send_tso)(struct ibv_qp_ex *, void *, uint16_t, uint16_t);
	void (*wr_set_inline_data)(struct ibv_qp_ex *, void *, size_t);
	void (*wr_set_inline_data_list)(struct ibv_qp_ex *, size_t, const struct ibv_data_buf *);
	void (*wr_set_sge)(struct ibv_qp_ex *, uint32_t, uint64_t, uint32_t);
	void (*wr_set_sge_list)(struct ibv_qp_ex *, size_t, const struct ibv_sge *);
	void (*wr_start)(struct ibv_qp_ex *);
	int (*wr_complete)(struct ibv_qp_ex *);
	void (*wr_abort)(struct ibv_qp_ex *);
};

/* A WR built between wr_start and wr_complete, not yet rung. */
struct wrp_pend {
	uint64_t wr_id;
	uint32_t bytes;
	uint8_t opcode, signaled;
};

struct wrp_slot {
	struct ibv_qp *qp;          /* NULL once destroyed */
	struct ibv_qp_ex *qpx;      /* NULL until the QP is seen as an ibv_qp_ex */
	uint32_t qpn, idx;
	bool sig_all;               /* sq_sig_all: every send WR signaled */
	uint64_t send_seq, recv_seq;
	struct wrp_qpx_orig orig;
	uint32_t npend;
	struct wrp_pend pend[WRP_BATCH];
};

struct wrp_ctx {
	struct ibv_context *ctx;
	int (*post_send)(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **);
	int (*post_recv)(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
	int (*poll_cq)(struct ibv_cq *, int, struct ibv_wc *);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *, struct ibv_qp_init_attr_ex *);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *, struct ibv_cq_init_attr_ex *);
	struct pt_hwts_caps caps;   /* completion_timestamp_mask, clock in Hz */
	bool hwts;                  /* CQE stamps read: poll_cq and create_cq_ex patched */
	bool upgrade;               /* new CQs still get stamps (off after a failed one) */
	struct pt_hwclock clk;      /* this NIC's clock against CLOCK_MONOTONIC_RAW */
};

/* A CQ read through the extended API (preload_cq.c). */
struct wrp_cq {
	struct ibv_cq_ex *cq;       /* NULL: a free entry */
	struct wrp_ctx *c;
	/* the provider's read_completion_ts, kept aside: the program did not
	 * ask for it; NULL when the CQ's own pointer is read */
	uint64_t (*read_ts)(struct ibv_cq_ex *);
	uint64_t app_flags;         /* wc_flags the program asked for (its own ex-CQs) */
	bool emulate;               /* its poll_cq served by start/next/end_poll */
	bool ts;                    /* its completions carry NIC times */
};

struct wrp_state {
	bool active;                /* preloaded, interposition took, WRTRACE_OUT valid */
	bool run_on;                /* a recorder run is open */
	struct wrt *w;
	struct wrp_ctx *run_ctx;    /* the context the run started on */
	uint32_t run;
	uint32_t nslots;
	struct wrp_slot slots[WRP_SLOTS];
	struct wrp_slot *last_qpx, *last_qp;
	struct wrp_ctx ctxs[WRP_CTXS];
	struct wrp_cq cqs[WRP_CQS];
	struct wrp_cq *last_cq;
	uint32_t cqs_hi;            /* entries at or above are free */
	bool no_hwts;               /* WRTRACE_OUT had :nohwts */
	uint64_t cqs_over;          /* CQs beyond WRP_CQS: software times */
	uint64_t opened;            /* contexts opened through us */
	uint64_t qps_over;          /* QPs beyond WRP_SLOTS: not followed */
	uint64_t sends, recvs;      /* WRs recorded this run, by direction */
	uint32_t max_bytes;         /* largest send WR this run (the message size) */
	uint32_t max_recv_bytes;    /* largest receive buffer (a receiver's message size) */
};

extern struct wrp_state wrp;

/* preload.c: the data path (uses none of the other preload files) */
/* One WR posted on slot s at time t (only while a run is open). */
void wrp_emit_post(struct wrp_slot *s, uint32_t opcode, uint64_t wr_id, uint32_t bytes,
		   bool signaled, bool recv, uint64_t t);
/* The slot of a QP we followed, NULL for others. */
struct wrp_slot *wrp_slot_of_qpx(struct ibv_qp_ex *qpx);
/* The slot of a QP we followed (the last one looked up first), NULL for others. */
struct wrp_slot *wrp_slot_of_qp(struct ibv_qp *qp);
/* The context's entry, NULL when not ours. */
struct wrp_ctx *wrp_ctx_of(struct ibv_context *ctx);
/* The patched ctx->ops.post_send and post_recv. */
int wrp_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int wrp_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
/* Completions polled at software time t into the recorder; hw: their NIC
 * times, or NULL. Only while a run is open. */
void wrp_emit_wcs(const struct ibv_wc *wc, int n, uint64_t t, const uint64_t *hw);
/* The patched ctx->ops.poll_cq of a context without CQE stamps. */
int wrp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

/* preload_ctl.c: contexts, QPs, the run, set-up */
/* Patch a context just opened: ctx->ops post/poll, vctx->create_qp_ex.
 * 0, or -1 when the table is full (the context then runs untraced). */
int wrp_attach_context(struct ibv_context *ctx);
void wrp_detach_context(struct ibv_context *ctx);
/* Follow a QP just created (type and caps from its init attributes). */
struct wrp_slot *wrp_register_qp(struct ibv_qp *qp, enum ibv_qp_type type, int sq_sig_all,
				 uint32_t max_send_wr, uint32_t max_recv_wr);
/* Close the open run: rows to the file, summary to stdout. */
void wrp_run_finish(void);
/* Set up the recorder from "FILE[:max=N][:fifo=N][:nodefer][:quiet][:nohwts]"; 0 or -1 (message on stderr). */
int wrp_setup(const char *spec);
void wrp_teardown(void);

/* A WR's bytes: its scatter/gather list's lengths, at most UINT32_MAX (the
 * row's field). Inline: every post of both post APIs counts them. */
static inline uint32_t wrp_sge_bytes(const struct ibv_sge *sg, size_t n)
{
	uint64_t bytes = 0;

	for (size_t i = 0; i < n; i++)
		bytes += sg[i].length;
	return bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
}

/* preload_qpx.c */
/* Install our builders on qpx (idempotent; after ibv_modify_qp too, as
 * mlx5 rewrites wr_complete on every transition to RTS or RESET). */
void wrp_wrap_qpx(struct wrp_slot *s, struct ibv_qp_ex *qpx);

/* preload_cq.c */
typedef struct ibv_cq *(*wrp_create_cq_fn)(struct ibv_context *, int, void *,
					   struct ibv_comp_channel *, int);
/* At open: probe the stamps, and when on, patch create_cq_ex and start the
 * NIC clock. Says on stderr whether they are on, off (why) or unsupported.
 * True when the context's poll_cq must be wrp_poll_cq_hw. */
bool wrp_hwts_attach(struct wrp_ctx *c);
/* At close: forget the context's CQs. */
void wrp_hwts_detach(struct wrp_ctx *c);
/* The run info's hw_ts for a run on c. */
enum pt_plugin_hw_ts wrp_hwts_state(const struct wrp_ctx *c);
/* Just after the run started on c: a fresh clock sample, the fit to the recorder. */
void wrp_hwts_run_started(struct wrp_ctx *c);
/* ibv_create_cq: an ex-CQ with stamps where the context reads them, else
 * real's CQ (also when the ex-CQ cannot be made). */
struct ibv_cq *wrp_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			     struct ibv_comp_channel *ch, int vec, wrp_create_cq_fn real);
/* ibv_destroy_cq through real; the CQ is forgotten once it is gone. */
int wrp_destroy_cq(struct ibv_cq *cq, int (*real)(struct ibv_cq *));
/* The patched ctx->ops.poll_cq of a context that reads CQE stamps. */
int wrp_poll_cq_hw(struct ibv_cq *cq, int n, struct ibv_wc *wc);
/* The clock-info reader for a context at open: mlx5dv_get_clock_info when
 * the device is mlx5, else NULL (hca_core_clock). Tests replace it. */
extern pt_hwclock_info_fn (*wrp_clock_info_of)(struct ibv_context *ctx);

#endif
