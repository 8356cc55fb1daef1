/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/hook-overhead's latency rows: run_lat.c's own loops (pt_run_lat_send,
 * pt_run_lat_write, pt_run_lat_read; atomic_lat is read's loop with an
 * atomic verb) over fake verbs, the client side, counted by callgrind at two
 * run lengths, hooks off and with the built-in recorder: what --trace adds
 * per WR in the latency tools' loops (issue 21, "<= 20 per WR").
 *
 * The fake device answers at once (or, spinning, after the empty polls that
 * HOOK_OVERHEAD_EMPTY_POLLS asks for), as the peer would: a signaled send WR
 * completes on the send CQ; send_lat's ping also brings the pong into the
 * oldest posted receive; write_lat's write brings the peer's count back into
 * the last byte of our region. It takes both post APIs (ibv_post_send and
 * the ibv_wr_* builders) and, for -e, has a completion channel: a CQE that
 * comes while its CQ is armed raises an event (a pipe) and shows in the CQ
 * once the loop has taken the event, as a CQE later than its post does on
 * a link; ibv_get_cq_event and ibv_ack_cq_events are fake_channel.c's (the
 * real ones reach into a provider's private ops). Run info, depths and signal
 * period are the
 * latency tools' (perftest/cli/tools.c, options_check.c: tx_depth 1, cq_mod
 * 1, rx_depth 512 for SEND, 1 otherwise), and the receives are posted after
 * run start, as perftest/tools/lat.c does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/clock.h"
#include "util/tsc.h"
#include "plugin/hooks/hooks.h"
#include "plugin/recorder/wrtrace.h"
#include "perftest/engine/engine.h"
#include "hook_overhead.h"

#define RING 1024u                  /* > rx_depth: every queue of the fake fits */
#define LAT_SIZE 64u

enum lat_kind { LAT_SEND, LAT_WRITE, LAT_READ, LAT_ATOMIC, LAT_KINDS };

static const struct {
	const char *name;           /* --lat-loop KIND */
	const char *fn;             /* the loop callgrind counts */
	enum ibv_wr_opcode op;
	enum ibv_wc_opcode wc_op;
	unsigned wrs;               /* WRs per iteration on the client: send_lat's pong too */
} kinds[LAT_KINDS] = {
	[LAT_SEND] = { "send", "pt_run_lat_send", IBV_WR_SEND, IBV_WC_SEND, 2 },
	[LAT_WRITE] = { "write", "pt_run_lat_write", IBV_WR_RDMA_WRITE, IBV_WC_RDMA_WRITE, 1 },
	[LAT_READ] = { "read", "pt_run_lat_read", IBV_WR_RDMA_READ, IBV_WC_RDMA_READ, 1 },
	[LAT_ATOMIC] = { "atomic", "pt_run_lat_read", IBV_WR_ATOMIC_FETCH_AND_ADD,
			 IBV_WC_FETCH_ADD, 1 },
};

/* A queue of wr_ids; a CQ's shows those below `shown` (-e: not yet those
 * whose event the loop has not taken). */
struct ring {
	uint64_t id[RING];
	uint64_t head, tail, shown;
};

struct lat_nic {
	struct ibv_context ctx;     /* first: the verbs objects point here */
	struct ibv_cq send_cq, recv_cq;
	struct ibv_qp qp;
	struct ibv_qp_ex qx;        /* the new post API's builders */
	struct ibv_mr mr;
	struct ibv_comp_channel channel;   /* -e: fd is a pipe's read end */
	int event_fd;               /* the pipe's write end */
	bool armed[2];              /* send [0] / recv [1] CQ */
	unsigned empty_polls;       /* spinning: polls that find nothing before each CQE shows */
	unsigned turns[2];          /* of them, made so far for the CQE at the head (send, recv) */
	uint64_t events, acked;     /* taken and acked by the loop */
	enum lat_kind kind;
	enum ibv_wr_opcode wr_op;   /* the builders' WR */
	struct ring sent, rq, received;   /* send CQEs, posted receives, receive CQEs */
	struct pt_qp q;
	struct pt_res res;
	struct pt_run run;
	uint8_t buf[2 * 4096];
};

static void push(struct ring *r, uint64_t id)
{
	r->id[r->tail++ % RING] = id;
	r->shown = r->tail;
}

