/* SPDX-License-Identifier: BSD-2-Clause */
/* A fake mlx5-like device for the steered receive path (capture/raw_steer.c,
 * tests/unit/test_capture_raw.c): a struct verbs_context whose inline-verb
 * ops (query_device_ex, query_rt_values, create_cq_ex, ibv_create_flow,
 * ibv_destroy_flow, ops.post_recv) are these functions, the exported verbs
 * the path calls replaced at link time (-Wl,--wrap=...), and an extended CQ
 * whose start/next/end_poll deliver the frames of a script. Delivery does
 * what the NIC does: each frame goes to the QP whose flow matches it (or
 * the sniffer QP), into that QP's oldest posted receive, scattered over its
 * two SGEs; a frame no flow matches, or that finds no receive, is dropped
 * and counted here (the host cannot see it). Include after <cmocka.h>. */
#ifndef PT_FAKE_RAW_VERBS_H
#define PT_FAKE_RAW_VERBS_H
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include "capture/raw_steer.h"

#define FR_QPS 16
#define FR_RECVS 256       /* posted receives a fake QP holds at most */
#define FR_FRAMES 512      /* frames a script holds */
#define FR_CQES 1024
#define FR_TICK_STEP 1000  /* NIC ticks between two frames */
#define FR_KHZ 1000000u    /* 1 GHz: one tick is one ns */

struct fr_recv {
	uint64_t wr_id;
	struct ibv_sge sge[2];
};

struct fr_qp {
	struct ibv_qp qp;
	struct fr_recv rq[FR_RECVS];
	unsigned head, tail;       /* posted receives: tail - head */
	enum ibv_qp_state state;
	uint8_t port;
	struct cap_raw_flow flow;  /* as requested (the sniffer's: attr only) */
	bool has_flow, destroyed;
};

struct fr_cqe {
	uint64_t wr_id, ticks;
	uint32_t len;
};

struct fr_frame {
	uint8_t buf[2048];
	size_t len;
	uint64_t ticks;            /* set when delivered */
	int qp;                    /* the QP it went to; -1 missed, -2 no receive */
};

struct fake_raw {
	struct verbs_context vctx; /* ctx = &vctx.context, as providers lay it out */
	struct ibv_device dev;
	struct ibv_pd pd;
	struct ibv_mr mr[2];
	int nmr;
	struct ibv_cq_ex cq;
	uint64_t cq_flags;         /* wc_flags the CQ was created with */
	int ncq;
	struct fr_qp qp[FR_QPS];
	int nqp;
	struct ibv_flow flow[FR_QPS];
	int nflow;
	struct fr_cqe cqe[FR_CQES];
	unsigned ch, ct;           /* CQ head / tail */
	bool polling;
	/* the script */
	struct fr_frame frames[FR_FRAMES];
	unsigned nframes, next, burst;
	uint64_t ticks;
	/* behaviour */
	bool stamps;               /* reports a timestamp mask and clock */
	int rt_err;                /* query_rt_values fails with it */
	int cq_ts_err;             /* a CQ with timestamps refused with it */
	int flow_err, qp_err;      /* create_flow / create_qp fail with it */
	unsigned stop_after;       /* frames delivered before "SIGINT"; 0: when the script ends */
	volatile sig_atomic_t *stop;
	unsigned idle;             /* empty polls after the script ended */
	/* what happened */
	unsigned missed, no_recv, completed;
	int destroyed_cq, destroyed_flows, pd_freed, mr_freed;
	char igmp_netdev[64];
	int igmp_joins;
	char oob_path[256];        /* its hw_counters/out_of_buffer file, or "" */
};

static struct fake_raw *FR;

static struct fr_qp *fr_qp_of(struct ibv_qp *qp)
{
	return (struct fr_qp *)qp;  /* qp is the first member */
}

static bool masked_eq(const uint8_t *a, const uint8_t *b, const uint8_t *mask, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((a[i] & mask[i]) != (b[i] & mask[i]))
			return false;
	return true;
}

