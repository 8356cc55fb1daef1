/* SPDX-License-Identifier: BSD-2-Clause */
/* The steered receive path (raw_steer.h). Receives are reposted after the
 * CQ was found empty, so a QP whose posted receives fell below the low
 * water mark by then is counted as starved: the NIC drops what finds no
 * receive WR, and the host cannot see those packets any other way. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "backend.h"
#include "frame.h"
#include "raw_steer.h"

#define RAW_PORT 1
#define RAW_BATCH 256            /* completions taken per poll */
#define RAW_IDLE_POLLS 1024      /* empty polls before the loop naps */
#define RAW_NAP_NS 100000        /* 100 us: far less than a ring of receives lasts */
#define RAW_MAX_FRAME (9216 + 18)/* jumbo MTU + Ethernet header + one VLAN tag */

struct raw_qp {
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	unsigned posted;             /* receive WRs the NIC holds */
};

struct raw_cqe {
	uint64_t wr_id, ts_ns;
	uint32_t len;
	enum ibv_wc_status status;
};

struct raw_dev {
	struct ibv_context *ctx;
	const char *name, *netdev;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct raw_qp *qps;
	unsigned nqp, slots;
	struct ibv_mr *hmr, *pmr;
	uint8_t *hbuf, *pbuf;
	size_t hslot, pslot, hbuf_len, pbuf_len;
	bool pbuf_huge;
	bool hw_ts;                  /* CQEs carry the NIC's completion time */
	uint64_t ts_mask, khz, tick0, wall0;
	char why_host[160];          /* why the host clock stamps instead */
	int igmp;
	unsigned empty;              /* empty polls in a row */
	bool oob_known;              /* the device's out_of_buffer counter can be read */
	uint64_t oob_base;           /* its value at open */
	struct raw_cqe batch[RAW_BATCH];
};

const char *cap_raw_sysfs = "/sys";

/* The device's count of packets dropped for want of a receive WR (mlx5:
 * hw_counters/out_of_buffer, for every QP of the port, ours or not). */
static bool read_out_of_buffer(const struct raw_dev *d, uint64_t *v)
{
	char path[512];
	unsigned long long x;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/%u/hw_counters/out_of_buffer", cap_raw_sysfs,
		 d->name, RAW_PORT);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	*v = x;
	return ok;
}

/* drops.no_wqe: what the devices dropped since open. */
static void update_no_wqe(const struct raw_dev *d, int n, struct cap_engine *e)
{
	uint64_t sum = 0, v;

	for (int i = 0; i < n; i++)
		if (d[i].oob_known && read_out_of_buffer(&d[i], &v) && v >= d[i].oob_base)
			sum += v - d[i].oob_base;
	e->drops.no_wqe = sum;
}

void cap_raw_group_mac(struct in_addr group, uint8_t mac[6])
{
	uint32_t a = ntohl(group.s_addr);

	mac[0] = 0x01;
	mac[1] = 0x00;
	mac[2] = 0x5e;
	mac[3] = (uint8_t)((a >> 16) & 0x7f);
	mac[4] = (uint8_t)(a >> 8);
	mac[5] = (uint8_t)a;
}

void cap_raw_flow_fill(struct cap_raw_flow *f, const struct cap_group *g, struct in_addr source,
		       uint8_t port)
{
	memset(f, 0, sizeof(*f));
	f->attr.type = IBV_FLOW_ATTR_NORMAL;
	f->attr.size = sizeof(*f);
	f->attr.num_of_specs = 3;
	f->attr.port = port;
	f->eth.type = IBV_FLOW_SPEC_ETH;
	f->eth.size = sizeof(f->eth);
	cap_raw_group_mac(g->addr, f->eth.val.dst_mac);
	memset(f->eth.mask.dst_mac, 0xff, 6);
	f->eth.val.ether_type = htons(0x0800);
	f->eth.mask.ether_type = 0xffff;
	f->ip.type = IBV_FLOW_SPEC_IPV4;
	f->ip.size = sizeof(f->ip);
	f->ip.val.dst_ip = g->addr.s_addr;
	f->ip.mask.dst_ip = 0xffffffff;
	f->ip.val.src_ip = source.s_addr;
	f->ip.mask.src_ip = source.s_addr ? 0xffffffff : 0;
	f->udp.type = IBV_FLOW_SPEC_UDP;
	f->udp.size = sizeof(f->udp);
	f->udp.val.dst_port = htons(g->port);
	f->udp.mask.dst_port = g->port ? 0xffff : 0;
}