static bool pop(struct ring *r, uint64_t *id)
{
	if (r->head == r->shown)
		return false;
	*id = r->id[r->head++ % RING];
	return true;
}

/* A CQE on the send [0] or recv [1] CQ: armed, it raises an event and
 * waits for it to be taken. */
static void nic_complete(struct lat_nic *n, bool recv, uint64_t id)
{
	struct ring *r = recv ? &n->received : &n->sent;
	struct ibv_cq *cq = recv ? &n->recv_cq : &n->send_cq;
	uint64_t shown = r->shown;

	push(r, id);
	if (!n->armed[recv])
		return;
	n->armed[recv] = false;
	r->shown = shown;
	if (write(n->event_fd, &cq, sizeof(cq)) != (ssize_t)sizeof(cq)) {
		perror("hook-overhead: the fake channel");
		exit(1);
	}
}

/* One send WR as the NIC takes it, and the peer's answer. */
static int nic_take(struct lat_nic *n, uint64_t wr_id, unsigned flags)
{
	uint64_t id;

	if (flags & IBV_SEND_SIGNALED)
		nic_complete(n, false, wr_id);
	if (n->kind == LAT_SEND) {
		if (!pop(&n->rq, &id))
			return ENOMEM;   /* no receive for the pong: the loop is wrong */
		nic_complete(n, true, id);
	} else if (n->kind == LAT_WRITE) {
		n->q.recv_buf[LAT_SIZE - 1] = (uint8_t)(n->q.send_buf[LAT_SIZE - 1] + 1);
	}
	return 0;
}

static int nic_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct lat_nic *n = (struct lat_nic *)qp->context;

	for (; wr; wr = wr->next)
		if (wr->opcode != kinds[n->kind].op || nic_take(n, wr->wr_id, wr->send_flags)) {
			*bad = wr;
			return EINVAL;
		}
	return 0;
}

/* The builders: one WR per wr_start .. wr_complete, as the loops post. */
static struct lat_nic *nic_of_qx(struct ibv_qp_ex *qx)
{
	return (struct lat_nic *)qx->qp_base.context;
}

static void x_start(struct ibv_qp_ex *qx) { nic_of_qx(qx)->wr_op = (enum ibv_wr_opcode)-1; }
static void x_send(struct ibv_qp_ex *qx) { nic_of_qx(qx)->wr_op = IBV_WR_SEND; }
static void x_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	(void)rkey;
	(void)raddr;
	nic_of_qx(qx)->wr_op = IBV_WR_RDMA_WRITE;
}
static void x_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	(void)rkey;
	(void)raddr;
	nic_of_qx(qx)->wr_op = IBV_WR_RDMA_READ;
}
static void x_fadd(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
	(void)rkey;
	(void)raddr;
	(void)add;
	nic_of_qx(qx)->wr_op = IBV_WR_ATOMIC_FETCH_AND_ADD;
}
static void x_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	(void)qx;
	(void)lkey;
	(void)addr;
	(void)len;
}
static void x_inline(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	(void)qx;
	(void)addr;
	(void)len;
}
static int x_complete(struct ibv_qp_ex *qx)
{
	struct lat_nic *n = nic_of_qx(qx);

	if (n->wr_op != kinds[n->kind].op)
		return EINVAL;
	return nic_take(n, qx->wr_id, qx->wr_flags);
}

static int nic_req_notify(struct ibv_cq *cq, int solicited_only)
{
	struct lat_nic *n = (struct lat_nic *)cq->context;

	(void)solicited_only;
	n->armed[cq == &n->recv_cq] = true;
	return 0;
}

/* -e: an event taken (fake_channel.c) shows its CQ's CQEs. */
static void nic_event_taken(struct ibv_cq *cq)
{
	struct lat_nic *n = (struct lat_nic *)cq->context;

	if (cq == &n->recv_cq)
		n->received.shown = n->received.tail;
	else
		n->sent.shown = n->sent.tail;
	n->events++;
}

static void nic_events_acked(struct ibv_cq *cq, unsigned int nevents)
{
	((struct lat_nic *)cq->context)->acked += nevents;
}

