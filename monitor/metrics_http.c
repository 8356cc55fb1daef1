// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon --listen: GET /metrics over libmicrohttpd (a maintained HTTP
 * server, so parsing requests is not ours to get wrong). We bind the socket
 * ourselves and hand it to the library: a bad address or a busy port is
 * then a plain errno we can name before anything is attached. The main
 * loop renders the text each interval (metrics.c); the server's thread only
 * copies the latest text under a lock. */
#include "metrics_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metrics.h"

struct rm_http {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	char *text[2];             /* by enum rm_metrics_format */
};

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *ctype,
			     const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	struct rm_http *h = cls;
	const char *accept;
	enum rm_metrics_format fmt;
	enum MHD_Result ret;

	(void)version; (void)upload; (void)upload_size; (void)state;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET /metrics only\n");
	if (strcmp(url, "/metrics") != 0)
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain", "rdmamon: the metrics are at /metrics\n");
	/* what Prometheus asks for when it can read OpenMetrics */
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	fmt = accept && strstr(accept, "application/openmetrics-text") ? RM_FMT_OPENMETRICS
								     : RM_FMT_PROMETHEUS;
	pthread_mutex_lock(&h->lock);
	if (h->text[fmt])
		ret = reply(c, MHD_HTTP_OK, fmt == RM_FMT_OPENMETRICS ? RM_OPENMETRICS_CTYPE
								      : RM_PROMETHEUS_CTYPE, h->text[fmt]);
	else
		ret = reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain", "rdmamon: no reading yet\n");
	pthread_mutex_unlock(&h->lock);
	return ret;
}

struct rm_http *rm_http_start(const char *spec, char *msg, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char addr[INET6_ADDRSTRLEN] = "?";
	int fd, one = 1;
	struct rm_http *h;

	if (rm_listen_parse(spec, &ss, &sl, msg, len))
		return NULL;
	if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, addr, sizeof(addr));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, addr, sizeof(addr));
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, len, "--listen %s: socket: %s", spec, strerror(errno));
		return NULL;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, 16) != 0) {
		snprintf(msg, len, "--listen %s: cannot listen on %s: %s%s", spec, addr, strerror(errno),
			 errno == EADDRINUSE ? " (another program has this port)" :
			 errno == EADDRNOTAVAIL ? " (no interface of this host has that address)" : "");
		close(fd);
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		snprintf(msg, len, "no memory");
		return NULL;
	}
	pthread_mutex_init(&h->lock, NULL);
	h->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL,
				on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10, MHD_OPTION_END);
	if (!h->d) {
		snprintf(msg, len, "--listen %s: libmicrohttpd could not start on it", spec);
		pthread_mutex_destroy(&h->lock);
		free(h);
		close(fd);
		return NULL;
	}
	return h;
}

void rm_http_publish(struct rm_http *h, char *prometheus, char *openmetrics)
{
	char *old[2];

	pthread_mutex_lock(&h->lock);
	old[0] = h->text[RM_FMT_PROMETHEUS];
	old[1] = h->text[RM_FMT_OPENMETRICS];
	h->text[RM_FMT_PROMETHEUS] = prometheus;
	h->text[RM_FMT_OPENMETRICS] = openmetrics;
	pthread_mutex_unlock(&h->lock);
	free(old[0]);
	free(old[1]);
}

void rm_http_stop(struct rm_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d);    /* closes the listening socket too */
	pthread_mutex_destroy(&h->lock);
	free(h->text[0]);
	free(h->text[1]);
	free(h);
}
