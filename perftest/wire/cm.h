/* SPDX-License-Identifier: BSD-2-Clause */
/* rdma_cm modes (docs/wire-protocol.md §9): -z carries the out-of-band messages
 * over an RC QP that rdma_cm connects; the functions below set up that
 * channel on a struct pt_oob, after which every pt_oob_* exchange uses it. */
#ifndef PT_CM_H
#define PT_CM_H
#include <stddef.h>
#include <stdint.h>
#include <rdma/rdma_cma.h>
#include "oob.h"

/* Client: resolve (family AF_INET6 for --ipv6-addr, else AF_UNSPEC), bind
 * to o->source when set (--bind_source_ip, pt_oob_set_source), connect
 * (retrying while the server is not listening, until timeout_ms; < 0 for
 * never), with -T's tos (< 0: none). 0, or -errno with the reason in why. */
int pt_cm_oob_connect(struct pt_oob *o, const char *host, int port, int family, int timeout_ms,
		      int tos, char *why, size_t len);
/* Server: listen on rdma_cm port (any IPv4 address, or any IPv6 one for
 * family AF_INET6), then accept one client. */
int pt_cm_oob_listen(struct pt_oob *o, int port, int family, char *why, size_t len);
int pt_cm_oob_accept(struct pt_oob *o, int timeout_ms, char *why, size_t len);

/* -T: the IP type of service of an id's packets (tos < 0: leave it). */
int pt_cm_set_tos(struct rdma_cm_id *id, int tos, char *why, size_t len);

/* Shared by cm.c and cm_qps.c ----------------------------------------------- */
/* The server's address for port space ps; with a source (--bind_source_ip,
 * numeric) it is parsed into src and only server addresses of its family
 * are asked for. family as for pt_cm_oob_connect. 0, or -errno with why. */
int pt_cm_getaddr(const char *host, int port, enum rdma_port_space ps, int family,
		  const char *source, struct sockaddr_storage *src, struct rdma_addrinfo **res,
		  char *why, size_t len);
/* The wildcard address of family (AF_INET6, else IPv4) on port, to listen on. */
void pt_cm_any_addr(struct sockaddr_storage *ss, int family, int port);
/* rdma_resolve_addr from src (NULL: the kernel picks): a source that is not
 * a local address fails here, before any connection, naming it. */
int pt_cm_resolve_addr(struct rdma_cm_id *id, const struct sockaddr_storage *src,
		       struct sockaddr *dst, int ms, char *why, size_t len);
/* Format the reason into why; returns -err. */
int pt_cm_why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* pt_now_ns() deadline of a timeout in ms (< 0: none, 0 returned). */
uint64_t pt_cm_deadline(int ms);
/* ms until the deadline for poll(): -1 without one, 0 once passed. */
int pt_cm_ms_left(uint64_t deadline);
void pt_cm_nonblock(int fd);
/* The next event on a non-blocking channel before the deadline: 0, or -errno. */
int pt_cm_next_event(struct rdma_event_channel *ech, uint64_t deadline, struct rdma_cm_event **ev);
/* Wait for one event of type want; any other is an error (-ECONNREFUSED
 * for a reject, unreachable, address or route error: worth a retry).
 * With keep the event is handed over unacked, else it is acked. */
int pt_cm_expect(struct rdma_event_channel *ech, enum rdma_cm_event_type want, uint64_t deadline,
		 struct rdma_cm_event **keep, char *why, size_t len);

#endif