static int nic_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct lat_nic *n = (struct lat_nic *)qp->context;

	for (; wr; wr = wr->next) {
		if (n->rq.tail - n->rq.head == RING) {
			*bad = wr;
			return ENOMEM;
		}
		push(&n->rq, wr->wr_id);
	}
	return 0;
}

static int nic_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct lat_nic *n = (struct lat_nic *)cq->context;
	const bool recv = cq == &n->recv_cq;
	struct ring *r = recv ? &n->received : &n->sent;
	int k = 0;

	/* a CQE a link has not brought yet: the loop's wait turns */
	if (r->head != r->shown && n->turns[recv] < n->empty_polls) {
		n->turns[recv]++;
		return 0;
	}
	n->turns[recv] = 0;
	for (; k < num && pop(r, &wc[k].wr_id); k++) {
		uint64_t id = wc[k].wr_id;

		wc[k] = (struct ibv_wc){ .wr_id = id, .status = IBV_WC_SUCCESS,
					 .opcode = recv ? IBV_WC_RECV : kinds[n->kind].wc_op,
					 .byte_len = LAT_SIZE, .qp_num = 1 };
	}
	return k;
}

/* HOOK_OVERHEAD_EMPTY_POLLS (0..8, default 0): polls that find nothing
 * before each CQE shows, so that lat_own_rows can tell a loop's wait turns
 * from the rest (-e takes a CQE after its event: none there). */
static unsigned empty_polls_env(bool events)
{
	const char *v = getenv("HOOK_OVERHEAD_EMPTY_POLLS");
	char *end;
	unsigned long k;

	if (!v || !*v)
		return 0;
	errno = 0;
	k = strtoul(v, &end, 10);
	if (errno || *end || k > 8 || (events && k)) {
		fprintf(stderr, "hook-overhead: HOOK_OVERHEAD_EMPTY_POLLS=%s: want 0..8, and 0 with -e\n", v);
		exit(2);
	}
	return (unsigned)k;
}

/* The fake for a run of kind: the old post API unless new_api; a
 * completion channel with events. */
static void nic_init(struct lat_nic *n, struct pt_loop *l, enum lat_kind kind, uint64_t iters,
		     bool new_api, bool events)
{
	int fds[2] = { -1, -1 };

	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->empty_polls = empty_polls_env(events);
	n->ctx.ops.post_send = nic_post_send;
	n->ctx.ops.post_recv = nic_post_recv;
	n->ctx.ops.poll_cq = nic_poll_cq;
	n->ctx.ops.req_notify_cq = nic_req_notify;
	n->send_cq.context = n->recv_cq.context = n->qp.context = &n->ctx;
	n->qp.qp_num = 1;
	n->qx = (struct ibv_qp_ex){ .qp_base = n->qp, .wr_start = x_start, .wr_send = x_send,
				    .wr_rdma_write = x_write, .wr_rdma_read = x_read,
				    .wr_atomic_fetch_add = x_fadd, .wr_set_sge = x_sge,
				    .wr_set_inline_data = x_inline, .wr_complete = x_complete };
	n->q = (struct pt_qp){ .qp = &n->qp, .qpx = new_api ? &n->qx : NULL, .send_buf = n->buf,
			       .recv_buf = n->buf + 4096, .remote_addr = 0x10000, .remote_rkey = 1 };
	if (events && pipe(fds)) {
		perror("hook-overhead: pipe");
		exit(1);
	}
	n->channel = (struct ibv_comp_channel){ .context = &n->ctx, .fd = fds[0], .refcnt = 2 };
	fake_event_taken = nic_event_taken;
	fake_events_acked = nic_events_acked;
	n->event_fd = fds[1];
	n->q.recv_buf[LAT_SIZE - 1] = 1;   /* write_lat: the peer (the server) writes first */
	n->res = (struct pt_res){ .buf = n->buf, .region = 4096, .mr = &n->mr, .send_cq = &n->send_cq,
				  .recv_cq = &n->recv_cq, .num_qps = 1, .qps = &n->q,
				  .channel = events ? &n->channel : NULL };
	/* as the tools: the channel comes with its waker (device.c) */
	if (events && pt_chan_waker_start(&n->res.waker))
		exit(1);
	n->run = (struct pt_run){ .page_size = 4096, .cache_line = 64, .size = LAT_SIZE,
				  .max_size = LAT_SIZE, .tx_depth = 1,
				  .rx_depth = kind == LAT_SEND ? 512 : 1, .cq_mod = 1 };
	*l = (struct pt_loop){
		.res = &n->res, .run = &n->run,
		.opt = { .iters = iters, .post_list = 1, .stall_ns = UINT64_MAX, .is_client = true,
			 .lat = true, .opcode = kinds[kind].op },
	};
}

