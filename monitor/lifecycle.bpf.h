/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The lifecycle view's BPF programs, part of rdmamon.bpf.c (included at its
 * end: one BPF object, and this file uses its dev_index()). Every program is
 * named life_*: the top view does not load them, the lifecycle and conns
 * views load only them (life_run.c).
 *
 * Hooks, vendor neutral (ib_core / ib_uverbs / rdma_cm, never a driver):
 * - ib_create_qp_user (fexit: the QP it returned), ib_modify_qp_with_udata
 *   (fexit, what the uverbs modify_qp command ends in; a successful state
 *   change only), ib_destroy_qp_user (fentry keeps which QP, fexit reports
 *   it when the destroy succeeded);
 * - rdma_create_user_ah / rdma_destroy_ah_user: UD peers (dgid);
 * - rdma_cm's tracepoints cm_send_req (active side) and cm_event_handler
 *   with CONNECT_REQUEST (passive side), as BTF tracepoints.
 * On RTR the local GID is the core's resolved source GID attribute of the
 * QP (qp->av_sgid_attr: any sgid index), read at fexit so a failed modify
 * is no connection. README.md (rdmamon) and rdmamon.8 say what is printed. */
#ifndef MONITOR_LIFECYCLE_BPF_H
#define MONITOR_LIFECYCLE_BPF_H

#include "life_event.h"

/* Kernel types read here, reduced to those fields. The ___life suffix keeps
 * them apart from kernel_types.bpf.h's subsets: libbpf ignores the suffix
 * when it matches them against the kernel's BTF (CO-RE "flavors"). */
#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

enum ib_qp_state___life { IB_QPS_RESET___life, IB_QPS_RTR___life = 2 };
enum ib_qp_type___life { IB_QPT_RC___life = 2 };
enum rdma_cm_event_type___life { RDMA_CM_EVENT_CONNECT_REQUEST___life = 4 };

union ib_gid___life {
	u8 raw[16];
};

struct ib_gid_attr___life {
	union ib_gid___life gid;
	u16 index;
};

struct ib_global_route___life {
	union ib_gid___life dgid;
};

struct rdma_ah_attr___life {
	struct ib_global_route___life grh;
	u32 port_num;
};

struct ib_qp_attr___life {
	enum ib_qp_state___life qp_state;
	enum ib_qp_state___life cur_qp_state;
	u32 dest_qp_num;
	struct rdma_ah_attr___life ah_attr;
	u32 port_num;
};

struct ib_qp___life {
	struct ib_device *device;
	struct ib_qp___life *real_qp;
	const struct ib_gid_attr___life *av_sgid_attr;
	u32 qp_num;
	enum ib_qp_type___life qp_type;
	u32 port;
};

struct ib_ah___life {
	struct ib_device *device;
	const struct ib_gid_attr___life *sgid_attr;
};

struct __kernel_sockaddr_storage___life {
	u16 ss_family;
};

struct rdma_addr___life {
	struct __kernel_sockaddr_storage___life src_addr;
	struct __kernel_sockaddr_storage___life dst_addr;
};

struct rdma_route___life {
	struct rdma_addr___life addr;
};

struct rdma_cm_id___life {
	struct ib_device *device;
	struct rdma_route___life route;
	enum ib_qp_type___life qp_type;
	u32 port_num;
};

struct rdma_id_private___life {
	struct rdma_cm_id___life id;
	struct rdma_restrack_entry res;
};

struct rdma_cm_event___life {
	enum rdma_cm_event_type___life event;
	int status;
};

#pragma clang attribute pop

/* ib_qp_attr_mask bits (include/rdma/ib_verbs.h, stable UAPI values) */
#define LIFE_QP_STATE (1u << 0)
#define LIFE_QP_CUR_STATE (1u << 1)
#define LIFE_QP_PORT (1u << 5)
#define LIFE_QP_AV (1u << 7)
#define LIFE_QP_DEST_QPN (1u << 20)
#define LIFE_NO_PREALLOC 1u   /* BPF_F_NO_PREALLOC: memory as objects come, not 64k entries up front */
#define LIFE_QPS_RESET 0
#define LIFE_QPS_RTR 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RM_MAX_OBJS);
	__uint(map_flags, LIFE_NO_PREALLOC);
	__type(key, struct rm_qp_key);
	__type(value, struct rm_qp_info);
} life_qps SEC(".maps");

