/* SPDX-License-Identifier: BSD-2-Clause */
/* Multicast on UD (docs/upstream-behaviour.md §4): attach/detach, and on RoCE
 * v2 with IPv4 GIDs the IP side that rxe and switches need: the receiver joins
 * the IPv4 group on the GID's netdev (IGMP membership), the sender checks the
 * group's route. */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "engine.h"
#include "perftest/cli/mgid.h"

int pt_mcast_attach(struct pt_ctx *c)
{
	union ibv_gid mgid;
	struct in_addr group;

	memcpy(mgid.raw, c->mcast.mgid, 16);
	for (int i = 0; i < c->res.num_qps; i++) {
		int rc = ibv_attach_mcast(c->res.qps[i].qp, &mgid, 0);

		if (rc) {
			fprintf(stderr, " Couldn't attach QP %d to the multicast group: %s\n", i,
				strerror(rc));
			return -1;
		}
	}
	c->mcast.attached = true;
	if (!c->dev.is_roce || !pt_mgid_ipv4(c->mcast.mgid, &group))
		return 0;
	if (!c->dev.netdev[0]) {
		fprintf(stderr, " Cannot find the netdev of GID %d to join the IPv4 group\n", c->dev.gid_index);
		return -1;
	}
	/* Without an IP membership the IP stack drops the RoCE v2 packets. */
	struct ip_mreqn mr = { .imr_multiaddr = group, .imr_ifindex = (int)if_nametoindex(c->dev.netdev) };

	c->mcast.igmp_fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (c->mcast.igmp_fd < 0 ||
	    setsockopt(c->mcast.igmp_fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr, sizeof(mr))) {
		char g[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &group, g, sizeof(g));
		fprintf(stderr, " Couldn't join the IPv4 group %s on %s: %s\n", g, c->dev.netdev,
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

	if (!c->dev.is_roce || !pt_mgid_ipv4(mgid, &group) || !c->dev.netdev[0])
		return 0;
	dst.sin_addr = group;
	inet_ntop(AF_INET, &group, g, sizeof(g));
	/* connect() on a UDP socket only resolves the route: no packet is sent. */
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return 0;
	if (connect(fd, (struct sockaddr *)&dst, sizeof(dst)) ||
	    getsockname(fd, (struct sockaddr *)&src, &len) ||
	    memcmp(&src.sin_addr, &c->dev.gid.raw[12], 4)) {
		fprintf(stderr, " The multicast group %s is not routed through %s (the netdev of GID %d).\n"
			" Run: ip route add 224.0.0.0/4 dev %s\n", g, c->dev.netdev, c->dev.gid_index, c->dev.netdev);
		rc = -1;
	}
	close(fd);
	return rc;
}

int pt_mcast_block_own(struct pt_ctx *c)
{
	struct group_source_req gs = { .gsr_interface = if_nametoindex(c->dev.netdev) };
	struct sockaddr_in *g = (struct sockaddr_in *)&gs.gsr_group;
	struct sockaddr_in *src = (struct sockaddr_in *)&gs.gsr_source;

	if (c->mcast.igmp_fd < 0)   /* no IPv4 group joined: nothing loops back through IP */
		return 0;
	g->sin_family = src->sin_family = AF_INET;
	if (!pt_mgid_ipv4(c->mcast.mgid, &g->sin_addr))
		return 0;
	memcpy(&src->sin_addr, &c->dev.gid.raw[12], 4);
	/* The membership becomes "every source but ours": the route to the
	 * group no longer counts this host as a member for our own packets. */
	if (setsockopt(c->mcast.igmp_fd, IPPROTO_IP, MCAST_BLOCK_SOURCE, &gs, sizeof(gs))) {
		fprintf(stderr, " Couldn't leave our own address out of the IPv4 group on %s: %s\n",
			c->dev.netdev, strerror(errno));
		return -1;
	}
	return 0;
}

void pt_mcast_detach(struct pt_ctx *c)
{
	union ibv_gid mgid;

	if (c->mcast.attached) {
		memcpy(mgid.raw, c->mcast.mgid, 16);
		for (int i = 0; i < c->res.num_qps; i++)
			if (c->res.qps[i].qp)
				ibv_detach_mcast(c->res.qps[i].qp, &mgid, 0);
		c->mcast.attached = false;
	}
	if (c->mcast.igmp_fd >= 0) {
		close(c->mcast.igmp_fd);
		c->mcast.igmp_fd = -1;
	}
}
