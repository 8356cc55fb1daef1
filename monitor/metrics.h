/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmamon --listen: the interval's counts and rates as labelled metrics in
 * the Prometheus text format (0.0.4) or OpenMetrics 1.0, written from the
 * same snapshots as the --json line (report.c), so both say the same. Also
 * the parsing of the ADDR:PORT the endpoint binds to. Plain data, no
 * kernel and no HTTP here (metrics_http.c serves the text): unit-tested. */
#ifndef MONITOR_METRICS_H
#define MONITOR_METRICS_H

#include <stddef.h>
#include <sys/socket.h>

#include "report.h"
#include "snapshot.h"

enum rm_metrics_format { RM_FMT_PROMETHEUS, RM_FMT_OPENMETRICS };

#define RM_PROMETHEUS_CTYPE "text/plain; version=0.0.4; charset=utf-8"
#define RM_OPENMETRICS_CTYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* The exposition of now (rates over now - prev; prev NULL: no rates yet).
 * A malloc'd string, NULL on no memory. */
char *rm_metrics_text(const struct rm_snapshot *now, const struct rm_snapshot *prev,
		      const struct rm_report_ctx *ctx, enum rm_metrics_format fmt);

/* "PORT" (bound to 127.0.0.1), "IPV4:PORT" or "[IPV6]:PORT", numeric only,
 * port 1..65535. 0, or -1 with the reason in msg. */
int rm_listen_parse(const char *spec, struct sockaddr_storage *ss, socklen_t *len, char *msg,
		    size_t msglen);

#endif