void *cap_payload_alloc(size_t len, enum cap_mem mem, bool *huge)
{
	void *p = MAP_FAILED;

	if (mem != CAP_MEM_HOST)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	*huge = p != MAP_FAILED;
	if (p == MAP_FAILED && mem != CAP_MEM_HUGE)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "?";
}

/* NIC ticks -> ns since the epoch: the tick count read with the wall
 * clock at open anchors the line, hca_core_clock (kHz) is its slope. */
static uint64_t ticks_to_ns(const struct raw_dev *d, uint64_t ticks)
{
	unsigned __int128 dt = (ticks - d->tick0) & d->ts_mask;

	return d->wall0 + (uint64_t)(dt * 1000000u / d->khz);
}

/* Does the device stamp CQEs, and can its clock be read to anchor them? */
static void probe_clock(struct raw_dev *d)
{
	struct ibv_device_attr_ex da;
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	uint64_t w0, w1;
	int rc;

	memset(&da, 0, sizeof(da));
	if (ibv_query_device_ex(d->ctx, NULL, &da) || !da.completion_timestamp_mask || !da.hca_core_clock) {
		snprintf(d->why_host, sizeof(d->why_host), "%s does not stamp completions", d->name);
		return;
	}
	w0 = cap_wall_ns();
	rc = ibv_query_rt_values_ex(d->ctx, &v);
	w1 = cap_wall_ns();
	if (rc) {
		snprintf(d->why_host, sizeof(d->why_host), "%s stamps completions but its clock cannot be "
			 "read (ibv_query_rt_values_ex: %s)", d->name, errname(rc));
		return;
	}
	d->hw_ts = true;
	d->ts_mask = da.completion_timestamp_mask;
	d->khz = da.hca_core_clock;
	d->tick0 = (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
	d->wall0 = w0 + (w1 - w0) / 2;
}

static int post_recv(struct raw_dev *d, uint64_t wr_id)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)(d->hbuf + wr_id * d->hslot), .length = (uint32_t)d->hslot, .lkey = d->hmr->lkey },
		{ .addr = (uintptr_t)(d->pbuf + wr_id * d->pslot), .length = (uint32_t)d->pslot, .lkey = d->pmr->lkey },
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = 2 }, *bad;
	struct raw_qp *q = &d->qps[wr_id / d->slots];
	int rc = ibv_post_recv(q->qp, &wr, &bad);

	if (rc)
		errno = rc;
	else
		q->posted++;
	return rc;
}

static int refuse(const struct raw_dev *d, const struct cap_opts *o, int err, const char *what)
{
	fprintf(stderr, "rdmacap: %s: %s: %s: %s (%s)\n", cap_backend_name(o->backend), d->name, what,
		errname(err), strerror(err));
	return err == EPERM || err == EOPNOTSUPP || err == ENOTSUP || err == EINVAL || err == ENOSYS ? 3 : 1;
}

/* QP number q's rule: raw, (group, source) = (q / S, q % S) with S the
 * sources given (1 when any source); sniffer, everything. */
static int create_flow(struct raw_dev *d, const struct cap_opts *o, unsigned q)
{
	struct cap_raw_flow f;
	char what[200];

	if (o->backend == CAP_SNIFFER) {
		memset(&f, 0, sizeof(f));
		f.attr.type = IBV_FLOW_ATTR_SNIFFER;
		f.attr.size = sizeof(f.attr);
		f.attr.port = RAW_PORT;
		snprintf(what, sizeof(what), "cannot create the sniffer flow (all offloaded traffic)");
	} else {
		unsigned per = o->nsources ? (unsigned)o->nsources : 1;
		const struct cap_group *g = &o->groups[q / per];
		struct in_addr src = { o->nsources ? o->sources[q % per].s_addr : 0 };
		char ga[INET_ADDRSTRLEN], sa[INET_ADDRSTRLEN];

		cap_raw_flow_fill(&f, g, src, RAW_PORT);
		inet_ntop(AF_INET, &g->addr, ga, sizeof(ga));
		inet_ntop(AF_INET, &src, sa, sizeof(sa));
		snprintf(what, sizeof(what), "cannot steer group %s port %u source %s to its QP", ga, g->port,
			 src.s_addr ? sa : "any");
	}
	errno = 0;
	d->qps[q].flow = ibv_create_flow(d->qps[q].qp, &f.attr);
	if (!d->qps[q].flow)
		return refuse(d, o, errno ? errno : EOPNOTSUPP, what);
	return 0;
}

