/* SPDX-License-Identifier: BSD-2-Clause */
/* Where a tool runs and allocates (docs/upstream-behaviour.md "Placement"):
 * 6.29 binds to the NIC's NUMA node by default; --numa_node picks another
 * node, --pin_cores a CPU list, --disable_numa turns the default off. */
#ifndef PT_PLACEMENT_H
#define PT_PLACEMENT_H
#include <stdbool.h>
#include <stddef.h>
#include "perftest/cli/params.h"

enum pt_place_source {
	PT_PLACE_NONE,        /* the NIC's node unknown (-1) or no NUMA: left as it was */
	PT_PLACE_NIC,         /* the default: the NIC's node */
	PT_PLACE_OPTION,      /* --numa_node */
	PT_PLACE_DISABLED,    /* --disable_numa */
};

struct pt_place {
	int nic_node;                 /* from sysfs; -1 unknown */
	int node;                     /* memory and (without --pin_cores) CPUs; -1 none */
	enum pt_place_source source;
	char cpus[256];               /* the affinity in effect after placing, as a list */
	bool applied;                 /* an affinity or memory policy was set */
};

/* The plan, without touching the process: which node from the options, the
 * NIC's node and the host's highest node (-1: no NUMA support). 0, or -1
 * with the reason in why (a node this host does not have). */
int pt_place_plan(const struct pt_params *p, int nic_node, int max_node, struct pt_place *out,
		  char *why, size_t why_len);

/* The NIC's node: the RDMA device's sysfs parent, else its netdev's; -1 unknown. */
int pt_place_nic_node(const char *ibdev, const char *netdev);

/* Plan and apply (CPU affinity, preferred memory node): before any buffer
 * is allocated and before any traffic. 0, or -1 after printing why. */
int pt_place_apply(const struct pt_params *p, const char *ibdev, const char *netdev,
		   struct pt_place *out);

/* Bind a buffer's pages to the placement's node (no-op without one). */
void pt_place_buffer(const struct pt_place *pl, void *buf, size_t len);

/* "1 (NIC)", "0 (--numa_node)", "OFF (--disable_numa)", "unknown". */
const char *pt_place_node_str(const struct pt_place *pl, char *buf, size_t len);
/* "NIC", "numa_node", "disable_numa", "none". */
const char *pt_place_source_name(enum pt_place_source s);

#endif
