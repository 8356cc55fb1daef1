/* SPDX-License-Identifier: BSD-2-Clause */
/* Result math: bandwidth, message rate and latency statistics from raw
 * nanosecond measurements (CLOCK_MONOTONIC_RAW, see clock.h).
 *
 * Pure functions, no I/O. Errors are negative errno values:
 *   -EDOM   elapsed time of 0 ns (a rate would be inf), or 0 samples
 *   -EINVAL bad arguments (NULL, tail >= samples)
 *   -ENOMEM allocation failure (histogram)
 *   -ERANGE the clock went backwards (BW peak)
 * pt_results_strerror() gives a message for each.
 *
 * Percentiles use the NEAREST-RANK method on the ascending sorted samples:
 * the p-th percentile (p given in parts per million, PT_P99 = 990000) is the
 * sample of 1-based rank ceil(p * n / 1e6), clamped to [1, n]. Rank is
 * computed in integers so 99.9% of 1000 samples is exactly rank 999.
 * (Upstream indexes delta[ceil(n*0.99)] 0-based, i.e. one rank higher.)
 * The median ("typical") is the middle sample for odd n and the mean of the
 * two middle samples for even n; p50 stays nearest-rank (the lower middle).
 */
#ifndef PT_RESULTS_H
#define PT_RESULTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Divisors turning bytes/s into the printed unit (docs/upstream-behaviour.md §6.1). */
#define PT_MIB 1048576.0        /* MiB/s, default ("MB/sec" in 6.06) */
#define PT_GBIT_BYTES 125000000.0 /* Gb/s = bits / 1e9 */

/* Percentiles in parts per million. */
#define PT_P50 500000u
#define PT_P90 900000u
#define PT_P99 990000u
#define PT_P99_9 999000u
#define PT_P99_99 999900u
#define PT_P99_999 999990u

/* ---------------------------------------------------------------- rows -- */

/* One bandwidth result row (what report.h prints and json.h stores). */
struct pt_bw_result {
	uint64_t size;     /* message size in bytes */
	uint64_t iters;    /* "#iterations" column: messages over all QPs, as upstream prints */
	double bw_peak;    /* MiB/s or Gb/s, 0 when the peak was not measured */
	double bw_avg;     /* MiB/s or Gb/s */
	double msg_rate;   /* Mpps */
	bool gbits;        /* bw_* are in Gb/s (--report_gbits) */
	bool has_cpu_util; /* --cpu_util */
	double cpu_util;   /* percent */
	/* --report-per-port (group "dual"): the same formulas over each port's
	 * messages (facts §5.7: iters_per_port); [0] port 1, [1] port 2 */
	bool per_port;
	double bw_avg_port[2], msg_rate_port[2];
};

/* One latency result row, all times in microseconds. */
struct pt_lat_result {
	uint64_t size;
	uint64_t iters;
	double t_min, t_max, t_typical, t_avg, t_stdev;
	double p50, p90, p99, p99_9, p99_99, p99_999;
	double max_all; /* maximum over every sample, including a dropped tail */
	bool has_cpu_util;
	double cpu_util;
};

/* Duration-mode latency row. Upstream prints only the average and
 * transactions/s (docs/upstream-behaviour.md §6.2); the percentiles are our addition, from a
 * histogram of the round trips inside the window (set when has_pct). */
struct pt_lat_dur_result {
	uint64_t size;
	uint64_t iters;
	double t_avg; /* usec */
	double tps;   /* transactions per second */
	bool has_pct;
	uint64_t samples; /* round trips in the histogram */
	double t_min, p50, p90, p99, p99_9, p99_99, p99_999, max; /* usec */
};

/* ----------------------------------------------------------- bandwidth -- */

struct pt_bw_peak; /* bw_peak.h */

struct pt_bw_input {
	uint64_t size;       /* bytes per message */
	uint64_t iters;      /* copied to the row's "#iterations" */
	uint64_t msgs;       /* completed messages over all QPs (N) */
	uint64_t elapsed_ns; /* first post .. last completion */
	bool gbits;          /* --report_gbits */
	/* Peak (optional): the run's tracker (bw_peak.h), fed with every post
	 * and completion; NULL leaves bw_peak 0. */
	const struct pt_bw_peak *peak;
	bool per_port;             /* --report-per-port: fill the per-port figures */
	uint64_t msgs_port[2];     /* completed messages of port 1's and port 2's QPs */
};

/* Fill *out: bw_avg = size*msgs / (elapsed_s * unit), msg_rate =
 * msgs / elapsed_s / 1e6, bw_peak = size / the tracker's peak interval
 * (0 without a tracker). Its errors pass through: -EDOM when no window
 * moved forward in time, -ERANGE when the clock went backwards. */
int pt_bw_compute(const struct pt_bw_input *in, struct pt_bw_result *out);

/* Bidirectional line = local + remote (peak, average and rate summed;
 * size, iters and units from local). Units must match (-EINVAL). */
int pt_bw_sum(const struct pt_bw_result *local,
	      const struct pt_bw_result *remote, struct pt_bw_result *out);

/* ------------------------------------------------------------- latency -- */

struct pt_hist; /* the bounded histogram, below */

/* Statistics over samples in nanoseconds. */
struct pt_lat_stats {
	uint64_t count;   /* samples kept (after dropping the tail) */
	uint64_t min, max; /* of the kept samples */
	uint64_t max_all; /* of every sample */
	double median;    /* "typical" */
	double avg;
	double stdev;     /* population standard deviation (exact, not upstream's
			   * per-deviation truncation to whole usec) */
	uint64_t p50, p90, p99, p99_9, p99_99, p99_999;
};