/* The QP the NIC would steer this frame to, or -1. */
static int fr_steer(const uint8_t *f)
{
	for (int q = 0; q < FR_QPS; q++) {
		const struct fr_qp *p = &FR->qp[q];
		const struct cap_raw_flow *r = &p->flow;

		if (!p->has_flow || p->destroyed)
			continue;
		if (r->attr.type == IBV_FLOW_ATTR_SNIFFER)
			return q;
		if (!masked_eq(f, r->eth.val.dst_mac, r->eth.mask.dst_mac, 6) ||
		    !masked_eq(f + 12, (const uint8_t *)&r->eth.val.ether_type,
			       (const uint8_t *)&r->eth.mask.ether_type, 2) ||
		    !masked_eq(f + 26, (const uint8_t *)&r->ip.val.src_ip, (const uint8_t *)&r->ip.mask.src_ip, 4) ||
		    !masked_eq(f + 30, (const uint8_t *)&r->ip.val.dst_ip, (const uint8_t *)&r->ip.mask.dst_ip, 4) ||
		    !masked_eq(f + 36, (const uint8_t *)&r->udp.val.dst_port,
			       (const uint8_t *)&r->udp.mask.dst_port, 2))
			continue;
		return q;
	}
	return -1;
}

/* The device's out_of_buffer counter: 100 before the capture, then one
 * more per frame that found no receive. */
static void fr_write_oob(void)
{
	FILE *f;

	if (!FR->oob_path[0])
		return;
	f = fopen(FR->oob_path, "w");
	assert_non_null(f);
	fprintf(f, "%u\n", 100 + FR->no_recv);
	fclose(f);
}

/* The NIC's receive of one script frame. */
static void fr_deliver(struct fr_frame *fr)
{
	int q = fr_steer(fr->buf);

	FR->ticks += FR_TICK_STEP;
	fr->ticks = FR->ticks;
	fr->qp = q;
	if (q < 0) {
		FR->missed++;
		return;
	}
	struct fr_qp *p = &FR->qp[q];

	assert_int_equal(p->state, IBV_QPS_RTR);  /* receiving needs RTR */
	if (p->head == p->tail) {
		FR->no_recv++;
		fr->qp = -2;
		fr_write_oob();
		return;
	}
	struct fr_recv *r = &p->rq[p->head++ % FR_RECVS];
	size_t first = fr->len < r->sge[0].length ? fr->len : r->sge[0].length;

	assert_true(fr->len <= (size_t)r->sge[0].length + r->sge[1].length);
	memcpy((void *)(uintptr_t)r->sge[0].addr, fr->buf, first);
	memcpy((void *)(uintptr_t)r->sge[1].addr, fr->buf + first, fr->len - first);
	assert_true(FR->ct - FR->ch < FR_CQES);
	FR->cqe[FR->ct++ % FR_CQES] = (struct fr_cqe){ .wr_id = r->wr_id, .ticks = fr->ticks,
						       .len = (uint32_t)fr->len };
	FR->completed++;
}

static void fr_current(struct ibv_cq_ex *cq)
{
	cq->wr_id = FR->cqe[FR->ch % FR_CQES].wr_id;
	cq->status = IBV_WC_SUCCESS;
}

static int fr_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
	assert_false(FR->polling);
	assert_int_equal(attr->comp_mask, 0);
	if (FR->ch == FR->ct) {
		/* the wire: the next burst arrives while the CQ is empty */
		for (unsigned i = 0; i < FR->burst && FR->next < FR->nframes; i++) {
			if (FR->stop_after && FR->next == FR->stop_after)
				break;
			fr_deliver(&FR->frames[FR->next++]);
		}
		if (FR->stop_after && FR->next == FR->stop_after)
			*FR->stop = 1;        /* SIGINT with completions still in the CQ */
	}
	if (FR->ch == FR->ct) {
		if (FR->next >= FR->nframes && ++FR->idle >= 3)
			*FR->stop = 1;    /* the stream is over: the user stops */
		return ENOENT;
	}
	FR->polling = true;
	fr_current(cq);
	return 0;
}

static int fr_next_poll(struct ibv_cq_ex *cq)
{
	assert_true(FR->polling);
	FR->ch++;
	if (FR->ch == FR->ct)
		return ENOENT;
	fr_current(cq);
	return 0;
}

static void fr_end_poll(struct ibv_cq_ex *cq)
{
	(void)cq;
	assert_true(FR->polling);
	if (FR->ch != FR->ct)
		FR->ch++;  /* the current entry is consumed */
	FR->polling = false;
}

static uint32_t fr_read_byte_len(struct ibv_cq_ex *cq)
{
	(void)cq;
	assert_true(FR->polling);
	return FR->cqe[FR->ch % FR_CQES].len;
}

