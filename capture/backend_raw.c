/* SPDX-License-Identifier: BSD-2-Clause */
/* `raw` and `sniffer` need a RAW_PACKET QP (mlx4/mlx5 only, and CAP_NET_RAW)
 * and flow steering (docs: capture/rdmacap.8, "raw and sniffer"). They are
 * checked here, in the order a user can fix them, before anything is
 * written: the device's QP type, then the capability, then the flows (when
 * the steered path creates them: raw_steer.c). On rxe the QP type is
 * refused with EOPNOTSUPP, and the error names the backend that works
 * there. A device that passes gets the steered receive path. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include "backend.h"
#include "raw_steer.h"

static void advice(const struct cap_opts *o, const char *dev, int err)
{
	if (err == EPERM)
		/* packet needs CAP_NET_RAW too: only ud runs without it */
		fprintf(stderr, "rdmacap: use instead: rdmacap ud -d %s -g GROUP -o DIR (RoCE v2 multicast, no "
			"capability needed), or grant CAP_NET_RAW (root, setcap cap_net_raw+ep)\n", dev);
	else if (o->backend == CAP_SNIFFER)
		fprintf(stderr, "rdmacap: use instead: rdmacap packet --roce -i NETDEV -o DIR (the RoCE v2 frames "
			"of a device that does not offload RoCE, such as rxe, reach its netdev)\n");
	else
		fprintf(stderr, "rdmacap: use instead: rdmacap ud -d %s -g GROUP -o DIR (RoCE v2 multicast), "
			"or rdmacap packet -i NETDEV -g GROUP:PORT -o DIR (UDP multicast)\n", dev);
}

static int refuse(const struct cap_opts *o, const char *dev, int err, const char *what)
{
	fprintf(stderr, "rdmacap: %s: %s: %s: %s (%s)\n", cap_backend_name(o->backend), dev, what,
		strerrorname_np(err) ? strerrorname_np(err) : "?", strerror(err));
	advice(o, dev, err);
	return 3;
}

/* CAP_NET_RAW without libcap: an AF_PACKET socket needs exactly it. */
static int net_raw_errno(void)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/* The netdev of the device's port 1 (for the IGMP joins, the MTU and the
 * drop counters): -i when given, else the first GID's netdev. */
static int port_netdev(struct ibv_context *ctx, const struct cap_opts *o, int idx, char *out)
{
	struct ibv_port_attr pa;

	if (idx < o->nnetdevs) {
		snprintf(out, IF_NAMESIZE, "%s", o->netdevs[idx]);
		return 0;
	}
	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++) {
		struct ibv_gid_entry g;

		if (!ibv_query_gid_ex(ctx, 1, (uint32_t)i, &g, 0) && g.ndev_ifindex &&
		    if_indextoname(g.ndev_ifindex, out))
			return 0;
	}
	return -1;
}

/* One device: 0 when it can capture (ctx kept open in *out), else the
 * refusal's exit status, everything closed. */
static int check_device(const struct cap_opts *o, struct ibv_device *dev, const char *name,
			struct ibv_context **out)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	int rc = 0;

	if (ctx)
		pd = ibv_alloc_pd(ctx);
	if (pd)
		cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq) {
		rc = refuse(o, name, errno ? errno : ENODEV, "cannot open the device");
	} else {
		struct ibv_qp_init_attr qa = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RAW_PACKET,
			.cap = { .max_send_wr = 1, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 2 },
		};
		int e;

		errno = 0;
		qp = ibv_create_qp(pd, &qa);
		e = errno ? errno : EOPNOTSUPP;
		if (!qp && e == EPERM)
			rc = refuse(o, name, e, "a RAW_PACKET QP needs CAP_NET_RAW");
		else if (!qp)
			rc = refuse(o, name, e, "the device has no RAW_PACKET QPs (no raw capture, no flow steering)");
		else if ((e = net_raw_errno()))
			rc = refuse(o, name, e, "capture needs CAP_NET_RAW");
	}
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
	if (ctx && rc)
		ibv_close_device(ctx);
	*out = rc ? NULL : ctx;
	return rc;
}

int cap_run_raw(const struct cap_opts *o, volatile sig_atomic_t *stop)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx[CAP_MAX_LIST] = { 0 };
	char netdev[CAP_MAX_LIST][IF_NAMESIZE];
	const char *netdevs[CAP_MAX_LIST];
	int rc = 0, n = 0;

	if (!list) {
		fprintf(stderr, "rdmacap: no RDMA devices: %s\n", strerror(errno));
		return 1;
	}
	for (; n < o->ndevs && !rc; n++) {
		struct ibv_device **dev = list;

		while (*dev && strcmp(ibv_get_device_name(*dev), o->devs[n]))
			dev++;
		if (!*dev) {
			fprintf(stderr, "rdmacap: unknown RDMA device '%s'\n", o->devs[n]);
			rc = 1;
			break;
		}
		rc = check_device(o, *dev, o->devs[n], &ctx[n]);
		if (!rc && port_netdev(ctx[n], o, n, netdev[n])) {
			fprintf(stderr, "rdmacap: %s: %s: no netdev found for port 1: name it with -i\n",
				cap_backend_name(o->backend), o->devs[n]);
			rc = 2;
		}
		netdevs[n] = netdev[n];
	}
	/* every device can: the steered receive path (raw_steer.h) */
	if (!rc && (rc = cap_raw_capture(ctx, netdevs, n, o, stop)) == 3)
		advice(o, o->devs[0], 0);  /* a QP or flow refused by the device */
	for (int i = 0; i < n; i++)
		if (ctx[i])
			ibv_close_device(ctx[i]);
	ibv_free_device_list(list);
	return rc;
}
