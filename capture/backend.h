/* SPDX-License-Identifier: BSD-2-Clause */
/* The backends (capture/rdmacap.8): each opens its receive path, feeds the
 * engine until cap_engine_done(), and returns 0, or prints why it could not
 * start and returns non-zero before any file is written. */
#ifndef CAP_BACKEND_H
#define CAP_BACKEND_H
#include "engine.h"
#include "opts.h"

int cap_run_packet(const struct cap_opts *o, volatile sig_atomic_t *stop);
int cap_run_ud(const struct cap_opts *o, volatile sig_atomic_t *stop);
/* raw and sniffer: the capability checks; on a device that has neither raw
 * QPs nor flow steering (rxe), or without CAP_NET_RAW, the refusal. */
int cap_run_raw(const struct cap_opts *o, volatile sig_atomic_t *stop);

/* The IGMP joins through a netdev: one UDP socket, a membership per group
 * (source-specific when sources are given). Returns the socket or -1. */
int cap_igmp_join(const struct cap_opts *o, const char *netdev);

#endif
