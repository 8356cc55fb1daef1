/* SPDX-License-Identifier: BSD-2-Clause */
/* -R: the data QPs are created and connected by rdma_cm (docs/wire-protocol.md
 * §9.3). On the wire: a barrier, one rdma_cm connection per QP (RC: REQ/REP,
 * UD: SIDR), for UD a 4-byte SEND_WITH_IMM carrying the client's QPN when
 * the server must send back (latency tests, -b), and a second barrier.
 * The PD, CQs and MR are on rdma_cm's own device context (device.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "perftest/wire/cm.h"
#include "engine.h"

#define RETRY_MS 100
#define RESOLVE_MS 2000

struct pt_cm_qps {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *listen_id;
	int n;
	struct {
		struct rdma_cm_id *id;
		bool connected;
	} q[];      /* one per data QP, in QP order */
};

static bool is_ud(const struct pt_ctx *c)
{
	return c->p->conn.type == PT_CONN_UD;
}

/* A UD server learns the client's address from one message (docs/wire-protocol.md §9.4). */
static bool ud_handshake(const struct pt_ctx *c)
{
	return is_ud(c) && (c->p->tool->kind == PT_KIND_LAT || c->p->traffic.bidirectional);
}

static enum rdma_port_space port_space(const struct pt_ctx *c)
{
	return is_ud(c) ? RDMA_PS_UDP : RDMA_PS_TCP;
}

static void conn_param(const struct pt_ctx *c, const struct rdma_conn_param *req,
		       struct rdma_conn_param *cp)
{
	uint8_t depth = (uint8_t)(c->run.out_reads > 255 ? 255 : c->run.out_reads);

	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = depth;
	cp->initiator_depth = depth;
	/* accepting: never more than the requester offers */
	if (req && req->initiator_depth < cp->responder_resources)
		cp->responder_resources = req->initiator_depth;
	if (req && req->responder_resources < cp->initiator_depth)
		cp->initiator_depth = req->responder_resources;
	/* --retry_count sets both, as upstream does (docs/upstream-behaviour.md §13) */
	cp->retry_count = (uint8_t)c->p->addr.retry_count;
	cp->rnr_retry_count = (uint8_t)c->p->addr.retry_count;
}

static int create_qp(struct pt_ctx *c, int i, struct rdma_cm_id *id, char *why, size_t len)
{
	struct ibv_qp_init_attr_ex a;

	if (id->verbs != c->dev.verbs)
		return pt_cm_why(why, len, EINVAL,
				 "rdma_cm reaches the peer through %s, not %s: give -d that device or the peer address on %s",
				 ibv_get_device_name(id->verbs->device), c->dev.devname, c->dev.devname);
	pt_qp_init_attr(c, &a);
	if (rdma_create_qp_ex(id, &a))
		return pt_cm_why(why, len, errno, "rdma_create_qp_ex for QP %d: %s", i, strerror(errno));
	pt_qp_adopt(c, i, id->qp);
	return 0;
}

/* Post or reap one small message on QP i's own buffers (UD handshake). */
static int post_one(struct pt_ctx *c, int i, bool recv)
{
	struct pt_qp *q = &c->res.qps[i];
	uint32_t qpn = htonl(q->qp->qp_num);
	struct ibv_sge sge = {
		.addr = (uintptr_t)(recv ? q->recv_buf : q->send_buf),
		.length = recv ? PT_UD_GRH + sizeof(qpn) : sizeof(qpn),
		.lkey = pt_qp_lkey(&c->res, q),
	};

	if (recv) {
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;

		/* --use-srq: the QP has no receive queue of its own */
		return c->res.srq ? ibv_post_srq_recv(c->res.srq, &wr, &bad)
				  : ibv_post_recv(q->qp, &wr, &bad);
	}
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_IMM, .send_flags = IBV_SEND_SIGNALED, .imm_data = qpn,
		.wr.ud = { .ah = q->ah, .remote_qpn = q->remote_qpn, .remote_qkey = q->remote_qkey },
	}, *bad;

	memcpy(q->send_buf, &qpn, sizeof(qpn));
	return ibv_post_send(q->qp, &wr, &bad);
}

