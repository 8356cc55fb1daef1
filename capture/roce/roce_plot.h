/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmawire --plot: the wire per QP over time (requests, retransmissions,
 * ACKs, NAKs; the joined WRs as spans from post to completion), drawn with
 * wrtrace plot's code (plugin/recorder/wrtrace_plot.h). */
#ifndef PT_ROCE_PLOT_H
#define PT_ROCE_PLOT_H
#include "roce_join.h"

/* 0, or 1 with the reason printed. j and t may be NULL (no trace). */
int roce_plot(const struct roce_capture *c, const struct roce_join *j, const struct wrt_trace *t,
	      const char *png);

#endif
