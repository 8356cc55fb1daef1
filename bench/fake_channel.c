/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/hook-overhead's completion channel (-e rows): ibv_get_cq_event and
 * ibv_ack_cq_events, defined in this program so that the engine's calls
 * (linked statically) come here: the real ones reach into a provider's
 * private ops, which the fake device (hook_overhead_lat.c) has not. An
 * event is the CQ's address in the fake's pipe; the fake learns of each
 * event taken and acked through the two pointers it sets, so nothing here
 * calls back into a file that calls the engine. */
#include <unistd.h>
#include "hook_overhead.h"

void (*fake_event_taken)(struct ibv_cq *cq);
void (*fake_events_acked)(struct ibv_cq *cq, unsigned int n);

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	if (read(channel->fd, cq, sizeof(*cq)) != (ssize_t)sizeof(*cq))
		return -1;
	*cq_context = (*cq)->cq_context;
	if (fake_event_taken)
		fake_event_taken(*cq);
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (fake_events_acked)
		fake_events_acked(cq, nevents);
}