static int poll_one(struct ibv_cq *cq, uint64_t deadline, struct ibv_wc *wc, char *why, size_t len)
{
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (pt_cm_ms_left(deadline) == 0)
			return pt_cm_why(why, len, ETIMEDOUT, "no UD address message from the peer in time");
		if (pt_interrupted)
			return pt_cm_why(why, len, EINTR, "interrupted");
		usleep(200);
	}
	if (n < 0)
		return pt_cm_why(why, len, EIO, "ibv_poll_cq failed");
	if (wc->status != IBV_WC_SUCCESS)
		return pt_cm_why(why, len, EIO, "UD address message: %s", ibv_wc_status_str(wc->status));
	return 0;
}

/* Client, UD: the server's QPN, Q_Key and path come with ESTABLISHED. */
static int client_ud_peer(struct pt_ctx *c, int i, const struct rdma_cm_event *ev,
			  uint64_t deadline, char *why, size_t len)
{
	struct pt_qp *q = &c->res.qps[i];
	struct ibv_wc wc;
	int r;

	q->remote_qpn = ev->param.ud.qp_num;
	q->remote_qkey = ev->param.ud.qkey;
	q->ah = ibv_create_ah(c->res.pd, (struct ibv_ah_attr *)&ev->param.ud.ah_attr);
	if (!q->ah)
		return pt_cm_why(why, len, errno, "AH for QP %d from rdma_cm: %s", i, strerror(errno));
	if (!ud_handshake(c))
		return 0;
	if (post_one(c, i, false))
		return pt_cm_why(why, len, errno, "sending our QPN: %s", strerror(errno));
	r = poll_one(c->res.send_cq, deadline, &wc, why, len);
	return r;
}

/* Server, UD: the AH back to the client from its message's GRH. */
static int server_ud_peers(struct pt_ctx *c, struct pt_cm_qps *m, uint64_t deadline,
			   char *why, size_t len)
{
	for (int k = 0; k < c->res.num_qps; k++) {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;
		struct ibv_wc wc;
		struct pt_qp *q = NULL;
		int r = poll_one(c->res.recv_cq, deadline, &wc, why, len), i;

		if (r)
			return r;
		for (i = 0; i < c->res.num_qps && !q; i++)
			if (c->res.qps[i].qp->qp_num == wc.qp_num)
				q = &c->res.qps[i];
		if (!q || !(wc.wc_flags & IBV_WC_WITH_IMM))
			return pt_cm_why(why, len, EPROTO, "unexpected UD message (QP 0x%x)", wc.qp_num);
		/* with an SRQ any QP may have taken the buffer posted for
		 * another: the GRH is in the buffer of the WR's own index */
		if (wc.wr_id >= (uint64_t)c->res.num_qps)
			return pt_cm_why(why, len, EPROTO, "unexpected UD receive (wr_id %llu)",
					 (unsigned long long)wc.wr_id);
		q->ah = ibv_create_ah_from_wc(c->res.pd, &wc,
					      (struct ibv_grh *)c->res.qps[wc.wr_id].recv_buf,
					      m->q[i - 1].id->port_num);
		if (!q->ah)
			return pt_cm_why(why, len, errno, "AH from the client's message: %s", strerror(errno));
		q->remote_qpn = ntohl(wc.imm_data);
		if (ibv_query_qp(q->qp, &qa, IBV_QP_QKEY, &ia))
			return pt_cm_why(why, len, errno, "ibv_query_qp: %s", strerror(errno));
		q->remote_qkey = qa.qkey;
	}
	return 0;
}

static void release_one(struct pt_ctx *c, struct pt_cm_qps *m, int i)
{
	struct rdma_cm_id *id = m->q[i].id;

	if (!id)
		return;
	if (m->q[i].connected && !is_ud(c))
		rdma_disconnect(id);
	if (c->res.qps[i].ah) {
		ibv_destroy_ah(c->res.qps[i].ah);
		c->res.qps[i].ah = NULL;
	}
	if (id->qp)
		rdma_destroy_qp(id);
	c->res.qps[i].qp = NULL;
	c->res.qps[i].qpx = NULL;
	rdma_destroy_id(id);
	m->q[i].id = NULL;
	m->q[i].connected = false;
}

