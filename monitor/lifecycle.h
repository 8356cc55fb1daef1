/* SPDX-License-Identifier: BSD-2-Clause */
/* The lifecycle view's events in words: QP states and types by name, GIDs
 * and socket addresses as text, the filters (--pid, --cgroup, --dev,
 * --qpn), and an event as one JSON Lines object (stable field names) or one
 * human line. Plain data in, text out: no kernel needed (unit-tested). */
#ifndef MONITOR_LIFECYCLE_H
#define MONITOR_LIFECYCLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "life_event.h"

const char *rm_qp_state_name(unsigned state);  /* "RTR"; "?" unknown (RM_QPS_UNKNOWN) */
const char *rm_qp_type_name(unsigned type);    /* "RC", "UD" ...; "?" */
const char *rm_life_kind_name(unsigned kind);  /* "qp_modify"; "?" */
/* "::ffff:10.0.0.1" / "fe80::..." (what inet_ntop prints for 16 bytes). */
const char *rm_gid_str(const uint8_t gid[16], char *buf, size_t len);
/* "10.0.0.1:18515", "[fe80::1]:18515", "-" for an empty address. */
const char *rm_sockaddr_str(const uint8_t sa[RM_SA_LEN], char *buf, size_t len);

/* Unset filters: pid < 0, cgroup/dev NULL, qpn < 0. */
struct rm_life_filter {
	long pid;
	const char *cgroup;    /* a path under the cgroup2 root: that cgroup and those below */
	const char *dev;       /* device name */
	long long qpn;         /* local QPN (AH and rdma_cm events have none: not selected) */
};

void rm_life_filter_init(struct rm_life_filter *f);
/* A QPN as the tools print it ("0x0011"), or decimal; -1 when not one. */
long long rm_qpn_parse(const char *s);
/* Is an object of this owner, device and QPN (qpn < 0: none) selected? */
int rm_life_select(const struct rm_life_filter *f, uint32_t pid, const char *cgpath,
		   const char *dev, long long qpn);
int rm_life_match(const struct rm_life_filter *f, const struct rm_life_event *e,
		  const char *dev, const char *cgpath);

/* real_off_ns: CLOCK_REALTIME - CLOCK_MONOTONIC, to print wall time too.
 * dev / cgpath: names found by the caller (NULL: unknown). NULL: no memory. */
json_t *rm_life_json(const struct rm_life_event *e, const char *dev, const char *cgpath,
		     int64_t real_off_ns);
void rm_life_text(FILE *f, const struct rm_life_event *e, const char *dev, const char *cgpath);

#endif