static int open_qp(struct raw_dev *d, const struct cap_opts *o, unsigned q)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = ibv_cq_ex_to_cq(d->cq), .recv_cq = ibv_cq_ex_to_cq(d->cq),
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 1, .max_recv_wr = d->slots, .max_send_sge = 1, .max_recv_sge = 2 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = RAW_PORT };
	int rc;

	errno = 0;
	d->qps[q].qp = ibv_create_qp(d->pd, &qa);
	if (!d->qps[q].qp)
		return refuse(d, o, errno ? errno : EOPNOTSUPP, "cannot create a RAW_PACKET QP");
	rc = ibv_modify_qp(d->qps[q].qp, &a, IBV_QP_STATE | IBV_QP_PORT);
	if (!rc) {
		a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
		rc = ibv_modify_qp(d->qps[q].qp, &a, IBV_QP_STATE);
	}
	if (rc)
		return refuse(d, o, rc, "cannot bring the RAW_PACKET QP to RTR");
	for (unsigned s = 0; s < d->slots; s++)
		if (post_recv(d, (uint64_t)q * d->slots + s))
			return refuse(d, o, errno, "cannot post the receives");
	return create_flow(d, o, q);
}

static int raw_open(struct raw_dev *d, struct ibv_context *ctx, const char *netdev, const struct cap_opts *o)
{
	int mtu = cap_netdev_mtu(netdev);
	size_t frame = (mtu > 0 ? (size_t)mtu : 1500) + 18;
	struct ibv_cq_init_attr_ex ca = { .wc_flags = IBV_WC_EX_WITH_BYTE_LEN };

	d->ctx = ctx;
	d->name = ibv_get_device_name(ctx->device);
	d->netdev = netdev;
	d->igmp = -1;
	d->slots = o->slots;
	d->nqp = o->backend == CAP_SNIFFER ? 1 : (unsigned)o->ngroups * (o->nsources ? (unsigned)o->nsources : 1);
	if (frame > RAW_MAX_FRAME)
		frame = RAW_MAX_FRAME;
	d->hslot = CAP_ETH_LEN + CAP_IP_LEN + CAP_UDP_LEN + o->app_header;
	if (d->hslot >= frame) {
		fprintf(stderr, "rdmacap: %s: %s: header length %u larger than the frames of %s (%zu B)\n",
			cap_backend_name(o->backend), d->name, o->app_header, netdev, frame);
		return 2;
	}
	d->pslot = frame - d->hslot;
	d->hbuf_len = (size_t)d->nqp * d->slots * d->hslot;
	d->pbuf_len = ((size_t)d->nqp * d->slots * d->pslot + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);
	d->qps = calloc(d->nqp, sizeof(*d->qps));
	d->hbuf = calloc(1, d->hbuf_len);
	d->pbuf = cap_payload_alloc(d->pbuf_len, o->payload_mem, &d->pbuf_huge);
	if (!d->pbuf && o->payload_mem == CAP_MEM_HUGE) {
		fprintf(stderr, "rdmacap: %s: %s: --payload-mem huge: no %zu MiB of huge pages (%s); reserve "
			"them first (echo N > /proc/sys/vm/nr_hugepages) or use --payload-mem auto\n",
			cap_backend_name(o->backend), d->name, d->pbuf_len >> 20, strerror(errno));
		return 1;
	}
	if (!d->qps || !d->hbuf || !d->pbuf) {
		fprintf(stderr, "rdmacap: out of memory for %u x %u receive buffers\n", d->nqp, d->slots);
		return 1;
	}
	probe_clock(d);
	d->oob_known = read_out_of_buffer(d, &d->oob_base);
	d->pd = ibv_alloc_pd(ctx);
	if (!d->pd)
		return refuse(d, o, errno ? errno : ENOMEM, "cannot allocate a protection domain");
	d->hmr = ibv_reg_mr(d->pd, d->hbuf, d->hbuf_len, IBV_ACCESS_LOCAL_WRITE);
	d->pmr = d->hmr ? ibv_reg_mr(d->pd, d->pbuf, d->pbuf_len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!d->pmr)
		return refuse(d, o, errno ? errno : ENOMEM, "cannot register the receive buffers");
	ca.cqe = d->nqp * d->slots;
	if (d->hw_ts) {
		ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		d->cq = ibv_create_cq_ex(ctx, &ca);
		if (!d->cq) {
			snprintf(d->why_host, sizeof(d->why_host), "%s refused a CQ with timestamps (%s)", d->name,
				 errname(errno));
			d->hw_ts = false;
			ca.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		}
	}
	if (!d->cq)
		d->cq = ibv_create_cq_ex(ctx, &ca);
	if (!d->cq)
		return refuse(d, o, errno ? errno : ENOMEM, "cannot create the extended CQ");
	for (unsigned q = 0; q < d->nqp; q++) {
		int rc = open_qp(d, o, q);

		if (rc)
			return rc;
	}
	return 0;
}