/* The end of a run over n: 1 (said) when events were taken and not all
 * acked, or none taken with a channel. */
static int nic_done(struct lat_nic *n, const char *what)
{
	int rc = 0;

	if (n->event_fd >= 0 && (n->events == 0 || n->events != n->acked)) {
		fprintf(stderr, "hook-overhead: %s: %llu events taken, %llu acked\n", what,
			(unsigned long long)n->events, (unsigned long long)n->acked);
		rc = 1;
	}
	if (n->event_fd >= 0) {
		pt_chan_waker_stop(&n->res.waker);
		close(n->event_fd);
		close(n->channel.fd);
	}
	return rc;
}

/* One client run of the loop: run start (traced), the receives, the loop,
 * run end; exits 1 when the loop fails or falls short. */
static void lat_run(enum lat_kind kind, uint64_t iters, bool traced_run, bool new_api,
		    bool events)
{
	static struct lat_nic nic;
	const bool recvs = kind == LAT_SEND;
	uint32_t qpn = 1;
	struct pt_plugin_run_info info = {
		.struct_size = sizeof(info), .run = 0, .tool = "hook-overhead", .device = "fake0",
		.role = PT_PLUGIN_ROLE_CLIENT,
		.directions = PT_PLUGIN_DIR_SEND | (recvs ? PT_PLUGIN_DIR_RECV : 0), .num_qps = 1,
		.qp_nums = &qpn, .msg_size = LAT_SIZE, .iterations = iters, .tx_depth = 1,
		.rx_depth = recvs ? 512 : 1, .cq_mod = 1, .post_list = 1,
		.hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = pt_clock_sw_name(), .send_opcode = pt_plugin_op_of_wr(kinds[kind].op),
	};
	struct pt_plugin_run_end end = { .struct_size = sizeof(end), .run = 0 };
	struct pt_lat_meas m;
	struct pt_loop l;
	char err[512];
	int rc;

	nic_init(&nic, &l, kind, iters, new_api, events);
	if (traced_run && pt_hooks_run_start(&info, err, sizeof(err))) {
		fprintf(stderr, "hook-overhead: %s\n", err);
		exit(1);
	}
	if (recvs && pt_post_recv(&l, 0, iters < 512 ? iters : 512))
		exit(1);
	rc = kind == LAT_SEND ? pt_run_lat_send(&l, &m) :
	     kind == LAT_WRITE ? pt_run_lat_write(&l, &m) : pt_run_lat_read(&l, &m);
	if (traced_run && pt_hooks_run_end(&end, err, sizeof(err))) {
		fprintf(stderr, "hook-overhead: %s\n", err);
		exit(1);
	}
	if (rc || m.n != iters) {
		fprintf(stderr, "hook-overhead: the %s latency loop failed (%llu of %llu iterations)\n",
			kinds[kind].name, (unsigned long long)m.n, (unsigned long long)iters);
		exit(1);
	}
	pt_lat_meas_free(&m);
	if (nic_done(&nic, kinds[kind].name))
		exit(1);
}

int lat_loop_main(const char *kind, const char *mode, const char *iters_s)
{
	const bool on = !strcmp(mode, "on");
	uint64_t iters = strtoull(iters_s, NULL, 10);
	char err[512];
	int k = 0;

	while (k < LAT_KINDS && strcmp(kinds[k].name, kind))
		k++;
	if (k == LAT_KINDS || iters < 100 || (!on && strcmp(mode, "off"))) {
		fprintf(stderr, "usage: hook-overhead --lat-loop send|write|read|atomic off|on N>=100\n");
		return 2;
	}
	if (pt_clock_init())
		return 2;
	if (on && pt_trace_load_builtin(wrt_plugin_get_ops(), "/dev/null:quiet", err, sizeof(err))) {
		fprintf(stderr, "hook-overhead: %s\n", err);
		return 1;
	}
	lat_run((enum lat_kind)k, iters, on, false, false);
	pt_hooks_unload_all();
	return 0;
}

