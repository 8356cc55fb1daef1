/* SPDX-License-Identifier: BSD-2-Clause */
/* Multicast on UD (facts 3): attach/detach, and on RoCE v2 with IPv4 GIDs the
 * IP side that rxe and switches need: the receiver joins the IPv4 group on
 * the GID's netdev (IGMP membership), the sender checks the group's route. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "engine.h"
#include "mgid.h"

int pt_mcast_attach(struct pt_ctx *c)
{
	union ibv_gid mgid;
	struct in_addr group;

	memcpy(mgid.raw, c->mgid, 16);
	for (int i = 0; i < c->num_qps; i++) {
		int rc = ibv_attach_mcast(c->qps[i].qp, &mgid, 0);

		if (rc) {
			fprintf(stderr, " Couldn't attach QP %d to the multicast group: %s\n", i,
				strerror(rc));
			return -1;
		}
	}
	c->mcast_attached = true;
	if (!c->is_roce || !pt_mgid_ipv4(c->mgid, &group))
		return 0;
	if (!c->netdev[0]) {
		fprintf(stderr, " Cannot find the netdev of GID %d to join the IPv4 group\n", c->gid_index);
		return -1;
	}
	/* Without an IP membership the IP stack drops the RoCE v2 packets. */
	struct ip_mreqn mr = { .imr_multiaddr = group, .imr_ifindex = (int)if_nametoindex(c->netdev) };

	c->igmp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (c->igmp_fd < 0 ||
	    setsockopt(c->igmp_fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		char g[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &group, g, sizeof(g));
		fprintf(stderr, " Couldn't join the IPv4 group %s on %s: %s\n", g, c->netdev,
			strerror(errno));
		return -1;
	}
	return 0;
}

int pt_mcast_check_route(struct pt_ctx *c, const uint8_t mgid[16])
{
	struct in_addr group;
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(4791) };
	struct sockaddr_in src;
	socklen_t len = sizeof(src);
	char g[INET_ADDRSTRLEN];
	int fd, rc = 0;

	if (!c->is_roce || !pt_mgid_ipv4(mgid, &group) || !c->netdev[0])
		return 0;
	dst.sin_addr = group;
	inet_ntop(AF_INET, &group, g, sizeof(g));
	/* connect() on a UDP socket only resolves the route: no packet is sent. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getsockname(fd, (struct sockaddr *)&src, &len) ||
	    memcmp(&src.sin_addr, &c->gid.raw[12], 4)) {
		fprintf(stderr, " The multicast group %s is not routed through %s (the netdev of GID %d).\n"
			" Run: ip route add 224.0.0.0/4 dev %s\n", g, c->netdev, c->gid_index, c->netdev);
		rc = -1;
	}
	close(fd);
	return rc;
}

bool pt_mcast_own(const struct pt_ctx *c, const struct ibv_wc *wc, const uint8_t *grh)
{
	static const uint8_t v4_prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (!c->mcast_attached || wc->src_qp != c->qps[0].qp->qp_num || !(wc->wc_flags & IBV_WC_GRH))
		return false;
	/* RoCE v2 over IPv4: the IPv4 header fills the last 20 bytes of the
	 * GRH room, its source address at offset 12 */
	if (c->is_roce && !memcmp(c->gid.raw, v4_prefix, 12))
		return !memcmp(grh + 20 + 12, &c->gid.raw[12], 4);
	return !memcmp(grh + 8, c->gid.raw, 16);   /* the GRH's SGID */
}

void pt_mcast_detach(struct pt_ctx *c)
{
	union ibv_gid mgid;

	if (c->mcast_attached) {
		memcpy(mgid.raw, c->mgid, 16);
		for (int i = 0; i < c->num_qps; i++)
			if (c->qps[i].qp)
				ibv_detach_mcast(c->qps[i].qp, &mgid, 0);
		c->mcast_attached = false;
	}
	if (c->igmp_fd >= 0) {
		close(c->igmp_fd);
		c->igmp_fd = -1;
	}
}
