/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo: devices, ports and host topology from sysfs (any root). */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "nicinfo.h"

/* A string attribute, or JSON null when the file is missing or empty. */
static json_t *attr_json(const char *dir, const char *name)
{
	char *v = nic_read_attr(dir, name);
	json_t *j = v && *v ? json_string(v) : json_null();

	free(v);
	return j;
}

/* "4: ACTIVE" -> "ACTIVE" (the kernel prefixes the numeric state). */
static json_t *state_json(const char *dir, const char *name)
{
	char *v = nic_read_attr(dir, name), *colon;
	json_t *j;

	if (!v || !*v) {
		free(v);
		return json_null();
	}
	colon = strstr(v, ": ");
	j = json_string(colon ? colon + 2 : v);
	free(v);
	return j;
}

static int is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A decimal integer attribute; -1 when missing or not a number. */
static int attr_long(const char *dir, const char *name, long *out)
{
	char *v = nic_read_attr(dir, name), *end;
	int rc = -1;

	if (v && *v) {
		errno = 0;
		*out = strtol(v, &end, 10);
		rc = errno || *end ? -1 : 0;
	}
	free(v);
	return rc;
}

static int numeric_entry(const struct dirent *d)
{
	return d->d_name[0] >= '0' && d->d_name[0] <= '9';
}

static int node_entry(const struct dirent *d)
{
	return strncmp(d->d_name, "node", 4) == 0 && d->d_name[4] >= '0' && d->d_name[4] <= '9';
}

