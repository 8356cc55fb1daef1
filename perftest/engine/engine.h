/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine shared by every tool: device and queue setup (device.c, qp.c),
 * multicast (mcast.c), the out-of-band session (session.c) and the view the
 * measurement loops get (pt_loop_view; the loops themselves: loop.h). A
 * tool's main only chains these. */
#ifndef PT_ENGINE_H
#define PT_ENGINE_H
/* The loops and the post path define this: they see loop.h only. */
#ifdef PT_LOOP_VIEW_ONLY
#error "a loop file sees struct pt_loop (loop.h), never the context"
#endif
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "perftest/cli/params.h"
#include "perftest/wire/oob.h"
#include "perftest/wire/wire.h"
#include "perftest/report/report.h"
#include "util/hwts.h"
#include "res.h"
#include "placement.h"
#include "loop.h"

#define PT_QKEY 0x11111111u     /* upstream's default Q_Key */
#define PT_MCAST_QPN 0xffffffu  /* multicast destination QPN */
#define PT_EXIT_RUN_FAILED 17   /* upstream's exit code when a run fails */

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
	uint16_t pkey;              /* the P_Key at --pkey_index */
	/* -R: rdma_cm's device list (verbs is one of them) */
	struct ibv_context **cm_devices;
	struct pt_place place;      /* where we run and allocate (placement.h) */
	/* -O/--dualport: the other port (the fields above are the -i port's) */
	int port2;
	struct ibv_port_attr port2_attr;
	int gid_index2;
	union ibv_gid gid2;
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
	char numa_node[48];         /* the header's NUMA node value */
	struct pt_test_info info;
	struct pt_json *json;       /* --out_json accumulator, NULL otherwise */
	uint64_t counters_before[PT_COUNTERS_MAX];   /* -W, at the header */
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

/* device.c, qp_create.c ------------------------------------------------------------ */
/* Open the device (-d or the first), query port and GID: no network yet. */
int pt_dev_open(struct pt_ctx *c, const struct pt_params *p);
/* The checks and settings that need the device but no peer, before any
 * traffic: -X against num_comp_vectors, --no_lock's thread domain, NUMA
 * placement. 0, or -1 after printing why (naming the errno or capability). */
int pt_dev_local_setup(struct pt_ctx *c);
/* PD, buffer, MR, CQs and QPs in INIT, sized for c->run.max_size. */
int pt_resources_create(struct pt_ctx *c);
/* QP i's creation attributes (CQs, depths, type, post API) and, once a QP
 * exists (ours or rdma_cm's), its place in the context. */
void pt_qp_init_attr(const struct pt_ctx *c, struct ibv_qp_init_attr_ex *a);
void pt_qp_adopt(struct pt_ctx *c, int i, struct ibv_qp *qp);
/* Our QP i (not rdma_cm's), in INIT; pt_qp_init_state: its INIT attributes
 * into *init, returning the attribute mask. */
int pt_qp_create(struct pt_ctx *c, int i);
int pt_qp_init_state(const struct pt_ctx *c, int i, struct ibv_qp_attr *init);
/* Tear everything down (safe on a partly built context). */
void pt_ctx_destroy(struct pt_ctx *c);
/* ibv_mtu enum -> bytes. */
unsigned pt_mtu_bytes(enum ibv_mtu m);

/* port_opts.c: --force-link, --dualport, --pkey_index, -W against the port
 * (called by pt_dev_open, before any peer); 0 or -1 with the reason printed. */
int pt_port_options_check(struct pt_ctx *c);
/* -W: read the counters now; 0 or -1 with why. */
int pt_port_counters_snap(struct pt_ctx *c, uint64_t *vals, char *why, size_t why_len);

/* The QPs of the run: -q, doubled by -O (facts: "2 ports, doubles QPs"). */
static inline int pt_qps_total(const struct pt_params *p)
{
	return p->conn.num_qps * (p->addr.dualport ? 2 : 1);
}
/* -O/--dualport: QP i's port, GID index, GID and LID. The first half of the
 * QPs is on the -i port, the second half on the other one (the facts say
 * only "2 ports, doubles QPs"); without -O every QP is on the -i port. */
static inline bool pt_qp_on_port2(const struct pt_ctx *c, int i)
{
	return c->p->addr.dualport && i >= c->res.num_qps / 2;
}
static inline int pt_qp_port(const struct pt_ctx *c, int i)
{
	return pt_qp_on_port2(c, i) ? c->dev.port2 : c->p->dev.ib_port;
}
static inline int pt_qp_gid_index(const struct pt_ctx *c, int i)
{
	return pt_qp_on_port2(c, i) ? c->dev.gid_index2 : c->dev.gid_index;
}
static inline const union ibv_gid *pt_qp_gid(const struct pt_ctx *c, int i)
{
	return pt_qp_on_port2(c, i) ? &c->dev.gid2 : &c->dev.gid;
}
static inline uint16_t pt_qp_lid(const struct pt_ctx *c, int i)
{
	return pt_qp_on_port2(c, i) ? c->dev.port2_attr.lid : c->dev.port_attr.lid;
}

/* qp.c ----------------------------------------------------------------------------- */
/* QP i's address vector toward the peer's key rem (RTR; UD senders' AH). */
void pt_ah_attr_fill(const struct pt_ctx *c, int i, const struct pt_key *rem,
		     struct ibv_ah_attr *ah);
/* Our key message for QP i (after pt_resources_create). */
void pt_key_fill(struct pt_ctx *c, int i, struct pt_key *k);
/* RTR (and RTS when we send), AHs for UD senders, from c->peer.rem_keys. */
int pt_qps_connect(struct pt_ctx *c, bool will_send);
/* Receives each QP posts before a run: up to iters, within rx_depth (with
 * --use-srq the SRQ's rx_depth entries split evenly among the QPs). */
uint64_t pt_recv_prepost(const struct pt_ctx *c);
/* The tool's send verb as the old post API's opcode (-A picks the atomic). */
enum ibv_wr_opcode pt_wr_opcode(const struct pt_ctx *c);

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
int pt_trace_end(int status, uint64_t elapsed_ns);

/* loop_view.c ----------------------------------------------------------------------- */
/* The view of this run the loops get (loop.h), built by the tool at the
 * start of each run (one size), after the keys: the resources, the run's
 * shape, the option values the loops read, the watch over the peer's
 * out-of-band channel; each QP gets the peer's region address and key. No
 * periodic row: the tool sets period_row and period_arg. */
void pt_loop_view(struct pt_ctx *c, struct pt_loop *l);

/* pace_hw.c: the HW rate limiter (helper "pace") ------------------------------------ */
/* --rate_limit in bytes per second (M, g units; 0 for p) and in kb/s. */
double pt_pace_bytes_ps(const struct pt_pace_params *r);
double pt_pace_kbps(const struct pt_pace_params *r);
/* HW: 0 when the device's packet pacing caps allow the rate for the QP type,
 * else -1 after naming the missing cap (no traffic yet). 0 for other types. */
int pt_pace_hw_check(const struct pt_params *p, const struct ibv_device_attr_ex *a,
		     const char *devname);
/* HW: set QP i's rate limit (once in RTS); 0 or -1 (said). */
int pt_pace_hw_apply(const struct pt_params *p, struct ibv_qp *qp, int i);

#endif
