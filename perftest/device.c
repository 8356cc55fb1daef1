/* SPDX-License-Identifier: BSD-2-Clause */
/* Device, port and GID discovery; PD, buffer, MR, CQs and QPs. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "engine.h"
#include "json.h"
#include <rdma/rdma_cma.h>

unsigned pt_mtu_bytes(enum ibv_mtu m)
{
	return (m >= IBV_MTU_256 && m <= IBV_MTU_4096) ? 128u << m : 0;
}

static bool gid_is_zero(const union ibv_gid *g)
{
	static const uint8_t zero[16];

	return !memcmp(g->raw, zero, 16);
}

static bool gid_is_v4mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pfx, 12);
}

static bool gid_is_link_local(const union ibv_gid *g)
{
	if (g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80)
		return true;
	return gid_is_v4mapped(g) && g->raw[12] == 169 && g->raw[13] == 254;
}

/* Automatic GID on RoCE (docs/wire-protocol.md §5.4): prefer IPv4, then not link-local,
 * then RoCE v2; the first index wins ties. */
static int pick_gid_index(struct pt_ctx *c, int port)
{
	int best = -1, best_score = -1;

	for (int i = 0; i < c->port_attr.gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		int score;

		if (ibv_query_gid_ex(c->verbs, port, i, &e, 0) || gid_is_zero(&e.gid))
			continue;
		score = (gid_is_v4mapped(&e.gid) ? 100 : 0) +
			(gid_is_link_local(&e.gid) ? 0 : 10) +
			(e.gid_type == IBV_GID_TYPE_ROCE_V2 ? 2 : 1);
		if (score > best_score) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

/* -R: rdma_cm's own context for the device, so the PD, CQs and MR live
 * where rdma_cm creates the QPs. */
static int open_cm_device(struct pt_ctx *c, const char *name)
{
	int n = 0;

	c->cm_devices = rdma_get_devices(&n);
	for (int i = 0; c->cm_devices && i < n && !c->verbs; i++)
		if (!*name || !strcmp(ibv_get_device_name(c->cm_devices[i]->device), name))
			c->verbs = c->cm_devices[i];
	if (!c->verbs) {
		fprintf(stderr, " IB device %s not found by rdma_cm (is rdma_ucm loaded?)\n"
			" Unable to find the Infiniband/RoCE device\n", *name ? name : "(any)");
		return -1;
	}
	snprintf(c->devname, sizeof(c->devname), "%s", ibv_get_device_name(c->verbs->device));
	return 0;
}

static int open_by_name(struct pt_ctx *c, const char *name)
{
	int n = 0;
	struct ibv_device **list = ibv_get_device_list(&n);
	struct ibv_device *dev = NULL;

	if (!list || n == 0) {
		fprintf(stderr, " Did not detect devices \n If device exists, check if driver is up\n"
			" Unable to find the Infiniband/RoCE device\n");
		if (list)
			ibv_free_device_list(list);
		return -1;
	}
	for (int i = 0; i < n && !dev; i++)
		if (!*name || !strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		fprintf(stderr, " IB device %s not found\n Unable to find the Infiniband/RoCE device\n", name);
		ibv_free_device_list(list);
		return -1;
	}
	snprintf(c->devname, sizeof(c->devname), "%s", ibv_get_device_name(dev));
	c->verbs = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!c->verbs) {
		fprintf(stderr, " Couldn't open device %s: %s\n", c->devname, strerror(errno));
		return -1;
	}
	return 0;
}

void pt_ctx_init(struct pt_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->igmp_fd = -1;
	pt_oob_init(&c->oob);
}

int pt_dev_open(struct pt_ctx *c, const struct pt_params *p)
{
	int port = p->dev.ib_port;

	c->p = p;
	c->num_qps = p->conn.num_qps;
	if (p->conn.rdma_cm_qps ? open_cm_device(c, p->dev.ib_devname)
				: open_by_name(c, p->dev.ib_devname))
		return -1;
	if (ibv_query_device_ex(c->verbs, NULL, &c->dev_attr)) {
		fprintf(stderr, " Couldn't query device %s\n", c->devname);
		return -1;
	}
	if (port < 1 || port > c->dev_attr.orig_attr.phys_port_cnt ||
	    ibv_query_port(c->verbs, port, &c->port_attr)) {
		fprintf(stderr, " Couldn't query port %d of %s\n", port, c->devname);
		return -1;
	}
	if (c->port_attr.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, " Port %d of %s is not ACTIVE\n", port, c->devname);
		return -1;
	}
	c->is_roce = c->port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	c->gid_index = p->dev.gid_index;
	if (c->is_roce && !p->dev.gid_index_given)
		c->gid_index = pick_gid_index(c, port);
	if ((c->is_roce || p->mcast.enabled) && c->gid_index < 0)
		c->gid_index = 0;
	if (c->gid_index >= c->port_attr.gid_tbl_len) {
		fprintf(stderr, " GID index %d is out of range: port %d of %s has %d GIDs\n",
			c->gid_index, port, c->devname, c->port_attr.gid_tbl_len);
		return -1;
	}
	if (c->gid_index >= 0) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(c->verbs, port, c->gid_index, &e, 0) || gid_is_zero(&e.gid)) {
			fprintf(stderr, " GID index %d of %s port %d is empty\n", c->gid_index,
				c->devname, port);
			return -1;
		}
		c->gid = e.gid;
		if (e.ndev_ifindex)
			if_indextoname(e.ndev_ifindex, c->netdev);
	}
	c->use_gid = c->gid_index >= 0;
	c->mtu = c->port_attr.active_mtu;
	if (p->dev.mtu) {
		enum ibv_mtu want = IBV_MTU_256;

		while (pt_mtu_bytes(want) < (unsigned)p->dev.mtu && want < IBV_MTU_4096)
			want++;
		if (pt_mtu_bytes(want) != (unsigned)p->dev.mtu || want > c->port_attr.max_mtu) {
			fprintf(stderr, " MTU %d is not valid for port %d of %s (max %u)\n",
				p->dev.mtu, port, c->devname, pt_mtu_bytes(c->port_attr.max_mtu));
			return -1;
		}
		c->mtu = want;
	}
	c->page_size = (int)sysconf(_SC_PAGESIZE);
	if (c->page_size <= 0)
		c->page_size = 4096;
	c->cache_line = (int)sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	if (c->cache_line <= 0)
		c->cache_line = 64;
	return 0;
}

