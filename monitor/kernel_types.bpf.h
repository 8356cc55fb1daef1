/* SPDX-License-Identifier: BSD-2-Clause */
/* The kernel types rdmamon.bpf.c reads, reduced to the fields it uses and
 * marked preserve_access_index: clang records each access as a CO-RE
 * relocation and libbpf places it at load time with the running kernel's
 * BTF (vmlinux and the ib_core / rdma_cm module BTF).
 *
 * Why this and not a vmlinux.h: the ib_* types live in module BTF that only
 * a guest with the RDMA modules loaded has (the build host may have neither
 * the modules nor BTF), a generated header is ~100k lines tied to one kernel
 * build, and these few fields are the same from 5.15 to 6.6 (offsets move,
 * which is what the relocations absorb). docs/architecture.md: monitor/. */
#ifndef MONITOR_KERNEL_TYPES_BPF_H
#define MONITOR_KERNEL_TYPES_BPF_H

typedef unsigned char __u8;
typedef signed char __s8;
typedef unsigned short __u16;
typedef short __s16;
typedef unsigned int __u32;
typedef int __s32;
typedef unsigned long long __u64;
typedef long long __s64;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef _Bool bool;
typedef __u16 __be16;
typedef __u32 __be32;
typedef __u32 __wsum;

enum {
	BPF_ANY = 0,
	BPF_NOEXIST = 1,
	BPF_EXIST = 2,
};

enum bpf_map_type {
	BPF_MAP_TYPE_HASH = 1,
	BPF_MAP_TYPE_ARRAY = 2,
	BPF_MAP_TYPE_PERCPU_HASH = 5,
	BPF_MAP_TYPE_PERCPU_ARRAY = 6,
	BPF_MAP_TYPE_LRU_HASH = 9,
	BPF_MAP_TYPE_RINGBUF = 27,
};

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct kernfs_node {
	u64 id;
};

struct cgroup {
	struct kernfs_node *kn;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct task_struct {
	int pid;
	int tgid;
	char comm[16];
	struct css_set *cgroups;
};

enum rdma_restrack_type {
	RDMA_RESTRACK_PD,
};

struct rdma_restrack_entry {
	bool valid;
	u8 no_track : 1;
	struct task_struct *task;
	const char *kern_name;
	enum rdma_restrack_type type;
	bool user;
	u32 id;
};

struct ib_device {
	char name[64];
	u32 index;
};

struct ib_pd {
	struct ib_device *device;
	struct rdma_restrack_entry res;
};

struct ib_cq {
	struct ib_device *device;
	struct rdma_restrack_entry res;
};

struct ib_qp {
	struct ib_device *device;
	u32 qp_num;
	struct rdma_restrack_entry res;
};

struct ib_mr {
	struct ib_device *device;
	struct rdma_restrack_entry res;
};

struct ib_srq {
	struct ib_device *device;
	struct rdma_restrack_entry res;
};

struct ib_ucontext {
	struct ib_device *device;
	struct rdma_restrack_entry res;
};

struct rdma_counter {
	struct rdma_restrack_entry res;
	struct ib_device *device;
};

struct ib_ah {
	struct ib_device *device;
};

/* rdma_cm's private id (drivers/infiniband/core/cma_priv.h), in the
 * rdma_cm module's BTF: used only when that type exists. */
struct rdma_cm_id {
	struct ib_device *device;
};

struct rdma_id_private {
	struct rdma_cm_id id;
	struct rdma_restrack_entry res;
};

#pragma clang attribute pop

#endif
