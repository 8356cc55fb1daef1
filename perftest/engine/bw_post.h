/* SPDX-License-Identifier: BSD-2-Clause */
/* The BW sender's posting (bw_post.c), for run_bw.c's loops. */
#ifndef PT_BW_POST_H
#define PT_BW_POST_H
#include <stdint.h>
#include "loop.h"

/* Post on every QP as far as its window allows (iters 0: no bound; pace
 * NULL: no rate limit); *posted_total grows by what was posted. 0, or -1
 * after saying why (a failed post, the peak out of memory). */
int pt_bw_post_window(const struct pt_loop *l, struct pt_bw_meas *m, uint64_t iters,
		      uint64_t *posted_total, struct pt_pacer *pace);
/* The BW peak tracker ran out of memory: said on stderr, -1. */
int pt_bw_peak_nomem(void);

#endif
