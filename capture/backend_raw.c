/* SPDX-License-Identifier: BSD-2-Clause */
/* `raw` and `sniffer` need a RAW_PACKET QP (mlx4/mlx5 only, and CAP_NET_RAW)
 * and flow steering (docs: capture/rdmacap.8, "raw and sniffer"). They are
 * checked here, in the order a user can fix them, before anything is
 * written: the device's QP type, then the capability, then the flow. On
 * rxe the QP type is refused with EOPNOTSUPP, and the error names the
 * backend that works there. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_ether.h>
#include "backend.h"

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

int cap_run_raw(const struct cap_opts *o, volatile sig_atomic_t *stop)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int rc = 0;

	(void)stop;
	if (!list) {
		fprintf(stderr, "rdmacap: no RDMA devices: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 0; i < o->ndevs && !rc; i++) {
		struct ibv_device **dev = list;
		struct ibv_context *ctx;
		struct ibv_pd *pd = NULL;
		struct ibv_cq *cq = NULL;
		struct ibv_qp *qp = NULL;

		while (*dev && strcmp(ibv_get_device_name(*dev), o->devs[i]))
			dev++;
		if (!*dev) {
			fprintf(stderr, "rdmacap: unknown RDMA device '%s'\n", o->devs[i]);
			rc = 1;
			break;
		}
		ctx = ibv_open_device(*dev);
		if (ctx)
			pd = ibv_alloc_pd(ctx);
		if (pd)
			cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
		if (!cq) {
			rc = refuse(o, o->devs[i], errno ? errno : ENODEV, "cannot open the device");
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
				rc = refuse(o, o->devs[i], e, "a RAW_PACKET QP needs CAP_NET_RAW");
			else if (!qp)
				rc = refuse(o, o->devs[i], e, "the device has no RAW_PACKET QPs (no raw "
					    "capture, no flow steering)");
			else if ((e = net_raw_errno()))
				rc = refuse(o, o->devs[i], e, "capture needs CAP_NET_RAW");
			else {
				/* a capable device (mlx4/mlx5): its steered receive loop is
				 * not in this build, and saying so beats capturing nothing */
				fprintf(stderr, "rdmacap: %s: %s has RAW_PACKET QPs, but the steered %s receive "
					"path is not implemented yet (issue 20)\n", cap_backend_name(o->backend),
					o->devs[i], cap_backend_name(o->backend));
				advice(o, o->devs[i], 0);
				rc = 3;
			}
		}
		if (qp)
			ibv_destroy_qp(qp);
		if (cq)
			ibv_destroy_cq(cq);
		if (pd)
			ibv_dealloc_pd(pd);
		if (ctx)
			ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return rc;
}