void lat_loop_ir_rows(const char *self, uint64_t iters)
{
	for (int k = 0; k < LAT_KINDS; k++) {
		double ir[2][2], per_it[2];
		char args[96];

		for (int on = 0; on < 2; on++) {
			for (int len = 0; len < 2; len++) {
				snprintf(args, sizeof(args), "--lat-loop %s %s %llu", kinds[k].name,
					 on ? "on" : "off", (unsigned long long)(iters << len));
				ir[on][len] = callgrind_ir_of(self, kinds[k].fn, args);
				if (ir[on][len] < 0)
					return;
			}
			per_it[on] = (ir[on][1] - ir[on][0]) / (double)iters;
		}
		printf("  run_lat.c's %-6s loop, %u WR/iteration, hooks off %7.2f instr/WR  hooks + "
		       "recorder %.2f instr/WR: added %+.2f instr/WR\n", kinds[k].name, kinds[k].wrs,
		       per_it[0] / kinds[k].wrs, per_it[1] / kinds[k].wrs,
		       (per_it[1] - per_it[0]) / kinds[k].wrs);
	}
}

/* --lat-own KIND new|old spin|events N: one run, hooks off. */
int lat_own_main(const char *kind, const char *api, const char *wait, const char *iters_s)
{
	uint64_t iters = strtoull(iters_s, NULL, 10);
	const bool new_api = !strcmp(api, "new"), events = !strcmp(wait, "events");
	int k = 0;

	while (k < LAT_KINDS && strcmp(kinds[k].name, kind))
		k++;
	if (k == LAT_KINDS || (k == LAT_WRITE && events) || iters < 100 || (!new_api && strcmp(api, "old")) ||
	    (!events && strcmp(wait, "spin"))) {
		fprintf(stderr, "usage: hook-overhead --lat-own send|write|read|atomic new|old spin|events N>=100 (write: spin only)\n");
		return 2;
	}
	if (pt_clock_init())
		return 2;
	lat_run((enum lat_kind)k, iters, false, new_api, events);
	return 0;
}

/* --lat-floor spin|events N: the floor loop once over the fake. */
int lat_floor_main(const char *wait, const char *iters_s)
{
	static struct lat_nic nic;
	uint64_t iters = strtoull(iters_s, NULL, 10), *stamps;
	const bool send_watched = !strcmp(wait, "send-watched");
	const bool send_events = send_watched || !strcmp(wait, "send-events");
	const bool watched = !strcmp(wait, "watched");
	const bool events = watched || send_events || !strcmp(wait, "events");
	const bool old_api = !strcmp(wait, "spin-old"), send = send_events || !strcmp(wait, "send");
	const bool write = !strcmp(wait, "write");
	struct ibv_sge rsge = { .length = LAT_SIZE };
	struct ibv_recv_wr recv = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *bad_recv;
	struct floor_wr w = { .rkey = 1, .lkey = 2, .len = LAT_SIZE, .raddr = 0x10000 };
	struct pt_loop l;
	int rc;

	if (iters < 100 || (!events && !old_api && !send && !write && strcmp(wait, "spin"))) {
		fprintf(stderr, "usage: hook-overhead --lat-floor spin|spin-old|write|send|send-events|"
			"send-watched|events|watched N>=100\n");
		return 2;
	}
	stamps = calloc(iters, sizeof(*stamps));
	if (!stamps)
		return 1;
	nic_init(&nic, &l, send ? LAT_SEND : write ? LAT_WRITE : LAT_READ, iters, true, events);
	for (unsigned k = 0; send && k < 2; k++)   /* a pong's receive, and the next one's */
		if (nic_post_recv(&nic.qp, &recv, &bad_recv))
			return 1;
	nic.qx.wr_id = 7;
	nic.qx.wr_flags = IBV_SEND_SIGNALED;
	w.addr = (uint64_t)(uintptr_t)nic.buf;
	if (send_events)
		rc = (send_watched ? floor_send_events_watched : floor_send_events)(
			&nic.qx, &nic.qp, &nic.send_cq, &nic.recv_cq, &nic.channel, stamps, iters, &w,
			&recv);
	else if (watched)
		rc = floor_read_events_watched(&nic.qx, &nic.send_cq, &nic.channel, stamps, iters, &w);
	else if (write)
		rc = floor_write_spin(&nic.qx, &nic.send_cq, stamps, iters, &w,
				      &nic.q.send_buf[LAT_SIZE - 1], &nic.q.recv_buf[LAT_SIZE - 1]);
	else if (send)
		rc = floor_send_spin(&nic.qx, &nic.qp, &nic.send_cq, &nic.recv_cq, stamps, iters, &w,
				     &recv);
	else if (old_api)
		rc = floor_read_spin_old(&nic.qp, &nic.send_cq, stamps, iters, &w);
	else if (events)
		rc = floor_read_events(&nic.qx, &nic.send_cq, &nic.channel, stamps, iters, &w);
	else
		rc = floor_read_spin(&nic.qx, &nic.send_cq, stamps, iters, &w);
	free(stamps);
	if (nic_done(&nic, "floor") || rc) {
		fprintf(stderr, "hook-overhead: the floor loop failed\n");
		return 1;
	}
	return 0;
}

