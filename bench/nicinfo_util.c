/* SPDX-License-Identifier: BSD-2-Clause */
/* nicinfo: text parsing and link arithmetic, kept free of I/O for unit tests. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nicinfo.h"

char *nic_path(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return n < 0 ? NULL : s;
}

char *nic_read_attr(const char *dir, const char *name)
{
	char *p = nic_path("%s/%s", dir, name), buf[4096];
	FILE *f;
	size_t n;

	if (!p)
		return NULL;
	f = fopen(p, "re");
	free(p);
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	/* sysfs refuses some reads (e.g. a link-down netdev's speed: EINVAL). */
	if (ferror(f)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
	return strdup(buf);
}

/* A plain decimal number at the start of s (no sign, no exponent), so that
 * strtod's "inf", "0x10" and "1e3" are not taken for speeds. */
static int leading_number(const char *s, double *v, const char **end)
{
	const char *p = s;
	char *e;

	if (!isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	errno = 0;
	*v = strtod(s, &e);
	if (errno || e != p || !isfinite(*v))
		return -1;
	*end = p;
	return 0;
}

int nic_parse_link_speed(const char *s, double *gts)
{
	const char *rest;
	double v;

	if (!s || leading_number(s, &v, &rest) || v <= 0)
		return -1;
	if (strncmp(rest, " GT/s", 5) != 0)
		return -1;
	rest += 5;
	if (*rest && strcmp(rest, " PCIe") != 0)
		return -1;
	*gts = v;
	return 0;
}

int nic_parse_port_rate(const char *s, double *gbps, char *width, size_t width_len)
{
	const char *rest, *open, *x;
	double v;

	if (width_len)
		width[0] = '\0';
	if (!s || leading_number(s, &v, &rest) || strncmp(rest, " Gb/sec", 7) != 0)
		return -1;
	*gbps = v;
	/* The width is the "NX" word inside the parentheses, e.g. "(4X EDR)". */
	open = strchr(rest, '(');
	if (open && width_len) {
		x = open + 1;
		while (isdigit((unsigned char)*x))
			x++;
		if (x > open + 1 && *x == 'X' && (size_t)(x - open) < width_len) {
			memcpy(width, open + 1, (size_t)(x - open));
			width[x - open] = '\0';
		}
	}
	return 0;
}

double nic_pcie_lane_gbps(double gts)
{
	static const struct {
		double gts, gbps;
	} gen[] = {
		{ 2.5, 2.5 * 8 / 10 },   { 5.0, 5.0 * 8 / 10 },
		{ 8.0, 8.0 * 128 / 130 }, { 16.0, 16.0 * 128 / 130 },
		{ 32.0, 32.0 * 128 / 130 }, { 64.0, 64.0 * 242 / 256 },
	};

	for (size_t i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
		if (fabs(gts - gen[i].gts) < 1e-6)
			return gen[i].gbps;
	return 0;
}

double nic_pcie_code_gts(unsigned int code)
{
	static const double gts[] = { 0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0 };

	return code < sizeof(gts) / sizeof(gts[0]) ? gts[code] : 0;
}

json_t *nic_link_json(const struct nic_link *l)
{
	double lane;

	if (!l || l->gts <= 0 || l->width <= 0)
		return json_null();
	lane = nic_pcie_lane_gbps(l->gts);
	/* Round to 0.01 Gb/s: more digits than that are noise next to a
	 * measured bandwidth. */
	return json_pack("{s:f, s:i, s:o}", "speed_gts", l->gts, "width", l->width, "gbps",
			 lane > 0 ? json_real(round(lane * l->width * 100) / 100) : json_null());
}

int nic_parse_pci_addr(const char *s, int *domain, int *bus, int *dev, int *func)
{
	unsigned int d, b, v, f;

	/* Exactly DDDD:BB:DD.F: sscanf alone would take spaces and signs. */
	if (!s || strlen(s) != 12)
		return -1;
	for (int i = 0; i < 12; i++) {
		char want = i == 4 || i == 7 ? ':' : i == 10 ? '.' : 'x';

		if (want == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != want)
			return -1;
	}
	if (sscanf(s, "%4x:%2x:%2x.%1x", &d, &b, &v, &f) != 4 || v > 31 || f > 7)
		return -1;
	*domain = (int)d;
	*bus = (int)b;
	*dev = (int)v;
	*func = (int)f;
	return 0;
}