/* The QP a thread is destroying, from fentry to fexit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__uint(map_flags, LIFE_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct rm_qp_key);
} life_destroying SEC(".maps");

/* User AHs seen created (by address): their destroy is reported with the
 * peer, the kernel's own AHs (rdma_cm's MADs, destroyed through the same
 * function) are not. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RM_MAX_OBJS);
	__uint(map_flags, LIFE_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct rm_qp_info);
} life_ahs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LE_NKINDS);
	__type(key, __u32);
	__type(value, __u64);
} life_lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} life_events SEC(".maps");

/* A zeroed event of this kind from the current task, or NULL (counted). */
static __always_inline struct rm_life_event *life_reserve(__u32 kind)
{
	struct rm_life_event *e = bpf_ringbuf_reserve(&life_events, sizeof(*e), 0);
	__u64 pt = bpf_get_current_pid_tgid();

	if (!e) {
		__u64 *v = bpf_map_lookup_elem(&life_lost, &kind);

		if (v)
			__sync_fetch_and_add(v, 1);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = (__u16)kind;
	e->pid = pt >> 32;
	e->tid = (__u32)pt;
	e->cgid = bpf_get_current_cgroup_id();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline struct ib_qp___life *life_real_qp(struct ib_qp___life *qp)
{
	struct ib_qp___life *real = BPF_CORE_READ(qp, real_qp);

	return real ? real : qp;
}

SEC("fexit/ib_create_qp_user")
int BPF_PROG(life_qp_create)
{
	struct rm_qp_info info = {};
	struct rm_qp_key k = {};
	struct rm_life_event *e;
	struct ib_qp___life *qp;
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	if (!ret || ret >= (__u64)-4095)   /* failed: the top view counts it */
		return 0;
	qp = (struct ib_qp___life *)ret;
	k.dev = dev_index(BPF_CORE_READ(qp, device));
	k.qpn = BPF_CORE_READ(qp, qp_num);
	info.qp_type = (__u8)BPF_CORE_READ(qp, qp_type);
	info.state = LIFE_QPS_RESET;
	info.pid = bpf_get_current_pid_tgid() >> 32;
	info.cgid = bpf_get_current_cgroup_id();
	bpf_get_current_comm(info.comm, sizeof(info.comm));
	bpf_map_update_elem(&life_qps, &k, &info, BPF_ANY);
	e = life_reserve(LE_QP_CREATE);
	if (!e)
		return 0;
	e->dev = k.dev;
	e->qpn = k.qpn;
	e->qp_type = info.qp_type;
	e->old_state = RM_QPS_UNKNOWN;
	e->new_state = LIFE_QPS_RESET;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fexit/ib_modify_qp_with_udata")
int BPF_PROG(life_qp_modify, struct ib_qp___life *qp, struct ib_qp_attr___life *attr, int mask,
	     void *udata, int ret)
{
	struct rm_qp_info fresh = {}, *info;
	struct rm_qp_key k = {};
	const struct ib_gid_attr___life *sattr;
	struct rm_life_event *e;
	__u32 m = (__u32)mask;
	__u8 old;

	if (ret || !(m & LIFE_QP_STATE))
		return 0;
	qp = life_real_qp(qp);
	k.dev = dev_index(BPF_CORE_READ(qp, device));
	k.qpn = BPF_CORE_READ(qp, qp_num);
	info = bpf_map_lookup_elem(&life_qps, &k);
	if (!info) {   /* created before start: its owner and old state are unknown here */
		fresh.qp_type = (__u8)BPF_CORE_READ(qp, qp_type);
		fresh.state = m & LIFE_QP_CUR_STATE ? (__u8)BPF_CORE_READ(attr, cur_qp_state)
						    : RM_QPS_UNKNOWN;
		fresh.pid = bpf_get_current_pid_tgid() >> 32;
		fresh.cgid = bpf_get_current_cgroup_id();
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&life_qps, &k, &fresh, BPF_NOEXIST);
		info = bpf_map_lookup_elem(&life_qps, &k);
		if (!info)
			return 0;
	}
	old = info->state;
	info->state = (__u8)BPF_CORE_READ(attr, qp_state);
	info->port = m & LIFE_QP_PORT ? BPF_CORE_READ(attr, port_num) : BPF_CORE_READ(qp, port);
	if (info->state == LIFE_QPS_RESET)
		info->has_remote = 0;
	sattr = BPF_CORE_READ(qp, av_sgid_attr);
	if (sattr) {
		bpf_core_read(info->sgid, sizeof(info->sgid), &sattr->gid);
		info->sgid_index = BPF_CORE_READ(sattr, index);
		info->has_sgid = 1;
	}
	if (info->state == LIFE_QPS_RTR && (m & LIFE_QP_AV) && (m & LIFE_QP_DEST_QPN)) {
		info->rqpn = BPF_CORE_READ(attr, dest_qp_num);
		bpf_core_read(info->dgid, sizeof(info->dgid), &attr->ah_attr.grh.dgid);
		info->has_remote = 1;
		info->rtr_ns = bpf_ktime_get_ns();
	}
	e = life_reserve(LE_QP_MODIFY);
	if (!e)
		return 0;
	e->dev = k.dev;
	e->qpn = k.qpn;
	e->port = info->port;
	e->qp_type = info->qp_type;
	e->old_state = old;
	e->new_state = info->state;
	e->has_sgid = info->has_sgid;
	e->sgid_index = info->sgid_index;
	__builtin_memcpy(e->sgid, info->sgid, sizeof(e->sgid));
	if (info->has_remote && e->new_state == LIFE_QPS_RTR && (m & LIFE_QP_DEST_QPN)) {
		e->has_remote = 1;
		e->rqpn = info->rqpn;
		__builtin_memcpy(e->dgid, info->dgid, sizeof(e->dgid));
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fentry/ib_destroy_qp_user")
int BPF_PROG(life_qp_destroy_enter, struct ib_qp___life *qp)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct rm_qp_key k = {};

	k.dev = dev_index(BPF_CORE_READ(qp, device));
	k.qpn = BPF_CORE_READ(qp, qp_num);
	bpf_map_update_elem(&life_destroying, &pt, &k, BPF_ANY);
	return 0;
}

SEC("fexit/ib_destroy_qp_user")
int BPF_PROG(life_qp_destroy, void *qp, void *udata, int ret)
{
	__u64 pt = bpf_get_current_pid_tgid();
	struct rm_qp_key *kp, k;
	struct rm_qp_info *info;
	struct rm_life_event *e;

	kp = bpf_map_lookup_elem(&life_destroying, &pt);
	if (!kp)
		return 0;
	k = *kp;
	bpf_map_delete_elem(&life_destroying, &pt);
	if (ret)   /* still there: the top view counts the failed call */
		return 0;
	e = life_reserve(LE_QP_DESTROY);
	info = bpf_map_lookup_elem(&life_qps, &k);
	if (e) {
		e->dev = k.dev;
		e->qpn = k.qpn;
		e->new_state = RM_QPS_UNKNOWN;
		e->old_state = info ? info->state : RM_QPS_UNKNOWN;
		e->qp_type = info ? info->qp_type : 0;
		e->port = info ? info->port : 0;
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&life_qps, &k);
	return 0;
}

SEC("fexit/rdma_create_user_ah")
int BPF_PROG(life_ah_create, void *pd, struct rdma_ah_attr___life *ah_attr)
{
	const struct ib_gid_attr___life *sattr;
	struct rm_life_event *e;
	struct ib_ah___life *ah;
	__u64 ret = 0;

	bpf_get_func_ret(ctx, &ret);
	if (!ret || ret >= (__u64)-4095)
		return 0;
	ah = (struct ib_ah___life *)ret;
	e = life_reserve(LE_AH_CREATE);
	if (!e)
		return 0;
	e->obj = ret;
	e->dev = dev_index(BPF_CORE_READ(ah, device));
	e->port = BPF_CORE_READ(ah_attr, port_num);
	bpf_core_read(e->dgid, sizeof(e->dgid), &ah_attr->grh.dgid);
	e->has_remote = 1;
	sattr = BPF_CORE_READ(ah, sgid_attr);
	if (sattr) {
		bpf_core_read(e->sgid, sizeof(e->sgid), &sattr->gid);
		e->sgid_index = BPF_CORE_READ(sattr, index);
		e->has_sgid = 1;
	}
	/* the peer, kept for the destroy (rm_qp_info: port, GIDs) */
	{
		struct rm_qp_info a = { .port = e->port, .has_sgid = e->has_sgid,
					.sgid_index = e->sgid_index, .has_remote = 1 };

		__builtin_memcpy(a.sgid, e->sgid, sizeof(a.sgid));
		__builtin_memcpy(a.dgid, e->dgid, sizeof(a.dgid));
		bpf_map_update_elem(&life_ahs, &ret, &a, BPF_ANY);
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("fentry/rdma_destroy_ah_user")
int BPF_PROG(life_ah_destroy, struct ib_ah___life *ah)
{
	__u64 key = (__u64)ah;
	struct rm_qp_info *a = bpf_map_lookup_elem(&life_ahs, &key);
	struct rm_life_event *e;

	if (!a)
		return 0;
	e = life_reserve(LE_AH_DESTROY);
	if (e) {
		e->obj = key;
		e->dev = dev_index(BPF_CORE_READ(ah, device));
		e->port = a->port;
		e->has_remote = 1;
		e->has_sgid = a->has_sgid;
		e->sgid_index = a->sgid_index;
		__builtin_memcpy(e->sgid, a->sgid, sizeof(e->sgid));
		__builtin_memcpy(e->dgid, a->dgid, sizeof(e->dgid));
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&life_ahs, &key);
	return 0;
}

/* An rdma_cm id's addresses, device and owner (the id's task: the passive
 * side's request arrives in a kernel worker, the listener owns it). */
static __always_inline void life_cm_fill(struct rm_life_event *e, const struct rdma_id_private___life *id)
{
	struct ib_device *dev = BPF_CORE_READ(id, id.device);
	struct task_struct *task = BPF_CORE_READ(id, res.task);

	if (dev)
		e->dev = dev_index(dev);
	else
		e->dev = (__u32)-1;
	e->port = BPF_CORE_READ(id, id.port_num);
	e->qp_type = (__u8)BPF_CORE_READ(id, id.qp_type);
	bpf_core_read(e->src, sizeof(e->src), &id->id.route.addr.src_addr);
	bpf_core_read(e->dst, sizeof(e->dst), &id->id.route.addr.dst_addr);
	if (task && BPF_CORE_READ(id, res.user)) {
		e->pid = BPF_CORE_READ(task, tgid);
		e->tid = BPF_CORE_READ(task, pid);
		e->cgid = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
		BPF_CORE_READ_STR_INTO(&e->comm, task, comm);
	}
}

SEC("tp_btf/cm_send_req")
int BPF_PROG(life_cm_send_req, const struct rdma_id_private___life *id)
{
	struct rm_life_event *e = life_reserve(LE_CM_REQ_SENT);

	if (!e)
		return 0;
	life_cm_fill(e, id);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/cm_event_handler")
int BPF_PROG(life_cm_event, const struct rdma_id_private___life *id, const struct rdma_cm_event___life *ev)
{
	struct rm_life_event *e;

	/* A wildcard listener's per-device id hands the request on to its
	 * parent, traced again with the parent (no device, no peer): the
	 * request is the new connection's id, which has both. */
	if (BPF_CORE_READ(ev, event) != RDMA_CM_EVENT_CONNECT_REQUEST___life ||
	    !BPF_CORE_READ(id, id.device) || !BPF_CORE_READ(id, id.route.addr.dst_addr.ss_family))
		return 0;
	e = life_reserve(LE_CM_REQ_RECV);
	if (!e)
		return 0;
	life_cm_fill(e, id);
	e->err = BPF_CORE_READ(ev, status);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

#endif