/* What callgrind leaves out of a loop's own code: the fake device (this
 * file's functions and fake_channel.c's), libibverbs and libc. */
#define NOT_OWN "hook_overhead_lat.c:|fake_channel.c:|libibverbs.so|libc.so"

static double own_per_wr(const char *self, const char *fn, const char *args_fmt, uint64_t iters,
			 unsigned wrs)
{
	double ir[2];
	char args[128];

	for (int len = 0; len < 2; len++) {
		snprintf(args, sizeof(args), args_fmt, (unsigned long long)(iters << len));
		ir[len] = callgrind_ir_less(self, fn, args, NOT_OWN, NULL);
		if (ir[len] < 0)
			return -1;
	}
	return (ir[1] - ir[0]) / (double)iters / wrs;
}

void lat_own_rows(const char *self, uint64_t iters)
{
	static const struct {
		const char *label, *fn, *args;
		unsigned wrs;
		bool spins;     /* waits by polling: its wait turns can be told apart */
	} rows[] = {
		{ "run_lat.c's read loop, new post API, spinning", "pt_run_lat_read",
		  "--lat-own read new spin %llu", 1, true },
		{ "run_lat.c's read loop, old post API, spinning", "pt_run_lat_read",
		  "--lat-own read old spin %llu", 1, true },
		{ "run_lat.c's read loop, new post API, -e", "pt_run_lat_read",
		  "--lat-own read new events %llu", 1, false },
		{ "run_lat.c's read loop, old post API, -e", "pt_run_lat_read",
		  "--lat-own read old events %llu", 1, false },
		{ "run_lat.c's write loop, new post API, spinning (waits at one pass)",
		  "pt_run_lat_write", "--lat-own write new spin %llu", 1, true },
		{ "run_lat.c's atomic loop (fetch-and-add), new post API, spinning", "pt_run_lat_read",
		  "--lat-own atomic new spin %llu", 1, true },
		{ "run_lat.c's atomic loop (fetch-and-add), new post API, -e", "pt_run_lat_read",
		  "--lat-own atomic new events %llu", 1, false },
		{ "run_lat.c's send loop, new post API, spinning (per iteration)", "pt_run_lat_send",
		  "--lat-own send new spin %llu", 1, true },
		{ "run_lat.c's send loop, new post API, -e (per iteration)", "pt_run_lat_send",
		  "--lat-own send new events %llu", 1, false },
		{ "floor: a bare read loop, new post API, spinning", "floor_read_spin",
		  "--lat-floor spin %llu", 1, true },
		{ "floor: the same, old post API (one ibv_post_send)", "floor_read_spin_old",
		  "--lat-floor spin-old %llu", 1, true },
		{ "floor: a bare write_lat client, new post API", "floor_write_spin",
		  "--lat-floor write %llu", 1, true },
		{ "floor: a bare send_lat client, new post API (per iteration)", "floor_send_spin",
		  "--lat-floor send %llu", 1, true },
		{ "floor: a bare send_lat client, -e (per iteration)", "floor_send_events",
		  "--lat-floor send-events %llu", 1, false },
		{ "floor: the same, -e, a poll() before each event (stop rules)",
		  "floor_send_events_watched", "--lat-floor send-watched %llu", 1, false },
		{ "floor: a bare read loop, new post API, -e", "floor_read_events",
		  "--lat-floor events %llu", 1, false },
		{ "floor: the same, -e, a poll() before each event (stop rules)",
		  "floor_read_events_watched", "--lat-floor watched %llu", 1, false },
	};

	printf("  own code per WR, hooks off (the fake device, libibverbs and libc apart), %llu / %llu "
	       "iterations;\n  spinning, run again with each CQE after one empty poll: a wait turn's "
	       "instructions, and the rest (bench/README.md):\n",
	       (unsigned long long)iters, (unsigned long long)(2 * iters));
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		double per = own_per_wr(self, rows[k].fn, rows[k].args, iters, rows[k].wrs), late;

		if (per < 0)
			return;
		if (!rows[k].spins) {
			printf("    %-66s %7.2f instr/WR\n", rows[k].label, per);
			continue;
		}
		/* one pass is r + t, one empty poll more per CQE r + 2t (per CQ
		 * polled): t a whole turn, so r leaves out also what only later
		 * turns run (ours: the stop rules' count, 2), which the lab's b keeps */
		if (setenv("HOOK_OVERHEAD_EMPTY_POLLS", "1", 1))
			return;
		late = own_per_wr(self, rows[k].fn, rows[k].args, iters, rows[k].wrs);
		unsetenv("HOOK_OVERHEAD_EMPTY_POLLS");
		if (late < 0)
			return;
		printf("    %-66s %7.2f instr/WR  turns %6.2f  the rest %6.2f\n", rows[k].label, per,
		       late - per, 2 * per - late);
	}
}

