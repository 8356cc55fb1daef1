// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* rdmamon's BPF side: what the RDMA core does with its objects, on any
 * vendor's device. Live objects follow the core's resource tracking (the
 * table `rdma resource` reads): rdma_restrack_add (fexit: only what it
 * really added) and the delete functions (fentry). AHs, which that table
 * does not hold, follow rdma_create_user_ah / rdma_destroy_ah_user. Calls
 * and their results (errno) come from fexit on the ib_core / ib_uverbs /
 * rdma_cm entry points that user space chose (call slots, below).
 * docs/architecture.md: monitor/. */
#include "kernel_types.bpf.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "rdmamon.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define CALL_SLOTS 24

/* Set by user space before load: the operation each call slot counts, and
 * whether its function returns a pointer (ERR_PTR on failure) or an int. */
const volatile __u32 slot_op[CALL_SLOTS];
const volatile __u8 slot_ptr[CALL_SLOTS];
/* Set by user space: stream events through the ring buffer (the events
 * view). The top view needs only the counts, and a ring event per hit was
 * most of a hook's time (bench/README.md, monitor-overhead). */
const volatile __u8 emit_events;
/* Set by user space (RDMAMON_BARE_HOOKS, bench/monitor-overhead only): every
 * program returns at once, so a run prices the attachment alone (the
 * trampolines), the floor under what the programs' work adds. */
const volatile __u8 bare_hooks;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RM_MAX_OBJS);
	__type(key, struct rm_obj_key);
	__type(value, struct rm_obj);
} objects SEC(".maps");

/* Deletes of objects the table did not hold: user space, seeding the
 * objects that existed before start, skips these (deleted meanwhile). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct rm_obj_key);
	__type(value, __u8);
} unknown_dels SEC(".maps");

/* counts and calls are per-CPU: a hit adds to its CPU's copy without an
 * atomic (a locked instruction, costly under TCG); user space sums them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rm_count_key);
	__type(value, struct rm_count_val);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rm_op_key);
	__type(value, __u64);
} calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LOST_NSLOTS);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, char[RM_DEVNAME_LEN]);
} devnames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");
#define RING_WAKE_BYTES (64 * 1024)
/* uapi linux/bpf.h values (kernel_types.bpf.h carries no uapi enums) */
#define RB_AVAIL_DATA 0
#define RB_NO_WAKEUP 1
#define RB_FORCE_WAKEUP 2

static __always_inline void count_lost(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&lost, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline void count_obj(const struct rm_obj_key *k, const struct rm_obj *o, int destroy)
{
	struct rm_count_key ck = { .cgid = o->cgid, .dev = k->dev, .type = (__u16)k->type,
				   .kern = o->kern };
	struct rm_count_val zero = {}, *v;

	v = bpf_map_lookup_elem(&counts, &ck);
	if (!v) {
		bpf_map_update_elem(&counts, &ck, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&counts, &ck);
		if (!v)
			return;
	}
	if (destroy)
		v->destroys++;
	else
		v->creates++;
}

static __always_inline void emit(__u16 kind, __u16 what, const struct rm_obj_key *k, const struct rm_obj *o,
		 __s32 err)
{
	struct rm_event *e;
	__u64 pt;

	if (!emit_events)
		return;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	pt = bpf_get_current_pid_tgid();
	if (!e) {
		count_lost(kind == EV_ADD ? LOST_RING_ADD : kind == EV_DEL ? LOST_RING_DEL
									   : LOST_RING_CALL);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->kind = kind;
	e->what = what;
	e->err = err;
	e->tid = (__u32)pt;
	if (o) {       /* the object's owner, which may not be the current task */
		e->cgid = o->cgid;
		e->pid = o->pid;
		e->kern = o->kern;
		__builtin_memcpy(e->comm, o->comm, sizeof(e->comm));
	} else {
		e->cgid = bpf_get_current_cgroup_id();
		e->pid = pt >> 32;
		e->kern = 0;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	}
	e->id = k ? k->id : 0;
	e->dev = k ? k->dev : 0;
	/* Wake the reader only once the ring is a quarter full: a wake-up per
	 * event costs the watched process a context switch (on one CPU it
	 * doubled a QP's create->RTR->destroy, bench/monitor-overhead); the
	 * reader polls every 200 ms anyway. */
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&events, RB_AVAIL_DATA) >= RING_WAKE_BYTES ?
			      RB_FORCE_WAKEUP : RB_NO_WAKEUP);
}

