/* SPDX-License-Identifier: BSD-2-Clause */
/* The lifecycle view's share of the BPF object (lifecycle.bpf.h) and the
 * user-space program (lifecycle.c, conntable.c, life_run.c): the event of
 * one QP create / state change / destroy, AH create / destroy or rdma_cm
 * connection request, and the per-QP state the BPF side keeps (what the
 * connection table prints). Fixed-width types only, as in rdmamon.h. */
#ifndef MONITOR_LIFE_EVENT_H
#define MONITOR_LIFE_EVENT_H

#ifndef __bpf__
#include <linux/types.h>
#endif

enum rm_life_kind {
	LE_QP_CREATE, LE_QP_MODIFY, LE_QP_DESTROY,
	LE_AH_CREATE, LE_AH_DESTROY,
	LE_CM_REQ_SENT,        /* rdma_cm: this side sent a connection request */
	LE_CM_REQ_RECV,        /* rdma_cm: a request reached a listener (CONNECT_REQUEST) */
	LE_NKINDS
};

#define RM_QPS_UNKNOWN 255     /* a QP created before the monitor started */
#define RM_SA_LEN 28           /* sizeof(struct sockaddr_in6): what rdma_cm's tracepoints keep */

struct rm_life_event {
	__u64 ts_ns;           /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 cgid;            /* cgroup v2 id of the calling task */
	__u64 obj;             /* AH: the kernel's object address (pairs create and destroy) */
	__u32 pid, tid;
	__u32 dev;             /* ib_device index (name: the devnames map) */
	__u32 port;
	__u32 qpn;             /* local QPN (QP events); AH/CM: 0 */
	__u32 rqpn;            /* remote QPN (has_remote) */
	__s32 err;             /* CM event status */
	__u16 kind;            /* enum rm_life_kind */
	__u8 qp_type;          /* enum ib_qp_type (RC 2, UC 3, UD 4, XRC 9/10 ...) */
	__u8 old_state, new_state;   /* enum ib_qp_state, RM_QPS_UNKNOWN */
	__u8 has_remote;       /* RTR of a connected QP: rqpn and dgid are set */
	__u8 has_sgid;         /* sgid / sgid_index are the GID attribute the core resolved */
	__u8 pad;
	__u32 sgid_index;
	__u8 sgid[16], dgid[16];
	__u8 src[RM_SA_LEN], dst[RM_SA_LEN];   /* CM: the ids' socket addresses */
	char comm[16];
};

struct rm_qp_key {
	__u32 dev;
	__u32 qpn;
};

/* What the BPF side knows of a live QP (map life_qps): its state and, once
 * it reached RTR connected, its peer. */
struct rm_qp_info {
	__u64 cgid;
	__u64 rtr_ns;          /* when it reached RTR (0: never) */
	__u32 pid;
	__u32 port;
	__u32 rqpn;
	__u32 sgid_index;
	__u8 qp_type, state, has_remote, has_sgid;
	__u8 sgid[16], dgid[16];
	char comm[16];
};

/* Counters of life events the ring buffer had no room for, per kind
 * (array map life_lost, LE_NKINDS slots). */

#endif
