/* SPDX-License-Identifier: BSD-2-Clause */
/* Result math from nanosecond measurements; see results.h for the rules. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bw_peak.h"
#include "results.h"
#include "select_u64.h"
#include "sort_u64.h"

/* ----------------------------------------------------------- bandwidth -- */

int pt_bw_compute(const struct pt_bw_input *in, struct pt_bw_result *out)
{
	double unit, secs;

	if (!in || !out)
		return -EINVAL;
	if (in->elapsed_ns == 0)
		return -EDOM;
	unit = in->gbits ? PT_GBIT_BYTES : PT_MIB;
	secs = (double)in->elapsed_ns / 1e9;

	memset(out, 0, sizeof(*out));
	out->size = in->size;
	out->iters = in->iters;
	out->gbits = in->gbits;
	out->bw_avg = (double)in->size * (double)in->msgs / secs / unit;
	out->msg_rate = (double)in->msgs / secs / 1e6;
	out->per_port = in->per_port;
	for (int k = 0; in->per_port && k < 2; k++) {
		out->bw_avg_port[k] = (double)in->size * (double)in->msgs_port[k] / secs / unit;
		out->msg_rate_port[k] = (double)in->msgs_port[k] / secs / 1e6;
	}
	if (in->peak && in->msgs > 0) {
		double min_ns;
		int rc = pt_bw_peak_result(in->peak, &min_ns);

		if (rc)
			return rc;
		out->bw_peak = (double)in->size * 1e9 / min_ns / unit;
	}
	return 0;
}

int pt_bw_sum(const struct pt_bw_result *local,
	      const struct pt_bw_result *remote, struct pt_bw_result *out)
{
	struct pt_bw_result r;

	if (!local || !remote || !out || local->gbits != remote->gbits)
		return -EINVAL;
	r = *local;
	r.bw_peak += remote->bw_peak;
	r.bw_avg += remote->bw_avg;
	r.msg_rate += remote->msg_rate;
	for (int k = 0; r.per_port && remote->per_port && k < 2; k++) {
		r.bw_avg_port[k] += remote->bw_avg_port[k];
		r.msg_rate_port[k] += remote->msg_rate_port[k];
	}
	*out = r;
	return 0;
}

/* ------------------------------------------------------------- latency -- */

uint64_t pt_percentile_rank(uint64_t n, uint32_t ppm)
{
	uint64_t rank;

	if (ppm > 1000000u)
		ppm = 1000000u;
	/* ceil(ppm * n / 1e6) without floating point; split to avoid
	 * overflow for any n: n = q*1e6 + r. */
	rank = (n / 1000000u) * ppm +
	       ((n % 1000000u) * ppm + 999999u) / 1000000u;
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return rank;
}

uint64_t pt_percentile_sorted(const uint64_t *sorted, size_t n, uint32_t ppm)
{
	if (!sorted || n == 0)
		return 0;
	return sorted[pt_percentile_rank(n, ppm) - 1];
}

/* One sample into the pass's range and sum (which may wrap: sum_end). */
static inline void sum_add(struct pt_lat_sum *s, uint64_t v)
{
	/* v - c as signed is exact where the select path uses it (|v - c| <=
	 * spread < 2^63); elsewhere these sums only wrap, unused */
	int64_t dv = (int64_t)(v - s->c);

	s->min = v < s->min ? v : s->min;
	s->max = v > s->max ? v : s->max;
	s->total += v;
	s->s1 += (uint64_t)dv;
	s->s2 += (unsigned __int128)((__int128)dv * dv);
}

/* The sum of n samples is exact when n values of max cannot wrap it. */
static inline void sum_end(struct pt_lat_sum *s, size_t n)
{
	s->exact = s->max == 0 || n <= UINT64_MAX / s->max;
}

void pt_lat_samples(const uint64_t *restrict stamps, size_t n, uint64_t *restrict d,
		    struct pt_lat_sum *sum)
{
	struct pt_lat_sum s = { .min = UINT64_MAX };   /* in registers */
	size_t i = 0;