static void raw_close(struct raw_dev *d)
{
	if (d->igmp >= 0)
		close(d->igmp);
	for (unsigned q = 0; d->qps && q < d->nqp; q++) {
		if (d->qps[q].flow)
			ibv_destroy_flow(d->qps[q].flow);
		if (d->qps[q].qp)
			ibv_destroy_qp(d->qps[q].qp);
	}
	if (d->cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(d->cq));
	if (d->hmr)
		ibv_dereg_mr(d->hmr);
	if (d->pmr)
		ibv_dereg_mr(d->pmr);
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->pbuf)
		munmap(d->pbuf, d->pbuf_len);
	free(d->hbuf);
	free(d->qps);
}

/* The completions the CQ holds (up to RAW_BATCH), taken under one
 * start/end_poll: n, or -1 when polling failed. *drained: the CQ was
 * found empty after them. */
static int take_batch(struct raw_dev *d, bool *drained)
{
	struct ibv_poll_cq_attr pa = { .comp_mask = 0 };
	int rc = ibv_start_poll(d->cq, &pa), n = 0;

	*drained = rc == ENOENT;
	if (rc == ENOENT)
		return 0;
	if (rc) {
		fprintf(stderr, "rdmacap: %s: polling the CQ failed: %s\n", d->name, errname(rc));
		return -1;
	}
	for (;;) {
		struct raw_cqe *c = &d->batch[n++];

		c->wr_id = d->cq->wr_id;
		c->status = d->cq->status;
		c->len = c->status == IBV_WC_SUCCESS ? ibv_wc_read_byte_len(d->cq) : 0;
		c->ts_ns = d->hw_ts && c->status == IBV_WC_SUCCESS ?
			ticks_to_ns(d, ibv_wc_read_completion_ts(d->cq)) : 0;
		if (n == RAW_BATCH)
			break;
		rc = ibv_next_poll(d->cq);
		if (rc == ENOENT) {
			*drained = true;
			break;
		}
		if (rc) {
			ibv_end_poll(d->cq);
			fprintf(stderr, "rdmacap: %s: polling the CQ failed: %s\n", d->name, errname(rc));
			return -1;
		}
	}
	ibv_end_poll(d->cq);
	return n;
}

/* One poll: the packets to the engine, then the receives back. Returns
 * the completions taken, or -1 (a failed receive, a write error). */
static int raw_poll(struct raw_dev *d, struct cap_engine *e)
{
	bool drained;
	int n = take_batch(d, &drained), err = 0;
	uint64_t host_ns = cap_wall_ns();
	unsigned low = d->slots / 8 ? d->slots / 8 : 1;

	e->polls++;
	if (n <= 0) {
		d->empty += n == 0;
		return n;
	}
	d->empty = 0;
	for (int i = 0; i < n; i++) {
		struct raw_cqe *c = &d->batch[i];

		d->qps[c->wr_id / d->slots].posted--;
		if (err)
			continue;
		if (c->status != IBV_WC_SUCCESS) {
			fprintf(stderr, "rdmacap: %s: receive completion with status %d (%s)\n", d->name,
				c->status, ibv_wc_status_str(c->status));
			err = -1;
			continue;
		}
		size_t hlen = c->len < d->hslot ? c->len : d->hslot;
		struct cap_pkt p = {
			.hdr = d->hbuf + c->wr_id * d->hslot, .hdr_len = hlen,
			.pay = d->pbuf + c->wr_id * d->pslot, .pay_len = c->len - hlen,
			.wire_len = c->len, .ts_ns = d->hw_ts ? c->ts_ns : host_ns,
		};

		if (cap_engine_packet(e, &p))
			err = -1;
	}
	/* the CQ is empty now: a QP this low could not take a burst */
	if (drained)
		for (unsigned q = 0; q < d->nqp; q++)
			if (d->qps[q].posted < low)
				e->drops.starved++;
	for (int i = 0; i < n && !err; i++)
		if (post_recv(d, d->batch[i].wr_id)) {
			fprintf(stderr, "rdmacap: %s: cannot repost a receive: %s\n", d->name, strerror(errno));
			err = -1;
		}
	return err ? -1 : n;
}

