/* SPDX-License-Identifier: BSD-2-Clause */
/* -z / -R: the out-of-band messages over an RC QP that rdma_cm connects
 * (docs/wire-protocol.md §9.1). Each message is one signaled SEND of exactly its
 * size; receives are posted ahead in slots larger than any message. Every
 * wait watches both the CQ and the rdma_cm event channel, so a peer that
 * disconnects or dies ends the wait at once, and a silent one at the
 * deadline. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>
#include "util/clock.h"
#include "cm.h"

#define SLOT 512            /* > any message: 6.29's raw key is 64 bytes */
#define RECV_SLOTS 4        /* at most one message is ever in flight */
#define SEND_WRID 5         /* upstream's SYNC_SPEC_ID, harmless to copy */
#define RESOLVE_MS 2000
#define RETRY_MS 100

struct pt_cm_chan {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	bool connected, gone;
	/* received messages not yet consumed, in arrival order */
	int ready[RECV_SLOTS];
	uint32_t ready_len[RECV_SLOTS];
	int nready;
	int sends_done;
	uint8_t buf[(RECV_SLOTS + 1) * SLOT]; /* receive slots, then the send slot */
};

int pt_cm_why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -err;
}

int pt_cm_ms_left(uint64_t deadline)
{
	uint64_t now = pt_now_ns();

	if (!deadline)
		return -1;
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

void pt_cm_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int pt_cm_next_event(struct rdma_event_channel *ech, uint64_t deadline, struct rdma_cm_event **ev)
{
	for (;;) {
		struct pollfd p = { .fd = ech->fd, .events = POLLIN };
		int left = pt_cm_ms_left(deadline), r;

		if (!rdma_get_cm_event(ech, ev))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (left == 0)
			return -ETIMEDOUT;
		r = poll(&p, 1, left);
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

int pt_cm_expect(struct rdma_event_channel *ech, enum rdma_cm_event_type want, uint64_t deadline,
		 struct rdma_cm_event **keep, char *why, size_t len)
{
	struct rdma_cm_event *ev;
	int r = pt_cm_next_event(ech, deadline, &ev), status;
	enum rdma_cm_event_type got;

	if (r == -ETIMEDOUT)
		return pt_cm_why(why, len, ETIMEDOUT, "no %s from rdma_cm in time", rdma_event_str(want));
	if (r)
		return pt_cm_why(why, len, -r, "rdma_cm event channel: %s", strerror(-r));
	got = ev->event;
	status = ev->status;
	if (got == want && keep) {
		*keep = ev;
		return 0;
	}
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	/* rejected/unreachable: the server is not listening (yet) */
	r = got == RDMA_CM_EVENT_REJECTED || got == RDMA_CM_EVENT_UNREACHABLE ||
	    got == RDMA_CM_EVENT_ADDR_ERROR || got == RDMA_CM_EVENT_ROUTE_ERROR ?
		    ECONNREFUSED : EPROTO;
	return pt_cm_why(why, len, r, "rdma_cm: %s (status %d) while waiting for %s",
		       rdma_event_str(got), status, rdma_event_str(want));
}

/* PD, CQ with its channel, MR, the RC QP on the id's device, receives. */
static int chan_resources(struct pt_cm_chan *ch, struct rdma_cm_id *id, char *why, size_t len)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = RECV_SLOTS, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	ch->pd = ibv_alloc_pd(id->verbs);
	ch->cch = ch->pd ? ibv_create_comp_channel(id->verbs) : NULL;
	ch->cq = ch->cch ? ibv_create_cq(id->verbs, 2 * RECV_SLOTS + 4, NULL, ch->cch, 0) : NULL;
	ch->mr = ch->cq ? ibv_reg_mr(ch->pd, ch->buf, sizeof(ch->buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!ch->mr)
		return pt_cm_why(why, len, errno ? errno : ENOMEM,
			       "cannot create the rdma_cm channel's PD/CQ/MR: %s", strerror(errno));
	pt_cm_nonblock(ch->cch->fd);
	qa.send_cq = qa.recv_cq = ch->cq;
	if (rdma_create_qp(id, ch->pd, &qa))
		return pt_cm_why(why, len, errno, "rdma_create_qp: %s", strerror(errno));
	for (int i = 0; i < RECV_SLOTS; i++) {
		struct ibv_sge sge = { (uintptr_t)(ch->buf + i * SLOT), SLOT, ch->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		if (ibv_post_recv(id->qp, &wr, &bad))
			return pt_cm_why(why, len, errno, "posting a receive: %s", strerror(errno));
	}
	return ibv_req_notify_cq(ch->cq, 0) ? pt_cm_why(why, len, EIO, "ibv_req_notify_cq failed") : 0;
}

static void conn_param(struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = 1;
	cp->initiator_depth = 1;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

static void chan_release_conn(struct pt_cm_chan *ch)
{
	if (ch->id) {
		if (ch->connected)
			rdma_disconnect(ch->id);
		if (ch->id->qp)
			rdma_destroy_qp(ch->id);
	}
	if (ch->mr)
		ibv_dereg_mr(ch->mr);
	if (ch->cq)
		ibv_destroy_cq(ch->cq);
	if (ch->cch)
		ibv_destroy_comp_channel(ch->cch);
	if (ch->pd)
		ibv_dealloc_pd(ch->pd);
	if (ch->id)
		rdma_destroy_id(ch->id);
	ch->id = NULL;
	ch->mr = NULL;
	ch->cq = NULL;
	ch->cch = NULL;
	ch->pd = NULL;
	ch->connected = false;
}

static void chan_close(void *t)
{
	struct pt_cm_chan *ch = t;

	if (!ch)
		return;
	chan_release_conn(ch);
	if (ch->listen_id)
		rdma_destroy_id(ch->listen_id);
	if (ch->ech)
		rdma_destroy_event_channel(ch->ech);
	free(ch);
}

/* Drain the CQ: receives join the ready queue, sends are counted. */
static int drain_cq(struct pt_cm_chan *ch, char *why, size_t len)
{
	struct ibv_wc wc[8];
	int n;

	while ((n = ibv_poll_cq(ch->cq, 8, wc)) > 0)
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return pt_cm_why(why, len, ECONNRESET,
					       "completion error on the rdma_cm channel: %s (status %d)",
					       ibv_wc_status_str(wc[i].status), wc[i].status);
			if (wc[i].opcode & IBV_WC_RECV) {
				ch->ready[ch->nready] = (int)wc[i].wr_id;
				ch->ready_len[ch->nready++] = wc[i].byte_len;
			} else {
				ch->sends_done++;
			}
		}
	return n < 0 ? pt_cm_why(why, len, EIO, "ibv_poll_cq failed") : 0;
}

/* Wait until done(ch) holds: CQ events, or a disconnect on the cm channel. */
static int wait_for(struct pt_cm_chan *ch, bool want_recv, uint64_t deadline, char *why, size_t len)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = ch->cch->fd, .events = POLLIN },
			{ .fd = ch->ech->fd, .events = POLLIN },
		};
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		int r = drain_cq(ch, why, len), left;

		if (r)
			return r;
		if (want_recv ? ch->nready > 0 : ch->sends_done > 0)
			return 0;
		if (ch->gone)
			return pt_cm_why(why, len, ECONNRESET, "the peer closed the rdma_cm connection");
		left = pt_cm_ms_left(deadline);
		if (left == 0)
			return -ETIMEDOUT;
		r = poll(p, 2, left);
		if (r < 0 && errno != EINTR)
			return pt_cm_why(why, len, errno, "poll: %s", strerror(errno));
		if (p[0].revents && !ibv_get_cq_event(ch->cch, &ev_cq, &ev_ctx)) {
			ibv_ack_cq_events(ev_cq, 1);
			if (ibv_req_notify_cq(ch->cq, 0))
				return pt_cm_why(why, len, EIO, "ibv_req_notify_cq failed");
		}
		if (p[1].revents) {
			struct rdma_cm_event *ev;

			if (!rdma_get_cm_event(ch->ech, &ev)) {
				if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
				    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
				    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)
					ch->gone = true;
				rdma_ack_cm_event(ev);
			}
		}
	}
}