/* Nearest-rank percentile of an ascending array of n > 0 values. */
uint64_t pt_percentile_sorted(const uint64_t *sorted, size_t n, uint32_t ppm);
/* 1-based nearest rank ceil(ppm * n / 1e6) clamped to [1, n] (n > 0). */
uint64_t pt_percentile_rank(uint64_t n, uint32_t ppm);

/* What the pass that makes the samples learns for their statistics: the
 * range (the sort's) and the sum (exact: it cannot have wrapped); and for
 * the variance without a sort, the sums of v - c and (v - c)^2 about the
 * first sample c (wrapping: exact where pt_lat_stats_compute_ranks uses
 * them, n * spread < 2^63). */
struct pt_lat_sum {
	uint64_t min, max, total;
	bool exact;
	uint64_t c, s1;
	unsigned __int128 s2;
};

/* The latency loops' samples: d[i] = stamps[i + 1] - stamps[i], one round
 * trip each, for the n - 1 of n post stamps; *sum of them. */
void pt_lat_samples(const uint64_t *restrict stamps, size_t n, uint64_t *restrict d,
		    struct pt_lat_sum *sum);

/* Sorts samples IN PLACE (print an unsorted dump first), drops the
 * tail_drop largest (upstream drops 2) and computes the statistics of the
 * rest. Needs n > tail_drop. */
int pt_lat_stats_compute(uint64_t *samples, size_t n, size_t tail_drop,
			 struct pt_lat_stats *out);
/* The same with scratch: room for n values the sort may overwrite (NULL:
 * allocated). The sort is a radix sort (sort_u64.h). */
int pt_lat_stats_compute_in(uint64_t *samples, size_t n, size_t tail_drop,
			    struct pt_lat_stats *out, uint64_t *scratch);
/* The same for samples whose sum the caller has (pt_lat_samples): no pass
 * of its own before the sort. sorted: NULL to sort in place, else it gets
 * where the sorted values are, samples or scratch (no copy back). */
int pt_lat_stats_compute_sum(uint64_t *samples, size_t n, size_t tail_drop,
			     struct pt_lat_stats *out, uint64_t *scratch,
			     const struct pt_lat_sum *sum, const uint64_t **sorted);
/* The same without sorting, for a caller that needs the row only: the
 * order statistics by rank (select_u64.h) and the moments in exact
 * integers where they fit (the stdev may then differ from the sorted
 * path's long double sum in its last bits), else as above. The samples
 * are left in any order; scratch as above. */
int pt_lat_stats_compute_ranks(uint64_t *samples, size_t n, size_t tail_drop,
			       struct pt_lat_stats *out, uint64_t *scratch,
			       const struct pt_lat_sum *sum);

/* Row in usec: each time divided by 1000 * rtt_factor (2 = report half a
 * ping-pong round trip for SEND/WRITE, 1 for READ/ATOMIC). */
int pt_lat_result_from_stats(const struct pt_lat_stats *st, uint64_t size,
			     uint64_t iters, unsigned rtt_factor,
			     struct pt_lat_result *out);

/* Duration mode: t_avg = elapsed / rtt_factor / iters (usec), tps = iters /
 * elapsed_s. */
int pt_lat_duration_compute(uint64_t size, uint64_t iters, uint64_t elapsed_ns,
			    unsigned rtt_factor, struct pt_lat_dur_result *out);

/* Duration mode: add the percentiles of h (round trips in ns, see the
 * histogram below) to out, each divided by 1000 * rtt_factor like the rows
 * above, and set has_pct. -EDOM when h is empty (out is left as it was). */
int pt_lat_duration_percentiles(const struct pt_hist *h, unsigned rtt_factor,
				struct pt_lat_dur_result *out);

/* ----------------------------------------------------------- histogram -- */

/* Bounded-memory alternative for huge iteration counts: log-linear buckets
 * (HDR style). Values below 128 ns are exact; above, each power of two is
 * split into 64 buckets and a value is represented by its bucket's midpoint,
 * so the relative error is at most 1/128 (0.78%). min, max, avg and stdev
 * are tracked exactly; median and percentiles come from the buckets with the
 * same nearest-rank rule as above. No tail is dropped (max_all == max).
 * About 30 KiB, whatever the sample count. */
struct pt_hist;

struct pt_hist *pt_hist_new(void);
void pt_hist_free(struct pt_hist *h);
void pt_hist_reset(struct pt_hist *h);
void pt_hist_record(struct pt_hist *h, uint64_t ns);
/* Add every sample of src to dst (e.g. one histogram per QP). */
void pt_hist_merge(struct pt_hist *dst, const struct pt_hist *src);
uint64_t pt_hist_count(const struct pt_hist *h);
/* Value reported for v: the midpoint of v's bucket (v itself below 128). */
uint64_t pt_hist_quantize(uint64_t v);
/* Bound on |pt_hist_quantize(v) - v| / v for every v > 0. */
double pt_hist_max_rel_error(void);
uint64_t pt_hist_percentile(const struct pt_hist *h, uint32_t ppm);
/* -EDOM when empty. */
int pt_hist_stats(const struct pt_hist *h, struct pt_lat_stats *out);

const char *pt_results_strerror(int err);

#endif