static unsigned send_ops_for(enum pt_verb v)
{
	switch (v) {
	case PT_VERB_WRITE:
		return IBV_QP_EX_WITH_RDMA_WRITE;
	case PT_VERB_READ:
		return IBV_QP_EX_WITH_RDMA_READ;
	case PT_VERB_ATOMIC:
		return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	default:
		return IBV_QP_EX_WITH_SEND;
	}
}

static enum ibv_qp_type qp_type_for(enum pt_conn_type t)
{
	return t == PT_CONN_UD ? IBV_QPT_UD : t == PT_CONN_UC ? IBV_QPT_UC : IBV_QPT_RC;
}

void pt_qp_init_attr(const struct pt_ctx *c, struct ibv_qp_init_attr_ex *a)
{
	const struct pt_params *p = c->p;

	memset(a, 0, sizeof(*a));
	a->send_cq = c->send_cq;
	a->recv_cq = c->recv_cq;
	a->cap.max_send_wr = (uint32_t)c->tx_depth;
	a->cap.max_recv_wr = (uint32_t)c->rx_depth;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->cap.max_inline_data = (uint32_t)c->inline_size;
	a->qp_type = qp_type_for(p->conn.type);
	a->comp_mask = IBV_QP_INIT_ATTR_PD;
	a->pd = c->pd;
	if (!p->traffic.use_old_post_send) {
		a->comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a->send_ops_flags = send_ops_for(p->tool->verb);
	}
}

void pt_qp_adopt(struct pt_ctx *c, int i, struct ibv_qp *qp)
{
	struct pt_qp *q = &c->qps[i];

	q->qp = qp;
	if (!c->p->traffic.use_old_post_send)
		q->qpx = ibv_qp_to_qp_ex(qp);
	q->psn = (uint32_t)lrand48() & 0xffffff;
	q->remote_qkey = PT_QKEY;
	q->send_buf = c->buf + (size_t)i * c->region;
	q->recv_buf = c->buf + (size_t)(c->num_qps + i) * c->region;
}

