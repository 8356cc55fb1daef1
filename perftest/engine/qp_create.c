/* SPDX-License-Identifier: BSD-2-Clause */
/* Data QP creation: the attributes (also used for rdma_cm's QPs, cm_qps.c),
 * a QP's place in the context, and our own QPs brought to INIT. Apart from
 * device.c so that device.c and cm_qps.c both use it without using each
 * other. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "memory.h"

/* The one opcode the QP posts (docs/upstream-behaviour.md §10). */
static unsigned send_ops_for(enum pt_verb v, bool imm)
{
	switch (v) {
	case PT_VERB_WRITE:
		return imm ? IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM : IBV_QP_EX_WITH_RDMA_WRITE;
	case PT_VERB_READ:
		return IBV_QP_EX_WITH_RDMA_READ;
	case PT_VERB_ATOMIC:
		return IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP;
	default:
		return imm ? IBV_QP_EX_WITH_SEND_WITH_IMM : IBV_QP_EX_WITH_SEND;
	}
}

static enum ibv_qp_type qp_type_for(enum pt_conn_type t)
{
	return t == PT_CONN_UD ? IBV_QPT_UD : t == PT_CONN_UC ? IBV_QPT_UC : IBV_QPT_RC;
}

void pt_qp_init_attr(const struct pt_ctx *c, struct ibv_qp_init_attr_ex *a)
{
	const struct pt_params *p = c->p;

	memset(a, 0, sizeof(*a));
	a->send_cq = c->res.send_cq;
	a->recv_cq = c->res.recv_cq;
	a->cap.max_send_wr = (uint32_t)c->run.tx_depth;
	a->cap.max_recv_wr = c->res.srq ? 0 : (uint32_t)c->run.rx_depth;
	a->srq = c->res.srq;
	a->cap.max_send_sge = 1;
	a->cap.max_recv_sge = 1;
	a->cap.max_inline_data = (uint32_t)c->run.inline_size;
	a->qp_type = qp_type_for(p->conn.type);
	a->comp_mask = IBV_QP_INIT_ATTR_PD;
	a->pd = c->res.parent_pd ? c->res.parent_pd : c->res.pd;   /* --no_lock */
	if (!p->traffic.use_old_post_send) {
		a->comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a->send_ops_flags = send_ops_for(p->tool->verb, p->traffic.with_imm);
	}
}

void pt_qp_adopt(struct pt_ctx *c, int i, struct ibv_qp *qp)
{
	struct pt_qp *q = &c->res.qps[i];

	q->qp = qp;
	if (!c->p->traffic.use_old_post_send)
		q->qpx = ibv_qp_to_qp_ex(qp);
	q->psn = (uint32_t)lrand48() & 0xffffff;
	q->remote_qkey = PT_QKEY;
	pt_mem_layout(&c->res, c->p->mem.mr_per_qp, i, &q->send_buf, &q->recv_buf);
	q->mr = c->res.qp_mrs ? c->res.qp_mrs[i] : NULL;
}

int pt_qp_init_state(const struct pt_ctx *c, int i, struct ibv_qp_attr *init)
{
	const struct pt_params *p = c->p;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	memset(init, 0, sizeof(*init));
	init->qp_state = IBV_QPS_INIT;
	init->pkey_index = (uint16_t)p->addr.pkey_index;   /* checked: port_opts.c */
	init->port_num = (uint8_t)pt_qp_port(c, i);
	if (p->conn.type == PT_CONN_UD) {
		init->qkey = PT_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		init->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		if (p->conn.type == PT_CONN_RC)
			init->qp_access_flags |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return mask;
}

int pt_qp_create(struct pt_ctx *c, int i)
{
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp_attr init;
	int mask;
	struct ibv_qp *qp;

	pt_qp_init_attr(c, &a);
	qp = ibv_create_qp_ex(c->dev.verbs, &a);
	if (!qp) {
		fprintf(stderr, " Couldn't create QP %d: %s\n"
			" Requested QP size might be too big. Try reducing TX depth and/or inline size.\n",
			i, strerror(errno));
		return -1;
	}
	pt_qp_adopt(c, i, qp);
	mask = pt_qp_init_state(c, i, &init);
	if (ibv_modify_qp(qp, &init, mask)) {
		fprintf(stderr, " Failed to modify QP %d to INIT: %s\n", i, strerror(errno));
		return -1;
	}
	return 0;
}
