/* SPDX-License-Identifier: BSD-2-Clause */
/* The connection table (`rdmamon conns`): the QP pairs established now,
 * from the BPF side's per-QP state (map life_qps): a QP that reached RTR
 * with a remote (RC, UC, XRC) and is in RTR, RTS, SQD or SQE. As JSON (one
 * object per reading) and as a text table from that same object. */
#ifndef MONITOR_CONNTABLE_H
#define MONITOR_CONNTABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "life_event.h"

struct rm_conn_row {
	struct rm_qp_key k;
	struct rm_qp_info v;
	const char *dev;       /* device name, NULL: unknown */
	const char *cgroup;    /* owner's cgroup path, NULL: unknown */
};

/* Is this QP one end of an established connection? */
int rm_conn_established(const struct rm_qp_info *v);
/* The established rows of rows[n] (sorted by device and QPN), as
 * {"event":"conns", "mono_ns", "time_ns", "final", "count", "conns":[...],
 * "lost":{kind: n}}. lost: LE_NKINDS counters, NULL when unknown. */
json_t *rm_conns_json(struct rm_conn_row *rows, size_t n, uint64_t mono_ns, int64_t real_off_ns,
		      int final, const uint64_t *lost);
void rm_conns_text(FILE *f, const json_t *t);

#endif