static int chan_send(void *t, const void *buf, size_t n, uint64_t deadline, char *why, size_t len)
{
	struct pt_cm_chan *ch = t;
	uint8_t *slot = ch->buf + RECV_SLOTS * SLOT;
	struct ibv_sge sge = { (uintptr_t)slot, (uint32_t)n, ch->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = SEND_WRID, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (n > SLOT)
		return pt_cm_why(why, len, EMSGSIZE, "message of %zu bytes is too long", n);
	memcpy(slot, buf, n);
	ch->sends_done = 0;
	if (ibv_post_send(ch->id->qp, &wr, &bad))
		return pt_cm_why(why, len, errno, "ibv_post_send: %s", strerror(errno));
	return wait_for(ch, false, deadline, why, len);
}

static int chan_recv(void *t, void *buf, size_t n, uint64_t deadline, char *why, size_t len)
{
	struct pt_cm_chan *ch = t;
	int r = wait_for(ch, true, deadline, why, len), slot;
	uint32_t got;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	if (r)
		return r;
	slot = ch->ready[0];
	got = ch->ready_len[0];
	ch->nready--;
	memmove(ch->ready, ch->ready + 1, (size_t)ch->nready * sizeof(ch->ready[0]));
	memmove(ch->ready_len, ch->ready_len + 1, (size_t)ch->nready * sizeof(ch->ready_len[0]));
	if (got == n)
		memcpy(buf, ch->buf + slot * SLOT, n);
	sge = (struct ibv_sge){ (uintptr_t)(ch->buf + slot * SLOT), SLOT, ch->mr->lkey };
	wr.wr_id = (uint64_t)slot;
	if (ibv_post_recv(ch->id->qp, &wr, &bad))
		return pt_cm_why(why, len, errno, "reposting a receive: %s", strerror(errno));
	/* Message sizes are fixed per step: another size means the two sides
	 * disagree on the protocol (e.g. raw key layouts of 6.06 and 6.29). */
	if (got != n)
		return pt_cm_why(why, len, EPROTO,
			       "peer sent a %u-byte message where %zu bytes were expected (protocol mismatch)",
			       got, n);
	return 0;
}

/* The run loops' probe (fault.c): read pending cm events without waiting. */
static int chan_peer_gone(void *t)
{
	struct pt_cm_chan *ch = t;
	struct rdma_cm_event *ev;

	while (!ch->gone && !rdma_get_cm_event(ch->ech, &ev)) {
		if (ev->event == RDMA_CM_EVENT_DISCONNECTED ||
		    ev->event == RDMA_CM_EVENT_DEVICE_REMOVAL ||
		    ev->event == RDMA_CM_EVENT_TIMEWAIT_EXIT)
			ch->gone = true;
		rdma_ack_cm_event(ev);
	}
	return ch->gone;
}

static const struct pt_oob_msg_ops chan_ops = {
	.send = chan_send,
	.recv = chan_recv,
	.close = chan_close,
	.peer_gone = chan_peer_gone,
};

static struct pt_cm_chan *chan_new(char *why, size_t len)
{
	struct pt_cm_chan *ch = calloc(1, sizeof(*ch));

	if (!ch) {
		pt_cm_why(why, len, ENOMEM, "out of memory");
		return NULL;
	}
	ch->ech = rdma_create_event_channel();
	if (!ch->ech) {
		pt_cm_why(why, len, errno, "rdma_create_event_channel: %s (is rdma_ucm loaded?)",
			strerror(errno));
		free(ch);
		return NULL;
	}
	pt_cm_nonblock(ch->ech->fd);
	return ch;
}

int pt_cm_getaddr(const char *host, int port, enum rdma_port_space ps, int family,
		  const char *source, struct sockaddr_storage *src, struct rdma_addrinfo **res,
		  char *why, size_t len)
{
	struct rdma_addrinfo hints = { .ai_port_space = ps, .ai_family = family };
	char pstr[16];
	int r;

	if (port < 0 || port > 65535)
		return pt_cm_why(why, len, EINVAL, "invalid port %d", port);
	if (source) {
		struct addrinfo sh = { .ai_family = family, .ai_flags = AI_NUMERICHOST }, *sa;

		r = getaddrinfo(source, NULL, &sh, &sa);
		if (r)
			return pt_cm_why(why, len, EINVAL, "invalid source address '%s'%s: %s",
					 source, family == AF_INET6 ? " (--ipv6-addr: IPv6 only)" : "",
					 gai_strerror(r));
		memset(src, 0, sizeof(*src));
		memcpy(src, sa->ai_addr, sa->ai_addrlen);
		hints.ai_family = sa->ai_family;   /* only servers it can reach */
		freeaddrinfo(sa);
	}
	snprintf(pstr, sizeof(pstr), "%d", port);
	r = rdma_getaddrinfo(host, pstr, &hints, res);
	if (r)
		return pt_cm_why(why, len, EHOSTUNREACH, "cannot resolve %s port %d for rdma_cm%s: %s",
				 host ? host : "*", port,
				 hints.ai_family == AF_INET6 ? " (IPv6)" :
				 hints.ai_family == AF_INET ? " (IPv4)" : "",
				 r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	return 0;
}

void pt_cm_any_addr(struct sockaddr_storage *ss, int family, int port)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		a6->sin6_family = AF_INET6;
		a6->sin6_addr = in6addr_any;
		a6->sin6_port = htons((uint16_t)port);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
	}
}

