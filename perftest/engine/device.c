/* SPDX-License-Identifier: BSD-2-Clause */
/* Device, port and GID discovery; PD, buffer, MR, CQs and QPs. */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "util/err.h"
#include "engine.h"
#include "memory.h"
#include "perftest/report/json.h"
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

/* Automatic GID on RoCE (docs/wire-protocol.md §5.4): prefer IPv4 (IPv6 with
 * --ipv6), then not link-local, then RoCE v2; the first index wins ties. */
static int pick_gid_index(struct pt_ctx *c, int port, const struct ibv_port_attr *pa)
{
	bool want_v6 = c->p->addr.ipv6_gid;

	int best = -1, best_score = -1;

	for (int i = 0; i < pa->gid_tbl_len; i++) {
		struct ibv_gid_entry e;
		int score;

		if (ibv_query_gid_ex(c->dev.verbs, port, i, &e, 0) || gid_is_zero(&e.gid))
			continue;
		score = (gid_is_v4mapped(&e.gid) != want_v6 ? 100 : 0) +
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

	c->dev.cm_devices = rdma_get_devices(&n);
	for (int i = 0; c->dev.cm_devices && i < n && !c->dev.verbs; i++)
		if (!*name || !strcmp(ibv_get_device_name(c->dev.cm_devices[i]->device), name))
			c->dev.verbs = c->dev.cm_devices[i];
	if (!c->dev.verbs) {
		fprintf(stderr, " IB device %s not found by rdma_cm (is rdma_ucm loaded?)\n"
			" Unable to find the Infiniband/RoCE device\n", *name ? name : "(any)");
		return -1;
	}
	snprintf(c->dev.devname, sizeof(c->dev.devname), "%s", ibv_get_device_name(c->dev.verbs->device));
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
	snprintf(c->dev.devname, sizeof(c->dev.devname), "%s", ibv_get_device_name(dev));
	c->dev.verbs = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!c->dev.verbs) {
		fprintf(stderr, " Couldn't open device %s: %s\n", c->dev.devname, strerror(errno));
		return -1;
	}
	return 0;
}

void pt_ctx_init(struct pt_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->mcast.igmp_fd = -1;
	c->dev.place.node = c->dev.place.nic_node = -1;   /* nothing placed yet */
	pt_oob_init(&c->peer.oob);
}

/* -O: the second port's attributes and GID, as the first's (same -x, or
 * the automatic pick on RoCE); QPs of the second half use them
 * (pt_qp_port). The run MTU is the smaller active MTU, so every QP's path
 * MTU fits its own port. */
static int open_port2(struct pt_ctx *c)
{
	struct pt_dev *d = &c->dev;
	int port = d->port2 = c->p->dev.ib_port == 1 ? 2 : 1, rc;
	struct ibv_gid_entry e;

	rc = ibv_query_port(d->verbs, (uint8_t)port, &d->port2_attr);
	if (rc) {
		pt_err_call("ibv_query_port", pt_err_code(rc), "--dualport: couldn't query port %d of %s",
			    port, d->devname);
		return -1;
	}
	if (d->port2_attr.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, " --dualport: port %d of %s is not ACTIVE\n", port, d->devname);
		return -1;
	}
	if ((d->port2_attr.link_layer == IBV_LINK_LAYER_ETHERNET) != d->is_roce) {
		fprintf(stderr, " --dualport: ports %d and %d of %s have different link layers\n",
			c->p->dev.ib_port, port, d->devname);
		return -1;
	}
	d->gid_index2 = d->gid_index;
	if (d->is_roce && !c->p->dev.gid_index_given)
		d->gid_index2 = pick_gid_index(c, port, &d->port2_attr);
	if (d->gid_index >= 0 && d->gid_index2 < 0)
		d->gid_index2 = 0;
	if (d->gid_index2 >= d->port2_attr.gid_tbl_len ||
	    (d->gid_index2 >= 0 &&
	     (ibv_query_gid_ex(d->verbs, port, d->gid_index2, &e, 0) || gid_is_zero(&e.gid)))) {
		fprintf(stderr, " --dualport: GID index %d of %s port %d is empty or out of range\n",
			d->gid_index2, d->devname, port);
		return -1;
	}
	if (d->gid_index2 >= 0)
		d->gid2 = e.gid;
	if (d->port2_attr.active_mtu < d->port_attr.active_mtu)
		c->run.mtu = d->port2_attr.active_mtu;
	return 0;
}

