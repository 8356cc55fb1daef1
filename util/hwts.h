/* SPDX-License-Identifier: BSD-2-Clause */
/* Hardware CQE timestamps (docs/hw-timestamps.md §1-6).
 *
 * - pt_hwts_probe: does the device stamp CQEs (completion_timestamp_mask and
 *   hca_core_clock in kHz from ibv_query_device_ex)? rxe does not.
 * - struct pt_hwclock: NIC ticks -> NIC ns, plus a least-squares line
 *   mapping NIC ns onto CLOCK_MONOTONIC_RAW, fitted from paired samples of
 *   both clocks (ibv_query_rt_values_ex bracketed by two pt_now_ns) taken
 *   at start and every period_ns. The fit and its residual go to the
 *   plugins as a struct pt_plugin_clock_fit. Ticks become ns one of two
 *   ways, named by the clock's domain:
 *   - "mlx5-clock-info": mlx5dv_ts_to_ns with the kernel's clock info
 *     (mlx5dv_get_clock_info), re-read at each sample: it follows the PHC
 *     as the kernel adjusts it (ptp4l), not just the nominal frequency;
 *   - "hca-free-running": ticks / hca_core_clock, counter wrap handled with
 *     the mask; for other devices, builds without mlx5dv, or when the
 *     clock info cannot be read at init.
 * - struct pt_cqx: an ibv_poll_cq look-alike over an ibv_cq_ex created with
 *   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP (start/next/end_poll), returning the
 *   NIC time of each completion. Not for rxe: its ex-CQ polling is broken in
 *   rdma-core 44 (docs/hw-timestamps.md §3), and it has no timestamps anyway. */
#ifndef PT_HWTS_H
#define PT_HWTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#ifdef HAVE_MLX5DV
#include <infiniband/mlx5dv.h>
#endif
#include "plugin/perftest_plugin.h"

#define PT_HWCLOCK_SAMPLES 256          /* the fit uses the latest this many */
#define PT_HWCLOCK_PERIOD_NS 100000000ull /* re-sample every 100 ms */
#define PT_HWCLOCK_DOMAIN_HCA "hca-free-running"  /* ticks / hca_core_clock */
#define PT_HWCLOCK_DOMAIN_MLX5 "mlx5-clock-info"   /* mlx5dv_ts_to_ns */

struct pt_hwts_caps {
	bool supported;
	uint64_t mask;              /* completion_timestamp_mask */
	uint64_t hz;                /* hca_core_clock * 1000 */
	char why[160];              /* "not supported by rxe0" when !supported */
};

/* From an ibv_query_device_ex result; never fails. */
void pt_hwts_probe(const struct ibv_device_attr_ex *attr, const char *devname,
		   struct pt_hwts_caps *caps);

/* One pair of readings of both clocks. */
struct pt_clock_sample {
	uint64_t hw_ns, sw_ns;
};

/* Least squares sw = a + b * hw over n >= 2 samples (n == 1: slope 1).
 * Residuals in ns. -1 when n == 0 or every hw is equal. */
int pt_clock_fit_compute(const struct pt_clock_sample *s, unsigned n,
			 struct pt_plugin_clock_fit *fit);

/* Reads the NIC's free-running counter now (ticks); 0 or -errno. */
typedef int (*pt_hwclock_read_fn)(void *arg, uint64_t *ticks);
/* The real one: ibv_query_rt_values_ex(ctx = arg, RAW_CLOCK). */
int pt_hwclock_read_ibv(void *ctx, uint64_t *ticks);

struct mlx5dv_clock_info;
/* Fills the kernel's current tick -> ns parameters; 0 or -errno. The real
 * one wraps mlx5dv_get_clock_info (perftest/engine/hwts_cq.c links libmlx5, the
 * preload library looks it up: preload_cq.c); tests pass their own. */
typedef int (*pt_hwclock_info_fn)(void *arg, struct mlx5dv_clock_info *ci);

