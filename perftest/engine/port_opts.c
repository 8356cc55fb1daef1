/* SPDX-License-Identifier: BSD-2-Clause */
/* The options that depend on what the port is (group "addr", docs/upstream-behaviour.md
 * §13): --force-link, --dualport, --pkey_index and -W, all checked once the
 * port is known and before any peer is contacted, so a refusal costs no
 * traffic. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "engine.h"
#include "counters.h"

static const char *link_name(bool roce)
{
	return roce ? "Ethernet" : "IB";
}

static int check_pkey(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	int idx = p->addr.pkey_index, len = c->dev.port_attr.pkey_tbl_len;
	__be16 pkey = 0;

	if (idx >= len) {
		fprintf(stderr, " P_Key index %d is out of range: port %d of %s has %d P_Keys"
			" (pkey_tbl_len)\n", idx, p->dev.ib_port, c->dev.devname, len);
		return -1;
	}
	if (ibv_query_pkey(c->dev.verbs, (uint8_t)p->dev.ib_port, idx, &pkey)) {
		fprintf(stderr, " Couldn't query P_Key index %d of %s port %d: %s\n", idx,
			c->dev.devname, p->dev.ib_port, strerror(errno));
		return -1;
	}
	/* an empty slot: a QP bound to it could talk to nobody */
	if ((be16toh(pkey) & 0x7fff) == 0) {
		fprintf(stderr, " P_Key index %d of %s port %d is empty (P_Key 0x%04x)\n", idx,
			c->dev.devname, p->dev.ib_port, be16toh(pkey));
		return -1;
	}
	c->dev.pkey = be16toh(pkey);
	return 0;
}

int pt_port_options_check(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	const struct pt_addr_params *a = &p->addr;
	char why[PT_PATH_MAX * 3];

	if (a->force_link != PT_LINK_ANY && (a->force_link == PT_LINK_ETHERNET) != c->dev.is_roce) {
		fprintf(stderr, " --force-link %s: port %d of %s has link layer %s\n",
			link_name(a->force_link == PT_LINK_ETHERNET), p->dev.ib_port,
			c->dev.devname, link_name(c->dev.is_roce));
		return -1;
	}
	if (a->dualport && c->dev.dev_attr.orig_attr.phys_port_cnt < 2) {
		fprintf(stderr, " --dualport needs a device with two ports: %s has %u"
			" (phys_port_cnt)\n", c->dev.devname, c->dev.dev_attr.orig_attr.phys_port_cnt);
		return -1;
	}
	if (check_pkey(c))
		return -1;
	if (a->num_counters && pt_port_counters_snap(c, c->out.counters_before, why, sizeof(why))) {
		fprintf(stderr, " %s\n", why);
		return -1;
	}
	return 0;
}

int pt_port_counters_snap(struct pt_ctx *c, uint64_t *vals, char *why, size_t why_len)
{
	const struct pt_addr_params *a = &c->p->addr;

	return pt_counters_read(PT_SYSFS_IB, c->dev.devname, c->p->dev.ib_port,
				(const char (*)[PT_PATH_MAX / 8])a->counters, a->num_counters,
				vals, why, why_len);
}
