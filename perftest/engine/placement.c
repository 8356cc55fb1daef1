/* SPDX-License-Identifier: BSD-2-Clause */
/* NUMA placement through libnuma (see placement.h). The memory policy is
 * "preferred" for the process (a full node falls back instead of failing)
 * and "bind" for the work buffer, which is what the NIC reads and writes. */
#include <errno.h>
#include <limits.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "placement.h"

const char *pt_place_source_name(enum pt_place_source s)
{
	switch (s) {
	case PT_PLACE_NIC: return "NIC";
	case PT_PLACE_OPTION: return "numa_node";
	case PT_PLACE_DISABLED: return "disable_numa";
	case PT_PLACE_NONE: break;
	}
	return "none";
}

const char *pt_place_node_str(const struct pt_place *pl, char *buf, size_t len)
{
	if (pl->source == PT_PLACE_DISABLED)
		snprintf(buf, len, "OFF (--disable_numa)");
	else if (pl->node < 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%d (%s)", pl->node,
			 pl->source == PT_PLACE_OPTION ? "--numa_node" : "NIC");
	return buf;
}

int pt_place_plan(const struct pt_params *p, int nic_node, int max_node, struct pt_place *out,
		  char *why, size_t why_len)
{
	memset(out, 0, sizeof(*out));
	out->nic_node = nic_node;
	out->node = -1;
	if (p->disable_numa) {
		out->source = PT_PLACE_DISABLED;
	} else if (p->numa_node >= 0) {
		if (max_node < 0) {
			snprintf(why, why_len, " --numa_node %d: this host has no NUMA support"
				 " (numa_available() failed)\n", p->numa_node);
			return -1;
		}
		if (p->numa_node > max_node) {
			snprintf(why, why_len, " --numa_node %d: this host has NUMA nodes 0..%d\n",
				 p->numa_node, max_node);
			return -1;
		}
		out->node = p->numa_node;
		out->source = PT_PLACE_OPTION;
	} else if (nic_node >= 0 && max_node >= 0 && nic_node <= max_node) {
		out->node = nic_node;
		out->source = PT_PLACE_NIC;
	}
	return 0;
}

/* First integer of a sysfs file; -1 when absent or unreadable. */
static int read_node(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* The node of a class device's parent: its own numa_node, else the nearest
 * ancestor's (a virtio NIC's device is virtioN, whose parent is the PCI function). */
static int class_device_node(const char *cls, const char *name)
{
	char link[256], real[PATH_MAX], path[PATH_MAX + 16];
	int node = -1;

	snprintf(link, sizeof(link), "/sys/class/%s/%s/device", cls, name);
	if (!realpath(link, real))
		return -1;
	for (int up = 0; up < 4 && node < 0 && strncmp(real, "/sys/devices/", 13) == 0; up++) {
		char *slash;

		snprintf(path, sizeof(path), "%s/numa_node", real);
		node = read_node(path);
		slash = strrchr(real, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return node;
}

int pt_place_nic_node(const char *ibdev, const char *netdev)
{
	/* an rxe device has no parent of its own: then its netdev's */
	int node = class_device_node("infiniband", ibdev);

	if (node < 0 && netdev && *netdev)
		node = class_device_node("net", netdev);
	return node;
}

/* The affinity in effect, as a compact list ("0-3,8"). */
static void current_cpus(char *buf, size_t len)
{
	struct bitmask *m = numa_allocate_cpumask();
	size_t used = 0;
	int first = -1;

	buf[0] = '\0';
	if (!m || numa_sched_getaffinity(0, m) < 0) {
		snprintf(buf, len, "unknown");
		numa_free_cpumask(m);
		return;
	}
	for (int cpu = 0; cpu <= (int)m->size; cpu++) {
		bool in = cpu < (int)m->size && numa_bitmask_isbitset(m, (unsigned)cpu);

		if (in && first < 0)
			first = cpu;
		if (!in && first >= 0) {
			int n = first == cpu - 1 ? snprintf(buf + used, len - used, "%s%d", used ? "," : "", first)
						 : snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "",
							    first, cpu - 1);
			if (n < 0 || (size_t)n >= len - used)
				break;
			used += (size_t)n;
			first = -1;
		}
	}
	numa_free_cpumask(m);
}

/* --pin_cores: every CPU of the list must exist and be ours to use. */
static int pin_cores(const char *list)
{
	struct bitmask *want = numa_parse_cpustring_all(list);
	struct bitmask *allowed = numa_allocate_cpumask();
	int rc = -1;

	if (!want) {
		fprintf(stderr, " --pin_cores %s: not a CPU list of this host (CPUs 0..%d)\n", list,
			numa_num_configured_cpus() - 1);
		goto out;
	}
	if (!allowed || numa_sched_getaffinity(0, allowed) < 0) {
		fprintf(stderr, " --pin_cores %s: cannot read the CPU affinity: %s\n", list,
			strerror(errno));
		goto out;
	}
	for (unsigned cpu = 0; cpu < want->size; cpu++)
		if (numa_bitmask_isbitset(want, cpu) && !numa_bitmask_isbitset(allowed, cpu)) {
			fprintf(stderr, " --pin_cores %s: CPU %u is not one this process may run on\n",
				list, cpu);
			goto out;
		}
	if (numa_sched_setaffinity(0, want) < 0) {
		fprintf(stderr, " --pin_cores %s: sched_setaffinity: %s\n", list, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (want)
		numa_free_cpumask(want);
	if (allowed)
		numa_free_cpumask(allowed);
	return rc;
}

int pt_place_apply(const struct pt_params *p, const char *ibdev, const char *netdev,
		   struct pt_place *out)
{
	char why[160];
	int max_node = numa_available() < 0 ? -1 : numa_max_node();
	int nic = pt_place_nic_node(ibdev, netdev);

	if (pt_place_plan(p, nic, max_node, out, why, sizeof(why))) {
		fputs(why, stderr);
		return -1;
	}
	if (out->node >= 0 && !p->pin_cores[0]) {
		/* a node without CPUs (memory only) cannot be run on */
		if (numa_run_on_node(out->node) < 0) {
			fprintf(stderr, " NUMA node %d: cannot run on its CPUs (numa_run_on_node: %s)\n",
				out->node, strerror(errno));
			return -1;
		}
		out->applied = true;
	}
	if (p->pin_cores[0]) {
		if (pin_cores(p->pin_cores))
			return -1;
		out->applied = true;
	}
	if (out->node >= 0) {
		numa_set_preferred(out->node);
		out->applied = true;
	}
	current_cpus(out->cpus, sizeof(out->cpus));
	return 0;
}

void pt_place_buffer(const struct pt_place *pl, void *buf, size_t len)
{
	if (pl->node >= 0 && numa_available() >= 0)
		numa_tonode_memory(buf, len, pl->node);
}
