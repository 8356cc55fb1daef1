/* SPDX-License-Identifier: BSD-2-Clause */
/* `packet`: AF_PACKET with a TPACKET_V3 ring per netdev. The kernel filter
 * (compiled by libpcap) keeps the groups' UDP ports, or UDP 4791 with
 * --roce; the ring's own drop count comes from PACKET_STATISTICS. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "backend.h"
#include "frame.h"

#define RETIRE_MS 50

struct ring {
	int fd;
	uint8_t *map;
	size_t map_len;
	unsigned block_size, nblocks, cur;
};

int cap_igmp_join(const struct cap_opts *o, const char *netdev)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	unsigned ifindex = if_nametoindex(netdev);

	if (fd < 0)
		return -1;
	for (int g = 0; g < o->ngroups; g++) {
		char ga[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &o->groups[g].addr, ga, sizeof(ga));
		if (!o->nsources) {
			struct ip_mreqn m = { .imr_multiaddr = o->groups[g].addr, .imr_ifindex = (int)ifindex };

			if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof(m)) && errno != EADDRINUSE) {
				fprintf(stderr, "rdmacap: cannot join %s on %s: %s\n", ga, netdev, strerror(errno));
				close(fd);
				return -1;
			}
			continue;
		}
		for (int s = 0; s < o->nsources; s++) {
			/* source-specific (IGMPv3): the interface by index, as IP_ADD_SOURCE_MEMBERSHIP by address */
			struct group_source_req r = { .gsr_interface = ifindex };
			struct sockaddr_in *gr = (struct sockaddr_in *)&r.gsr_group;
			struct sockaddr_in *sr = (struct sockaddr_in *)&r.gsr_source;

			gr->sin_family = sr->sin_family = AF_INET;
			gr->sin_addr = o->groups[g].addr;
			sr->sin_addr = o->sources[s];
			if (setsockopt(fd, IPPROTO_IP, MCAST_JOIN_SOURCE_GROUP, &r, sizeof(r)) && errno != EADDRINUSE) {
				fprintf(stderr, "rdmacap: cannot join %s (source %s) on %s: %s\n", ga,
					inet_ntoa(o->sources[s]), netdev, strerror(errno));
				close(fd);
				return -1;
			}
		}
	}
	return fd;
}

/* The kernel filter as libpcap compiles it from a tcpdump expression. */
static int attach_filter(int fd, const struct cap_opts *o)
{
	char expr[CAP_MAX_LIST * 64 + 64];
	size_t n = 0;
	struct bpf_program prog;
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	int rc = -1;

	if (o->roce)
		n += (size_t)snprintf(expr + n, sizeof(expr) - n, "udp dst port %u", CAP_ROCE_PORT);
	for (int g = 0; g < o->ngroups; g++)
		n += (size_t)snprintf(expr + n, sizeof(expr) - n, "%s(udp and dst host %s and dst port %u)",
				      n ? " or " : "", inet_ntoa(o->groups[g].addr), o->groups[g].port);
	if (!dead)
		return -1;
	if (pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN)) {
		fprintf(stderr, "rdmacap: filter '%s': %s\n", expr, pcap_geterr(dead));
		pcap_close(dead);
		return -1;
	}
	struct sock_fprog fp = { .len = (unsigned short)prog.bf_len, .filter = (struct sock_filter *)prog.bf_insns };

	rc = setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp, sizeof(fp));
	if (rc)
		fprintf(stderr, "rdmacap: cannot attach the filter: %s\n", strerror(errno));
	pcap_freecode(&prog);
	pcap_close(dead);
	return rc;
}

static int ring_open(struct ring *r, const struct cap_opts *o, const char *netdev, unsigned mb)
{
	int v = TPACKET_V3;
	struct tpacket_req3 req = { 0 };
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };

	memset(r, 0, sizeof(*r));
	/* protocol 0: nothing is queued before the filter is on */
	r->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (r->fd < 0) {
		int e = errno;

		fprintf(stderr, "rdmacap: packet: AF_PACKET socket: %s (%s)%s\n", strerrorname_np(errno),
			strerror(errno), errno == EPERM ? "; it needs CAP_NET_RAW (root), the ud backend does not" : "");
		errno = e;
		return -1;
	}
	/* Many small blocks: a block is handed over when full or after
	 * tp_retire_blk_tov, so at a low rate each block holds one timeout's
	 * packets and the count of blocks times the timeout is how long a
	 * stalled writer can sleep before the ring drops (64 x 50 ms per 16 MiB). */
	r->block_size = 256u << 10;
	r->nblocks = (mb < 1 ? 1 : mb) * 4;
	req.tp_block_size = r->block_size;
	req.tp_block_nr = r->nblocks;
	req.tp_frame_size = 2048;
	req.tp_frame_nr = r->block_size / 2048 * r->nblocks;
	req.tp_retire_blk_tov = RETIRE_MS;  /* a quiet stream's packets still come out soon */
	if (setsockopt(r->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) ||
	    setsockopt(r->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req))) {
		fprintf(stderr, "rdmacap: packet: TPACKET_V3 ring on %s: %s\n", netdev, strerror(errno));
		return -1;
	}
	r->map_len = (size_t)r->block_size * r->nblocks;
	r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, r->fd, 0);
	if (r->map == MAP_FAILED)
		r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->map == MAP_FAILED) {
		fprintf(stderr, "rdmacap: packet: mmap of the ring: %s\n", strerror(errno));
		r->map = NULL;
		return -1;
	}
	if (attach_filter(r->fd, o))
		return -1;
	ll.sll_ifindex = (int)if_nametoindex(netdev);
	if (bind(r->fd, (struct sockaddr *)&ll, sizeof(ll))) {
		fprintf(stderr, "rdmacap: packet: bind to %s: %s\n", netdev, strerror(errno));
		return -1;
	}
	return 0;
}

