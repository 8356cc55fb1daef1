/* SPDX-License-Identifier: BSD-2-Clause */
/* Hardware CQE timestamps: capability probe, tick conversion, clock fit and
 * the extended-CQ poller (hwts.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "hwts.h"

void pt_hwts_probe(const struct ibv_device_attr_ex *attr, const char *devname,
		   struct pt_hwts_caps *caps)
{
	memset(caps, 0, sizeof(*caps));
	caps->mask = attr->completion_timestamp_mask;
	caps->hz = attr->hca_core_clock * 1000ull;
	if (!caps->mask)
		snprintf(caps->why, sizeof(caps->why), "not supported by %s", devname);
	else if (!caps->hz)
		snprintf(caps->why, sizeof(caps->why),
			 "%s stamps CQEs but reports no hca_core_clock: cannot convert to ns", devname);
	else
		caps->supported = true;
}

int pt_clock_fit_compute(const struct pt_clock_sample *s, unsigned n,
			 struct pt_plugin_clock_fit *fit)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, a, b, ss = 0, worst = 0;

	if (n == 0)
		return -1;
	memset(fit, 0, sizeof(*fit));
	fit->struct_size = sizeof(*fit);
	fit->samples = n;
	/* Work on offsets from the first sample: ns since boot do not fit a
	 * double's 53 bits once squared. */
	fit->hw_ref_ns = s[0].hw_ns;
	fit->sw_ref_ns = s[0].sw_ns;
	for (unsigned i = 0; i < n; i++) {
		mx += (double)(int64_t)(s[i].hw_ns - fit->hw_ref_ns);
		my += (double)(int64_t)(s[i].sw_ns - fit->sw_ref_ns);
	}
	mx /= n;
	my /= n;
	for (unsigned i = 0; i < n; i++) {
		double dx = (double)(int64_t)(s[i].hw_ns - fit->hw_ref_ns) - mx;
		double dy = (double)(int64_t)(s[i].sw_ns - fit->sw_ref_ns) - my;

		sxx += dx * dx;
		sxy += dx * dy;
	}
	if (n >= 2 && sxx == 0)
		return -1;
	b = n >= 2 ? sxy / sxx : 1.0;
	a = my - b * mx;
	for (unsigned i = 0; i < n; i++) {
		double x = (double)(int64_t)(s[i].hw_ns - fit->hw_ref_ns);
		double r = (double)(int64_t)(s[i].sw_ns - fit->sw_ref_ns) - (a + b * x);

		ss += r * r;
		if (fabs(r) > worst)
			worst = fabs(r);
	}
	fit->intercept_ns = a;
	fit->slope = b;
	fit->residual_rms_ns = sqrt(ss / n);
	fit->residual_max_ns = worst;
	return 0;
}

int pt_hwclock_read_ibv(void *ctx, uint64_t *ticks)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int rc = ibv_query_rt_values_ex(ctx, &v);

	if (rc)
		return -rc;
	if (!(v.comp_mask & IBV_VALUES_MASK_RAW_CLOCK))
		return -EOPNOTSUPP;
	/* mlx5 puts the cycle count in tv_nsec with tv_sec = 0 */
	*ticks = (uint64_t)v.raw_clock.tv_sec * 1000000000ull + (uint64_t)v.raw_clock.tv_nsec;
	return 0;
}

int pt_hwclock_init(struct pt_hwclock *c, uint64_t hz, uint64_t mask, pt_hwclock_read_fn read,
		    void *read_arg)
{
	return pt_hwclock_init_ex(c, hz, mask, read, read_arg, NULL, NULL);
}

/* The clock info for the conversions from here on; a failure keeps the last. */
static void refresh_info(struct pt_hwclock *c)
{
#ifdef HAVE_MLX5DV
	struct mlx5dv_clock_info ci;
	int rc = c->info(c->info_arg, &ci);

	if (rc) {
		c->info_error = rc;
		c->info_failures++;
		return;
	}
	c->ci = ci;
#else
	(void)c;
#endif
}

int pt_hwclock_init_ex(struct pt_hwclock *c, uint64_t hz, uint64_t mask, pt_hwclock_read_fn read,
		       void *read_arg, pt_hwclock_info_fn info, void *info_arg)
{
	struct timespec gap = { 0, 2000000 };

	memset(c, 0, sizeof(*c));
	c->domain = PT_HWCLOCK_DOMAIN_HCA;
	if (!hz || !mask)
		return -EINVAL;
	c->hz = hz;
	c->mask = mask;
	c->read = read;
	c->read_arg = read_arg;
	c->period_ns = PT_HWCLOCK_PERIOD_NS;
	if (info) {
#ifdef HAVE_MLX5DV
		int rc = info(info_arg, &c->ci);

		if (rc) {
			c->info_error = rc; /* hz it is, for the clock's life */
		} else {
			c->use_ci = true;
			c->info = info;
			c->info_arg = info_arg;
			c->domain = PT_HWCLOCK_DOMAIN_MLX5;
		}
#else
		(void)info_arg;
		c->info_error = -EOPNOTSUPP; /* built without mlx5dv */
#endif
	}
	if (!read)
		return 0;
	/* Two samples 2 ms apart give a first slope before the run starts. */
	if (pt_hwclock_sample(c))
		return c->last_error;
	nanosleep(&gap, NULL);
	return pt_hwclock_sample(c) ? c->last_error : 0;
}

