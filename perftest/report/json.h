/* SPDX-License-Identifier: BSD-2-Clause */
/* --out_json: results as standard JSON (jansson), collected during the run
 * and written once at the end.
 *
 * Document layout (key names as upstream perftest 24.01+, docs/upstream-behaviour.md §8):
 *
 *   {
 *     "test_info":   { "test": "Send_BW_Test", "Dual_port": "OFF", ...,
 *                      "clock": { "source": "tsc", ... } (an addition) },
 *     "results":     { ...the LAST row added... },
 *     "all_results": [ { ...row 1... }, { ...row 2... }, ... ]
 *   }
 *
 * "results" stays a single object so readers of upstream's format keep
 * working (upstream rewrote the file per row, so with -a only the last size
 * survived: the same object is found here). "all_results" is always present
 * and always an array, in the order rows were added, so -a keeps every size
 * and consumers need no special case for one row. With no rows "results" is
 * absent and "all_results" is [].
 *
 * Rows:
 *   BW   "MsgSize", "n_iterations", "BW_peak", "BW_average", "MsgRate",
 *        "BW_units" ("MiB/s" | "Gb/s", an addition), ["CPU_util"]
 *   LAT  "MsgSize", "n_iterations", "t_min", "t_max", "t_typical", "t_avg",
 *        "t_stdev", "percentile_99", "percentile_99.9", and in addition
 *        "percentile_50", "percentile_90", "percentile_99.99",
 *        "percentile_99.999", "max" (the untrimmed maximum), ["CPU_util"]
 *   duration LAT  "MsgSize", "n_iterations", "t_avg", "tps_average", and in
 *        addition (when the window held a round trip) "n_samples", "t_min",
 *        "percentile_50" ... "percentile_99.999" as above, "max"
 * With --output=bandwidth|message_rate|latency a row holds "MsgSize" and
 * only the value upstream writes: "bw_avg", "msgRate_avg", "avg_lat" (LAT)
 * or "t_avg" (duration LAT) -- but here always as valid JSON.
 * Times are in usec, bandwidths in the row's unit, reals printed with up to
 * 15 significant digits (not upstream's fixed %.2f).
 */
#ifndef PT_JSON_H
#define PT_JSON_H
#include "report.h"

struct pt_json;

/* Copies what it needs from info; NULL on allocation failure. */
struct pt_json *pt_json_begin(const struct pt_test_info *info,
			      enum pt_output_mode mode);
/* 0, -ENOMEM, or -EINVAL when the output mode does not apply to the row
 * kind (e.g. --output=latency with a BW row). */
int pt_json_add_bw(struct pt_json *j, const struct pt_bw_result *r);
/* The -w/-y verdict so far, as the top-level "limits" object (replaced on
 * each call): "limit_bw", "limit_msgrate" (those given), "lowest_BW_average",
 * "lowest_MsgRate" (over the rows checked), "rows_checked", "failed" (the
 * names of the limits missed) and "pass". Absent when never set. */
struct pt_verdict;
int pt_json_set_verdict(struct pt_json *j, const struct pt_verdict *v);
int pt_json_add_lat(struct pt_json *j, const struct pt_lat_result *r);
/* test_info's "clock" object (replaced on each call): what pt_now_ns read
 * and how well it held (util/clock.h):
 *   "source" ("tsc" | "CLOCK_MONOTONIC_RAW"), "sw_clock" (as run_info names it);
 *   with the TSC: "ns_per_tick", "calibration_ms", "start_samples",
 *   "start_residual_max_ns", "start_residual_rms_ns", "slope_err_ppm" (3
 *   standard errors of the slope, at most PT_CLOCK_TSC_MAX_PPM); else
 *   "fallback" (why);
 *   after the end-of-run check: "end_samples", "residual_ns" (the largest
 *   |converted TSC - CLOCK_MONOTONIC_RAW| at the end), "residual_rms_ns",
 *   "end_bracket_ns" (the widest clock_gettime pair around a TSC read),
 *   "drift_ppm" (slope of a refit over start and end vs the start's) and
 *   "span_s" (start calibration to check). */
struct pt_clock_info;
int pt_json_set_clock(struct pt_json *j, const struct pt_clock_info *ci);
int pt_json_add_lat_dur(struct pt_json *j, const struct pt_lat_dur_result *r);
/* The document as a string (malloc'd, free() it), NULL on failure. */
char *pt_json_dumps(const struct pt_json *j);
/* Write the document to path atomically: a temporary file next to it
 * ("<path>.<pid>.tmp", mode 0666 & ~umask) is written, fsync'ed and renamed
 * over path. Returns 0 or -errno (nothing is printed); on error the old file
 * is untouched and the temporary file removed. */
int pt_json_write(const struct pt_json *j, const char *path);
void pt_json_free(struct pt_json *j);

#endif
