/* SPDX-License-Identifier: BSD-2-Clause */
/* Objects that existed before rdmamon started, read from `rdma -j resource
 * show TYPE` (iproute2): the BPF side only sees objects created or deleted
 * while attached, so the live counts start from these. */
#ifndef MONITOR_SEED_H
#define MONITOR_SEED_H

#include <stddef.h>
#include <stdint.h>

#include "rdmamon.h"

struct rm_seed_row {
	struct rm_obj_key k;
	struct rm_obj o;
	char ifname[RM_DEVNAME_LEN];   /* the device's name */
};

/* The id field `rdma resource show TYPE` names its objects by ("lqpn" for
 * qp, "cqn" for cq ...); NULL for a type it does not list (ah, counter). */
const char *rm_seed_id_field(unsigned type);

/* Parses one `rdma -j resource show TYPE` output into rows (malloc'd,
 * *n of them; cgid left 0). Returns 0, or -1 with a message in err. */
int rm_seed_parse(const char *json_text, unsigned type, struct rm_seed_row **rows, size_t *n,
		  char *err, size_t errlen);

/* The cgroup2 path of a process from /proc/PID/cgroup ("0::/a/b" -> "/a/b"),
 * written to buf; -1 when the process is gone or has no cgroup2 line. */
int rm_proc_cgroup(const char *proc_root, uint32_t pid, char *buf, size_t len);

#endif
