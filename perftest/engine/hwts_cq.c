/* SPDX-License-Identifier: BSD-2-Clause */
/* The tools' side of hardware CQE timestamps (docs/hw-timestamps.md §5, §6): when a
 * plugin listens and the device stamps CQEs, both CQs are created as ex-CQs
 * with IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and polled through the extended
 * API; each completion then reaches the plugins with its NIC time, and the
 * NIC clock is sampled against CLOCK_MONOTONIC_RAW (start, then every
 * PT_HWCLOCK_PERIOD_NS) so they can map one onto the other. Without a
 * plugin nothing changes: the ex-CQ path is slower than ibv_poll_cq and
 * would change what is measured. PERFTEST_HWTS=off keeps plain CQs.
 * On mlx5 (built with mlx5dv) ticks become ns through the kernel's clock
 * info, elsewhere through hca_core_clock; the run info names which. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine.h"
#include "plugin/hooks/hooks.h"

#ifdef HAVE_MLX5DV
/* hwts.h's contract is -errno; mlx5dv_get_clock_info returns errno */
static int mlx5_clock_info(void *ctx, struct mlx5dv_clock_info *ci)
{
	int rc = mlx5dv_get_clock_info(ctx, ci);

	return rc > 0 ? -rc : rc;
}
#endif

/* Where the device's tick -> ns parameters come from; NULL: hca_core_clock. */
static pt_hwclock_info_fn clock_info_of(struct ibv_context *ctx)
{
#ifdef HAVE_MLX5DV
	if (mlx5dv_is_supported(ctx->device))
		return mlx5_clock_info;
#endif
	(void)ctx;
	return NULL;
}

static struct ibv_cq *plain_cq(struct pt_ctx *c, int n)
{
	int vector = c->p->vector_given ? c->p->comp_vector : 0;   /* -X */

	/* --no_lock: the CQ joins the parent domain; a provider that cannot
	 * take one there (EOPNOTSUPP) gets a plain CQ, as 6.29 does */
	if (c->res.parent_pd) {
		struct ibv_cq_init_attr_ex a = {
			.cqe = (uint32_t)n, .channel = c->res.channel, .comp_vector = (uint32_t)vector,
			.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = c->res.parent_pd,
		};
		struct ibv_cq_ex *cq = ibv_create_cq_ex(c->dev.verbs, &a);

		if (cq)
			return ibv_cq_ex_to_cq(cq);
		if (errno != EOPNOTSUPP)
			return NULL;
	}
	return ibv_create_cq(c->dev.verbs, n, NULL, c->res.channel, vector);
}

/* Timestamps wanted and possible? If not, why (for the run info). */
static bool want_hwts(struct pt_ctx *c)
{
	const char *env = getenv(PT_HWTS_ENV);
	struct pt_hwts_caps caps;
	pt_hwclock_info_fn info;

	pt_hwts_probe(&c->dev.dev_attr, c->dev.devname, &caps);
	if (!caps.supported) {
		snprintf(c->res.hwts_note, sizeof(c->res.hwts_note), "%s", caps.why);
		return false;
	}
	if (env && !strcmp(env, "off")) {
		snprintf(c->res.hwts_note, sizeof(c->res.hwts_note), "turned off by %s=off", PT_HWTS_ENV);
		return false;
	}
	if (!pt_hooks_count())
		return false;
	info = clock_info_of(c->dev.verbs);
	c->res.hwclock = calloc(1, sizeof(*c->res.hwclock));
	if (!c->res.hwclock || pt_hwclock_init_ex(c->res.hwclock, caps.hz, caps.mask, pt_hwclock_read_ibv,
					      c->dev.verbs, info, c->dev.verbs)) {
		snprintf(c->res.hwts_note, sizeof(c->res.hwts_note), "cannot set up the NIC clock");
		free(c->res.hwclock);
		c->res.hwclock = NULL;
		return false;
	}
	/* an mlx5 whose clock info cannot be read: say why the domain is hca */
	if (info && !c->res.hwclock->use_ci)
		fprintf(stderr, " mlx5 clock info of %s unavailable (%s): CQE times converted with "
			"hca_core_clock (%s)\n", c->dev.devname, strerror(-c->res.hwclock->info_error),
			c->res.hwclock->domain);
	return true;
}

static int hw_cqs(struct pt_ctx *c, int ncq_send, int ncq_recv)
{
	char err[160];
	struct ibv_cq_ex *s = pt_cqx_create(c->dev.verbs, ncq_send, c->res.channel, true, err, sizeof(err));
	struct ibv_cq_ex *r = s ? pt_cqx_create(c->dev.verbs, ncq_recv, c->res.channel, true, err, sizeof(err))
				: NULL;

	if (!r) {
		/* e.g. a device whose QPs take only real-time stamps (docs/hw-timestamps.md §4) */
		if (s)
			ibv_destroy_cq(ibv_cq_ex_to_cq(s));
		snprintf(c->res.hwts_note, sizeof(c->res.hwts_note), "%s", err);
		return -1;
	}
	c->res.send_cq = ibv_cq_ex_to_cq(s);
	c->res.recv_cq = ibv_cq_ex_to_cq(r);
	c->res.send_cqx = (struct pt_cqx){ .cq = s, .clk = c->res.hwclock };
	c->res.recv_cqx = (struct pt_cqx){ .cq = r, .clk = c->res.hwclock };
	c->res.hwts = true;
	/* the first pair of clock readings; a device without a readable clock
	 * still stamps CQEs, the plugins then have no fit to map them with */
	if (pt_hwclock_sample(c->res.hwclock))
		fprintf(stderr, " NIC clock of %s not readable (%s): CQE times stay on the NIC clock\n",
			c->dev.devname, strerror(-c->res.hwclock->last_error));
	return 0;
}

int pt_cqs_create(struct pt_ctx *c, int ncq_send, int ncq_recv)
{
	if (!(want_hwts(c) && !hw_cqs(c, ncq_send, ncq_recv))) {
		if (c->res.hwclock && c->res.hwts_note[0])
			fprintf(stderr, " CQE timestamps unavailable (%s): software times only\n",
				c->res.hwts_note);
		c->res.send_cq = plain_cq(c, ncq_send);
		c->res.recv_cq = plain_cq(c, ncq_recv);
	}
	if (!c->res.send_cq || !c->res.recv_cq) {
		fprintf(stderr, " Couldn't create CQs: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int pt_poll_cq_hw(struct pt_res *r, bool recv, int n, struct ibv_wc *wc, uint64_t *hw_ns)
{
	int got = pt_cqx_poll(recv ? &r->recv_cqx : &r->send_cqx, n, wc, hw_ns);

	/* cheap until the period is up: one clock read and a compare */
	if (pt_hwclock_tick(r->hwclock, pt_now_ns()))
		pt_hooks_clock_fit(&r->hwclock->fit);
	return got;
}
