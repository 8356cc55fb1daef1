/* SPDX-License-Identifier: BSD-2-Clause */
/* One way to say that a call failed: what we were doing, the call, and its
 * code with its text, e.g.
 *   " Couldn't request CQ notification: ibv_req_notify_cq() failed: Invalid argument (22)"
 * Verbs calls return their code in three ways: as the return value
 * (ibv_req_notify_cq, ibv_query_port), in errno with NULL or -1 (ibv_alloc_pd,
 * ibv_get_cq_event), or as a negative return (ibv_poll_cq): pass the code,
 * positive, as err (pt_err_code() picks it). */
#ifndef PT_UTIL_ERR_H
#define PT_UTIL_ERR_H
#include <stdio.h>

/* Writes the line to f (stderr in the tools). */
void pt_err_call_to(FILE *f, const char *call, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define pt_err_call(call, err, ...) pt_err_call_to(stderr, (call), (err), __VA_ARGS__)

/* The code of a failed call: rc when it is one (> 0), -rc when negative,
 * else errno (and EIO when errno says nothing). */
int pt_err_code(int rc);
#endif