/* The device an entry belongs to, through the object that embeds it. */
static __always_inline struct ib_device *res_device(struct rdma_restrack_entry *res, __u32 type)
{
	void *p = res;

	switch (type) {
	case RM_PD:
		return BPF_CORE_READ((struct ib_pd *)(p - bpf_core_field_offset(struct ib_pd, res)),
				     device);
	case RM_CQ:
		return BPF_CORE_READ((struct ib_cq *)(p - bpf_core_field_offset(struct ib_cq, res)),
				     device);
	case RM_QP:
		return BPF_CORE_READ((struct ib_qp *)(p - bpf_core_field_offset(struct ib_qp, res)),
				     device);
	case RM_MR:
		return BPF_CORE_READ((struct ib_mr *)(p - bpf_core_field_offset(struct ib_mr, res)),
				     device);
	case RM_SRQ:
		return BPF_CORE_READ((struct ib_srq *)(p - bpf_core_field_offset(struct ib_srq, res)),
				     device);
	case RM_CTX:
		return BPF_CORE_READ((struct ib_ucontext *)(p - bpf_core_field_offset(struct ib_ucontext, res)),
				     device);
	case RM_COUNTER:
		return BPF_CORE_READ((struct rdma_counter *)(p - bpf_core_field_offset(struct rdma_counter, res)),
				     device);
	case RM_CM_ID:
		if (bpf_core_type_exists(struct rdma_id_private))
			return BPF_CORE_READ((struct rdma_id_private *)(p - bpf_core_field_offset(struct rdma_id_private, res)),
					     id.device);
		return NULL;
	}
	return NULL;
}

/* The last device index a CPU's hit named: hits come in runs on one device,
 * and one that finds its index here skips the devnames lookup (an array
 * lookup is inlined by the JIT; a hash's is not). Keyed by the index, not
 * the device pointer, which a new device can reuse; indexes are not reused. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} last_dev SEC(".maps");

static __always_inline __u32 dev_index(struct ib_device *dev)
{
	__u32 zero = 0, idx = BPF_CORE_READ(dev, index);
	__u32 *last = bpf_map_lookup_elem(&last_dev, &zero);

	/* 0 is never cached: a fresh slot holds it */
	if (last && *last == idx + 1)
		return idx;
	if (!bpf_map_lookup_elem(&devnames, &idx)) {
		char name[RM_DEVNAME_LEN] = {};

		BPF_CORE_READ_STR_INTO(&name, dev, name);
		bpf_map_update_elem(&devnames, &idx, name, BPF_ANY);
	}
	if (last)
		*last = idx + 1;
	return idx;
}

/* The entry's own fields (and its task's) are plain loads: an fentry/fexit
 * argument is a BTF pointer the verifier lets a program walk, where a
 * bpf_probe_read_kernel per field cost ~100 instructions (restrack_add
 * 2163 -> 1194 per hit, bench/README.md). The device sits before the entry
 * (container_of), out of the verifier's reach: a probe read still. */
static __always_inline int res_key(struct rdma_restrack_entry *res, struct rm_obj_key *k)
{
	struct ib_device *dev;

	k->type = res->type;
	if (k->type >= RM_RESTRACK_TYPES)
		return -1;
	dev = res_device(res, k->type);
	if (!dev)
		return -1;
	k->dev = dev_index(dev);
	k->id = res->id;
	return 0;
}

SEC("fexit/rdma_restrack_add")
int BPF_PROG(restrack_add, struct rdma_restrack_entry *res)
{
	struct rm_obj_key k = {};
	struct rm_obj o = {};
	struct task_struct *task;

	if (bare_hooks)
		return 0;
	/* valid: the core did add it; no_track: it stays out of the table */
	if (!res->valid || BPF_CORE_READ_BITFIELD(res, no_track))
		return 0;
	if (res_key(res, &k))
		return 0;
	task = res->task;
	/* The owner is the entry's task (what `rdma resource` shows), not
	 * the current one: rdma_cm binds ids to a device from a work queue. */
	if (res->user && task) {
		o.pid = task->tgid;
		o.cgid = task->cgroups->dfl_cgrp->kn->id;
		/* comm is 16 bytes, NUL-terminated: two loads, no string copy */
		__builtin_memcpy(o.comm, (const void *)__builtin_preserve_access_index(&task->comm),
				 sizeof(o.comm));
	} else {
		o.kern = 1;
		BPF_CORE_READ_STR_INTO(&o.comm, res, kern_name);
	}
	if (bpf_map_update_elem(&objects, &k, &o, BPF_ANY))
		count_lost(LOST_OBJ_MAP);
	count_obj(&k, &o, 0);
	emit(EV_ADD, (__u16)k.type, &k, &o, 0);
	return 0;
}

