/* SPDX-License-Identifier: BSD-2-Clause */
/* Names rdmamon prints (and JSON keys): object types as `rdma resource`
 * names them, operations, errno names; and which kernel functions each
 * operation is watched on. */
#ifndef MONITOR_NAMES_H
#define MONITOR_NAMES_H

#include "rdmamon.h"

#define RM_OP_FUNCS 3

struct rm_op_info {
	const char *name;                  /* "create_qp" */
	int returns_ptr;                   /* ERR_PTR on failure, else int < 0 */
	const char *funcs[RM_OP_FUNCS];    /* candidates, any that exist are hooked */
};

const char *rm_type_name(unsigned type);        /* "qp"; "?" when out of range */
int rm_type_parse(const char *name);            /* -1 when unknown */
const struct rm_op_info *rm_op(unsigned op);     /* NULL when out of range */
const char *rm_op_name(unsigned op);             /* "?" when out of range */
/* "EINVAL" for -22 or 22; "E<n>" for a number with no name; "ok" for 0. */
const char *rm_errno_name(int err, char *buf, unsigned len);

/* The views' common options: -i SECONDS (0.1..3600) and -c COUNT (>= 1).
 * 0, or -1 with *out untouched when the text is not one. */
int rm_interval_parse(const char *s, double *out);
int rm_count_parse(const char *s, long *out);

#endif