int pt_cm_resolve_addr(struct rdma_cm_id *id, const struct sockaddr_storage *src,
		       struct sockaddr *dst, int ms, char *why, size_t len)
{
	char host[NI_MAXHOST] = "";

	if (!rdma_resolve_addr(id, (struct sockaddr *)src, dst, ms))
		return 0;
	if (!src)
		return pt_cm_why(why, len, errno, "rdma_resolve_addr: %s", strerror(errno));
	int e = errno;

	getnameinfo((const struct sockaddr *)src, sizeof(*src), host, sizeof(host), NULL, 0,
		    NI_NUMERICHOST);
	return pt_cm_why(why, len, e, "rdma_resolve_addr from --bind_source_ip %s: %s%s", host,
			 strerror(e), e == EADDRNOTAVAIL ? " (not an address of this host)" : "");
}

int pt_cm_set_tos(struct rdma_cm_id *id, int tos, char *why, size_t len)
{
	uint8_t t = (uint8_t)tos;

	if (tos >= 0 && rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &t, sizeof(t)))
		return pt_cm_why(why, len, errno, "setting TOS %d: %s", tos, strerror(errno));
	return 0;
}

/* One connect attempt: resolve address and route, QP, rdma_connect. */
static int try_connect(struct pt_cm_chan *ch, const struct sockaddr_storage *src,
		       struct sockaddr *dst, int tos, uint64_t deadline, char *why, size_t len)
{
	struct rdma_conn_param cp;
	uint64_t step = pt_now_ns() + (uint64_t)RESOLVE_MS * 1000000ull;
	int r;