static uint64_t fr_read_ts(struct ibv_cq_ex *cq)
{
	(void)cq;
	assert_true(FR->polling);
	return FR->cqe[FR->ch % FR_CQES].ticks;
}

static struct ibv_cq_ex *fr_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	bool ts = a->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;

	assert_ptr_equal(ctx, &FR->vctx.context);
	assert_true(a->wc_flags & IBV_WC_EX_WITH_BYTE_LEN);
	if (ts && (FR->cq_ts_err || !FR->stamps)) {
		errno = FR->cq_ts_err ? FR->cq_ts_err : EOPNOTSUPP;
		return NULL;
	}
	assert_int_equal(FR->ncq, 0);  /* one CQ per device */
	FR->ncq++;
	FR->cq_flags = a->wc_flags;
	memset(&FR->cq, 0, sizeof(FR->cq));
	FR->cq.context = ctx;
	FR->cq.cqe = (int)a->cqe;
	FR->cq.start_poll = fr_start_poll;
	FR->cq.next_poll = fr_next_poll;
	FR->cq.end_poll = fr_end_poll;
	FR->cq.read_byte_len = fr_read_byte_len;
	/* installed only when asked, as providers do: a read without it crashes */
	FR->cq.read_completion_ts = ts ? fr_read_ts : NULL;
	return &FR->cq;
}

static int fr_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fr_qp *p = fr_qp_of(qp);

	for (; wr; wr = wr->next) {
		assert_int_equal(wr->num_sge, 2);  /* split receive: headers, payload */
		assert_int_equal(wr->sg_list[0].lkey, FR->mr[0].lkey);
		assert_int_equal(wr->sg_list[1].lkey, FR->mr[1].lkey);
		if (p->tail - p->head >= FR_RECVS) {
			*bad = wr;
			return ENOMEM;
		}
		struct fr_recv *r = &p->rq[p->tail++ % FR_RECVS];

		r->wr_id = wr->wr_id;
		memcpy(r->sge, wr->sg_list, sizeof(r->sge));
	}
	return 0;
}

static struct ibv_flow *fr_create_flow(struct ibv_qp *qp, struct ibv_flow_attr *attr)
{
	struct fr_qp *p = fr_qp_of(qp);

	if (FR->flow_err) {
		errno = FR->flow_err;
		return NULL;
	}
	assert_false(p->has_flow);
	assert_true(attr->size <= sizeof(p->flow));
	memcpy(&p->flow, attr, attr->size);
	p->has_flow = true;
	FR->flow[FR->nflow].context = qp->context;
	FR->flow[FR->nflow].handle = (uint32_t)(p - FR->qp);
	return &FR->flow[FR->nflow++];
}

static int fr_destroy_flow(struct ibv_flow *f)
{
	FR->destroyed_flows++;
	FR->qp[f->handle].has_flow = false;
	return 0;
}

static int fr_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t size)
{
	(void)ctx;
	(void)in;
	memset(attr, 0, size);
	if (FR->stamps) {
		attr->completion_timestamp_mask = 0x7fffffffffffffffull;
		attr->hca_core_clock = FR_KHZ;
	}
	return 0;
}

static int fr_query_rt_values(struct ibv_context *ctx, struct ibv_values_ex *v)
{
	(void)ctx;
	if (FR->rt_err)
		return FR->rt_err;
	assert_true(v->comp_mask & IBV_VALUES_MASK_RAW_CLOCK);
	v->raw_clock.tv_sec = 0;
	v->raw_clock.tv_nsec = (long)FR->ticks;
	return 0;
}

/* A fresh device named mlx5_fake; frames and behaviour set by the test.
 * With sysfs (a directory), its out_of_buffer counter is kept there. */
