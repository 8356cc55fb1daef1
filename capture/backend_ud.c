/* SPDX-License-Identifier: BSD-2-Clause */
/* `ud`: a UD QP per device attached to the RoCE v2 multicast groups
 * (MGID ::ffff:a.b.c.d) with the IPv4 membership joined on the device's
 * netdev. Every receive WR has two SGEs: the 40-byte GRH plus the
 * application header into the header buffer, the payload into a buffer of
 * its own (hugepages when the host has them). The frame for the engine is
 * rebuilt from the GRH (capture/frame.h). rxe does not stamp completions:
 * the host clock stamps at poll time. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "backend.h"
#include "frame.h"
#include "raw_steer.h"

struct ud_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *hmr, *pmr;
	uint8_t *hbuf, *pbuf;
	size_t hslot, pslot, pbuf_len;
	bool pbuf_huge;
	int igmp;
	int attached;
	char netdev[IF_NAMESIZE];
	unsigned mtu;
	unsigned empty;
	struct ibv_wc *wc;
};

static int post_recv(struct ud_dev *d, const struct cap_opts *o, unsigned slot)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)(d->hbuf + slot * d->hslot), .length = (uint32_t)d->hslot, .lkey = d->hmr->lkey },
		{ .addr = (uintptr_t)(d->pbuf + slot * d->pslot), .length = (uint32_t)d->pslot - 4,
		  .lkey = d->pmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = sge, .num_sge = 2 }, *bad;

	(void)o;
	return ibv_post_recv(d->qp, &wr, &bad);
}

/* The netdev of the port's first RoCE v2 IPv4 GID, for the IGMP join. */
static int find_netdev(struct ud_dev *d, int gid_len)
{
	for (int i = 0; i < gid_len; i++) {
		struct ibv_gid_entry g;
		static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid_ex(d->ctx, 1, (uint32_t)i, &g, 0))
			continue;
		if (g.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(g.gid.raw, v4, 12) &&
		    if_indextoname(g.ndev_ifindex, d->netdev))
			return 0;
	}
	return -1;
}

static int ud_open(struct ud_dev *d, struct ibv_device *dev, const struct cap_opts *o, int idx)
{
	struct ibv_port_attr pa;
	const char *name = ibv_get_device_name(dev);

	d->ctx = ibv_open_device(dev);
	if (!d->ctx || ibv_query_port(d->ctx, 1, &pa)) {
		fprintf(stderr, "rdmacap: ud: cannot open %s port 1: %s\n", name, strerror(errno));
		return -1;
	}
	d->mtu = 128u << pa.active_mtu;
	if (o->app_header + CAP_GRH_LEN > d->mtu) {
		fprintf(stderr, "rdmacap: ud: header length %u larger than the MTU of %s (%u)\n",
			o->app_header, name, d->mtu);
		return -1;
	}
	if (idx < o->nnetdevs)
		snprintf(d->netdev, sizeof(d->netdev), "%s", o->netdevs[idx]);
	else if (find_netdev(d, pa.gid_tbl_len)) {
		fprintf(stderr, "rdmacap: ud: %s has no RoCE v2 IPv4 GID: name its netdev with -i\n", name);
		return -1;
	}
	d->hslot = CAP_GRH_LEN + o->app_header;
	d->pslot = d->mtu + 4;  /* + room for the ICRC the rebuilt frame carries */
	d->hbuf = calloc(o->slots, d->hslot);
	d->pbuf_len = (o->slots * d->pslot + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	d->pbuf = cap_payload_alloc(d->pbuf_len, o->payload_mem, &d->pbuf_huge);
	if (!d->pbuf && o->payload_mem == CAP_MEM_HUGE) {
		fprintf(stderr, "rdmacap: ud: %s: --payload-mem huge: no %zu MiB of huge pages (%s); reserve "
			"them first (echo N > /proc/sys/vm/nr_hugepages) or use --payload-mem auto\n", name,
			d->pbuf_len >> 20, strerror(errno));
		return -1;
	}
	d->wc = calloc(o->slots, sizeof(*d->wc));
	d->pd = ibv_alloc_pd(d->ctx);
	d->ch = ibv_create_comp_channel(d->ctx);
	if (!d->hbuf || !d->pbuf || !d->wc || !d->pd || !d->ch)
		goto fail;
	d->cq = ibv_create_cq(d->ctx, (int)o->slots, NULL, d->ch, 0);
	d->hmr = ibv_reg_mr(d->pd, d->hbuf, o->slots * d->hslot, IBV_ACCESS_LOCAL_WRITE);
	d->pmr = ibv_reg_mr(d->pd, d->pbuf, d->pbuf_len, IBV_ACCESS_LOCAL_WRITE);
	if (!d->cq || !d->hmr || !d->pmr)
		goto fail;
	struct ibv_qp_init_attr qa = {
		.send_cq = d->cq, .recv_cq = d->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 1, .max_recv_wr = o->slots, .max_send_sge = 1, .max_recv_sge = 2 },
	};

	d->qp = ibv_create_qp(d->pd, &qa);
	if (!d->qp)
		goto fail;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = o->qkey };

	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		goto fail;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE))
		goto fail;
	for (unsigned s = 0; s < o->slots; s++)
		if (post_recv(d, o, s))
			goto fail;
	for (int g = 0; g < o->ngroups; g++) {
		union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff } };
		int rc;

		memcpy(&mgid.raw[12], &o->groups[g].addr, 4);
		rc = ibv_attach_mcast(d->qp, &mgid, 0);
		if (rc) {
			fprintf(stderr, "rdmacap: ud: %s: cannot attach to %s: %s\n", name,
				inet_ntoa(o->groups[g].addr), strerror(rc));
			return -1;
		}
		d->attached = g + 1;
	}
	/* without the IPv4 membership the IP stack drops the RoCE v2 frames */
	d->igmp = cap_igmp_join(o, d->netdev);
	if (d->igmp < 0)
		return -1;
	ibv_req_notify_cq(d->cq, 0);
	return 0;
