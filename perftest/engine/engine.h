/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine shared by every tool: device and queue setup (device.c, qp.c),
 * multicast (mcast.c), the out-of-band session (session.c) and the
 * measurement loops (run_bw.c). A tool's main only chains these. */
#ifndef PT_ENGINE_H
#define PT_ENGINE_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "perftest/cli/params.h"
#include "perftest/wire/oob.h"
#include "perftest/wire/wire.h"
#include "perftest/report/report.h"
#include "util/hwts.h"

#define PT_UD_GRH 40            /* a UD receive buffer starts with the GRH */
#define PT_QKEY 0x11111111u     /* upstream's default Q_Key */
#define PT_MCAST_QPN 0xffffffu  /* multicast destination QPN */
#define PT_EXIT_RUN_FAILED 17   /* upstream's exit code when a run fails */

/* One data QP and what the peer told us about its counterpart. */
struct pt_qp {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;      /* NULL with --use_old_post_send */
	struct ibv_ah *ah;          /* UD senders */
	uint32_t psn;
	uint32_t remote_qpn;
	uint32_t remote_qkey;       /* UD: PT_QKEY, or rdma_cm's with -R */
	uint8_t *send_buf;          /* local region: what we send */
	uint8_t *recv_buf;          /* peer-visible region: what we receive */
	/* per run */
	uint64_t posted, completed;
	uint64_t recv_posted, received;
};

/* The device as opened: no peer needed yet (pt_dev_open). */
struct pt_dev {
	struct ibv_context *verbs;
	struct ibv_device_attr_ex dev_attr;
	struct ibv_port_attr port_attr;
	char devname[PT_DEVNAME_MAX];
	bool is_roce;               /* Ethernet link layer */
	int gid_index;              /* -1 on IB without -x */
	union ibv_gid gid;
	char netdev[64];            /* RoCE: the GID's netdev ("" if unknown) */
	/* -R: rdma_cm's device list (verbs is one of them) */
	struct ibv_context **cm_devices;
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
	uint8_t *buf;
	size_t region;              /* bytes per region; 2 per QP */
	size_t buf_len;
	struct ibv_mr *mr;
	struct ibv_comp_channel *channel;
	struct ibv_cq *send_cq, *recv_cq;
	int num_qps;
	struct pt_qp *qps;
	/* hardware CQE timestamps: with a plugin listening on a device that
	 * stamps CQEs, both CQs are ex-CQs polled through these (hwts.h) */
	bool hwts;
	struct pt_cqx send_cqx, recv_cqx;
	struct pt_hwclock *hwclock;
	char hwts_note[160];        /* why there are none, for the run info */
};

/* The peer: the out-of-band channel and what it told us. */
struct pt_peer {
	struct pt_oob oob;
	bool use_gid;               /* key messages carry a GID (108 bytes) */
	struct pt_key *my_keys, *rem_keys;
	struct pt_cm_qps *cm_qps;   /* -R: the data QPs' rdma_cm ids */
};

/* Multicast membership. */
struct pt_mcast {
	bool attached;
	int igmp_fd;                /* socket holding the IPv4 group membership */
	uint8_t mgid[16];
};

/* What the header block and JSON say about this run. */
struct pt_out {
	char test_name[96];
	struct pt_test_info info;
	struct pt_json *json;       /* --out_json accumulator, NULL otherwise */
};

/* A tool's whole state, grouped by who needs it: the options (p), the
 * device, this run's shape, the resources the loops use, the peer,
 * multicast, and what is reported. */
struct pt_ctx {
	const struct pt_params *p;
	struct pt_dev dev;
	struct pt_run run;
	struct pt_res res;
	struct pt_peer peer;
	struct pt_mcast mcast;
	struct pt_out out;
};

/* Zero a context before first use (sockets and fds start closed). */
void pt_ctx_init(struct pt_ctx *c);

/* Set by SIGINT/SIGTERM (the tool installs the handler: tools/tool.c);
 * loops stop, the tool cleans up. Defined in interrupt.c. */
extern volatile sig_atomic_t pt_interrupted;

