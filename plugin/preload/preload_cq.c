/* SPDX-License-Identifier: BSD-2-Clause */
/* LD_PRELOAD mode: hardware CQE timestamps for a program that polls with
 * ibv_poll_cq (docs/hw-timestamps.md §5, design A). On a context whose device
 * stamps CQEs (completion_timestamp_mask != 0) unless WRTRACE_OUT says
 * :nohwts:
 * - ibv_create_cq makes an ex-CQ with the standard fields and the
 *   completion timestamp, through the context's saved create_cq_ex (the
 *   patched one would take it for one of the program's). If that fails
 *   (e.g. mlx5 QPs that take real-time stamps only, docs/hw-timestamps.md §4), the real
 *   ibv_create_cq makes it, and the context upgrades no more CQs: all CQs
 *   of a QP must share one stamp format.
 * - The program's own ibv_create_cq_ex gets the timestamp flag added; the
 *   provider's read_completion_ts is then kept aside and the CQ shows the
 *   program only the read_* it asked for.
 * - poll_cq on such a CQ is served by start/next/end_poll (pt_cqx_poll)
 *   with ibv_poll_cq's results, and each completion is recorded with its
 *   NIC time.
 * - The NIC clock is sampled against CLOCK_MONOTONIC_RAW at open, at run
 *   start and every PT_HWCLOCK_PERIOD_NS while polling; each fit goes to
 *   the recorder, which splits post->CQE / CQE->poll with it. On an mlx5
 *   device ticks become ns through the kernel's clock info, read with the
 *   libmlx5 the program's libibverbs loaded (we never load it), elsewhere
 *   through hca_core_clock; the open line and the run info name which.
 * A context without stamps (rxe: none, and its ex-CQ polling is broken in
 * rdma-core 44, docs/hw-timestamps.md §3) keeps the plain path: nothing here touches it. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "util/clock.h"
#include "preload.h"

#define TS_FLAGS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)

/* The CQ table changes under this lock; the poll path reads it unlocked
 * (a CQ is in the table before the program has it, and out only once
 * destroyed). */
static pthread_mutex_t cq_lock = PTHREAD_MUTEX_INITIALIZER;

static struct wrp_cq *cq_find(const struct ibv_cq *cq)
{
	struct wrp_cq *q = wrp.last_cq;

	if (__builtin_expect(q != NULL && q->cq && ibv_cq_ex_to_cq(q->cq) == cq, 1))
		return q;
	for (uint32_t i = 0; i < wrp.cqs_hi; i++)
		if (wrp.cqs[i].cq && ibv_cq_ex_to_cq(wrp.cqs[i].cq) == cq)
			return wrp.last_cq = &wrp.cqs[i];
	return NULL;
}

/* A free entry, or NULL (said once: that CQ keeps software times). */
static struct wrp_cq *cq_free(void)
{
	for (uint32_t i = 0; i < WRP_CQS; i++)
		if (!wrp.cqs[i].cq) {
			if (i >= wrp.cqs_hi)
				wrp.cqs_hi = i + 1; /* bounds the poll path's search */
			return &wrp.cqs[i];
		}
	if (!wrp.cqs_over++)
		fprintf(stderr, "wrtrace: more than %d CQs with timestamps: later CQs get software "
			"times only\n", WRP_CQS);
	return NULL;
}

static void forget(struct wrp_cq *q)
{
	if (wrp.last_cq == q)
		wrp.last_cq = NULL;
	memset(q, 0, sizeof(*q));
}

/* A CQ could not be made with stamps: keep one format per context. */
static void upgrade_failed(struct wrp_ctx *c, int err)
{
	c->upgrade = false;
	fprintf(stderr, "wrtrace: CQE timestamps off for %s from here on: ibv_create_cq_ex with "
		"completion timestamps failed (%s); this CQ and later ones get software times only\n",
		c->ctx->device->name, strerror(err));
}

/* The patched verbs_context create_cq_ex: the program's own ex-CQs. */
static struct ibv_cq_ex *w_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	struct wrp_ctx *c = wrp_ctx_of(ctx);
	const uint64_t asked = a->wc_flags;
	struct ibv_cq_ex *cq = NULL;
	struct wrp_cq *q;
	bool added = false;

	pthread_mutex_lock(&cq_lock);
	q = cq_free();
	/* a program that asked for a stamp flag keeps exactly its own: on mlx5
	 * adding the other one changes what the wallclock reader returns */
	if (q && c->upgrade && !(asked & TS_FLAGS)) {
		a->wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
		cq = c->create_cq_ex(ctx, a);
		a->wc_flags = asked; /* the program's attributes as it wrote them */
		added = cq != NULL;
		if (!cq) {
			int err = errno;

			cq = c->create_cq_ex(ctx, a);
			if (cq)
				upgrade_failed(c, err);
		}
	} else {
		cq = c->create_cq_ex(ctx, a);
	}
	if (cq && q) {
		/* pt_cqx_poll reads the standard fields: only then can it stand in */
		*q = (struct wrp_cq){
			.cq = cq, .c = c, .app_flags = asked,
			.emulate = (asked & IBV_WC_STANDARD_FLAGS) == IBV_WC_STANDARD_FLAGS,
		};
		if (added) {
			q->read_ts = cq->read_completion_ts;
			cq->read_completion_ts = NULL;
		}
		q->ts = (added && q->read_ts) ||
			((asked & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) && cq->read_completion_ts);
	}
	pthread_mutex_unlock(&cq_lock);
	return cq;
}

