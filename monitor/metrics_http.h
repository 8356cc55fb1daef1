/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmamon --listen ADDR:PORT: the HTTP endpoint (GET /metrics) that serves
 * the latest text metrics.c rendered. */
#ifndef MONITOR_METRICS_HTTP_H
#define MONITOR_METRICS_HTTP_H

#include <stddef.h>

struct rm_http;

/* Binds and listens on spec (rm_listen_parse's forms), then serves.
 * NULL with the reason in msg: a bad address, a busy port ... */
struct rm_http *rm_http_start(const char *spec, char *msg, size_t len);
/* The texts to serve from now on (both malloc'd; taken over, NULL: 503). */
void rm_http_publish(struct rm_http *h, char *prometheus, char *openmetrics);
void rm_http_stop(struct rm_http *h);   /* NULL: nothing */

#endif