/* device.c, qp_create.c ------------------------------------------------------------ */
/* Open the device (-d or the first), query port and GID: no network yet. */
int pt_dev_open(struct pt_ctx *c, const struct pt_params *p);
/* PD, buffer, MR, CQs and QPs in INIT, sized for c->run.max_size. */
int pt_resources_create(struct pt_ctx *c);
/* QP i's creation attributes (CQs, depths, type, post API) and, once a QP
 * exists (ours or rdma_cm's), its place in the context. */
void pt_qp_init_attr(const struct pt_ctx *c, struct ibv_qp_init_attr_ex *a);
void pt_qp_adopt(struct pt_ctx *c, int i, struct ibv_qp *qp);
/* Our QP i (not rdma_cm's), in INIT. */
int pt_qp_create(struct pt_ctx *c, int i);
/* Tear everything down (safe on a partly built context). */
void pt_ctx_destroy(struct pt_ctx *c);
/* ibv_mtu enum -> bytes. */
unsigned pt_mtu_bytes(enum ibv_mtu m);

/* qp.c ----------------------------------------------------------------------------- */
/* Our key message for QP i (after pt_resources_create). */
void pt_key_fill(struct pt_ctx *c, int i, struct pt_key *k);
/* RTR (and RTS when we send), AHs for UD senders, from c->peer.rem_keys. */
int pt_qps_connect(struct pt_ctx *c, bool will_send);
/* Post n receives on QP i (UD adds the GRH room). */
int pt_post_recv(struct pt_ctx *c, int i, uint64_t n);

/* Post n send WRs (a post list) on QP i; signaled flags per the cq_mod rule. */
int pt_post_send(struct pt_ctx *c, int i, unsigned n, uint64_t iters);
/* A completion's wr_id: the QP index and the WR's sequence on that QP. */
int pt_wrid_qp(uint64_t wr_id);
uint64_t pt_wrid_index(uint64_t wr_id);

/* cm_qps.c: -R, data QPs created and connected by rdma_cm (docs/wire-protocol.md §9.3) -- */
/* Barrier, connect every QP (server: listen and accept), UD address
 * handshake, barrier. Called by pt_resources_create with -R. */
int pt_cm_qps_connect(struct pt_ctx *c);
void pt_cm_qps_destroy(struct pt_ctx *c);

/* hwts_cq.c: CQs with hardware timestamps -------------------------------------- */
#define PT_HWTS_ENV "PERFTEST_HWTS"   /* "off": plain CQs even when tracing */
/* Create send_cq/recv_cq: ex-CQs with CQE timestamps when a plugin listens
 * and the device stamps CQEs (then c->res.hwts), else plain ones. */
int pt_cqs_create(struct pt_ctx *c, int ncq_send, int ncq_recv);
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
/* For the hooks: &hw_ns[k] when completion k has a NIC time, else NULL. */
static inline const uint64_t *pt_hw_ns(const struct pt_res *r, const uint64_t *hw_ns, int k)
{
	return r->hwts ? &hw_ns[k] : NULL;
}

/* mcast.c -------------------------------------------------------------------------- */
/* Receiver: attach QP 0 to the MGID (and join the IPv4 group on RoCE). */
int pt_mcast_attach(struct pt_ctx *c);
/* Sender: check the IPv4 group routes through the GID's netdev. */
int pt_mcast_check_route(struct pt_ctx *c, const uint8_t mgid[16]);
void pt_mcast_detach(struct pt_ctx *c);
/* A side that sends to a group it also joined (send_lat with one group):
 * leave our own source out of the IPv4 membership, so the IP stack does not
 * hand our messages back to our QP as if the peer had sent them. */
int pt_mcast_block_own(struct pt_ctx *c);

/* session.c ------------------------------------------------------------------------ */
/* Connect the OOB channel and run the preamble V, S1/S2, M (docs/wire-protocol.md §6.1). */
int pt_session_start(struct pt_ctx *c);
/* N with a 6.28+ peer (after the UD size clamp): every term must match;
 * a mismatch is named with both values. No-op with other peers. */