/* ticks / hz in ns, split so that (ext % hz) * 1e9 stays below 2^64 for hz < 18 GHz */
static inline uint64_t hz_ns(const struct pt_hwclock *c, uint64_t ext)
{
	return ext / c->hz * 1000000000ull + ext % c->hz * 1000000000ull / c->hz;
}

uint64_t pt_hwclock_ns(struct pt_hwclock *c, uint64_t ticks)
{
	uint64_t raw, ext, fwd;

#ifdef HAVE_MLX5DV
	/* fixed for the clock's life: predicted right on every CQE */
	if (c->use_ci)
		return mlx5dv_ts_to_ns(&c->ci, ticks);
#endif
	raw = ticks & c->mask;
	if (!c->primed) {
		c->primed = true;
		ext = raw;
	} else {
		fwd = (raw - c->last_raw) & c->mask;
		if (fwd <= c->mask / 2) {
			ext = c->last_ext + fwd;
		} else {
			/* an older stamp (CQEs of two CQs polled out of order) */
			return hz_ns(c, c->last_ext - ((c->last_raw - raw) & c->mask));
		}
	}
	c->last_raw = raw;
	c->last_ext = ext;
	return hz_ns(c, ext);
}

int pt_hwclock_sample(struct pt_hwclock *c)
{
	uint64_t best = UINT64_MAX, hw = 0, sw = 0;

	/* first: the reading below converts with the kernel's newest view */
	if (c->use_ci)
		refresh_info(c);
	if (!c->read) {
		c->next_sample_ns = pt_now_ns() + c->period_ns;
		return -EOPNOTSUPP;
	}
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = pt_now_ns(), ticks, t1;
		int rc = c->read(c->read_arg, &ticks);

		t1 = pt_now_ns();
		if (rc) {
			c->last_error = rc;
			c->next_sample_ns = t1 + c->period_ns;
			return rc;
		}
		if (t1 - t0 < best) {
			best = t1 - t0;
			hw = ticks;
			sw = t0 + (t1 - t0) / 2;
		}
	}
	c->samples[c->next] = (struct pt_clock_sample){ .hw_ns = pt_hwclock_ns(c, hw), .sw_ns = sw };
	c->next = (c->next + 1) % PT_HWCLOCK_SAMPLES;
	if (c->nsamples < PT_HWCLOCK_SAMPLES)
		c->nsamples++;
	c->next_sample_ns = sw + c->period_ns;
	/* oldest first, so the reference is the oldest sample kept */
	{
		struct pt_clock_sample ordered[PT_HWCLOCK_SAMPLES];
		struct pt_plugin_clock_fit fit;
		unsigned first = c->nsamples < PT_HWCLOCK_SAMPLES ? 0 : c->next;

		for (unsigned i = 0; i < c->nsamples; i++)
			ordered[i] = c->samples[(first + i) % PT_HWCLOCK_SAMPLES];
		/* a clock that did not move: keep the last good fit, say so */
		if (pt_clock_fit_compute(ordered, c->nsamples, &fit)) {
			c->last_error = -EDOM;
			return -EDOM;
		}
		c->fit = fit;
	}
	return 0;
}

struct ibv_cq_ex *pt_cqx_create(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch,
				bool ts, char *err, size_t err_len)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = (uint32_t)cqe,
		.channel = ch,
		.wc_flags = IBV_WC_STANDARD_FLAGS | (ts ? IBV_WC_EX_WITH_COMPLETION_TIMESTAMP : 0),
	};
	struct ibv_cq_ex *cq = ibv_create_cq_ex(ctx, &attr);

	if (!cq)
		snprintf(err, err_len, "ibv_create_cq_ex(%d entries%s) failed: %s", cqe,
			 ts ? ", completion timestamps" : "", strerror(errno));
	return cq;
}

/* The fields ibv_poll_cq fills; on error only the ones valid then. */
static void read_wc(struct ibv_cq_ex *cq, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->vendor_err = ibv_wc_read_vendor_err(cq);
	wc->qp_num = ibv_wc_read_qp_num(cq);
	if (cq->status != IBV_WC_SUCCESS)
		return;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	wc->src_qp = ibv_wc_read_src_qp(cq);
	wc->wc_flags = ibv_wc_read_wc_flags(cq);
	if (wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV))
		wc->imm_data = ibv_wc_read_imm_data(cq);
	wc->slid = ibv_wc_read_slid(cq);
	wc->sl = ibv_wc_read_sl(cq);
	wc->dlid_path_bits = ibv_wc_read_dlid_path_bits(cq);
}

int pt_cqx_poll(struct pt_cqx *p, int n, struct ibv_wc *wc, uint64_t *hw_ns)
{
	struct ibv_poll_cq_attr attr = { 0 };
	bool ts = p->clk && hw_ns;
	int k = 0, rc;

	if (n <= 0)
		return 0;
	rc = ibv_start_poll(p->cq, &attr);
	if (rc == ENOENT)
		return 0;
	if (rc)
		return -rc; /* the contract: no end_poll after a failed start */
	for (;;) {
		read_wc(p->cq, &wc[k]);
		if (ts)
			hw_ns[k] = pt_hwclock_ns(p->clk, p->read_ts ? p->read_ts(p->cq)
								: ibv_wc_read_completion_ts(p->cq));
		if (++k == n)
			break;
		rc = ibv_next_poll(p->cq);
		if (rc)
			break; /* ENOENT: drained; another error surfaces on the next start */
	}
	ibv_end_poll(p->cq);
	return k;
}
