/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo: what a benchmark needs to know about an RDMA device and its host,
 * read from sysfs (under a root that tests can point at a fake tree) and
 * from PCI config space through libpci. */
#ifndef BENCH_NICINFO_H
#define BENCH_NICINFO_H

#include <stddef.h>
#include <jansson.h>

/* One PCIe link state: speed per lane in GT/s and lane count; 0 = unknown. */
struct nic_link {
	double gts;
	int width;
};

/* --- helpers (nicinfo_util.c) --------------------------------------------------- */

/* asprintf into a fresh string; NULL when out of memory. */
char *nic_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Contents of DIR/NAME without trailing white space; NULL if unreadable. */
char *nic_read_attr(const char *dir, const char *name);

/* "8.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> 8.0 / 2.5; -1 for anything else
 * ("Unknown", "", garbage). */
int nic_parse_link_speed(const char *s, double *gts);

/* "100 Gb/sec (4X EDR)" -> 100.0 and "4X" (width may be left empty when the
 * text has no "(..X ..)" part); -1 when there is no leading rate. */
int nic_parse_port_rate(const char *s, double *gbps, char *width, size_t width_len);

/* Usable Gb/s of one lane after line encoding (8b/10b up to 5 GT/s,
 * 128b/130b for 8..32 GT/s, 242/256 FLIT for 64 GT/s); 0 if unknown. */
double nic_pcie_lane_gbps(double gts);

/* The LNKCAP/LNKSTA speed code (1 = 2.5 GT/s ... 6 = 64 GT/s) -> GT/s; 0 if
 * the code is not one of those. */
double nic_pcie_code_gts(unsigned int code);

/* {"speed_gts", "width", "gbps"} or JSON null when speed or width is unknown. */
json_t *nic_link_json(const struct nic_link *l);

/* "0000:3b:00.0" -> its numbers; -1 if the text is not a PCI address. */
int nic_parse_pci_addr(const char *s, int *domain, int *bus, int *dev, int *func);

/* --- PCI (nicinfo_pci.c) ------------------------------------------------------------ */

/* Current and maximum link of the PCI function ADDR through libpci's sysfs
 * access method rooted at SYSFS_ROOT/bus/pci. 0 on success; -1 when libpci
 * cannot read the PCIe capability (e.g. config space beyond 64 bytes needs
 * root), with the reason in why. */
int nic_pci_link_libpci(const char *sysfs_root, const char *addr, struct nic_link *cur,
			struct nic_link *max, char *why, size_t why_len);

/* The same from the sysfs files current_link_speed/width, max_link_speed/width
 * of the device directory DEVDIR. 0 when at least the current link is known. */
int nic_pci_link_sysfs(const char *devdir, struct nic_link *cur, struct nic_link *max);

/* --- devices and host (nicinfo_sysfs.c) --------------------------------------------- */

/* The "host" object: hostname, kernel, NUMA nodes with their CPU lists. */
json_t *nic_host_json(const char *sysfs_root);

/* The object of device NAME, or NULL with the reason in why. */
json_t *nic_device_json(const char *sysfs_root, const char *name, char *why, size_t why_len);

/* Device names under SYSFS_ROOT/class/infiniband, sorted; NULL if the
 * directory cannot be read (errno set). */
json_t *nic_device_names(const char *sysfs_root);

#endif
