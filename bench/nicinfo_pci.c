/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo: the PCIe link of a device, from libpci (config space) or sysfs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pci/pci.h>

#include "nicinfo.h"

/* libpci's error hook must not return; the default one exits the process.
 * Ours jumps back so a broken device costs only the libpci answer. */
static jmp_buf pci_escape;
static char pci_msg[256];
static struct pci_dev *pci_open_dev; /* freed by the caller after a jump too */

static PCI_NONRET void pci_on_error(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	vsnprintf(pci_msg, sizeof(pci_msg), msg, ap);
	va_end(ap);
	longjmp(pci_escape, 1);
}

static void pci_on_warning(char *msg, ...)
{
	va_list ap;

	va_start(ap, msg);
	vsnprintf(pci_msg, sizeof(pci_msg), msg, ap);
	va_end(ap);
}

static void pci_quiet(char *msg, ...)
{
	(void)msg;
}

static void link_from_reg(unsigned int reg, struct nic_link *l)
{
	/* Speed in bits 3:0, width in bits 9:4, alike in LNKCAP and LNKSTA. */
	l->gts = nic_pcie_code_gts(reg & 0xf);
	l->width = (int)((reg >> 4) & 0x3f);
}

/* The steps that may call pci_on_error; volatile state lives in the caller. */
static int read_caps(struct pci_access *pa, int dom, int bus, int dev, int fn,
		     struct nic_link *cur, struct nic_link *max, char *why, size_t why_len)
{
	struct pci_dev *d;
	struct pci_cap *cap;
	unsigned int sta, lcap;

	pci_init(pa);
	d = pci_open_dev = pci_get_dev(pa, dom, bus, dev, fn);
	if (!d) {
		snprintf(why, why_len, "libpci: no such device");
		return -1;
	}
	pci_msg[0] = '\0';
	if (pci_read_word(d, PCI_VENDOR_ID) == 0xffff) {
		snprintf(why, why_len, "libpci: config space not readable%s%s",
			 pci_msg[0] ? ": " : "", pci_msg);
		return -1;
	}
	cap = pci_find_cap(d, PCI_CAP_ID_EXP, PCI_CAP_NORMAL);
	if (!cap) {
		/* Without root the kernel shows only the first 64 bytes, which
		 * hold the capability pointer but not the capabilities. */
		snprintf(why, why_len, "libpci: no PCI Express capability found (not PCIe, or config "
			 "space past 64 bytes unreadable without root)");
		return -1;
	}
	lcap = pci_read_long(d, cap->addr + PCI_EXP_LNKCAP);
	sta = pci_read_word(d, cap->addr + PCI_EXP_LNKSTA);
	link_from_reg(sta, cur);
	link_from_reg(lcap, max);
	if (cur->gts <= 0 || cur->width <= 0) {
		snprintf(why, why_len, "libpci: link status 0x%04x gives no speed/width (link down?)",
			 sta);
		return -1;
	}
	return 0;
}

int nic_pci_link_libpci(const char *sysfs_root, const char *addr, struct nic_link *cur,
			struct nic_link *max, char *why, size_t why_len)
{
	struct pci_access *volatile pa = NULL;
	char *volatile path = NULL;
	int dom, bus, dev, fn;
	volatile int rc = -1;

	memset(cur, 0, sizeof(*cur));
	memset(max, 0, sizeof(*max));
	pci_open_dev = NULL;
	if (nic_parse_pci_addr(addr, &dom, &bus, &dev, &fn)) {
		snprintf(why, why_len, "'%s' is not a PCI address", addr);
		return -1;
	}
	path = nic_path("%s/bus/pci", sysfs_root);
	pa = pci_alloc();
	if (!path || !pa) {
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	pa->error = pci_on_error;
	pa->warning = pci_on_warning;
	pa->debug = pci_quiet;
	pa->method = PCI_ACCESS_SYS_BUS_PCI;
	if (setjmp(pci_escape)) {
		snprintf(why, why_len, "libpci: %s", pci_msg);
		goto out;
	}
	if (pci_set_param(pa, "sysfs.path", path)) {
		snprintf(why, why_len, "libpci: no sysfs.path parameter");
		goto out;
	}
	rc = read_caps(pa, dom, bus, dev, fn, cur, max, why, why_len);
out:
	/* Cleanup may report errors too; never jump into a dead frame. */
	if (!setjmp(pci_escape)) {
		if (pci_open_dev)
			pci_free_dev(pci_open_dev);
		pci_open_dev = NULL;
		if (pa)
			pci_cleanup(pa);
	}
	pci_open_dev = NULL;
	free(path);
	return rc;
}

static void link_from_files(const char *devdir, const char *speed, const char *width,
			    struct nic_link *l)
{
	char *s = nic_read_attr(devdir, speed), *w = nic_read_attr(devdir, width), *end;
	long n;

	l->gts = 0;
	l->width = 0;
	if (s && nic_parse_link_speed(s, &l->gts))
		l->gts = 0;
	if (w) {
		n = strtol(w, &end, 10);
		if (end != w && !*end && n > 0 && n <= 32)
			l->width = (int)n;
	}
	free(s);
	free(w);
}

int nic_pci_link_sysfs(const char *devdir, struct nic_link *cur, struct nic_link *max)
{
	link_from_files(devdir, "current_link_speed", "current_link_width", cur);
	link_from_files(devdir, "max_link_speed", "max_link_width", max);
	return cur->gts > 0 && cur->width > 0 ? 0 : -1;
}
