/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode, the control path: verbs contexts (their ctx->ops patched
 * to preload.c's data path, or preload_cq.c's with CQE timestamps), QPs as
 * they are created, the recorder run they open and close, and the set-up
 * from WRTRACE_OUT. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "preload.h"
#include "util/clock.h"

static struct ibv_qp *w_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
	struct wrp_ctx *c = wrp_ctx_of(ctx);
	struct ibv_qp *qp = c->create_qp_ex(ctx, a);

	if (qp)
		wrp_register_qp(qp, a->qp_type, a->sq_sig_all, a->cap.max_send_wr, a->cap.max_recv_wr);
	return qp;
}

int wrp_attach_context(struct ibv_context *ctx)
{
	struct wrp_ctx *c = wrp_ctx_of(NULL);
	struct verbs_context *v;

	wrp.opened++;
	if (!c) {
		fprintf(stderr, "wrtrace: more than %d verbs contexts open: %s is not traced\n",
			WRP_CTXS, ctx->device->name);
		return -1;
	}
	c->ctx = ctx;
	c->post_send = ctx->ops.post_send;
	c->post_recv = ctx->ops.post_recv;
	c->poll_cq = ctx->ops.poll_cq;
	ctx->ops.post_send = wrp_post_send;
	ctx->ops.post_recv = wrp_post_recv;
	v = verbs_get_ctx_op(ctx, create_qp_ex);
	c->create_qp_ex = v ? v->create_qp_ex : NULL;
	if (v)
		v->create_qp_ex = w_create_qp_ex;
	ctx->ops.poll_cq = wrp_hwts_attach(c) ? wrp_poll_cq_hw : wrp_poll_cq;
	return 0;
}

void wrp_detach_context(struct ibv_context *ctx)
{
	struct wrp_ctx *c = wrp_ctx_of(ctx);

	if (!c)
		return;
	if (wrp.run_on && wrp.run_ctx == c)
		wrp_run_finish();
	wrp_hwts_detach(c);
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qp && wrp.slots[i].qp->context == ctx)
			wrp.slots[i].qp = NULL;
	memset(c, 0, sizeof(*c));
}

/* ------------------------------------------------------------- run -- */

static enum pt_plugin_conn conn_of(enum ibv_qp_type t)
{
	switch (t) {
	case IBV_QPT_RC: return PT_PLUGIN_CONN_RC;
	case IBV_QPT_UC: return PT_PLUGIN_CONN_UC;
	case IBV_QPT_UD: return PT_PLUGIN_CONN_UD;
	case IBV_QPT_XRC_SEND:
	case IBV_QPT_XRC_RECV: return PT_PLUGIN_CONN_XRC;
	case IBV_QPT_DRIVER: return PT_PLUGIN_CONN_DC;
	default: return PT_PLUGIN_CONN_OTHER;
	}
}

/* The run opens with the first QP, before anything can be posted on it;
 * its FIFOs are sized from that QP (deeper QPs later: counted untracked). */
static void run_begin(struct wrp_ctx *c, enum ibv_qp_type type, uint32_t max_send, uint32_t max_recv)
{
	static uint32_t qpns[WRP_SLOTS];
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .run = wrp.run, .tool = program_invocation_short_name,
		.device = c->ctx->device->name, .role = PT_PLUGIN_ROLE_CLIENT, .conn = conn_of(type),
		.num_qps = WRP_SLOTS, .qp_nums = qpns,
		.tx_depth = max_send > 256 ? max_send : 256, .rx_depth = max_recv > 256 ? max_recv : 256,
		.post_list = 1, .hw_ts = wrp_hwts_state(c), .hw_clock_hz = c->caps.hz,
		.sw_clock = pt_clock_sw_name(), /* CLOCK_MONOTONIC_RAW: the library never calls pt_clock_init */
	};
	char err[256];

	in.hw_clock_domain = in.hw_ts == PT_PLUGIN_HW_TS_ON ? c->clk.domain : "none";
	if (wrt_run_start(wrp.w, &in, err, sizeof(err))) {
		fprintf(stderr, "wrtrace: cannot start recording: %s\n", err);
		return;
	}
	wrp.run_ctx = c;
	wrp_hwts_run_started(c);
	wrp.sends = wrp.recvs = 0;
	wrp.max_bytes = wrp.max_recv_bytes = 0;
	for (uint32_t i = 0; i < wrp.nslots; i++)
		wrp.slots[i].send_seq = wrp.slots[i].recv_seq = 0;
	wrp.run_on = true;
}