static __always_inline int on_del(struct rdma_restrack_entry *res)
{
	struct rm_obj_key k = {};
	struct rm_obj *o, copy;
	__u8 one = 1;

	if (bare_hooks || res_key(res, &k))
		return 0;
	o = bpf_map_lookup_elem(&objects, &k);
	if (!o) {
		bpf_map_update_elem(&unknown_dels, &k, &one, BPF_ANY);
		return 0;
	}
	copy = *o;
	bpf_map_delete_elem(&objects, &k);
	count_obj(&k, &copy, 1);
	emit(EV_DEL, (__u16)k.type, &k, &copy, 0);
	return 0;
}

/* 6.6 deletes through rdma_restrack_del; 6.1 stable also through
 * begin_del (which can be undone by abort_del) then commit_del: an object
 * is gone at commit_del or del, whichever the kernel has. */
SEC("fentry/rdma_restrack_del")
int BPF_PROG(restrack_del, struct rdma_restrack_entry *res)
{
	return on_del(res);
}

SEC("fentry/rdma_restrack_commit_del")
int BPF_PROG(restrack_commit_del, struct rdma_restrack_entry *res)
{
	return on_del(res);
}

SEC("fexit/rdma_create_user_ah")
int BPF_PROG(ah_create)
{
	struct rm_obj_key k = { .type = RM_AH };
	struct rm_obj o = {};
	__u64 ret = 0;
	struct ib_ah *ah;

	if (bare_hooks)
		return 0;
	bpf_get_func_ret(ctx, &ret);
	if (!ret || ret >= (__u64)-4095)
		return 0;
	ah = (struct ib_ah *)ret;
	k.id = ret;
	k.dev = dev_index(BPF_CORE_READ(ah, device));
	o.pid = bpf_get_current_pid_tgid() >> 32;
	o.cgid = bpf_get_current_cgroup_id();
	bpf_get_current_comm(o.comm, sizeof(o.comm));
	if (bpf_map_update_elem(&objects, &k, &o, BPF_ANY))
		count_lost(LOST_OBJ_MAP);
	count_obj(&k, &o, 0);
	emit(EV_ADD, RM_AH, &k, &o, 0);
	return 0;
}

/* At entry, while the AH's device can still be read (a failing user AH
 * destroy is a driver error; it shows among the failed calls). */
SEC("fentry/rdma_destroy_ah_user")
int BPF_PROG(ah_destroy, struct ib_ah *ah)
{
	struct rm_obj_key k = { .type = RM_AH, .id = (__u64)ah };
	struct rm_obj *o, copy;

	if (bare_hooks)
		return 0;
	k.dev = dev_index(BPF_CORE_READ(ah, device));
	o = bpf_map_lookup_elem(&objects, &k);
	if (!o)
		return 0;
	copy = *o;
	bpf_map_delete_elem(&objects, &k);
	count_obj(&k, &copy, 1);
	emit(EV_DEL, RM_AH, &k, &copy, 0);
	return 0;
}

static __always_inline int on_call(void *ctx, __u32 slot)
{
	struct rm_op_key key = {};
	__u64 ret = 0, one = 1, *v;
	__s32 err;

	if (bare_hooks || slot >= CALL_SLOTS)
		return 0;
	bpf_get_func_ret(ctx, &ret);
	if (slot_ptr[slot])
		err = ret >= (__u64)-4095 ? (__s32)ret : (ret ? 0 : -12 /* NULL: no memory */);
	else
		err = (__s32)ret < 0 ? (__s32)ret : 0;
	key.cgid = bpf_get_current_cgroup_id();
	key.op = slot_op[slot];
	key.err = err;
	v = bpf_map_lookup_elem(&calls, &key);
	if (v)
		(*v)++;
	else if (bpf_map_update_elem(&calls, &key, &one, BPF_NOEXIST))
		if ((v = bpf_map_lookup_elem(&calls, &key)))
			(*v)++;
	emit(EV_CALL, (__u16)key.op, NULL, NULL, err);
	return 0;
}

/* One program per call slot; user space points each at a function. */
#define CALL_SLOT(n) \
	SEC("fexit") int call_##n(void *ctx) { return on_call(ctx, n); }

CALL_SLOT(0) CALL_SLOT(1) CALL_SLOT(2) CALL_SLOT(3) CALL_SLOT(4) CALL_SLOT(5)
CALL_SLOT(6) CALL_SLOT(7) CALL_SLOT(8) CALL_SLOT(9) CALL_SLOT(10) CALL_SLOT(11)
CALL_SLOT(12) CALL_SLOT(13) CALL_SLOT(14) CALL_SLOT(15) CALL_SLOT(16) CALL_SLOT(17)
CALL_SLOT(18) CALL_SLOT(19) CALL_SLOT(20) CALL_SLOT(21) CALL_SLOT(22) CALL_SLOT(23)

/* The lifecycle and conns views' programs (life_*), in the same object. */
#include "lifecycle.bpf.h"