static int visible_entry(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* versionsort puts node10 after node9 and port 10 after port 9. */
static int list_dir(const char *dir, int (*filter)(const struct dirent *), struct dirent ***out)
{
	return scandir(dir, out, filter, versionsort);
}

static void free_list(struct dirent **l, int n)
{
	for (int i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

json_t *nic_host_json(const char *root)
{
	char host[HOST_NAME_MAX + 1] = "", *dir = nic_path("%s/devices/system/node", root);
	char *cpu = nic_path("%s/devices/system/cpu", root);
	struct dirent **ents = NULL;
	struct utsname u;
	json_t *h, *nodes = json_array();
	int n;

	if (!dir || !cpu || !nodes) {
		free(dir);
		free(cpu);
		json_decref(nodes);
		return NULL;
	}
	gethostname(host, sizeof(host) - 1);
	h = json_pack("{s:s, s:s?, s:s, s:o}", "hostname", host, "kernel",
		      uname(&u) == 0 ? u.release : NULL, "sysfs_root", root, "online_cpus",
		      attr_json(cpu, "online"));
	n = list_dir(dir, node_entry, &ents);
	for (int i = 0; i < n; i++) {
		char *nd = nic_path("%s/%s", dir, ents[i]->d_name);

		if (nd)
			json_array_append_new(nodes,
					      json_pack("{s:i, s:o, s:o}", "node",
							atoi(ents[i]->d_name + 4), "cpulist",
							attr_json(nd, "cpulist"), "distance",
							attr_json(nd, "distance")));
		free(nd);
	}
	if (n >= 0)
		free_list(ents, n);
	if (h) {
		json_object_set_new(h, "numa_nodes", nodes);
		if (n < 0)
			json_object_set_new(h, "numa_reason",
					    json_sprintf("no NUMA information (%s: %s)", dir,
							 strerror(errno)));
	} else {
		json_decref(nodes);
	}
	free(dir);
	free(cpu);
	return h;
}

json_t *nic_device_names(const char *root)
{
	char *dir = nic_path("%s/class/infiniband", root);
	struct dirent **ents = NULL;
	json_t *names;
	int n;

	if (!dir)
		return NULL;
	n = list_dir(dir, visible_entry, &ents);
	free(dir);
	if (n < 0)
		return NULL;
	names = json_array();
	for (int i = 0; i < n && names; i++)
		json_array_append_new(names, json_string(ents[i]->d_name));
	free_list(ents, n);
	return names;
}

/* NUMA node and local CPUs of device directory DIR; walks up from DIR (a
 * netdev's virtio child has them on its PCI parent) but not above root. */
static void numa_of(json_t *o, const char *root, const char *dir, const char *source)
{
	char *d = strdup(dir), *slash;
	size_t rl = strlen(root);
	long node;

	while (d && strlen(d) > rl) {
		if (attr_long(d, "numa_node", &node) == 0) {
			json_object_set_new(o, "numa_source", json_string(source));
			if (node < 0) {
				json_object_set_new(o, "numa_node", json_null());
				json_object_set_new(o, "numa_reason",
						    json_sprintf("%s reports no NUMA node (numa_node %ld)",
								 source, node));
			} else {
				json_object_set_new(o, "numa_node", json_integer(node));
			}
			json_object_set_new(o, "local_cpulist", attr_json(d, "local_cpulist"));
			free(d);
			return;
		}
		slash = strrchr(d, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(d);
	json_object_set_new(o, "numa_node", json_null());
	json_object_set_new(o, "local_cpulist", json_null());
	json_object_set_new(o, "numa_reason", json_sprintf("no numa_node file above %s", dir));
}

/* pci: {address, driver, link:{source, current, max} | null, link_reason?} */
static json_t *pci_json(const char *root, const char *real, const char *addr)
{
	struct nic_link cur, max;
	char why[256] = "", *drv = nic_path("%s/driver", real), *rdrv = NULL;
	json_t *p, *link = NULL;
	const char *source = "libpci";

	if (drv)
		rdrv = realpath(drv, NULL);
	free(drv);
	p = json_pack("{s:s, s:s?}", "address", addr, "driver",
		      rdrv ? strrchr(rdrv, '/') + 1 : NULL);
	free(rdrv);
	if (!p)
		return NULL;
	if (nic_pci_link_libpci(root, addr, &cur, &max, why, sizeof(why))) {
		source = "sysfs";
		if (nic_pci_link_sysfs(real, &cur, &max)) {
			json_object_set_new(p, "link", json_null());
			json_object_set_new(p, "link_reason",
					    json_sprintf("%s; no current_link_speed/width in sysfs",
							 why));
			return p;
		}
	}
	link = json_pack("{s:s, s:o, s:o}", "source", source, "current", nic_link_json(&cur),
			 "max", nic_link_json(&max));
	if (link && strcmp(source, "sysfs") == 0)
		json_object_set_new(link, "libpci_reason", json_string(why));
	json_object_set_new(p, "link", link ? link : json_null());
	return p;
}

static double link_gbps(json_t *pci)
{
	json_t *g = json_object_get(json_object_get(json_object_get(pci, "link"), "current"),
				    "gbps");

	return json_is_number(g) ? json_number_value(g) : 0;
}

/* limit_gbps = min(port rate, PCIe) for a PCI device; the netdev speed for a
 * virtual one (whose port rate the kernel derives, or defaults, itself). */
static void port_limit(json_t *port, const char *dev, bool virt, json_t *pci)
{
	json_t *rate = json_object_get(port, "rate_gbps");
	json_t *ndev = json_object_get(port, "netdev");
	json_t *nspeed = json_object_get(port, "netdev_speed_mbps");
	double pg = link_gbps(pci), r = json_is_number(rate) ? json_number_value(rate) : 0;
	json_t *lim = json_null(), *why;

	if (virt) {
		if (json_is_integer(nspeed)) {
			lim = json_real(json_integer_value(nspeed) / 1000.0);
			why = json_sprintf("%s is virtual: netdev %s speed", dev,
					   json_string_value(ndev));
		} else if (json_is_string(ndev)) {
			why = json_sprintf("unknown: %s is virtual (no PCIe link) and netdev %s "
					   "reports no speed", dev, json_string_value(ndev));
		} else {
			why = json_sprintf("unknown: %s is virtual (no PCIe link) and has no netdev",
					   dev);
		}
	} else if (r > 0 && pg > 0) {
		lim = json_real(r < pg ? r : pg);
		why = json_sprintf("min(port rate %g Gb/s, PCIe %g Gb/s)", r, pg);
	} else {
		why = json_sprintf("unknown: %s%s%s", r > 0 ? "" : "no port rate",
				   r > 0 || pg > 0 ? "" : " and ", pg > 0 ? "" : "no PCIe link speed");
	}
	json_object_set_new(port, "limit_gbps", lim);
	json_object_set_new(port, "limit_reason", why);
}

static json_t *port_json(const char *root, const char *pdir, long num)
{
	char *gdir = nic_path("%s/gid_attrs/ndevs", pdir), *rate = nic_read_attr(pdir, "rate");
	char *nd = gdir ? nic_read_attr(gdir, "0") : NULL, *ndir = NULL, width[16];
	json_t *p;
	double gbps;
	long speed;

	p = json_pack("{s:i, s:o, s:o, s:o, s:s?}", "port", (json_int_t)num, "state",
		      state_json(pdir, "state"), "phys_state", state_json(pdir, "phys_state"),
		      "link_layer", attr_json(pdir, "link_layer"), "rate", rate);
	if (p && rate && nic_parse_port_rate(rate, &gbps, width, sizeof(width)) == 0) {
		json_object_set_new(p, "rate_gbps", json_real(gbps));
		json_object_set_new(p, "width", width[0] ? json_string(width) : json_null());
	} else if (p) {
		json_object_set_new(p, "rate_gbps", json_null());
		json_object_set_new(p, "width", json_null());
	}
	if (p && nd && *nd) {
		json_object_set_new(p, "netdev", json_string(nd));
		ndir = nic_path("%s/class/net/%s", root, nd);
		/* -1 (virtio, link down) and unreadable both mean unknown. */
		json_object_set_new(p, "netdev_speed_mbps",
				    ndir && attr_long(ndir, "speed", &speed) == 0 && speed > 0
					    ? json_integer(speed) : json_null());
	} else if (p) {
		json_object_set_new(p, "netdev", json_null());
		json_object_set_new(p, "netdev_speed_mbps", json_null());
	}
	free(gdir);
	free(rate);
	free(nd);
	free(ndir);
	return p;
}

static void add_ports(json_t *o, const char *root, const char *ibdir, const char *name)
{
	char *pdir = nic_path("%s/ports", ibdir);
	struct dirent **ents = NULL;
	json_t *ports = json_array();
	bool virt = json_is_true(json_object_get(o, "virtual"));
	int n = pdir ? list_dir(pdir, numeric_entry, &ents) : -1;

	for (int i = 0; i < n && ports; i++) {
		char *one = nic_path("%s/%s", pdir, ents[i]->d_name);
		json_t *p = one ? port_json(root, one, atol(ents[i]->d_name)) : NULL;

		if (p) {
			port_limit(p, name, virt, json_object_get(o, "pci"));
			json_array_append_new(ports, p);
		}
		free(one);
	}
	if (n >= 0)
		free_list(ents, n);
	free(pdir);
	json_object_set_new(o, "ports", ports ? ports : json_null());
}

/* A virtual device's placement follows the NIC its netdev sits on. */
static void virtual_numa(json_t *o, const char *root)
{
	json_t *ports = json_object_get(o, "ports"), *p;
	size_t i;

	json_array_foreach(ports, i, p) {
		const char *nd = json_string_value(json_object_get(p, "netdev"));
		char *link = nd ? nic_path("%s/class/net/%s/device", root, nd) : NULL;
		char *real = link ? realpath(link, NULL) : NULL, *src;

		free(link);
		if (real) {
			src = nic_path("netdev %s (%s)", nd, strrchr(real, '/') + 1);
			numa_of(o, root, real, src ? src : nd);
			free(src);
			free(real);
			return;
		}
	}
	json_object_set_new(o, "numa_node", json_null());
	json_object_set_new(o, "local_cpulist", json_null());
	json_object_set_new(o, "numa_reason",
			    json_string("virtual device whose netdev has no parent device"));
}

/* DIR itself or its nearest ancestor below root named like a PCI function
 * (a sub-function or auxiliary device sits below its PCI device). */
static char *pci_ancestor(const char *root, const char *dir)
{
	char *d = strdup(dir), *slash;
	size_t rl = strlen(root);
	int dom, bus, dev, fn;

	while (d && strlen(d) > rl && (slash = strrchr(d, '/'))) {
		if (nic_parse_pci_addr(slash + 1, &dom, &bus, &dev, &fn) == 0)
			return d;
		*slash = '\0';
	}
	free(d);
	return NULL;
}

json_t *nic_device_json(const char *root, const char *name, char *why, size_t why_len)
{
	char *ibdir = nic_path("%s/class/infiniband/%s", root, name), *link, *real = NULL, *pci;
	json_t *o;

	if (!ibdir || strchr(name, '/') || !is_dir(ibdir)) {
		snprintf(why, why_len, "no RDMA device '%s' under %s/class/infiniband", name, root);
		free(ibdir);
		return NULL;
	}
	o = json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "device", name, "node_type",
		      attr_json(ibdir, "node_type"), "hca_type", attr_json(ibdir, "hca_type"),
		      "fw_ver", attr_json(ibdir, "fw_ver"), "node_guid",
		      attr_json(ibdir, "node_guid"), "board_id", attr_json(ibdir, "board_id"));
	if (!o) {
		snprintf(why, why_len, "out of memory");
		free(ibdir);
		return NULL;
	}
	link = nic_path("%s/device", ibdir);
	if (link)
		real = realpath(link, NULL);
	free(link);
	json_object_set_new(o, "virtual", json_boolean(!real));
	if (!real) {
		json_object_set_new(o, "pci", json_null());
		json_object_set_new(o, "pci_reason",
				    json_sprintf("virtual: %s has no parent device (software "
						 "RDMA such as rxe or siw)", name));
	} else if ((pci = pci_ancestor(root, real))) {
		json_object_set_new(o, "pci", pci_json(root, pci, strrchr(pci, '/') + 1));
		if (strcmp(pci, real) != 0)
			json_object_set_new(json_object_get(o, "pci"), "via",
					    json_string(strrchr(real, '/') + 1));
		numa_of(o, root, real, "PCI device");
		free(pci);
	} else {
		json_object_set_new(o, "pci", json_null());
		json_object_set_new(o, "pci_reason", json_sprintf("parent device %s is not PCI",
								  strrchr(real, '/') + 1));
		numa_of(o, root, real, "parent device");
	}
	add_ports(o, root, ibdir, name);
	if (!real)
		virtual_numa(o, root);
	free(real);
	free(ibdir);
	return o;
}