int pt_dev_open(struct pt_ctx *c, const struct pt_params *p)
{
	int port = p->dev.ib_port, rc;

	c->p = p;
	c->res.num_qps = pt_qps_total(p);
	if (p->conn.rdma_cm_qps ? open_cm_device(c, p->dev.ib_devname)
				: open_by_name(c, p->dev.ib_devname))
		return -1;
	rc = ibv_query_device_ex(c->dev.verbs, NULL, &c->dev.dev_attr);
	if (rc) {
		pt_err_call("ibv_query_device_ex", pt_err_code(rc), "Couldn't query device %s",
			    c->dev.devname);
		return -1;
	}
	if (port < 1 || port > c->dev.dev_attr.orig_attr.phys_port_cnt) {
		fprintf(stderr, " Couldn't query port %d of %s\n", port, c->dev.devname);
		return -1;
	}
	rc = ibv_query_port(c->dev.verbs, port, &c->dev.port_attr);
	if (rc) {
		pt_err_call("ibv_query_port", pt_err_code(rc), "Couldn't query port %d of %s", port,
			    c->dev.devname);
		return -1;
	}
	if (c->dev.port_attr.state != IBV_PORT_ACTIVE) {
		fprintf(stderr, " Port %d of %s is not ACTIVE\n", port, c->dev.devname);
		return -1;
	}
	c->dev.is_roce = c->dev.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
	if (pt_port_options_check(c))
		return -1;
	c->dev.gid_index = p->dev.gid_index;
	if (c->dev.is_roce && !p->dev.gid_index_given)
		c->dev.gid_index = pick_gid_index(c, port, &c->dev.port_attr);
	if ((c->dev.is_roce || p->mcast.enabled) && c->dev.gid_index < 0)
		c->dev.gid_index = 0;
	if (c->dev.gid_index >= c->dev.port_attr.gid_tbl_len) {
		fprintf(stderr, " GID index %d is out of range: port %d of %s has %d GIDs\n",
			c->dev.gid_index, port, c->dev.devname, c->dev.port_attr.gid_tbl_len);
		return -1;
	}
	if (c->dev.gid_index >= 0) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(c->dev.verbs, port, c->dev.gid_index, &e, 0) || gid_is_zero(&e.gid)) {
			fprintf(stderr, " GID index %d of %s port %d is empty\n", c->dev.gid_index,
				c->dev.devname, port);
			return -1;
		}
		c->dev.gid = e.gid;
		if (e.ndev_ifindex)
			if_indextoname(e.ndev_ifindex, c->dev.netdev);
	}
	c->peer.use_gid = c->dev.gid_index >= 0;
	c->run.mtu = c->dev.port_attr.active_mtu;
	if (p->addr.dualport && open_port2(c))
		return -1;
	if (p->dev.mtu) {
		enum ibv_mtu want = IBV_MTU_256;

		while (pt_mtu_bytes(want) < (unsigned)p->dev.mtu && want < IBV_MTU_4096)
			want++;
		/* -O: the MTU must fit the second port too */
		if (pt_mtu_bytes(want) != (unsigned)p->dev.mtu || want > c->dev.port_attr.max_mtu ||
		    (p->addr.dualport && want > c->dev.port2_attr.max_mtu)) {
			fprintf(stderr, " MTU %d is not valid for port %d of %s (max %u)\n",
				p->dev.mtu, port, c->dev.devname, pt_mtu_bytes(c->dev.port_attr.max_mtu));
			return -1;
		}
		c->run.mtu = want;
	}
	/* --odp: refused here, before any peer or traffic, when the device lacks it */
	if (p->mem.odp) {
		char why[200];

		if (pt_odp_check(&c->dev.dev_attr.odp_caps, p, why, sizeof(why))) {
			fprintf(stderr, " --odp: device %s has %s\n", c->dev.devname, why);
			return -1;
		}
	}
	c->run.page_size = (int)sysconf(_SC_PAGESIZE);
	if (c->run.page_size <= 0)
		c->run.page_size = 4096;
	c->run.cache_line = (int)sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	if (c->run.cache_line <= 0)
		c->run.cache_line = 64;
	return 0;
}

int pt_dev_local_setup(struct pt_ctx *c)
{
	const struct pt_params *p = c->p;
	int vectors = c->dev.verbs->num_comp_vectors;

	if (p->vector_given && p->comp_vector >= vectors) {
		fprintf(stderr, " -X/--vector %d is out of range: %s has %d completion vector%s"
			" (num_comp_vectors), 0..%d\n", p->comp_vector, c->dev.devname, vectors,
			vectors == 1 ? "" : "s", vectors - 1);
		return -1;
	}
	if (p->no_lock) {
		struct ibv_td_init_attr ta = { .comp_mask = 0 };

		c->res.td = ibv_alloc_td(c->dev.verbs, &ta);
		if (!c->res.td) {
			int e = errno ? errno : EOPNOTSUPP;

			fprintf(stderr, " --no_lock: %s cannot allocate a thread domain"
				" (ibv_alloc_td: %s, errno %d)\n", c->dev.devname, strerror(e), e);
			return -1;
		}
	}
	return pt_place_apply(p, c->dev.devname, c->dev.netdev, &c->dev.place);
}

/* --no_lock: the parent domain over the PD and the thread domain. */
static int parent_domain_create(struct pt_ctx *c)
{
	struct ibv_parent_domain_init_attr pa = { .pd = c->res.pd, .td = c->res.td };

	c->res.parent_pd = ibv_alloc_parent_domain(c->dev.verbs, &pa);
	if (!c->res.parent_pd) {
		int e = errno ? errno : EOPNOTSUPP;

		fprintf(stderr, " --no_lock: %s cannot allocate a parent domain"
			" (ibv_alloc_parent_domain: %s, errno %d)\n", c->dev.devname, strerror(e), e);
		return -1;
	}
	return 0;
}