static int connect_one(struct pt_ctx *c, struct pt_cm_qps *m, int i,
		       const struct sockaddr_storage *src, struct sockaddr *dst,
		       uint64_t deadline, char *why, size_t len)
{
	uint64_t step = pt_cm_deadline(RESOLVE_MS);
	struct rdma_cm_event *ev;
	struct rdma_conn_param cp;
	int r;

	if (deadline && step > deadline)
		step = deadline;
	if (rdma_create_id(m->ech, &m->q[i].id, NULL, port_space(c)))
		return pt_cm_why(why, len, errno, "rdma_create_id: %s", strerror(errno));
	r = pt_cm_resolve_addr(m->q[i].id, src, dst, RESOLVE_MS, why, len);
	if (r)
		return r;
	r = pt_cm_expect(m->ech, RDMA_CM_EVENT_ADDR_RESOLVED, step, NULL, why, len);
	if (!r)
		r = pt_cm_set_tos(m->q[i].id, c->p->dev.tos, why, len);
	if (!r && rdma_resolve_route(m->q[i].id, RESOLVE_MS))
		r = pt_cm_why(why, len, errno, "rdma_resolve_route: %s", strerror(errno));
	if (!r)
		r = pt_cm_expect(m->ech, RDMA_CM_EVENT_ROUTE_RESOLVED, step, NULL, why, len);
	if (!r)
		r = create_qp(c, i, m->q[i].id, why, len);
	if (r)
		return r;
	conn_param(c, NULL, &cp);
	if (rdma_connect(m->q[i].id, &cp))
		return pt_cm_why(why, len, errno, "rdma_connect: %s", strerror(errno));
	r = pt_cm_expect(m->ech, RDMA_CM_EVENT_ESTABLISHED, deadline, &ev, why, len);
	if (r)
		return r;
	m->q[i].connected = true;
	if (is_ud(c))
		r = client_ud_peer(c, i, ev, deadline, why, len);
	rdma_ack_cm_event(ev);
	return r;
}

static int client_connect(struct pt_ctx *c, struct pt_cm_qps *m, uint64_t deadline,
			  char *why, size_t len)
{
	const struct pt_oob_params *o = &c->p->oob;
	const char *source = o->source_ip[0] ? o->source_ip : NULL;   /* --bind_source_ip */
	struct sockaddr_storage src;
	struct rdma_addrinfo *res;
	int r;

	r = pt_cm_getaddr(o->servername, o->port, port_space(c), o->ipv6_addr ? AF_INET6 : AF_UNSPEC,
			  source, &src, &res, why, len);
	if (r)
		return r;
	/* One QP at a time, so the server accepts them in our order. A reject
	 * means its listener is not up yet: try again until the deadline. */
	for (int i = 0; i < m->n && !r; i++)
		while ((r = connect_one(c, m, i, source ? &src : NULL, res->ai_dst_addr, deadline,
					why, len)) == -ECONNREFUSED &&
		       pt_cm_ms_left(deadline) != 0 && !pt_interrupted) {
			release_one(c, m, i);
			usleep(RETRY_MS * 1000);
		}
	rdma_freeaddrinfo(res);
	return r;
}

static int server_listen(struct pt_ctx *c, struct pt_cm_qps *m, char *why, size_t len)
{
	struct sockaddr_storage any;   /* --ipv6-addr: any IPv6 address */

	pt_cm_any_addr(&any, c->p->oob.ipv6_addr ? AF_INET6 : AF_INET, c->p->oob.port);
	if (rdma_create_id(m->ech, &m->listen_id, NULL, port_space(c)))
		return pt_cm_why(why, len, errno, "rdma_create_id: %s", strerror(errno));
	if (rdma_bind_addr(m->listen_id, (struct sockaddr *)&any) || rdma_listen(m->listen_id, m->n))
		return pt_cm_why(why, len, errno, "cannot listen for rdma_cm QPs on port %d: %s",
				 c->p->oob.port, strerror(errno));
	return 0;
}

/* Accept one QP per request in arrival order; RC waits for ESTABLISHED. */
static int accept_request(struct pt_ctx *c, struct pt_cm_qps *m, int i, struct rdma_cm_event *ev,
			  char *why, size_t len)
{
	struct rdma_conn_param cp;
	int r;

	m->q[i].id = ev->id;
	r = create_qp(c, i, ev->id, why, len);
	if (!r && ud_handshake(c) && post_one(c, i, true))
		r = pt_cm_why(why, len, errno, "posting the UD address receive: %s", strerror(errno));
	conn_param(c, &ev->param.conn, &cp);
	if (!r && rdma_accept(ev->id, &cp))
		r = pt_cm_why(why, len, errno, "rdma_accept: %s", strerror(errno));
	if (r)
		rdma_reject(ev->id, NULL, 0);
	m->q[i].connected = !r && is_ud(c);
	return r;
}