	if (n > 1)
		s.c = stamps[1] - stamps[0];

	/* by fours: the loop's own test and step once per four samples */
	for (; i + 4 < n; i += 4) {
		d[i] = stamps[i + 1] - stamps[i];
		d[i + 1] = stamps[i + 2] - stamps[i + 1];
		d[i + 2] = stamps[i + 3] - stamps[i + 2];
		d[i + 3] = stamps[i + 4] - stamps[i + 3];
		sum_add(&s, d[i]);
		sum_add(&s, d[i + 1]);
		sum_add(&s, d[i + 2]);
		sum_add(&s, d[i + 3]);
	}
	for (; i + 1 < n; i++) {
		d[i] = stamps[i + 1] - stamps[i];
		sum_add(&s, d[i]);
	}
	sum_end(&s, n ? n - 1 : 0);
	*sum = s;
}

int pt_lat_stats_compute(uint64_t *samples, size_t n, size_t tail_drop,
			 struct pt_lat_stats *out)
{
	return pt_lat_stats_compute_in(samples, n, tail_drop, out, NULL);
}

int pt_lat_stats_compute_in(uint64_t *samples, size_t n, size_t tail_drop,
			    struct pt_lat_stats *out, uint64_t *scratch)
{
	struct pt_lat_sum sum = { .min = UINT64_MAX, .c = samples && n ? samples[0] : 0 };

	for (size_t i = 0; samples && i < n; i++)
		sum_add(&sum, samples[i]);
	sum_end(&sum, n);
	return pt_lat_stats_compute_sum(samples, n, tail_drop, out, scratch, &sum, NULL);
}