	if (deadline && step > deadline)
		step = deadline;
	if (rdma_create_id(ch->ech, &ch->id, NULL, RDMA_PS_TCP))
		return pt_cm_why(why, len, errno, "rdma_create_id: %s", strerror(errno));
	r = pt_cm_resolve_addr(ch->id, src, dst, RESOLVE_MS, why, len);
	if (r)
		return r;
	r = pt_cm_expect(ch->ech, RDMA_CM_EVENT_ADDR_RESOLVED, step, NULL, why, len);
	if (!r)
		r = pt_cm_set_tos(ch->id, tos, why, len);
	if (r)
		return r;
	if (rdma_resolve_route(ch->id, RESOLVE_MS))
		return pt_cm_why(why, len, errno, "rdma_resolve_route: %s", strerror(errno));
	r = pt_cm_expect(ch->ech, RDMA_CM_EVENT_ROUTE_RESOLVED, step, NULL, why, len);
	if (r)
		return r;
	r = chan_resources(ch, ch->id, why, len);
	if (r)
		return r;
	conn_param(&cp);
	if (rdma_connect(ch->id, &cp))
		return pt_cm_why(why, len, errno, "rdma_connect: %s", strerror(errno));
	r = pt_cm_expect(ch->ech, RDMA_CM_EVENT_ESTABLISHED, deadline, NULL, why, len);
	if (!r)
		ch->connected = true;
	return r;
}

