/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode: contexts, QP slots, the patched ctx->ops (post_send,
 * post_recv, poll_cq, create_qp_ex) and the recorder run. No symbol is
 * interposed here (preload_sym.c does that), so a unit test can drive all
 * of this over a mock context. Contexts whose device stamps CQEs get the
 * poll path of preload_cq.c instead. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "util/clock.h"
#include "preload.h"

struct wrp_state wrp;

void wrp_emit_post(struct wrp_slot *s, uint32_t opcode, uint64_t wr_id, uint32_t bytes,
		   bool signaled, bool recv, uint64_t t)
{
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = s->idx,
		.first_seq = recv ? s->recv_seq++ : s->send_seq++, .count = 1,
		.opcode = recv ? PT_PLUGIN_OP_RECV : opcode, .first_wr_id = wr_id,
		.bytes = bytes, .flags = signaled ? PT_PLUGIN_POST_LAST_SIGNALED : 0, .t_ns = t,
	};

	if (recv) {
		wrp.recvs++;
		if (bytes > wrp.max_recv_bytes)
			wrp.max_recv_bytes = bytes;
	} else {
		wrp.sends++;
		if (bytes > wrp.max_bytes)
			wrp.max_bytes = bytes;
	}
	wrt_post(wrp.w, &ev);
}

struct wrp_slot *wrp_slot_of_qpx(struct ibv_qp_ex *qpx)
{
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qpx == qpx)
			return &wrp.slots[i];
	return NULL;
}

static struct wrp_slot *slot_of_qp(struct ibv_qp *qp)
{
	struct wrp_slot *s = wrp.last_qp;

	if (__builtin_expect(s != NULL && s->qp == qp, 1))
		return s;
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qp == qp)
			return wrp.last_qp = &wrp.slots[i];
	return NULL;
}

static uint32_t idx_of_qpn(uint32_t qpn)
{
	static uint32_t last;

	if (last < wrp.nslots && wrp.slots[last].qpn == qpn && wrp.slots[last].qp)
		return last;
	for (uint32_t i = 0; i < wrp.nslots; i++)
		if (wrp.slots[i].qpn == qpn && wrp.slots[i].qp)
			return last = i;
	return UINT32_MAX; /* the recorder counts it as unmatched */
}

struct wrp_ctx *wrp_ctx_of(struct ibv_context *ctx)
{
	for (int i = 0; i < WRP_CTXS; i++)
		if (wrp.ctxs[i].ctx == ctx)
			return &wrp.ctxs[i];
	return NULL;
}

/* -------------------------------------------------------- ctx->ops -- */

/* A patched pointer is only ever installed on a context in the table. */
static int w_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct wrp_ctx *c = wrp_ctx_of(qp->context);
	struct wrp_slot *s;
	struct ibv_send_wr *stop;
	uint64_t t;
	int rc;

	if (!wrp.run_on)
		return c->post_send(qp, wr, bad);
	t = pt_now_ns();
	rc = c->post_send(qp, wr, bad);
	s = slot_of_qp(qp);
	stop = rc ? *bad : NULL;
	for (; s && wr && wr != stop; wr = wr->next) {
		uint64_t bytes = 0;

		for (int i = 0; i < wr->num_sge; i++)
			bytes += wr->sg_list[i].length;
		wrp_emit_post(s, wrp_wr_opcode(wr->opcode), wr->wr_id,
			      bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes,
			      s->sig_all || (wr->send_flags & IBV_SEND_SIGNALED), false, t);
	}
	return rc;
}

static int w_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct wrp_ctx *c = wrp_ctx_of(qp->context);
	struct wrp_slot *s;
	struct ibv_recv_wr *stop;
	uint64_t t;
	int rc;

	if (!wrp.run_on)
		return c->post_recv(qp, wr, bad);
	t = pt_now_ns();
	rc = c->post_recv(qp, wr, bad);
	s = slot_of_qp(qp);
	stop = rc ? *bad : NULL;
	for (; s && wr && wr != stop; wr = wr->next) {
		uint64_t bytes = 0;

		for (int i = 0; i < wr->num_sge; i++)
			bytes += wr->sg_list[i].length;
		wrp_emit_post(s, PT_PLUGIN_OP_RECV, wr->wr_id,
			      bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes, true, true, t);
	}
	return rc;
}

void wrp_emit_wcs(const struct ibv_wc *wc, int n, uint64_t t, const uint64_t *hw)
{
	for (int i = 0; i < n; i++) {
		bool recv = wc[i].opcode & IBV_WC_RECV;
		struct pt_plugin_completion ev = {
			.struct_size = sizeof(ev), .qp = idx_of_qpn(wc[i].qp_num),
			.wr_id = wc[i].wr_id, .seq = PT_PLUGIN_SEQ_UNKNOWN,
			.status = (uint32_t)wc[i].status, .opcode = wrp_wc_opcode(wc[i].opcode),
			.bytes = wc[i].byte_len,
			.flags = (recv ? PT_PLUGIN_COMP_RECV : 0) | (hw ? PT_PLUGIN_COMP_HW_TS : 0),
			.t_poll_ns = t, .hw_ns = hw ? hw[i] : 0,
		};

		wrt_complete(wrp.w, &ev);
	}
}

int wrp_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct wrp_ctx *c = wrp_ctx_of(cq->context);
	int rc = c->poll_cq(cq, n, wc);

	if (rc <= 0 || !wrp.run_on)
		return rc;
	wrp_emit_wcs(wc, rc, pt_now_ns(), NULL);
	return rc;
}

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
	ctx->ops.post_send = w_post_send;
	ctx->ops.post_recv = w_post_recv;
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
		.sw_clock = "CLOCK_MONOTONIC_RAW",
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
	struct wrp_slot *s = slot_of_qp(qp);
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