static void ring_close(struct ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
}

static void read_stats(struct ring *r, struct cap_engine *e)
{
	struct tpacket_stats_v3 st;
	socklen_t len = sizeof(st);

	/* reading resets the kernel's counters: add them up */
	if (!getsockopt(r->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len)) {
		e->drops.kernel += st.tp_drops;
		e->drops.ring_freeze += st.tp_freeze_q_cnt;
	}
}

/* Every block the kernel handed over, in order; 0 or -1 on a write error. */
static int ring_drain(struct ring *r, struct cap_engine *e)
{
	for (;;) {
		struct tpacket_block_desc *b = (void *)(r->map + (size_t)r->cur * r->block_size);

		e->polls++;
		if (!(__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
			return 0;
		struct tpacket3_hdr *h = (void *)((uint8_t *)b + b->hdr.bh1.offset_to_first_pkt);

		for (unsigned i = 0; i < b->hdr.bh1.num_pkts; i++) {
			struct cap_pkt p = {
				.hdr = (uint8_t *)h + h->tp_mac, .hdr_len = h->tp_snaplen, .wire_len = h->tp_len,
				.ts_ns = (uint64_t)h->tp_sec * 1000000000ull + h->tp_nsec,
			};

			if (cap_engine_packet(e, &p))
				return -1;
			h = (void *)((uint8_t *)h + h->tp_next_offset);
		}
		__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		r->cur = (r->cur + 1) % r->nblocks;
	}
}

int cap_run_packet(const struct cap_opts *o, volatile sig_atomic_t *stop)
{
	struct ring rings[CAP_MAX_LIST];
	struct pollfd pfd[CAP_MAX_LIST];
	int igmp[CAP_MAX_LIST];
	struct cap_engine e;
	int n = o->nnetdevs, rc = 1, err = 0;
	unsigned mb = o->ring_mb / (unsigned)n;

	for (int i = 0; i < n; i++) {
		rings[i].fd = igmp[i] = -1;
		rings[i].map = NULL;
	}
	for (int i = 0; i < n; i++) {
		if (ring_open(&rings[i], o, o->netdevs[i], mb)) {
			if (rings[i].fd < 0 && errno == EPERM)
				rc = 3;  /* cannot run here: as raw and sniffer, nothing written */
			goto out;
		}
		if (o->ngroups && (igmp[i] = cap_igmp_join(o, o->netdevs[i])) < 0)
			goto out;
		pfd[i] = (struct pollfd){ .fd = rings[i].fd, .events = POLLIN | POLLERR };
	}
	if (cap_engine_init(&e, o, "host", stop)) {
		fprintf(stderr, "rdmacap: out of memory\n");
		goto out;
	}
	for (int i = 0; i < n; i++)
		cap_engine_watch(&e, o->netdevs[i]);
	printf("rdmacap: packet: %d netdev(s), %u MiB ring(s), %d group(s)%s; timestamps: host clock "
	       "(kernel receive time)\n", n, mb < 1 ? 1 : mb, o->ngroups, o->roce ? ", RoCE v2 (UDP 4791)" : "");
	fflush(stdout);
	while (!cap_engine_done(&e) && !err) {
		poll(pfd, (nfds_t)n, 100);
		for (int i = 0; i < n && !err; i++)
			err = ring_drain(&rings[i], &e);
		if (e.last_tick_ns + 1000000000ull <= cap_now_ns())
			for (int i = 0; i < n; i++)
				read_stats(&rings[i], &e);
		cap_engine_tick(&e);
	}
	/* the blocks still open retire within tp_retire_blk_tov: take them too */
	if (!err && !e.error) {
		struct timespec ts = { 0, (RETIRE_MS + 30) * 1000000L };

		nanosleep(&ts, NULL);
		for (int i = 0; i < n && !err; i++)
			err = ring_drain(&rings[i], &e);
	}
	for (int i = 0; i < n; i++)
		read_stats(&rings[i], &e);
	rc = cap_engine_finish(&e);
out:
	for (int i = 0; i < n; i++) {
		ring_close(&rings[i]);
		if (igmp[i] >= 0)
			close(igmp[i]);
	}
	return rc;
}
