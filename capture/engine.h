/* SPDX-License-Identifier: BSD-2-Clause */
/* The receive engine common to every backend (capture/rdmacap.8): a backend
 * hands it each packet (headers and payload, possibly in two buffers, and a
 * stamp); the engine finds the packet's source, writes its files in arrival
 * order, counts loss from the sequence number, and counts every drop a
 * backend reports. Memory is bounded: a fixed source table, fixed buffers. */
#ifndef CAP_ENGINE_H
#define CAP_ENGINE_H
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "opts.h"
#include "out.h"
#include "psn.h"
#include "seq.h"

struct cap_pkt {
	const uint8_t *hdr;   /* starts with the Ethernet header */
	size_t hdr_len;
	const uint8_t *pay;   /* split receive: the rest, in its own buffer */
	size_t pay_len;
	size_t wire_len;      /* the frame's length on the wire */
	size_t app_skip;      /* bytes after UDP before the application data (ud: BTH+DETH) */
	size_t trailer;       /* bytes after the application data (ud: the ICRC's place) */
	uint64_t ts_ns;       /* since the epoch */
};

/* Drops are never silent: each cause has its counter (rdmacap.8, "Drops"). */
struct cap_drops {
	uint64_t kernel;      /* packet: PACKET_STATISTICS tp_drops (ring full) */
	uint64_t ring_freeze; /* packet: tp_freeze_q_cnt */
	uint64_t starved;     /* ud, raw, sniffer: receive queue found nearly empty */
	uint64_t no_wqe;      /* raw, sniffer: the device's out_of_buffer counter during the
	                         capture: packets that found no receive WR (any QP of the device) */
	uint64_t miss;        /* delivered but not a wanted (group, source) */
	uint64_t not_udp;     /* not IPv4/UDP: cannot be attributed */
	uint64_t table_full;  /* a new source beyond --max-sources */
	uint64_t cut;         /* longer than the snap length / the receive buffer */
	uint64_t netdev;      /* the netdevs' receive drops during the capture (all traffic) */
};

struct cap_source {
	struct in_addr src, group;
	uint16_t port;
	struct cap_out out[3];  /* pcap, raw, hdr */
	struct cap_seq seq;
	uint64_t packets, bytes;
};

struct cap_engine {
	const struct cap_opts *o;
	const char *ts_kind;   /* "host" or "hardware" */
	struct cap_source *src;
	unsigned nsrc;
	uint8_t *scratch;      /* gather of a split packet */
	size_t scratch_len;
	uint64_t packets, bytes, polls;
	struct cap_drops drops;
	uint64_t t0_ns, last_tick_ns, last_pkts, last_bytes;
	volatile sig_atomic_t *stop;
	const char *watch[CAP_MAX_LIST];  /* netdevs whose receive drops are counted */
	int nwatch;
	uint64_t watch_base;
	struct cap_psn psn;    /* --roce: PSN accounting of the request flows */
	int error;             /* errno of the write that stopped the capture */
	char error_path[512];
};

int cap_engine_init(struct cap_engine *e, const struct cap_opts *o, const char *ts_kind,
		    volatile sig_atomic_t *stop);
/* Count the receive drops of this netdev from now on (drops.netdev). */
void cap_engine_watch(struct cap_engine *e, const char *netdev);
/* One packet; -1 when a file write failed (capture must stop). */
int cap_engine_packet(struct cap_engine *e, const struct cap_pkt *p);
/* The live line, once a second. */
void cap_engine_tick(struct cap_engine *e);
/* Stop asked (SIGINT), --count reached, --duration over, or a write failed. */
bool cap_engine_done(const struct cap_engine *e);
/* Flush and close every file, print the summary, write --json and
 * DIR/capture.json. Returns the exit status: 0, or 1 after a write error. */
int cap_engine_finish(struct cap_engine *e);

uint64_t cap_now_ns(void);       /* CLOCK_MONOTONIC */
uint64_t cap_wall_ns(void);      /* CLOCK_REALTIME: the host stamp */

#endif