static unsigned bits_of(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

#define SELECT_TAIL_MAX 8u   /* dropped samples the select path takes as ranks */

/* The row's order statistics by rank (select_u64.c), the moments in exact
 * integers about the first sample (the samples' pass summed them): no sort. Where they fit: the sum
 * exact, n * spread < 2^63 (then n^2 * spread^2 < 2^126); else 1 (the
 * caller sorts). 0, or -ENOMEM. The variance is k * S2 - S1^2 over k^2,
 * exact before its one rounding; the sorted path sums long doubles. */
static int stats_by_select(uint64_t *samples, size_t n, size_t tail_drop, struct pt_lat_stats *out,
			   uint64_t *scratch, const struct pt_lat_sum *all)
{
	static const uint32_t ppm[6] = { PT_P50, PT_P90, PT_P99, PT_P99_9, PT_P99_99, PT_P99_999 };
	enum { W = 3 + 6 + SELECT_TAIL_MAX };
	uint64_t want[W], ranks[W], vals[W], v[W], s1 = all->s1, total, spread = all->max - all->min;
	unsigned __int128 s2 = all->s2, num;
	size_t k = n - tail_drop, nw = 0, idx[W];
	int rc;

	if (!all->exact || tail_drop > SELECT_TAIL_MAX || n >= UINT32_MAX ||
	    bits_of(n) + bits_of(spread) > 63)
		return 1;
	want[nw++] = k - 1;                      /* the largest kept */
	want[nw++] = k / 2;                      /* the median: one rank, or two */
	if (k % 2 == 0)
		want[nw++] = k / 2 - 1;
	for (size_t p = 0; p < 6; p++)
		want[nw++] = pt_percentile_rank(k, ppm[p]) - 1;
	for (size_t i = k; i < n; i++)           /* the dropped tail */
		want[nw++] = i;
	/* ranks ascending for the select, idx maps them back */
	for (size_t i = 0; i < nw; i++) {
		size_t j = i;

		for (; j > 0 && want[idx[j - 1]] > want[i]; j--)
			idx[j] = idx[j - 1];
		idx[j] = i;
	}
	for (size_t i = 0; i < nw; i++)
		ranks[i] = want[idx[i]];
	rc = pt_select_u64(samples, n, all->min, all->max, ranks, nw, v, scratch);
	if (rc)
		return rc;
	for (size_t i = 0; i < nw; i++)
		vals[idx[i]] = v[i];
	total = all->total;
	for (size_t i = 0; i < tail_drop; i++) {
		uint64_t x = vals[nw - tail_drop + i];
		int64_t d = (int64_t)(x - all->c);

		total -= x;
		s1 -= (uint64_t)d;
		s2 -= (unsigned __int128)((__int128)d * d);
	}
	memset(out, 0, sizeof(*out));
	out->count = k;
	out->min = all->min;
	out->max = vals[0];
	out->max_all = all->max;
	if (k % 2)
		out->median = (double)vals[1];
	else /* as the sorted path: the sum of two huge values cannot overflow */
		out->median = (double)vals[2] + ((double)vals[1] - (double)vals[2]) / 2.0;
	out->avg = (double)((long double)total / k);
	num = (unsigned __int128)k * s2 - (unsigned __int128)((__int128)(int64_t)s1 * (int64_t)s1);
	out->stdev = sqrt((double)((long double)num / (long double)k / (long double)k));
	out->p50 = vals[nw - tail_drop - 6];
	out->p90 = vals[nw - tail_drop - 5];
	out->p99 = vals[nw - tail_drop - 4];
	out->p99_9 = vals[nw - tail_drop - 3];
	out->p99_99 = vals[nw - tail_drop - 2];
	out->p99_999 = vals[nw - tail_drop - 1];
	return 0;
}

int pt_lat_stats_compute_ranks(uint64_t *samples, size_t n, size_t tail_drop,
			       struct pt_lat_stats *out, uint64_t *scratch,
			       const struct pt_lat_sum *all)
{
	int rc;

	if (!samples || !out || !all)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	if (tail_drop >= n)
		return -EINVAL;
	rc = stats_by_select(samples, n, tail_drop, out, scratch, all);
	if (rc <= 0)
		return rc;
	return pt_lat_stats_compute_sum(samples, n, tail_drop, out, scratch, all, NULL);
}

int pt_lat_stats_compute_sum(uint64_t *samples, size_t n, size_t tail_drop,
			     struct pt_lat_stats *out, uint64_t *scratch,
			     const struct pt_lat_sum *all, const uint64_t **sorted_out)
{
	const uint64_t *a;
	uint64_t total = all->total;
	long double sum = 0, sq = 0;
	double mean;
	size_t k;

	if (!samples || !out)
		return -EINVAL;
	if (n == 0)
		return -EDOM;
	if (tail_drop >= n)
		return -EINVAL;
	/* in place, or where the sort left them when the caller takes that */
	a = pt_sort_u64_to(samples, n, all->min, all->max, scratch, !sorted_out);
	if (sorted_out)
		*sorted_out = a;
	k = n - tail_drop;
	/* the kept samples' sum: exact in integers, and so in long double (64
	 * mantissa bits), whatever the order; else summed as long doubles */
	if (all->exact) {
		for (size_t i = k; i < n; i++)
			total -= a[i];
		sum = (long double)total;
	} else {
		for (size_t i = 0; i < k; i++)
			sum += a[i];
	}

	memset(out, 0, sizeof(*out));
	out->count = k;
	out->min = a[0];
	out->max = a[k - 1];
	out->max_all = a[n - 1];
	if (k % 2)
		out->median = (double)a[k / 2];
	else /* written so the sum of two huge values cannot overflow */
		out->median = (double)a[k / 2 - 1] +
			      ((double)a[k / 2] -
			       (double)a[k / 2 - 1]) / 2.0;
	mean = (double)(sum / k);
	/* Two passes: exact deviations, no catastrophic cancellation. */
	if (all->max <= INT64_MAX) {   /* the same values, converted without the sign fix-up */
		for (size_t i = 0; i < k; i++) {
			long double d = (long double)(int64_t)a[i] - mean;
			sq += d * d;
		}
	} else {
		for (size_t i = 0; i < k; i++) {
			long double d = (long double)a[i] - mean;
			sq += d * d;
		}
	}
	out->avg = mean;
	out->stdev = sqrt((double)(sq / k));
	out->p50 = pt_percentile_sorted(a, k, PT_P50);
	out->p90 = pt_percentile_sorted(a, k, PT_P90);
	out->p99 = pt_percentile_sorted(a, k, PT_P99);
	out->p99_9 = pt_percentile_sorted(a, k, PT_P99_9);
	out->p99_99 = pt_percentile_sorted(a, k, PT_P99_99);
	out->p99_999 = pt_percentile_sorted(a, k, PT_P99_999);
	return 0;
}

int pt_lat_result_from_stats(const struct pt_lat_stats *st, uint64_t size,
			     uint64_t iters, unsigned rtt_factor,
			     struct pt_lat_result *out)
{
	double div;

	if (!st || !out || rtt_factor == 0)
		return -EINVAL;
	if (st->count == 0)
		return -EDOM;
	div = 1000.0 * rtt_factor;
	memset(out, 0, sizeof(*out));
	out->size = size;
	out->iters = iters;
	out->t_min = (double)st->min / div;
	out->t_max = (double)st->max / div;
	out->t_typical = st->median / div;
	out->t_avg = st->avg / div;
	out->t_stdev = st->stdev / div;
	out->p50 = (double)st->p50 / div;
	out->p90 = (double)st->p90 / div;
	out->p99 = (double)st->p99 / div;
	out->p99_9 = (double)st->p99_9 / div;
	out->p99_99 = (double)st->p99_99 / div;
	out->p99_999 = (double)st->p99_999 / div;
	out->max_all = (double)st->max_all / div;
	return 0;
}

int pt_lat_duration_compute(uint64_t size, uint64_t iters, uint64_t elapsed_ns,
			    unsigned rtt_factor, struct pt_lat_dur_result *out)
{
	if (!out || rtt_factor == 0)
		return -EINVAL;
	if (elapsed_ns == 0 || iters == 0)
		return -EDOM;
	out->size = size;
	out->iters = iters;
	out->t_avg = (double)elapsed_ns / 1000.0 / rtt_factor / (double)iters;
	out->tps = (double)iters / ((double)elapsed_ns / 1e9);
	return 0;
}

int pt_lat_duration_percentiles(const struct pt_hist *h, unsigned rtt_factor,
				struct pt_lat_dur_result *out)
{
	struct pt_lat_stats st;
	struct pt_lat_result r;
	int rc;

	if (!h || !out || rtt_factor == 0)
		return -EINVAL;
	if ((rc = pt_hist_stats(h, &st)) ||
	    (rc = pt_lat_result_from_stats(&st, out->size, out->iters, rtt_factor, &r)))
		return rc;
	out->has_pct = true;
	out->samples = st.count;
	out->t_min = r.t_min;
	out->p50 = r.p50;
	out->p90 = r.p90;
	out->p99 = r.p99;
	out->p99_9 = r.p99_9;
	out->p99_99 = r.p99_99;
	out->p99_999 = r.p99_999;
	out->max = r.max_all;
	return 0;
}

/* ----------------------------------------------------------- histogram -- */

#define HIST_SUB_BITS 7u
#define HIST_SUB (1u << HIST_SUB_BITS)  /* 128 exact buckets */
#define HIST_HALF (HIST_SUB / 2u)       /* 64 buckets per power of two */
#define HIST_NBUCKETS (HIST_SUB + (64u - HIST_SUB_BITS) * HIST_HALF)

struct pt_hist {
	uint64_t total, min, max;
	double mean, m2; /* Welford running mean and sum of squared deviations */
	uint64_t counts[HIST_NBUCKETS];
};

static unsigned hist_index(uint64_t v)
{
	unsigned msb, e;

	if (v < HIST_SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	e = msb - (HIST_SUB_BITS - 1u); /* >= 1; leaves v >> e in [64, 128) */
	return HIST_SUB + (e - 1u) * HIST_HALF +
	       (unsigned)((v >> e) - HIST_HALF);
}

static uint64_t hist_value(unsigned idx)
{
	unsigned j, e;
	uint64_t m;

	if (idx < HIST_SUB)
		return idx;
	j = idx - HIST_SUB;
	e = j / HIST_HALF + 1u;
	m = HIST_HALF + j % HIST_HALF;
	return (m << e) + (1ull << (e - 1u)); /* bucket midpoint */
}

struct pt_hist *pt_hist_new(void)
{
	struct pt_hist *h = malloc(sizeof(*h));

	if (h)
		pt_hist_reset(h);
	return h;
}

void pt_hist_free(struct pt_hist *h)
{
	free(h);
}

void pt_hist_reset(struct pt_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void pt_hist_record(struct pt_hist *h, uint64_t ns)
{
	double d;

	h->counts[hist_index(ns)]++;
	h->total++;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	d = (double)ns - h->mean;
	h->mean += d / (double)h->total;
	h->m2 += d * ((double)ns - h->mean);
}

void pt_hist_merge(struct pt_hist *dst, const struct pt_hist *src)
{
	double n1 = (double)dst->total, n2 = (double)src->total, d;

	if (src->total == 0)
		return;
	for (unsigned i = 0; i < HIST_NBUCKETS; i++)
		dst->counts[i] += src->counts[i];
	/* Chan et al. pairwise update of mean and M2. */
	d = src->mean - dst->mean;
	dst->mean += d * n2 / (n1 + n2);
	dst->m2 += src->m2 + d * d * n1 * n2 / (n1 + n2);
	dst->total += src->total;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t pt_hist_count(const struct pt_hist *h)
{
	return h->total;
}

uint64_t pt_hist_quantize(uint64_t v)
{
	return hist_value(hist_index(v));
}

double pt_hist_max_rel_error(void)
{
	/* Half a bucket over the smallest value of the narrowest-relative
	 * bucket: 2^(e-1) / (64 * 2^e). */
	return 1.0 / (2.0 * HIST_HALF);
}

/* Value of the sample with 1-based rank r, clamped to the exact min/max:
 * the true value shares the bucket, so clamping only gets closer. */
static uint64_t hist_value_at_rank(const struct pt_hist *h, uint64_t r)
{
	uint64_t cum = 0, v = h->max;

	for (unsigned i = 0; i < HIST_NBUCKETS; i++) {
		cum += h->counts[i];
		if (cum >= r) {
			v = hist_value(i);
			break;
		}
	}
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

uint64_t pt_hist_percentile(const struct pt_hist *h, uint32_t ppm)
{
	if (h->total == 0)
		return 0;
	return hist_value_at_rank(h, pt_percentile_rank(h->total, ppm));
}

int pt_hist_stats(const struct pt_hist *h, struct pt_lat_stats *out)
{
	uint64_t n;

	if (!h || !out)
		return -EINVAL;
	n = h->total;
	if (n == 0)
		return -EDOM;
	memset(out, 0, sizeof(*out));
	out->count = n;
	out->min = h->min;
	out->max = h->max;
	out->max_all = h->max;
	if (n % 2)
		out->median = (double)hist_value_at_rank(h, n / 2 + 1);
	else
		out->median = ((double)hist_value_at_rank(h, n / 2) +
			       (double)hist_value_at_rank(h, n / 2 + 1)) / 2.0;
	out->avg = h->mean;
	out->stdev = sqrt(h->m2 > 0 ? h->m2 / (double)n : 0.0);
	out->p50 = pt_hist_percentile(h, PT_P50);
	out->p90 = pt_hist_percentile(h, PT_P90);
	out->p99 = pt_hist_percentile(h, PT_P99);
	out->p99_9 = pt_hist_percentile(h, PT_P99_9);
	out->p99_99 = pt_hist_percentile(h, PT_P99_99);
	out->p99_999 = pt_hist_percentile(h, PT_P99_999);
	return 0;
}

const char *pt_results_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -EDOM:
		return "cannot compute a result: elapsed time or sample count is zero";
	case -EINVAL:
		return "invalid arguments for result computation";
	case -ENOMEM:
		return "out of memory";
	case -ERANGE:
		return "the clock went backwards during the run: no BW peak";
	default:
		return "unknown result error";
	}
}
