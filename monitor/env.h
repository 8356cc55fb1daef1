/* SPDX-License-Identifier: BSD-2-Clause */
/* What rdmamon needs from the host before it loads anything: privileges,
 * BTF, the RDMA core loaded, tracefs/bpffs/cgroup2 mounted; and which of
 * the kernel functions it hooks exist on the running kernel. */
#ifndef MONITOR_ENV_H
#define MONITOR_ENV_H

#include <stddef.h>

/* 0, or -1 with what is wrong and what to run in msg. Mounts tracefs,
 * bpffs and cgroup2 at their usual places when they are missing (notes
 * each on stderr), failing when that is not allowed. */
int rm_env_check(char *msg, size_t len);

struct rm_btf_probe;
/* Loads vmlinux and the RDMA modules' BTF; NULL with msg on failure. */
struct rm_btf_probe *rm_btf_open(char *msg, size_t len);
int rm_btf_has_func(const struct rm_btf_probe *p, const char *name);
/* A BTF tracepoint's type is the typedef btf_trace_<name>. */
int rm_btf_has_typedef(const struct rm_btf_probe *p, const char *name);
void rm_btf_close(struct rm_btf_probe *p);

#endif