uint64_t pt_cm_deadline(int ms)
{
	return ms < 0 ? 0 : pt_now_ns() + (uint64_t)ms * 1000000ull;
}

int pt_cm_oob_connect(struct pt_oob *o, const char *host, int port, int family, int timeout_ms,
		      int tos, char *why, size_t len)
{
	uint64_t deadline = pt_cm_deadline(timeout_ms);
	struct sockaddr_storage src;
	struct rdma_addrinfo *res;
	struct pt_cm_chan *ch;
	int r;

	if (!host)
		return pt_cm_why(why, len, EINVAL, "connect needs a server name");
	ch = chan_new(why, len);
	if (!ch)
		return -ENOMEM;
	r = pt_cm_getaddr(host, port, RDMA_PS_TCP, family, o->source, &src, &res, why, len);
	if (r) {
		chan_close(ch);
		return r;
	}
	/* Refused or unreachable: the server may not listen yet; try again. */
	while ((r = try_connect(ch, o->source ? &src : NULL, res->ai_dst_addr, tos, deadline,
				why, len)) == -ECONNREFUSED &&
	       pt_cm_ms_left(deadline) != 0) {
		chan_release_conn(ch);
		usleep(RETRY_MS * 1000);
	}
	rdma_freeaddrinfo(res);
	if (r) {
		chan_close(ch);
		return r;
	}
	pt_oob_use_msg(o, &chan_ops, ch, 0, 1);
	return 0;
}

int pt_cm_oob_listen(struct pt_oob *o, int port, int family, char *why, size_t len)
{
	struct sockaddr_storage any;   /* like the TCP channel's default */
	struct pt_cm_chan *ch;
	int r = 0;

	if (port < 0 || port > 65535)
		return pt_cm_why(why, len, EINVAL, "invalid port %d", port);
	pt_cm_any_addr(&any, family, port);
	ch = chan_new(why, len);
	if (!ch)
		return -ENOMEM;
	if (rdma_create_id(ch->ech, &ch->listen_id, NULL, RDMA_PS_TCP))
		r = pt_cm_why(why, len, errno, "rdma_create_id: %s", strerror(errno));
	if (!r && (rdma_bind_addr(ch->listen_id, (struct sockaddr *)&any) ||
		   rdma_listen(ch->listen_id, 1)))
		r = pt_cm_why(why, len, errno, "cannot listen on rdma_cm port %d: %s", port,
			    strerror(errno));
	if (r) {
		chan_close(ch);
		return r;
	}
	o->msg_ctx = ch;   /* owned by o from here; pt_cm_oob_accept finishes */
	o->msg = &chan_ops;
	o->is_server = 1;
	return 0;
}

int pt_cm_oob_accept(struct pt_oob *o, int timeout_ms, char *why, size_t len)
{
	struct pt_cm_chan *ch = o->msg_ctx;
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	int r;

	if (!ch || !ch->listen_id)
		return pt_cm_why(why, len, EINVAL, "accept without an rdma_cm listener");
	r = pt_cm_expect(ch->ech, RDMA_CM_EVENT_CONNECT_REQUEST, pt_cm_deadline(timeout_ms), &ev, why, len);
	if (r == -ETIMEDOUT)
		return pt_cm_why(why, len, ETIMEDOUT, "no client connected within %d ms", timeout_ms);
	if (r)
		return r;
	ch->id = ev->id;
	r = chan_resources(ch, ch->id, why, len);
	conn_param(&cp);
	if (!r && rdma_accept(ch->id, &cp))
		r = pt_cm_why(why, len, errno, "rdma_accept: %s", strerror(errno));
	if (r)
		rdma_reject(ch->id, NULL, 0);
	rdma_ack_cm_event(ev);
	if (!r)
		r = pt_cm_expect(ch->ech, RDMA_CM_EVENT_ESTABLISHED, pt_cm_deadline(timeout_ms), NULL, why, len);
	if (r)
		return r;
	ch->connected = true;
	rdma_destroy_id(ch->listen_id);   /* one client per run, like upstream */
	ch->listen_id = NULL;
	pt_oob_use_msg(o, &chan_ops, ch, 1, 1);
	return 0;
}