struct wrp_slot *wrp_register_qp(struct ibv_qp *qp, enum ibv_qp_type type, int sq_sig_all,
				 uint32_t max_send_wr, uint32_t max_recv_wr)
{
	struct wrp_slot *s = wrp_slot_of_qp(qp);
	struct wrp_ctx *c = wrp_ctx_of(qp->context);

	if (s || !c)
		return s;
	if (wrp.nslots == WRP_SLOTS) {
		if (!wrp.qps_over++)
			fprintf(stderr, "wrtrace: more than %d QPs: QP 0x%x and later are not traced\n",
				WRP_SLOTS, qp->qp_num);
		return NULL;
	}
	s = &wrp.slots[wrp.nslots];
	memset(s, 0, sizeof(*s));
	s->qp = qp;
	s->qpn = qp->qp_num;
	s->idx = wrp.nslots++;
	s->sig_all = sq_sig_all != 0;
	if (wrp.active && !wrp.run_on)
		run_begin(c, type, max_send_wr, max_recv_wr);
	return s;
}

void wrp_run_finish(void)
{
	struct wrt_meta *m;
	struct pt_plugin_run_end end = { .struct_size = sizeof(end), .run = wrp.run };
	char err[512];
	size_t off = 0;

	if (!wrp.run_on)
		return;
	wrp.run_on = false;
	/* what only the run itself told us */
	m = wrt_meta_edit(wrp.w);
	m->num_qps = wrp.nslots ? wrp.nslots : 1;
	m->role = wrp.sends || !wrp.recvs ? PT_PLUGIN_ROLE_CLIENT : PT_PLUGIN_ROLE_SERVER;
	m->msg_size = wrp.sends ? wrp.max_bytes : wrp.max_recv_bytes; /* receive buffer size */
	m->qpns[0] = '\0';
	for (uint32_t i = 0; i < wrp.nslots && off + 12 < sizeof(m->qpns); i++)
		off += (size_t)snprintf(m->qpns + off, sizeof(m->qpns) - off, "%s0x%x", i ? "," : "",
					wrp.slots[i].qpn);
	fflush(stdout);
	if (wrt_run_end(wrp.w, &end, err, sizeof(err)))
		fprintf(stderr, "wrtrace: %s\n", err);
	fflush(stdout);
	wrp.run++;
}

/* The recorder's options without ours (:nohwts, any number of times). */
static int strip_preload_opts(const char *spec, char *out, size_t len)
{
	const char *p = strchr(spec, ':');
	size_t off = p ? (size_t)(p - spec) : strlen(spec);

	if (strlen(spec) >= len)
		return -1;
	memcpy(out, spec, off);
	out[off] = '\0';
	wrp.no_hwts = false;
	while (p) {
		const char *next = strchr(p + 1, ':');
		size_t n = next ? (size_t)(next - p) : strlen(p);

		if (n - 1 == strlen(WRP_OPT_NOHWTS) && !strncmp(p + 1, WRP_OPT_NOHWTS, n - 1)) {
			wrp.no_hwts = true;
		} else {
			memcpy(out + off, p, n);
			off += n;
			out[off] = '\0';
		}
		p = next;
	}
	return 0;
}

int wrp_setup(const char *spec)
{
	static char rest[8192];
	struct wrt_config cfg;
	char err[256];
	FILE *f;

	if (strip_preload_opts(spec, rest, sizeof(rest))) {
		fprintf(stderr, "wrtrace: %s is longer than %zu bytes; nothing will be traced\n",
			WRP_ENV_OUT, sizeof(rest) - 1);
		return -1;
	}
	if (wrt_config_parse(rest, &cfg, err, sizeof(err))) {
		fprintf(stderr, "wrtrace: %s=%s: %s%s; nothing will be traced\n", WRP_ENV_OUT, spec,
			err, strncmp(err, "unknown option", 14) ? "" : " (and here " WRP_OPT_NOHWTS ")");
		return -1;
	}
	f = fopen(cfg.path, "a");
	if (!f) {
		fprintf(stderr, "wrtrace: cannot write %s: %s; nothing will be traced\n", cfg.path,
			strerror(errno));
		return -1;
	}
	fclose(f);
	wrp.w = wrt_new(&cfg);
	if (!wrp.w) {
		fprintf(stderr, "wrtrace: out of memory; nothing will be traced\n");
		return -1;
	}
	wrp.active = true;
	return 0;
}

void wrp_teardown(void)
{
	wrp_run_finish();
	wrt_free(wrp.w);
	wrp.w = NULL;
	wrp.active = false;
}