static int server_accept(struct pt_ctx *c, struct pt_cm_qps *m, uint64_t deadline,
			 char *why, size_t len)
{
	int accepted = 0, established = 0, want_est = is_ud(c) ? 0 : m->n, r = 0;

	while (!r && (accepted < m->n || established < want_est)) {
		struct rdma_cm_event *ev;

		r = pt_cm_next_event(m->ech, deadline, &ev);
		if (r == -ETIMEDOUT)
			return pt_cm_why(why, len, ETIMEDOUT, "%d of %d rdma_cm QPs connected in time",
					 is_ud(c) ? accepted : established, m->n);
		if (r)
			return pt_cm_why(why, len, -r, "rdma_cm events: %s", strerror(-r));
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && accepted < m->n) {
			r = accept_request(c, m, accepted, ev, why, len);
			accepted++;
		} else if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
			for (int i = 0; i < accepted; i++)
				if (m->q[i].id == ev->id)
					m->q[i].connected = true;
			established++;
		} else if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			rdma_reject(ev->id, NULL, 0);   /* more QPs than -q */
		} else {
			r = pt_cm_why(why, len, EPROTO, "rdma_cm: %s (status %d) while accepting QPs",
				      rdma_event_str(ev->event), ev->status);
		}
		rdma_ack_cm_event(ev);
	}
	if (!r && ud_handshake(c))
		r = server_ud_peers(c, m, deadline, why, len);
	return r;
}

int pt_cm_qps_connect(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	struct pt_oob *o = &c->peer.oob;
	uint64_t deadline = pt_cm_deadline(o->connect_timeout_ms);
	struct pt_cm_qps *m;
	char why[256] = "";
	int r;

	m = calloc(1, sizeof(*m) + (size_t)c->res.num_qps * sizeof(m->q[0]));
	if (!m)
		return -1;
	c->peer.cm_qps = m;
	m->n = c->res.num_qps;
	m->ech = rdma_create_event_channel();
	if (!m->ech) {
		fprintf(stderr, " rdma_create_event_channel: %s\n", strerror(errno));
		return -1;
	}
	pt_cm_nonblock(m->ech->fd);
	/* Listening before the barrier spares the client a first reject. */
	r = p->oob.is_client ? 0 : server_listen(c, m, why, sizeof(why));
	if (!r && pt_oob_barrier(o, c->peer.use_gid, NULL)) {
		fprintf(stderr, " Barrier before the rdma_cm connection failed: %s\n", pt_oob_strerror(o));
		return -1;
	}
	if (!r && !p->oob.is_client && p->report.output == PT_OUTPUT_FULL) {
		printf(" Waiting for client rdma_cm QP to connect\n"
		       " Please run the same command with the IB/RoCE interface IP\n");
		fflush(stdout);
	}
	if (!r)
		r = p->oob.is_client ? client_connect(c, m, deadline, why, sizeof(why))
				     : server_accept(c, m, deadline, why, sizeof(why));
	if (r) {
		fprintf(stderr, " Couldn't connect the QPs with rdma_cm: %s\n", why);
		return -1;
	}
	if (m->listen_id) {
		rdma_destroy_id(m->listen_id);
		m->listen_id = NULL;
	}
	if (pt_oob_barrier(o, c->peer.use_gid, NULL)) {
		fprintf(stderr, " Barrier after the rdma_cm connection failed: %s\n", pt_oob_strerror(o));
		return -1;
	}
	return 0;
}

void pt_cm_qps_destroy(struct pt_ctx *c)
{
	struct pt_cm_qps *m = c->peer.cm_qps;

	if (!m)
		return;
	for (int i = 0; i < m->n; i++)
		release_one(c, m, i);
	if (m->listen_id)
		rdma_destroy_id(m->listen_id);
	if (m->ech)
		rdma_destroy_event_channel(m->ech);
	free(m);
	c->peer.cm_qps = NULL;
}