int pt_session_negotiate(struct pt_ctx *c);
/* Our side of that block, as upstream 6.28 fills it for the same command. */
struct pt_negotiate;
void pt_session_negotiate_fill(const struct pt_ctx *c, struct pt_negotiate *n);
/* One key exchange per QP: fill my_keys, receive rem_keys. */
int pt_session_xchg_keys(struct pt_ctx *c, bool print);
int pt_session_barrier(struct pt_ctx *c);
/* A barrier with no timeout (keepalive instead) while the peer runs. */
int pt_session_wait_peer_run(struct pt_ctx *c);
/* Fill c->out.info and print the header block (and start the JSON document). */
int pt_session_print_header(struct pt_ctx *c);
/* Print (and record in JSON) one BW result row. */
void pt_session_bw_row(struct pt_ctx *c, const struct pt_bw_result *r);
/* Write the JSON file if asked; 0 or -1. */
int pt_session_finish(struct pt_ctx *c);
void pt_session_print_keys(struct pt_ctx *c, bool remote);

/* run_bw.c ------------------------------------------------------------------------- */
struct pt_json;
/* --run_infinitely: called every period with the messages of that period. */
typedef void (*pt_bw_period_fn)(struct pt_ctx *c, uint64_t msgs, uint64_t ns);
struct pt_bw_meas {
	uint64_t msgs;              /* completed messages over all QPs */
	uint64_t lost;              /* UD receiver: messages that never arrived */
	uint64_t elapsed_ns;
	struct pt_bw_peak *peak;    /* the BW peak as the run goes, NULL without */
	double cpu_util;            /* --cpu_util percent, < 0 when not measured */
	pt_bw_period_fn on_period;  /* set by the caller before the run */
	bool interrupted;           /* SIGINT: msgs and elapsed_ns so far */
};
/* trace.c: plugins and --trace (plugin/hooks/hooks.h) ----------------------------------- */
/* Load PERFTEST_PLUGIN, --trace (the recorder trace_ops, which the program
 * links: the engine knows only the hook layer) and --plugin; 0 or -1
 * (message printed). */
struct pt_plugin_ops;
int pt_trace_load(const struct pt_params *p, const struct pt_plugin_ops *trace_ops);
/* --trace=ARG alone: 0, or -1 with err filled. */
int pt_trace_load_builtin(const struct pt_plugin_ops *ops, const char *arg, char *err, size_t err_len);
/* Around each run (one size): begin before receives are pre-posted, end
 * after the result row is printed (the recorder prints its summary). */
int pt_trace_begin(struct pt_ctx *c, bool sends, bool recvs);
int pt_trace_end(struct pt_ctx *c, int status, uint64_t elapsed_ns);
/* The tool's send opcode as a plugin opcode (qp.c). */
uint32_t pt_wr_plugin_opcode(const struct pt_ctx *c);

/* run_lat.c ------------------------------------------------------------------------ */
/* Beyond this many iterations latency samples go to a histogram (results.h)
 * instead of an array: bounded memory, <= 0.78 % error. */
#define PT_LAT_RAW_MAX 10000000ull
struct pt_hist;
struct pt_lat_meas {
	uint64_t *stamps;           /* iteration mode: post time of each iteration */
	struct pt_hist *hist;       /* instead of stamps beyond PT_LAT_RAW_MAX, and
	                             * in duration mode (the window's round trips) */
	uint64_t t_prev;            /* with hist: the previous post time */
	uint64_t n;                 /* stamps taken */
	uint64_t iters;             /* duration mode: round trips inside the window */
	uint64_t elapsed_ns;        /* duration mode: the window */
	bool interrupted;           /* SIGINT: n (or iters, elapsed_ns) so far */
};
int pt_run_lat_send(struct pt_ctx *c, struct pt_lat_meas *m);
int pt_run_lat_write(struct pt_ctx *c, struct pt_lat_meas *m);
int pt_run_lat_read(struct pt_ctx *c, struct pt_lat_meas *m);
void pt_lat_meas_free(struct pt_lat_meas *m);

int pt_run_bw_send(struct pt_ctx *c, struct pt_bw_meas *m);
int pt_run_bw_recv(struct pt_ctx *c, struct pt_bw_meas *m);
int pt_run_bw_bidir(struct pt_ctx *c, struct pt_bw_meas *m);
void pt_bw_meas_free(struct pt_bw_meas *m);

#endif