fail:
	fprintf(stderr, "rdmacap: ud: %s: cannot set up the UD QP: %s\n", name, strerror(errno));
	return -1;
}

static void ud_close(struct ud_dev *d, const struct cap_opts *o)
{
	for (int g = 0; g < d->attached; g++) {
		union ibv_gid mgid = { .raw = { [10] = 0xff, [11] = 0xff } };

		memcpy(&mgid.raw[12], &o->groups[g].addr, 4);
		ibv_detach_mcast(d->qp, &mgid, 0);
	}
	if (d->igmp >= 0)
		close(d->igmp);
	if (d->qp)
		ibv_destroy_qp(d->qp);
	if (d->hmr)
		ibv_dereg_mr(d->hmr);
	if (d->pmr)
		ibv_dereg_mr(d->pmr);
	if (d->cq)
		ibv_destroy_cq(d->cq);
	if (d->ch)
		ibv_destroy_comp_channel(d->ch);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	if (d->pbuf)
		munmap(d->pbuf, d->pbuf_len);
	free(d->hbuf);
	free(d->wc);
}

/* Take every completion; 0, or -1 on a write error or a failed receive. */
static int ud_poll(struct ud_dev *d, struct cap_engine *e, const struct cap_opts *o)
{
	uint8_t hdr[CAP_UD_WIRE_HDR + 65536];
	int n = ibv_poll_cq(d->cq, (int)o->slots, d->wc);

	e->polls++;
	if (n < 0) {
		fprintf(stderr, "rdmacap: ud: poll of the CQ failed\n");
		return -1;
	}
	/* most of the queue came back in one poll: it was close to empty */
	if ((unsigned)n >= o->slots - o->slots / 8)
		e->drops.starved++;
	d->empty = n ? 0 : d->empty + 1;
	uint64_t ts = cap_wall_ns();

	for (int i = 0; i < n; i++) {
		struct ibv_wc *w = &d->wc[i];
		unsigned slot = (unsigned)w->wr_id;
		uint8_t *h = d->hbuf + slot * d->hslot, *pay = d->pbuf + slot * d->pslot;

		if (w->status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rdmacap: ud: receive completion with status %d (%s)\n", w->status,
				ibv_wc_status_str(w->status));
			return -1;
		}
		size_t msg = w->byte_len > CAP_GRH_LEN ? w->byte_len - CAP_GRH_LEN : 0;
		size_t apph = msg < o->app_header ? msg : o->app_header;

		if (!(w->wc_flags & IBV_WC_GRH) ||
		    cap_frame_from_grh(hdr, h, w->src_qp, o->qkey, msg)) {
			e->drops.not_udp++;
		} else {
			memcpy(hdr + CAP_UD_WIRE_HDR, h + CAP_GRH_LEN, apph);
			memset(pay + (msg - apph), 0, 4);  /* the ICRC's place: verbs strip it */
			struct cap_pkt p = {
				.hdr = hdr, .hdr_len = CAP_UD_WIRE_HDR + apph, .pay = pay, .pay_len = msg - apph + 4,
				.wire_len = CAP_UD_WIRE_HDR + msg + 4, .app_skip = CAP_BTH_DETH_LEN, .trailer = 4,
				.ts_ns = ts,
			};

			if (cap_engine_packet(e, &p))
				return -1;
		}
		if (post_recv(d, o, slot)) {
			fprintf(stderr, "rdmacap: ud: cannot repost a receive: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

int cap_run_ud(const struct cap_opts *o, volatile sig_atomic_t *stop)
{
	struct ibv_device **list;
	struct ud_dev d[CAP_MAX_LIST];
	struct pollfd pfd[CAP_MAX_LIST];
	struct cap_engine e;
	int n = 0, rc = 1, err = 0;

	memset(d, 0, sizeof(d));
	for (int i = 0; i < CAP_MAX_LIST; i++)
		d[i].igmp = -1;
	list = ibv_get_device_list(NULL);
	if (!list) {
		fprintf(stderr, "rdmacap: ud: no RDMA devices: %s\n", strerror(errno));
		return 1;
	}
	for (; n < o->ndevs; n++) {
		struct ibv_device **dev = list;

		while (*dev && strcmp(ibv_get_device_name(*dev), o->devs[n]))
			dev++;
		if (!*dev) {
			fprintf(stderr, "rdmacap: ud: unknown RDMA device '%s'\n", o->devs[n]);
			goto out;
		}
		if (ud_open(&d[n], *dev, o, n)) {
			n++;
			goto out;
		}
		pfd[n] = (struct pollfd){ .fd = d[n].ch->fd, .events = POLLIN };
	}
	if (cap_engine_init(&e, o, "host", stop)) {
		fprintf(stderr, "rdmacap: out of memory\n");
		goto out;
	}
	for (int i = 0; i < n; i++)
		cap_engine_watch(&e, d[i].netdev);
	printf("rdmacap: ud: %d device(s), %d group(s), %u receive buffers of %zu + %zu B (payload in %s); "
	       "timestamps: host clock (the device does not stamp completions)\n", n, o->ngroups, o->slots,
	       d[0].hslot, d[0].pslot - 4, d[0].pbuf_huge ? "hugepages" : "host memory");
	fflush(stdout);
	while (!cap_engine_done(&e) && !err) {
		bool idle = true;

		for (int i = 0; i < n && !err; i++) {
			err = ud_poll(&d[i], &e, o);
			idle &= d[i].empty > 64;
		}
		if (idle && !err) {
			/* sleep on the channels; the poll after arming closes the race */
			for (int i = 0; i < n && !err; i++)
				err = ud_poll(&d[i], &e, o);
			if (poll(pfd, (nfds_t)n, 100) > 0)
				for (int i = 0; i < n; i++) {
					struct ibv_cq *cq;
					void *ctx;

					if (!(pfd[i].revents & POLLIN) || ibv_get_cq_event(d[i].ch, &cq, &ctx))
						continue;
					ibv_ack_cq_events(cq, 1);
					ibv_req_notify_cq(cq, 0);
					d[i].empty = 0;
				}
		}
		cap_engine_tick(&e);
	}
	for (int i = 0; i < n && !err && !e.error; i++)
		err = ud_poll(&d[i], &e, o);
	rc = cap_engine_finish(&e);
	if (err && !rc)
		rc = 1;
out:
	for (int i = 0; i < n; i++)
		ud_close(&d[i], o);
	ibv_free_device_list(list);
	return rc;
}