static void banner(const struct raw_dev *d, int n, const struct cap_opts *o)
{
	printf("rdmacap: %s: %d device(s), %u steered QP(s) each of %u receives of %zu + %zu B (payload in %s)",
	       cap_backend_name(o->backend), n, d[0].nqp, d[0].slots, d[0].hslot, d[0].pslot,
	       d[0].pbuf_huge ? "hugepages" : "host memory");
	if (d[0].hw_ts)
		printf("; timestamps: device CQE clock, %llu kHz, in ns", (unsigned long long)d[0].khz);
	else
		printf("; timestamps: host clock (%s)", d[0].why_host);
	printf("; device drops: %s\n", d[0].oob_known ? "out_of_buffer counter" :
	       "no out_of_buffer counter here, receive-queue starvation only");
	fflush(stdout);
}

int cap_raw_capture(struct ibv_context **ctx, const char *const *netdevs, int n,
		    const struct cap_opts *o, volatile sig_atomic_t *stop)
{
	struct cap_opts *run = malloc(sizeof(*run));
	struct raw_dev *d = calloc((size_t)n, sizeof(*d));
	struct cap_engine e;
	bool hw = true;
	int opened = 0, rc = 1, err = 0;

	if (!run || !d) {
		fprintf(stderr, "rdmacap: out of memory\n");
		goto out;
	}
	*run = *o;
	/* sniffer: every frame is RoCE, accounted by PSN as packet --roce does */
	run->roce = o->backend == CAP_SNIFFER;
	for (; opened < n; opened++) {
		rc = raw_open(&d[opened], ctx[opened], netdevs[opened], run);
		if (rc) {
			opened++;
			goto out;
		}
		hw &= d[opened].hw_ts;
	}
	rc = 1;
	/* one clock for every file: the host's unless every device stamps */
	for (int i = 0; i < n && !hw; i++)
		if (d[i].hw_ts) {
			d[i].hw_ts = false;
			snprintf(d[i].why_host, sizeof(d[i].why_host), "not every device stamps completions");
		}
	if (run->backend == CAP_RAW && run->ngroups)
		for (int i = 0; i < n; i++)
			if ((d[i].igmp = cap_igmp_join(run, netdevs[i])) < 0)
				goto out;
	if (cap_engine_init(&e, run, hw ? "hardware" : "host", stop)) {
		fprintf(stderr, "rdmacap: out of memory\n");
		goto out;
	}
	for (int i = 0; i < n; i++)
		cap_engine_watch(&e, netdevs[i]);
	banner(d, n, run);
	uint64_t next_count_ns = cap_now_ns() + 1000000000ull;

	while (!cap_engine_done(&e) && !err) {
		bool idle = true;

		for (int i = 0; i < n && !err; i++) {
			err = raw_poll(&d[i], &e) < 0 ? -1 : 0;
			idle &= d[i].empty > RAW_IDLE_POLLS;
		}
		if (idle && !err) {
			struct timespec nap = { 0, RAW_NAP_NS };

			nanosleep(&nap, NULL);
		}
		if (cap_now_ns() >= next_count_ns) {
			update_no_wqe(d, n, &e);  /* once a second, for the live line */
			next_count_ns += 1000000000ull;
		}
		cap_engine_tick(&e);
	}
	/* what the CQs still hold is written too (SIGINT flushes everything) */
	for (int i = 0; i < n && !err && !e.error; i++) {
		/* bounded: at most what the CQ can hold, even if the stream goes on */
		unsigned rounds = d[i].nqp * d[i].slots / RAW_BATCH + 1;
		int got;

		while ((got = raw_poll(&d[i], &e)) > 0 && --rounds)
			;
		err = got < 0 ? -1 : 0;
	}
	update_no_wqe(d, n, &e);
	rc = cap_engine_finish(&e);
	if (err && !rc)
		rc = 1;
out:
	for (int i = 0; d && i < opened; i++)
		raw_close(&d[i]);
	free(d);
	free(run);
	return rc;
}