/* The latency tools' report phase (perftest/tools/lat.c: the samples from
 * the stamps, then without -H pt_lat_stats_compute_ranks: the ranks by a
 * select, the stamps its scratch)
 * over n + 1 stamps like the lab's: round trips of 150-190 us, one in 97
 * up to 3 ms more (a descheduled guest). Out of line: callgrind counts it. */
static __attribute__((noinline)) int lat_report_phase(uint64_t *stamps, uint64_t *d, size_t n,
						      struct pt_lat_stats *st)
{
	struct pt_lat_sum sum;

	pt_lat_samples(stamps, n + 1, d, &sum);
	return pt_lat_stats_compute_ranks(d, n, 2, st, stamps, &sum);
}

int lat_report_main(const char *n_s)
{
	size_t n = strtoull(n_s, NULL, 10);
	uint64_t *stamps, *d, t = 1000000, lcg = 12345;
	struct pt_lat_stats st;
	int rc;

	if (n < 100 || n > 100000000) {
		fprintf(stderr, "usage: hook-overhead --lat-report N (100..10^8 samples)\n");
		return 2;
	}
	stamps = malloc((n + 1) * sizeof(*stamps));
	d = malloc(n * sizeof(*d));
	if (!stamps || !d) {
		fprintf(stderr, "hook-overhead: no memory for %zu samples\n", n);
		return 1;
	}
	for (size_t i = 0; i <= n; i++) {
		lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
		stamps[i] = t;
		t += 150000 + (lcg >> 33) % 40000 + (i % 97 == 0 ? (lcg >> 20) % 3000000 : 0);
	}
	rc = lat_report_phase(stamps, d, n, &st);
	free(stamps);
	free(d);
	return rc ? 1 : 0;
}

void lat_report_ir_row(const char *self, size_t n)
{
	double ir[2];
	char args[64];

	for (int len = 0; len < 2; len++) {
		snprintf(args, sizeof(args), "--lat-report %zu", n << len);
		ir[len] = callgrind_ir_of(self, "lat_report_phase", args);
		if (ir[len] < 0)
			return;
	}
	printf("  latency report phase (samples, sort, stats), %zu / %zu samples: %.2f / %.2f instr/sample,"
	       " difference %.2f instr/sample\n", n, 2 * n, ir[0] / (double)n, ir[1] / (double)(2 * n),
	       (ir[1] - ir[0]) / (double)n);
}
