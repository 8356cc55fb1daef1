// SPDX-License-Identifier: BSD-2-Clause
#include "env.h"

#include <bpf/btf.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

static int has_cap(const struct __user_cap_data_struct d[2], int cap)
{
	return !!(d[cap / 32].effective & (1u << (cap % 32)));
}

static int privileged(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) != 0)
		return geteuid() == 0;
	return has_cap(d, CAP_SYS_ADMIN) ||
	       (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON));
}

static int fs_is(const char *path, long magic)
{
	struct statfs st;

	return statfs(path, &st) == 0 && (long)st.f_type == magic;
}

/* mount FSTYPE at PATH unless it is there; -1 with the command to run */
static int ensure_mount(const char *fstype, const char *path, long magic, char *msg, size_t len)
{
	if (fs_is(path, magic))
		return 0;
	if (mount(fstype, path, fstype, 0, NULL) != 0 || !fs_is(path, magic)) {
		snprintf(msg, len, "%s is not mounted at %s and mounting it failed (%s): run "
			 "'mount -t %s %s %s'", fstype, path, strerror(errno), fstype, fstype, path);
		return -1;
	}
	fprintf(stderr, "rdmamon: mounted %s at %s\n", fstype, path);
	return 0;
}

int rm_env_check(char *msg, size_t len)
{
	struct stat st;

	if (!privileged()) {
		snprintf(msg, len, "needs root (CAP_SYS_ADMIN, or CAP_BPF with CAP_PERFMON) to load "
			 "BPF programs: run it with sudo");
		return -1;
	}
	if (stat("/sys/kernel/btf/vmlinux", &st) != 0) {
		snprintf(msg, len, "the kernel has no BTF (/sys/kernel/btf/vmlinux missing): rdmamon "
			 "needs a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		return -1;
	}
	if (stat("/sys/module/ib_core", &st) != 0) {
		snprintf(msg, len, "the RDMA core is not loaded (no /sys/module/ib_core): load your "
			 "device's driver, or 'modprobe ib_uverbs'");
		return -1;
	}
	if (stat("/sys/kernel/btf/ib_core", &st) != 0) {
		snprintf(msg, len, "ib_core has no BTF (/sys/kernel/btf/ib_core missing): the kernel "
			 "needs CONFIG_DEBUG_INFO_BTF_MODULES=y");
		return -1;
	}
	if (ensure_mount("tracefs", "/sys/kernel/tracing", TRACEFS_MAGIC, msg, len) ||
	    ensure_mount("bpf", "/sys/fs/bpf", BPF_FS_MAGIC, msg, len) ||
	    ensure_mount("cgroup2", "/sys/fs/cgroup", CGROUP2_SUPER_MAGIC, msg, len))
		return -1;
	return 0;
}

static const char *const modules[] = { "ib_core", "ib_uverbs", "rdma_cm" };
#define NMODS (sizeof(modules) / sizeof(modules[0]))

struct rm_btf_probe {
	struct btf *vmlinux;
	struct btf *mods[NMODS];
};

struct rm_btf_probe *rm_btf_open(char *msg, size_t len)
{
	struct rm_btf_probe *p = calloc(1, sizeof(*p));

	if (!p) {
		snprintf(msg, len, "no memory");
		return NULL;
	}
	p->vmlinux = btf__load_vmlinux_btf();
	if (!p->vmlinux) {
		snprintf(msg, len, "cannot read the kernel's BTF: %s", strerror(errno));
		free(p);
		return NULL;
	}
	for (size_t i = 0; i < NMODS; i++)   /* a module not loaded has none: its hooks are missing */
		p->mods[i] = btf__load_module_btf(modules[i], p->vmlinux);
	return p;
}

int rm_btf_has_func(const struct rm_btf_probe *p, const char *name)
{
	if (btf__find_by_name_kind(p->vmlinux, name, BTF_KIND_FUNC) > 0)
		return 1;
	for (size_t i = 0; i < NMODS; i++)
		if (p->mods[i] && btf__find_by_name_kind(p->mods[i], name, BTF_KIND_FUNC) > 0)
			return 1;
	return 0;
}

int rm_btf_has_typedef(const struct rm_btf_probe *p, const char *name)
{
	if (btf__find_by_name_kind(p->vmlinux, name, BTF_KIND_TYPEDEF) > 0)
		return 1;
	for (size_t i = 0; i < NMODS; i++)
		if (p->mods[i] && btf__find_by_name_kind(p->mods[i], name, BTF_KIND_TYPEDEF) > 0)
			return 1;
	return 0;
}

void rm_btf_close(struct rm_btf_probe *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < NMODS; i++)
		btf__free(p->mods[i]);
	btf__free(p->vmlinux);
	free(p);
}
