/* SPDX-License-Identifier: BSD-2-Clause */
/* The steered receive path of `raw` and `sniffer` (capture/rdmacap.8, "raw
 * and sniffer"), on a device that has RAW_PACKET QPs and flow steering
 * (mlx4/mlx5). `raw`: one RAW_PACKET QP per (group x source), each with a
 * flow (Ethernet destination MAC of the group, IPv4 source and group, UDP
 * destination port); `sniffer`: one QP with an IBV_FLOW_ATTR_SNIFFER flow
 * (the RoCE traffic the NIC offloads). One extended CQ per device, stamped
 * by the device when it can (else the host clock, said in capture.json).
 * Every receive WR has two SGEs: the headers (Ethernet + IPv4 + UDP +
 * --app-header bytes) into a header buffer, the rest into the payload
 * buffer. Packets go to the common engine (engine.h). Only inline verbs
 * and a few exported calls are used, so tests/unit/test_capture_raw.c runs
 * the whole path over a fake device. */
#ifndef CAP_RAW_STEER_H
#define CAP_RAW_STEER_H
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "engine.h"
#include "opts.h"

/* One steering rule of `raw`: the specs right after the attr, as
 * ibv_create_flow reads them (each spec's size is a multiple of 4, so no
 * padding falls between them: checked below). */
struct cap_raw_flow {
	struct ibv_flow_attr attr;
	struct ibv_flow_spec_eth eth;
	struct ibv_flow_spec_ipv4 ip;
	struct ibv_flow_spec_tcp_udp udp;
};
_Static_assert(sizeof(struct cap_raw_flow) == sizeof(struct ibv_flow_attr) + sizeof(struct ibv_flow_spec_eth) +
	       sizeof(struct ibv_flow_spec_ipv4) + sizeof(struct ibv_flow_spec_tcp_udp),
	       "flow specs must follow each other with no padding");

/* The IPv4 multicast MAC of a group (01:00:5e + its low 23 bits). */
void cap_raw_group_mac(struct in_addr group, uint8_t mac[6]);

/* The rule for (group, source) on port: source INADDR_ANY and port 0 are
 * left unmatched (any source, any port). */
void cap_raw_flow_fill(struct cap_raw_flow *f, const struct cap_group *g, struct in_addr source,
		       uint8_t port);

/* Capture on n open devices (ctx[i], its netdev netdevs[i] for the IGMP
 * joins and the drop counters) until the engine is done (SIGINT through
 * stop, --count, --duration, a write error). Returns rdmacap's exit status:
 * 0, 1 at run time, 3 when a device refuses a QP or a flow (errno named). */
int cap_raw_capture(struct ibv_context **ctx, const char *const *netdevs, int n,
		    const struct cap_opts *o, volatile sig_atomic_t *stop);

/* Where the devices' counters are read (out_of_buffer: packets that found
 * no receive WR): "/sys", another tree in tests. */
extern const char *cap_raw_sysfs;

/* A payload buffer as --payload-mem asks: huge pages first (auto), only
 * (huge: NULL with errno when the host has too few), or never (host). */
void *cap_payload_alloc(size_t len, enum cap_mem mem, bool *huge);

#endif
