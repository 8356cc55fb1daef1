/* SPDX-License-Identifier: BSD-2-Clause */
/* What the BPF object (rdmamon.bpf.c) and the user-space program share:
 * object types, operations, map keys and values, the ring-buffer event.
 * Fixed-width kernel types only, so both compilers lay them out alike. */
#ifndef MONITOR_RDMAMON_H
#define MONITOR_RDMAMON_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* The first eight follow the kernel's enum rdma_restrack_type (what
 * `rdma resource` lists); AH is not tracked there, so it comes last. */
enum rm_type {
	RM_PD, RM_CQ, RM_QP, RM_CM_ID, RM_MR, RM_CTX, RM_COUNTER, RM_SRQ,
	RM_AH,
	RM_NTYPES
};
#define RM_RESTRACK_TYPES RM_AH

/* Calls watched for their result (fexit), each on one or more kernel
 * functions (monitor/hooks.c names them). */
enum rm_op {
	OP_CREATE_QP, OP_MODIFY_QP, OP_DESTROY_QP,
	OP_CREATE_CQ, OP_DESTROY_CQ,
	OP_ALLOC_PD, OP_DEALLOC_PD,
	OP_REG_MR, OP_DEREG_MR,
	OP_CREATE_SRQ, OP_DESTROY_SRQ,
	OP_CREATE_AH, OP_DESTROY_AH,
	OP_CREATE_CM_ID, OP_CONNECT,
	OP_NOPS
};

/* An object, by what the kernel's resource tracking calls it: device
 * index, type and the id `rdma resource` prints (lqpn, cqn, pdn ...). AH has
 * no such id: its key is the kernel address (id 0 .. of the struct ib_ah). */
struct rm_obj_key {
	__u64 id;
	__u32 dev;
	__u32 type;
};

struct rm_obj {
	__u64 cgid;            /* cgroup (v2) id of the creator = its directory's inode */
	__u32 pid;             /* creator's process (tgid); 0 for a kernel object */
	__u8 kern;             /* owned by the kernel (e.g. rxe's GSI QP) */
	__u8 seeded;           /* existed before the monitor started */
	__u8 pad[2];
	char comm[16];
};

/* Creates and destroys since start, per cgroup, device, type, owner. */
struct rm_count_key {
	__u64 cgid;
	__u32 dev;
	__u16 type;
	__u8 kern;
	__u8 pad;
};

struct rm_count_val {
	__u64 creates;
	__u64 destroys;
};

/* Calls per cgroup, operation and result (err 0: success, else -errno). */
struct rm_op_key {
	__u64 cgid;
	__u32 op;
	__s32 err;
};

enum rm_ev_kind { EV_ADD, EV_DEL, EV_CALL, EV_NKINDS };

struct rm_event {
	__u64 ts_ns;           /* bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u64 cgid;
	__u64 id;              /* object id (EV_ADD/EV_DEL) */
	__u32 pid, tid;
	__u32 dev;
	__s32 err;             /* EV_CALL: 0 or -errno */
	__u16 kind;            /* enum rm_ev_kind */
	__u16 what;            /* enum rm_type (ADD/DEL) or enum rm_op (CALL) */
	__u8 kern;
	__u8 pad[3];
	char comm[16];
};

/* Counters of what could not be recorded (array map "lost"). */
enum rm_lost {
	LOST_RING_ADD, LOST_RING_DEL, LOST_RING_CALL, /* ring buffer full, per event kind */
	LOST_OBJ_MAP,          /* object table full: that object's live count is missing */
	LOST_NSLOTS
};

#define RM_DEVNAME_LEN 64
#define RM_MAX_OBJS 65536

#endif