int pt_resources_create(struct pt_ctx *c)
{
	size_t page = (size_t)c->run.page_size;
	size_t need = c->run.max_size + (size_t)c->run.cache_line + PT_UD_GRH;
	int ncq_send = c->run.tx_depth * c->res.num_qps, ncq_recv = c->run.rx_depth * c->res.num_qps;

	/* A region holds one message plus the GRH room, and at least two pages so
	 * small messages can cycle through a page (docs/upstream-behaviour.md §5.1). */
	if (need < 2 * page)
		need = 2 * page;
	c->res.region = (need + page - 1) / page * page;
	c->res.buf_len = c->res.region * 2 * (size_t)c->res.num_qps;
	if (pt_mem_alloc(&c->res, &c->p->mem, page))
		return -1;
	/* the pages fault in on the placement's node: bind before touching them;
	 * a mapped file keeps its contents, fresh memory starts zeroed */
	pt_place_buffer(&c->dev.place, c->res.buf, c->res.buf_len);
	if (!c->res.map_len)
		memset(c->res.buf, 0, c->res.buf_len);
	c->res.pd = ibv_alloc_pd(c->dev.verbs);
	if (!c->res.pd) {
		pt_err_call("ibv_alloc_pd", pt_err_code(0), "Couldn't allocate PD");
		return -1;
	}
	if (c->res.td && parent_domain_create(c))
		return -1;
	if (pt_mem_register(c) || pt_mem_fill(c))
		return -1;
	if (c->p->traffic.use_event) {
		c->res.channel = ibv_create_comp_channel(c->dev.verbs);
		if (!c->res.channel) {
			pt_err_call("ibv_create_comp_channel", pt_err_code(0),
				    "Couldn't create completion channel");
			return -1;
		}
		/* the loops sleep on it in this thread */
		if (pt_chan_waker_start(&c->res.waker))
			return -1;
	}
	if (pt_cqs_create(c, ncq_send > 0 ? ncq_send : 1, ncq_recv > 0 ? ncq_recv : 1))
		return -1;
	if (c->p->traffic.use_srq) {
		struct ibv_srq_init_attr sa = {
			.attr = { .max_wr = (uint32_t)c->run.rx_depth, .max_sge = 1 },
		};

		c->res.srq = ibv_create_srq(c->res.pd, &sa);
		if (!c->res.srq) {
			fprintf(stderr, " Couldn't create an SRQ of %d entries: %s\n", c->run.rx_depth,
				strerror(errno));
			return -1;
		}
	}
	c->res.qps = calloc((size_t)c->res.num_qps, sizeof(*c->res.qps));
	c->peer.my_keys = calloc((size_t)c->res.num_qps, sizeof(*c->peer.my_keys));
	c->peer.rem_keys = calloc((size_t)c->res.num_qps, sizeof(*c->peer.rem_keys));
	if (!c->res.qps || !c->peer.my_keys || !c->peer.rem_keys)
		return -1;
	srand48((long)getpid() ^ (long)time(NULL));
	/* -R: rdma_cm creates the QPs while it connects them (cm_qps.c) */
	if (c->p->conn.rdma_cm_qps)
		return pt_cm_qps_connect(c);
	for (int i = 0; i < c->res.num_qps; i++)
		if (pt_qp_create(c, i))
			return -1;
	return 0;
}

void pt_ctx_destroy(struct pt_ctx *c)
{
	pt_mcast_detach(c);
	pt_cm_qps_destroy(c);   /* -R: its QPs and ids, before CQs and PD */
	for (int i = 0; c->res.qps && i < c->res.num_qps; i++) {
		if (c->res.qps[i].ah)
			ibv_destroy_ah(c->res.qps[i].ah);
		if (c->res.qps[i].qp)
			ibv_destroy_qp(c->res.qps[i].qp);
	}
	if (c->res.srq)
		ibv_destroy_srq(c->res.srq);
	if (c->res.send_cq)
		ibv_destroy_cq(c->res.send_cq);
	if (c->res.recv_cq)
		ibv_destroy_cq(c->res.recv_cq);
	pt_chan_waker_stop(&c->res.waker);
	if (c->res.channel)
		ibv_destroy_comp_channel(c->res.channel);
	pt_mem_deregister(&c->res);
	if (c->res.parent_pd)
		ibv_dealloc_pd(c->res.parent_pd);
	if (c->res.td)
		ibv_dealloc_td(c->res.td);
	if (c->res.pd)
		ibv_dealloc_pd(c->res.pd);
	if (c->dev.cm_devices)
		rdma_free_devices(c->dev.cm_devices);   /* -R: c->dev.verbs is rdma_cm's */
	else if (c->dev.verbs)
		ibv_close_device(c->dev.verbs);
	free(c->res.hwclock);
	pt_mem_free(&c->res);
	free(c->res.pattern);
	free(c->res.qps);
	free(c->peer.my_keys);
	free(c->peer.rem_keys);
	pt_oob_close(&c->peer.oob);
	pt_json_free(c->out.json);
	pt_ctx_init(c);
}