struct ibv_cq *wrp_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			     struct ibv_comp_channel *ch, int vec, wrp_create_cq_fn real)
{
	struct wrp_ctx *c = wrp_ctx_of(ctx);
	struct ibv_cq_init_attr_ex a = {
		.cqe = (uint32_t)cqe, .cq_context = cq_context, .channel = ch,
		.comp_vector = (uint32_t)vec,
		.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *x;
	struct ibv_cq *cq;
	struct wrp_cq *q;

	if (!c || !c->upgrade)
		return real(ctx, cqe, cq_context, ch, vec);
	pthread_mutex_lock(&cq_lock);
	q = cq_free();
	x = q ? c->create_cq_ex(ctx, &a) : NULL;
	if (x) {
		*q = (struct wrp_cq){ .cq = x, .c = c, .emulate = true, .ts = x->read_completion_ts != NULL };
		cq = ibv_cq_ex_to_cq(x);
	} else {
		int err = errno;

		cq = real(ctx, cqe, cq_context, ch, vec);
		if (cq && q)
			upgrade_failed(c, err);
	}
	pthread_mutex_unlock(&cq_lock);
	return cq;
}

int wrp_destroy_cq(struct ibv_cq *cq, int (*real)(struct ibv_cq *))
{
	struct wrp_cq *q;
	int rc;

	pthread_mutex_lock(&cq_lock);
	q = cq_find(cq);
	rc = real(cq);
	if (rc == 0 && q)
		forget(q); /* still in use (EBUSY): still ours */
	pthread_mutex_unlock(&cq_lock);
	return rc;
}

int wrp_poll_cq_hw(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct wrp_cq *q = cq_find(cq);
	uint64_t hw[WRP_POLL_MAX], t;
	struct pt_cqx p;
	int got;

	if (!q || !q->emulate)
		return wrp_poll_cq(cq, n, wc);
	p = (struct pt_cqx){ .cq = q->cq, .clk = q->ts ? &q->c->clk : NULL, .read_ts = q->read_ts };
	/* fewer than asked is within ibv_poll_cq's contract */
	got = pt_cqx_poll(&p, n < WRP_POLL_MAX ? n : WRP_POLL_MAX, wc, hw);
	if (!wrp.run_on || q->c != wrp.run_ctx) {
		if (got > 0 && wrp.run_on) /* another NIC's clock: not the run's fit */
			wrp_emit_wcs(wc, got, pt_now_ns(), NULL);
		return got;
	}
	t = pt_now_ns();
	if (got > 0)
		wrp_emit_wcs(wc, got, t, q->ts ? hw : NULL);
	if (pt_hwclock_tick(&q->c->clk, t))
		wrt_clock_fit(wrp.w, &q->c->clk.fit);
	return got;
}

/* ------------------------------------------------------ per context -- */

#ifdef HAVE_MLX5DV
static int (*real_get_clock_info)(struct ibv_context *, struct mlx5dv_clock_info *);

/* hwts.h's contract is -errno; mlx5dv_get_clock_info returns errno */
static int mlx5_clock_info(void *ctx, struct mlx5dv_clock_info *ci)
{
	int rc = real_get_clock_info(ctx, ci);

	return rc > 0 ? -rc : rc;
}

/* libibverbs loaded libmlx5 (soname libmlx5.so.1) as the provider of an
 * mlx5 device: use that one. Loading it ourselves would add a dependency a
 * preload into any program must not have. The handle is kept: libibverbs
 * never unloads a provider anyway. */
static pt_hwclock_info_fn mlx5_lookup(struct ibv_context *ctx)
{
	void *h = dlopen("libmlx5.so.1", RTLD_LAZY | RTLD_NOLOAD);
	bool (*is_supported)(struct ibv_device *);

	if (!h)
		return NULL;
	is_supported = (__typeof__(is_supported))dlvsym(h, "mlx5dv_is_supported", "MLX5_1.8");
	real_get_clock_info = (__typeof__(real_get_clock_info))dlvsym(h, "mlx5dv_get_clock_info",
								      "MLX5_1.4");
	if (!is_supported || !real_get_clock_info || !is_supported(ctx->device))
		return NULL;
	return mlx5_clock_info;
}
#else
static pt_hwclock_info_fn mlx5_lookup(struct ibv_context *ctx)
{
	(void)ctx;
	return NULL;
}
#endif
pt_hwclock_info_fn (*wrp_clock_info_of)(struct ibv_context *ctx) = mlx5_lookup;

/* The conversion in use, for the line said at open. */
static void conversion(const struct wrp_ctx *c, bool mlx5, char *buf, size_t len)
{
	if (c->clk.use_ci)
		snprintf(buf, len, "%s: ticks to ns by the kernel's mlx5 clock info", c->clk.domain);
	else
		snprintf(buf, len, "%s: ticks / %llu Hz hca_core_clock%s%s", c->clk.domain,
			 (unsigned long long)c->caps.hz, mlx5 ? "; mlx5 clock info unreadable: " : "",
			 mlx5 ? strerror(-c->clk.info_error) : "");
}

static bool off(struct wrp_ctx *c, const char *why)
{
	fprintf(stderr, "wrtrace: CQE timestamps off for %s: %s; software times only\n",
		c->ctx->device->name, why);
	return false;
}

bool wrp_hwts_attach(struct wrp_ctx *c)
{
	struct verbs_context *v = verbs_get_ctx_op(c->ctx, query_device_ex);
	const char *dev = c->ctx->device->name;
	struct ibv_device_attr_ex attr;
	pt_hwclock_info_fn info;
	char conv[160];
	int rc;

	memset(&attr, 0, sizeof(attr));
	rc = v ? v->query_device_ex(c->ctx, NULL, &attr, sizeof(attr)) : EOPNOTSUPP;
	if (rc)
		memset(&attr, 0, sizeof(attr));
	pt_hwts_probe(&attr, dev, &c->caps);
	c->hwts = c->upgrade = false;
	if (!c->caps.mask) {
		fprintf(stderr, "wrtrace: CQE timestamps %s%s: software times only\n", c->caps.why,
			rc ? " (ibv_query_device_ex failed)" : "");
		return false;
	}
	if (!c->caps.supported)
		return off(c, c->caps.why);
	if (wrp.no_hwts)
		return off(c, "turned off by :" WRP_OPT_NOHWTS " in " WRP_ENV_OUT);
	v = verbs_get_ctx_op(c->ctx, create_cq_ex);
	if (!v)
		return off(c, "the context has no create_cq_ex");
	c->create_cq_ex = v->create_cq_ex;
	v->create_cq_ex = w_create_cq_ex;
	c->hwts = c->upgrade = true;
	info = wrp_clock_info_of(c->ctx);
	rc = pt_hwclock_init_ex(&c->clk, c->caps.hz, c->caps.mask, pt_hwclock_read_ibv, c->ctx,
				info, c->ctx);
	if (rc) {
		/* stamps still come, in NIC ns; only the split needs the fit */
		pt_hwclock_init_ex(&c->clk, c->caps.hz, c->caps.mask, NULL, NULL, info, c->ctx);
		conversion(c, info != NULL, conv, sizeof(conv));
		fprintf(stderr, "wrtrace: CQE timestamps on for %s (%s), but its clock cannot be "
			"sampled (%s): NIC times without a post->CQE split\n", dev, conv, strerror(-rc));
	} else {
		conversion(c, info != NULL, conv, sizeof(conv));
		fprintf(stderr, "wrtrace: CQE timestamps on for %s: CQs read through the extended CQ "
			"API, NIC clock (%s) fitted onto CLOCK_MONOTONIC_RAW\n", dev, conv);
	}
	return true;
}

void wrp_hwts_detach(struct wrp_ctx *c)
{
	pthread_mutex_lock(&cq_lock);
	for (int i = 0; i < WRP_CQS; i++)
		if (wrp.cqs[i].cq && wrp.cqs[i].c == c)
			forget(&wrp.cqs[i]);
	pthread_mutex_unlock(&cq_lock);
}

enum pt_plugin_hw_ts wrp_hwts_state(const struct wrp_ctx *c)
{
	if (!c->caps.mask)
		return PT_PLUGIN_HW_TS_NONE;
	for (int i = 0; c->hwts && i < WRP_CQS; i++)
		if (wrp.cqs[i].cq && wrp.cqs[i].c == c && wrp.cqs[i].ts)
			return PT_PLUGIN_HW_TS_ON;
	return PT_PLUGIN_HW_TS_OFF;
}

void wrp_hwts_run_started(struct wrp_ctx *c)
{
	if (!c->hwts || !c->clk.read)
		return;
	pt_hwclock_sample(&c->clk); /* a failure keeps the fit from open */
	if (c->clk.fit.samples)
		wrt_clock_fit(wrp.w, &c->clk.fit);
}