static int qp_create(struct pt_ctx *c, int i)
{
	const struct pt_params *p = c->p;
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)p->dev.ib_port,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	struct ibv_qp *qp;

	pt_qp_init_attr(c, &a);
	qp = ibv_create_qp_ex(c->verbs, &a);
	if (!qp) {
		fprintf(stderr, " Couldn't create QP %d: %s\n"
			" Requested QP size might be too big. Try reducing TX depth and/or inline size.\n",
			i, strerror(errno));
		return -1;
	}
	pt_qp_adopt(c, i, qp);
	if (p->conn.type == PT_CONN_UD) {
		init.qkey = PT_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		init.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (p->conn.type == PT_CONN_RC)
			init.qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(qp, &init, mask)) {
		fprintf(stderr, " Failed to modify QP %d to INIT: %s\n", i, strerror(errno));
		return -1;
	}
	return 0;
}

int pt_resources_create(struct pt_ctx *c)
{
	size_t page = (size_t)c->page_size;
	size_t need = c->max_size + (size_t)c->cache_line + PT_UD_GRH;
	/* Relaxed ordering is an optional flag: devices without it ignore it. */
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
	int ncq_send = c->tx_depth * c->num_qps, ncq_recv = c->rx_depth * c->num_qps;

	/* A region holds one message plus the GRH room, and at least two pages so
	 * small messages can cycle through a page (docs/upstream-behaviour.md §5.1). */
	if (need < 2 * page)
		need = 2 * page;
	c->region = (need + page - 1) / page * page;
	c->buf_len = c->region * 2 * (size_t)c->num_qps;
	c->buf = aligned_alloc(page, c->buf_len);
	if (!c->buf) {
		fprintf(stderr, " Couldn't allocate %zu bytes of work buffer\n", c->buf_len);
		return -1;
	}
	memset(c->buf, 0, c->buf_len);
	c->pd = ibv_alloc_pd(c->verbs);
	if (!c->pd) {
		fprintf(stderr, " Couldn't allocate PD\n");
		return -1;
	}
	c->mr = ibv_reg_mr(c->pd, c->buf, c->buf_len, access);
	if (!c->mr) {
		fprintf(stderr, " Couldn't register MR of %zu bytes: %s\n", c->buf_len, strerror(errno));
		return -1;
	}
	if (c->p->traffic.use_event) {
		c->channel = ibv_create_comp_channel(c->verbs);
		if (!c->channel) {
			fprintf(stderr, " Couldn't create completion channel\n");
			return -1;
		}
	}
	if (pt_cqs_create(c, ncq_send > 0 ? ncq_send : 1, ncq_recv > 0 ? ncq_recv : 1))
		return -1;
	c->qps = calloc((size_t)c->num_qps, sizeof(*c->qps));
	c->my_keys = calloc((size_t)c->num_qps, sizeof(*c->my_keys));
	c->rem_keys = calloc((size_t)c->num_qps, sizeof(*c->rem_keys));
	if (!c->qps || !c->my_keys || !c->rem_keys)
		return -1;
	srand48((long)getpid() ^ (long)time(NULL));
	/* -R: rdma_cm creates the QPs while it connects them (cm_qps.c) */
	if (c->p->conn.rdma_cm_qps)
		return pt_cm_qps_connect(c);
	for (int i = 0; i < c->num_qps; i++)
		if (qp_create(c, i))
			return -1;
	return 0;
}

void pt_ctx_destroy(struct pt_ctx *c)
{
	pt_mcast_detach(c);
	pt_cm_qps_destroy(c);   /* -R: its QPs and ids, before CQs and PD */
	for (int i = 0; c->qps && i < c->num_qps; i++) {
		if (c->qps[i].ah)
			ibv_destroy_ah(c->qps[i].ah);
		if (c->qps[i].qp)
			ibv_destroy_qp(c->qps[i].qp);
	}
	if (c->send_cq)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq)
		ibv_destroy_cq(c->recv_cq);
	if (c->channel)
		ibv_destroy_comp_channel(c->channel);
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->cm_devices)
		rdma_free_devices(c->cm_devices);   /* -R: c->verbs is rdma_cm's */
	else if (c->verbs)
		ibv_close_device(c->verbs);
	free(c->hwclock);
	free(c->buf);
	free(c->qps);
	free(c->my_keys);
	free(c->rem_keys);
	pt_oob_close(&c->oob);
	pt_json_free(c->json);
	pt_ctx_init(c);
}