struct pt_hwclock {
	const char *domain;         /* PT_HWCLOCK_DOMAIN_*: the conversion in use */
	bool use_ci;                /* ci converts (domain MLX5); else hz does */
#ifdef HAVE_MLX5DV
	struct mlx5dv_clock_info ci;
#endif
	pt_hwclock_info_fn info;    /* refreshes ci at each sample; NULL: hz only */
	void *info_arg;
	int info_error;             /* -errno of the last failed clock-info read, 0 if none */
	unsigned info_failures;     /* refreshes that failed (the previous ci stayed) */
	uint64_t hz, mask;
	uint64_t last_raw, last_ext; /* unwrapping state */
	bool primed;
	pt_hwclock_read_fn read;
	void *read_arg;
	uint64_t period_ns, next_sample_ns;
	struct pt_clock_sample samples[PT_HWCLOCK_SAMPLES];
	unsigned nsamples, next;
	struct pt_plugin_clock_fit fit;
	int last_error;             /* of the last failed sample: -errno of the read, or
	                               -EDOM when the NIC clock did not move; 0 if none */
};

/* read may be NULL: conversion only, no samples. hca_core_clock conversion. */
int pt_hwclock_init(struct pt_hwclock *c, uint64_t hz, uint64_t mask, pt_hwclock_read_fn read,
		    void *read_arg);
/* The same, converting with clock info from info (may be NULL) when it can
 * be read now (and the build has mlx5dv); else with hz, info_error saying
 * why. The domain is fixed here for the clock's life: ns of the two
 * conversions are on different time lines. */
int pt_hwclock_init_ex(struct pt_hwclock *c, uint64_t hz, uint64_t mask, pt_hwclock_read_fn read,
		       void *read_arg, pt_hwclock_info_fn info, void *info_arg);
/* Ticks of a CQE (or of the counter) -> ns on the NIC clock. hz: unwrapped,
 * a value up to mask/2 behind the last one is taken as older, not wrapped;
 * clock info: as mlx5dv_ts_to_ns, relative to the info's last_cycles. */
uint64_t pt_hwclock_ns(struct pt_hwclock *c, uint64_t ticks);
/* Refresh the clock info (when converting with it; a failure keeps the
 * previous one and counts in info_failures), take one paired sample (best
 * of a few tries: the tightest bracket) and refit. 0, or -errno of the
 * read, or -EDOM when no line fits (the NIC clock did not move): the last
 * good fit stays. Without a read: the refresh only, -EOPNOTSUPP. */
int pt_hwclock_sample(struct pt_hwclock *c);
/* Sample when period_ns has passed since the last one; 1 when refitted.
 * Without a read only the clock info is refreshed. */
static inline int pt_hwclock_tick(struct pt_hwclock *c, uint64_t now_ns)
{
	if (__builtin_expect(now_ns < c->next_sample_ns, 1))
		return 0;
	return pt_hwclock_sample(c) == 0;
}

/* An extended CQ with timestamps, polled like ibv_poll_cq. */
struct pt_cqx {
	struct ibv_cq_ex *cq;
	struct pt_hwclock *clk;     /* NULL: do not read timestamps */
	/* NULL: the CQ's own read_completion_ts. Else the provider's, kept
	 * aside (LD_PRELOAD mode hides it from a program that did not ask). */
	uint64_t (*read_ts)(struct ibv_cq_ex *cq);
};

/* ibv_create_cq_ex with the standard fields and, when ts, the completion
 * timestamp. NULL with err filled on failure. */
struct ibv_cq_ex *pt_cqx_create(struct ibv_context *ctx, int cqe, struct ibv_comp_channel *ch,
				bool ts, char *err, size_t err_len);
/* Up to n completions into wc (the fields ibv_poll_cq fills; pkey_index is
 * 0: the ex API cannot read it) and, when hw_ns != NULL and clk is set, their
 * NIC times in ns. Returns the count, 0 when empty, or -errno. */
int pt_cqx_poll(struct pt_cqx *p, int n, struct ibv_wc *wc, uint64_t *hw_ns);

#endif
