/* SPDX-License-Identifier: BSD-2-Clause */
/* The TSC source of pt_now_ns() (clock.h): which clock, its calibration
 * against CLOCK_MONOTONIC_RAW at start and its check at the end of the run.
 * Only the tools and benchmarks call pt_clock_init(); a process that never
 * does (libwrtrace.so) keeps clock_gettime. */
#ifndef PT_TSC_H
#define PT_TSC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PT_CLOCK_ENV "PERFTEST_CLOCK"
/* The TSC is used only when the start fit knows its slope within this (3
 * standard errors): times drift from CLOCK_MONOTONIC_RAW by at most this
 * much (5 ppm = 5 us per second) beyond the fit's residual. */
#define PT_CLOCK_TSC_MAX_PPM 5.0

enum pt_clock_mode {
	PT_CLOCK_AUTO,      /* the TSC where invariant, else clock_gettime */
	PT_CLOCK_TSC,       /* asked for: a CPU without it warns and falls back */
	PT_CLOCK_RAW,       /* clock_gettime always */
};

/* NULL or "" or "auto", "tsc", "raw"; anything else: -1 and err says what is
 * accepted. */
int pt_clock_parse(const char *text, enum pt_clock_mode *mode, char *err, size_t err_len);

/* Does cpuinfo (a /proc/cpuinfo-format file) list constant_tsc and
 * nonstop_tsc on every CPU? false when it cannot be read, or not x86_64. */
bool pt_clock_tsc_invariant(const char *cpuinfo);

/* What the clock is and how well the line holds (for --out_json). */
struct pt_clock_info {
	const char *source;         /* "tsc" or "CLOCK_MONOTONIC_RAW" */
	const char *sw_clock;       /* PT_CLOCK_NAME_TSC or PT_CLOCK_NAME_RAW */
	char why[128];              /* why clock_gettime, when it is; else "" */
	double ns_per_tick;         /* the fitted slope; 0 for clock_gettime */
	uint64_t calib_ns;          /* wall time the start calibration took */
	uint64_t start_ns;          /* CLOCK_MONOTONIC_RAW of its first sample */
	unsigned start_samples;
	double start_residual_max_ns, start_residual_rms_ns;
	double slope_err_ppm;       /* 3 standard errors of the slope, <= PT_CLOCK_TSC_MAX_PPM */
	/* the end check (pt_clock_check); checked false before it ran */
	bool checked;
	unsigned end_samples;
	double residual_max_ns;     /* max |converted TSC - CLOCK_MONOTONIC_RAW| at the end */
	double residual_rms_ns;
	double bracket_ns;          /* widest clock_gettime bracket of an end sample */
	double drift_ppm;           /* slope of start+end samples vs the start's */
	uint64_t span_ns;           /* from the start calibration to the check */
};

/* Once per process, before the run: reads PERFTEST_CLOCK and /proc/cpuinfo,
 * calibrates (about 10 ms of sleeps, a few us of CPU). -1 (message on stderr)
 * when PERFTEST_CLOCK is garbage; the clock is then clock_gettime. */
int pt_clock_init(void);
/* The same with everything given: warnings (tsc asked for, not invariant;
 * the fit failed) go to warn (NULL: silent). 0, or -1 when mode is TSC and
 * the TSC is not used. */
int pt_clock_setup(enum pt_clock_mode mode, const char *cpuinfo, FILE *warn);
/* Back to clock_gettime, info cleared (tests). */
void pt_clock_reset(void);
/* At the end of the run: paired samples of both clocks, the deviation of the
 * converted TSC from CLOCK_MONOTONIC_RAW and a refit with the start's
 * samples. Fills info (also for clock_gettime, which needs no check). */
void pt_clock_check(struct pt_clock_info *info);
/* The state as it is (no sampling). */
void pt_clock_get_info(struct pt_clock_info *info);

#endif
