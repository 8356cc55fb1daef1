/* SPDX-License-Identifier: BSD-2-Clause */
/* Multicast GIDs for -g/-M (docs/upstream-behaviour.md §4.2). */
#ifndef PT_MGID_H
#define PT_MGID_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

/* Upstream's default group ff01:0:2:c985:: (MCG_GID). */
#define PT_MGID_DEFAULT_INIT { 255, 1, 0, 0, 0, 2, 201, 133, 0, 0, 0, 0, 0, 0, 0, 0 }

/* Longest accepted text: 16 tokens "0xHH" and 15 colons. */
#define PT_MGID_TEXT_MAX 79
/* Buffer size for pt_mgid_format() (INET6_ADDRSTRLEN). */
#define PT_MGID_STRLEN 46

/* Parse an MGID given as
 *   1. dotted IPv4 multicast "225.1.1.20"      -> ::ffff:225.1.1.20
 *   2. upstream's 16 colon-separated bytes "0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20"
 *      (each decimal or 0x-hex, 0..255)
 *   3. IPv6 text "ff0e::ffff:e101:114" or "::ffff:225.1.1.20"
 * The result must be IPv6 multicast (ff00::/8) or IPv4-mapped multicast
 * (::ffff:224.0.0.0/100). Returns 0, or -1 with a message in err. */
int pt_mgid_parse(const char *text, uint8_t mgid[16], char *err, size_t errlen);

/* IPv6 text of an MGID ("::ffff:225.1.1.20"); len >= PT_MGID_STRLEN.
 * Returns 0, or -1 if buf is too small. */
int pt_mgid_format(const uint8_t mgid[16], char *buf, size_t len);

/* True when the MGID carries an IPv4 group: ::ffff:a.b.c.d (RoCE v2) or
 * ff0e::ffff:a.b.c.d (RoCE v1). upstream's GID type check treats both as
 * "IPv4". group (may be NULL) receives a.b.c.d, e.g. to join the IGMP group. */
bool pt_mgid_ipv4(const uint8_t mgid[16], struct in_addr *group);

#endif