static struct ibv_context *fake_raw_new(struct fake_raw *f, volatile sig_atomic_t *stop, const char *sysfs)
{
	memset(f, 0, sizeof(*f));
	FR = f;
	f->stop = stop;
	*stop = 0;
	f->burst = 4;
	f->ticks = 5000000;
	snprintf(f->dev.name, sizeof(f->dev.name), "mlx5_fake");
	f->vctx.sz = sizeof(f->vctx);
	f->vctx.context.abi_compat = __VERBS_ABI_IS_EXTENDED;
	f->vctx.context.device = &f->dev;
	f->vctx.context.ops.post_recv = fr_post_recv;
	f->vctx.query_device_ex = fr_query_device_ex;
	f->vctx.query_rt_values = fr_query_rt_values;
	f->vctx.create_cq_ex = fr_create_cq_ex;
	f->vctx.ibv_create_flow = fr_create_flow;
	f->vctx.ibv_destroy_flow = fr_destroy_flow;
	if (sysfs) {
		char cmd[512];

		snprintf(f->oob_path, sizeof(f->oob_path), "%s/class/infiniband/mlx5_fake/ports/1/hw_counters",
			 sysfs);
		snprintf(cmd, sizeof(cmd), "mkdir -p %s", f->oob_path);
		assert_int_equal(system(cmd), 0);
		strcat(f->oob_path, "/out_of_buffer");
		fr_write_oob();
	}
	return &f->vctx.context;
}

/* The exported verbs, replaced at link time. */
struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx);
struct ibv_pd *__wrap_ibv_alloc_pd(struct ibv_context *ctx)
{
	FR->pd.context = ctx;
	return &FR->pd;
}

int __wrap_ibv_dealloc_pd(struct ibv_pd *pd);
int __wrap_ibv_dealloc_pd(struct ibv_pd *pd)
{
	assert_ptr_equal(pd, &FR->pd);
	FR->pd_freed++;
	return 0;
}

struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access);
struct ibv_mr *__wrap_ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = &FR->mr[FR->nmr];

	assert_true(FR->nmr < 2);  /* headers, payloads */
	assert_true(access & IBV_ACCESS_LOCAL_WRITE);
	*mr = (struct ibv_mr){ .context = pd->context, .pd = pd, .addr = addr, .length = len,
			       .lkey = 0x100u + (uint32_t)FR->nmr };
	FR->nmr++;
	return mr;
}

int __wrap_ibv_dereg_mr(struct ibv_mr *mr);
int __wrap_ibv_dereg_mr(struct ibv_mr *mr)
{
	(void)mr;
	FR->mr_freed++;
	return 0;
}

struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a);
struct ibv_qp *__wrap_ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct fr_qp *p;

	if (FR->qp_err) {
		errno = FR->qp_err;
		return NULL;
	}
	assert_true(FR->nqp < FR_QPS);
	assert_int_equal(a->qp_type, IBV_QPT_RAW_PACKET);
	assert_ptr_equal(a->recv_cq, ibv_cq_ex_to_cq(&FR->cq));  /* the shared CQ */
	assert_true(a->cap.max_recv_sge >= 2);
	assert_true(a->cap.max_recv_wr <= FR_RECVS);
	p = &FR->qp[FR->nqp];
	p->qp.context = pd->context;
	p->qp.pd = pd;
	p->qp.qp_num = 0x100u + (uint32_t)FR->nqp;
	p->qp.qp_type = IBV_QPT_RAW_PACKET;
	p->state = IBV_QPS_RESET;
	FR->nqp++;
	return &p->qp;
}

int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask);
int __wrap_ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct fr_qp *p = fr_qp_of(qp);

	assert_true(mask & IBV_QP_STATE);
	if (a->qp_state == IBV_QPS_INIT) {
		assert_true(mask & IBV_QP_PORT);
		p->port = a->port_num;
	} else {
		assert_int_equal(a->qp_state, IBV_QPS_RTR);
		assert_int_equal(p->state, IBV_QPS_INIT);
	}
	p->state = a->qp_state;
	return 0;
}

int __wrap_ibv_destroy_qp(struct ibv_qp *qp);
int __wrap_ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fr_qp *p = fr_qp_of(qp);

	assert_false(p->has_flow);  /* flows go first */
	p->destroyed = true;
	return 0;
}

int __wrap_ibv_destroy_cq(struct ibv_cq *cq);
int __wrap_ibv_destroy_cq(struct ibv_cq *cq)
{
	assert_ptr_equal(cq, ibv_cq_ex_to_cq(&FR->cq));
	FR->destroyed_cq++;
	return 0;
}

/* The IGMP joins (backend_packet.c in rdmacap): recorded, a harmless fd. */
int cap_igmp_join(const struct cap_opts *o, const char *netdev)
{
	snprintf(FR->igmp_netdev, sizeof(FR->igmp_netdev), "%s", netdev);
	FR->igmp_joins += o->ngroups;
	return open("/dev/null", O_RDONLY | O_CLOEXEC);
}

#endif
