// SPDX-License-Identifier: BSD-2-Clause
#include "names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_names[RM_NTYPES] = {
	[RM_PD] = "pd", [RM_CQ] = "cq", [RM_QP] = "qp", [RM_CM_ID] = "cm_id",
	[RM_MR] = "mr", [RM_CTX] = "ctx", [RM_COUNTER] = "counter", [RM_SRQ] = "srq",
	[RM_AH] = "ah",
};

/* Vendor-neutral entry points only (ib_core, ib_uverbs, rdma_cm), never a
 * driver's: the user-verbs path (the *_user functions and the uverbs
 * handlers of the write and ioctl interfaces). CQ, PD and MR creation has no
 * exported ib_core function for user objects, hence the static handlers
 * (hooked when the kernel's BTF has them). */
static const struct rm_op_info ops[OP_NOPS] = {
	[OP_CREATE_QP] = { "create_qp", 1, { "ib_create_qp_user" } },
	[OP_MODIFY_QP] = { "modify_qp", 0, { "ib_modify_qp_with_udata" } },
	[OP_DESTROY_QP] = { "destroy_qp", 0, { "ib_destroy_qp_user" } },
	[OP_CREATE_CQ] = { "create_cq", 0, { "ib_uverbs_handler_UVERBS_METHOD_CQ_CREATE",
					     "ib_uverbs_create_cq", "ib_uverbs_ex_create_cq" } },
	[OP_DESTROY_CQ] = { "destroy_cq", 0, { "ib_destroy_cq_user" } },
	[OP_ALLOC_PD] = { "alloc_pd", 0, { "ib_uverbs_alloc_pd" } },
	[OP_DEALLOC_PD] = { "dealloc_pd", 0, { "ib_dealloc_pd_user" } },
	[OP_REG_MR] = { "reg_mr", 0, { "ib_uverbs_reg_mr",
				       "ib_uverbs_handler_UVERBS_METHOD_REG_DMABUF_MR" } },
	[OP_DEREG_MR] = { "dereg_mr", 0, { "ib_dereg_mr_user" } },
	[OP_CREATE_SRQ] = { "create_srq", 1, { "ib_create_srq_user" } },
	[OP_DESTROY_SRQ] = { "destroy_srq", 0, { "ib_destroy_srq_user" } },
	[OP_CREATE_AH] = { "create_ah", 1, { "rdma_create_user_ah" } },
	[OP_DESTROY_AH] = { "destroy_ah", 0, { "rdma_destroy_ah_user" } },
	[OP_CREATE_CM_ID] = { "create_cm_id", 1, { "rdma_create_user_id" } },
	[OP_CONNECT] = { "connect", 0, { "rdma_connect_locked" } },
};

const char *rm_type_name(unsigned type)
{
	return type < RM_NTYPES ? type_names[type] : "?";
}

int rm_type_parse(const char *name)
{
	for (int t = 0; t < RM_NTYPES; t++)
		if (name && strcmp(name, type_names[t]) == 0)
			return t;
	return -1;
}

const struct rm_op_info *rm_op(unsigned op)
{
	return op < OP_NOPS ? &ops[op] : NULL;
}

const char *rm_op_name(unsigned op)
{
	return op < OP_NOPS ? ops[op].name : "?";
}

const char *rm_errno_name(int err, char *buf, unsigned len)
{
	const char *n;

	if (err == 0)
		return "ok";
	if (err < 0)
		err = -err;
	n = strerrorname_np(err);   /* glibc >= 2.32 */
	if (n)
		return n;
	snprintf(buf, len, "E%d", err);
	return buf;
}

int rm_interval_parse(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 3600))
		return -1;
	*out = v;
	return 0;
}

int rm_count_parse(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1)
		return -1;
	*out = v;
	return 0;
}
