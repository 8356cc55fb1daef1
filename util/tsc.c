/* SPDX-License-Identifier: BSD-2-Clause */
/* The TSC source of pt_now_ns() (tsc.h): the choice, the calibration
 * against CLOCK_MONOTONIC_RAW and the end-of-run check. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"
#include "hwts.h"
#include "tsc.h"

/* The start calibration: CALIB_SAMPLES paired readings CALIB_GAP_NS apart
 * (slept, not spun): ~10 ms of wall time and ~10 us of CPU for a slope
 * known within 0.2..0.7 ppm here (3 standard errors; 21 samples 0.5 ms
 * apart gave 0.5..1 ppm). Each is the tightest of CALIB_TRIES brackets, so a
 * preemption between the reads costs a try, not the fit; a sample whose best
 * bracket is still wide (preempted every try) is left out. A fit whose slope
 * is not known within PT_CLOCK_TSC_MAX_PPM is tried again, CALIB_ROUNDS in
 * all, then clock_gettime it is. */
#define CALIB_SAMPLES 41
#define CALIB_GAP_NS 250000L
#define CALIB_TRIES 7
#define CALIB_ROUNDS 3
#define CHECK_SAMPLES 9
/* Beyond these the line is not trusted (a TSC stopped or jumping) */
#define CALIB_MAX_RESIDUAL_NS 500.0
#define NS_PER_TICK_MIN 0.01    /* 100 GHz */
#define NS_PER_TICK_MAX 100.0   /* 10 MHz */

static struct {
	struct pt_clock_sample start[CALIB_SAMPLES];
	unsigned nstart;
	struct pt_plugin_clock_fit fit;
	double slope_err_ppm;
	uint64_t calib_ns;
	char why[128];
	bool warned;
} st;

int pt_clock_parse(const char *text, enum pt_clock_mode *mode, char *err, size_t err_len)
{
	if (!text || !*text || !strcmp(text, "auto"))
		*mode = PT_CLOCK_AUTO;
	else if (!strcmp(text, "tsc"))
		*mode = PT_CLOCK_TSC;
	else if (!strcmp(text, "raw"))
		*mode = PT_CLOCK_RAW;
	else {
		snprintf(err, err_len, "%s=%.40s%s: expected auto, tsc or raw", PT_CLOCK_ENV, text,
			 strlen(text) > 40 ? "..." : "");
		return -1;
	}
	return 0;
}

/* Is word in the blank-separated list s (whole words only)? */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = s; (p = strstr(p, word)); p += n)
		if ((p == s || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\t' || p[n] == '\n' || p[n] == '\0'))
			return true;
	return false;
}

bool pt_clock_tsc_invariant(const char *cpuinfo)
{
	char line[8192];
	unsigned cpus = 0, good = 0;
	FILE *f;

	if (!PT_CLOCK_HAVE_TSC)
		return false;
	f = fopen(cpuinfo, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5) || !strchr(line, ':'))
			continue;
		cpus++;
		if (has_word(line, "constant_tsc") && has_word(line, "nonstop_tsc"))
			good++;
	}
	fclose(f);
	return cpus && good == cpus;
}

#if PT_CLOCK_HAVE_TSC
/* One pairing: the TSC read between two clock_gettime, the tightest of
 * CALIB_TRIES; the raw time is the bracket's middle. Returns its width. */
static uint64_t pair(struct pt_clock_sample *s)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < CALIB_TRIES; i++) {
		uint64_t a = pt_clock_raw_ns();
		uint64_t t = pt_clock_rdtsc();
		uint64_t b = pt_clock_raw_ns();

		if (b - a < best) {
			best = b - a;
			s->hw_ns = t;
			s->sw_ns = a + (b - a) / 2;
		}
	}
	return best;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* 3 standard errors of the fitted slope, relative, in ppm. */
static double slope_err_ppm(const struct pt_clock_sample *s, unsigned n,
			    const struct pt_plugin_clock_fit *f)
{
	double mx = 0, sxx = 0;

	for (unsigned i = 0; i < n; i++)
		mx += (double)(s[i].hw_ns - f->hw_ref_ns) / n;
	for (unsigned i = 0; i < n; i++) {
		double dx = (double)(s[i].hw_ns - f->hw_ref_ns) - mx;

		sxx += dx * dx;
	}
	return 3.0 * f->residual_rms_ns * sqrt((double)n / (n - 2)) / sqrt(sxx) / f->slope * 1e6;
}

static int calibrate_once(void)
{
	struct pt_clock_sample s[CALIB_SAMPLES];
	uint64_t width[CALIB_SAMPLES], sorted[CALIB_SAMPLES], lim;
	struct timespec due;

	/* absolute deadlines: oversleeping one gap does not stretch the rest */
	clock_gettime(CLOCK_MONOTONIC, &due);
	for (unsigned i = 0; i < CALIB_SAMPLES; i++) {
		if (i) {
			due.tv_nsec += CALIB_GAP_NS;
			if (due.tv_nsec >= 1000000000L) {
				due.tv_nsec -= 1000000000L;
				due.tv_sec++;
			}
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
				;
		}
		width[i] = sorted[i] = pair(&s[i]);
	}
	qsort(sorted, CALIB_SAMPLES, sizeof(sorted[0]), cmp_u64);
	lim = sorted[CALIB_SAMPLES / 2] * 2 + 50;
	st.nstart = 0;
	for (unsigned i = 0; i < CALIB_SAMPLES; i++)
		if (width[i] <= lim)
			st.start[st.nstart++] = s[i];
	if (st.nstart < CALIB_SAMPLES / 2 + 1 || pt_clock_fit_compute(st.start, st.nstart, &st.fit)) {
		snprintf(st.why, sizeof(st.why), "TSC calibration: too few clean samples");
		return -1;
	}
	if (!(st.fit.slope >= NS_PER_TICK_MIN && st.fit.slope <= NS_PER_TICK_MAX)) {
		snprintf(st.why, sizeof(st.why), "TSC calibration gave %.6g ns per tick", st.fit.slope);
		return -1;
	}
	st.slope_err_ppm = slope_err_ppm(st.start, st.nstart, &st.fit);
	if (st.fit.residual_max_ns > CALIB_MAX_RESIDUAL_NS || !(st.slope_err_ppm <= PT_CLOCK_TSC_MAX_PPM)) {
		snprintf(st.why, sizeof(st.why), "TSC calibration: residual %.0f ns, slope within %.2g ppm",
			 st.fit.residual_max_ns, st.slope_err_ppm);
		return -1;
	}
	return 0;
}

static int calibrate(void)
{
	uint64_t t0 = pt_clock_raw_ns(), mult;
	int rc = -1;

	for (int round = 0; round < CALIB_ROUNDS && rc; round++)
		rc = calibrate_once();
	st.calib_ns = pt_clock_raw_ns() - t0;
	if (rc)
		return rc;
	mult = (uint64_t)llround(ldexp(st.fit.slope, PT_CLOCK_TSC_SHIFT));
	/* the fitted line, from a point PT_CLOCK_TSC_MARGIN ticks back (modulo
	 * 2^64: it may lie before boot) */
	pt_clock_line.tsc0 = st.fit.hw_ref_ns - PT_CLOCK_TSC_MARGIN;
	pt_clock_line.ns0 = st.fit.sw_ref_ns + (uint64_t)(int64_t)llround(st.fit.intercept_ns) -
			    (uint64_t)(((unsigned __int128)PT_CLOCK_TSC_MARGIN * mult) >> PT_CLOCK_TSC_SHIFT);
	pt_clock_line.mult = mult;   /* last: turns the TSC on */
	return 0;
}
#endif

void pt_clock_reset(void)
{
	memset(&pt_clock_line, 0, sizeof(pt_clock_line));
	memset(&st, 0, sizeof(st));
}

int pt_clock_setup(enum pt_clock_mode mode, const char *cpuinfo, FILE *warn)
{
	bool warned = st.warned, invariant;

	pt_clock_reset();
	st.warned = warned;
	if (mode == PT_CLOCK_RAW) {
		snprintf(st.why, sizeof(st.why), "%s=raw", PT_CLOCK_ENV);
		return 0;
	}
	invariant = pt_clock_tsc_invariant(cpuinfo);
	if (!invariant)
		snprintf(st.why, sizeof(st.why), PT_CLOCK_HAVE_TSC ?
			 "no invariant TSC (constant_tsc and nonstop_tsc in %s)" :
			 "no TSC on this architecture (%s)", cpuinfo);
#if PT_CLOCK_HAVE_TSC
	if (invariant && !calibrate())
		return 0;
#endif
	if (mode != PT_CLOCK_TSC)
		return 0;
	if (warn && !st.warned)
		fprintf(warn, " %s=tsc: %s; using %s\n", PT_CLOCK_ENV, st.why, PT_CLOCK_NAME_RAW);
	st.warned = true;
	return -1;
}

int pt_clock_init(void)
{
	enum pt_clock_mode mode;
	char err[128];

	if (pt_clock_parse(getenv(PT_CLOCK_ENV), &mode, err, sizeof(err))) {
		fprintf(stderr, " %s\n", err);
		pt_clock_reset();
		return -1;
	}
	pt_clock_setup(mode, "/proc/cpuinfo", stderr);
	return 0;
}

void pt_clock_get_info(struct pt_clock_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!pt_clock_line.mult) {
		info->source = PT_CLOCK_NAME_RAW;
		info->sw_clock = PT_CLOCK_NAME_RAW;
		snprintf(info->why, sizeof(info->why), "%s", st.why[0] ? st.why : "not initialised");
		return;
	}
	info->source = "tsc";
	info->sw_clock = PT_CLOCK_NAME_TSC;
	info->ns_per_tick = st.fit.slope;
	info->calib_ns = st.calib_ns;
	info->start_ns = st.fit.sw_ref_ns;
	info->start_samples = st.fit.samples;
	info->start_residual_max_ns = st.fit.residual_max_ns;
	info->start_residual_rms_ns = st.fit.residual_rms_ns;
	info->slope_err_ppm = st.slope_err_ppm;
}

#if PT_CLOCK_HAVE_TSC
static void check_tsc(struct pt_clock_info *info)
{
	struct pt_clock_sample all[CALIB_SAMPLES + CHECK_SAMPLES];
	struct pt_plugin_clock_fit refit;
	double ss = 0, worst = 0, wide = 0;

	memcpy(all, st.start, st.nstart * sizeof(all[0]));
	for (unsigned i = 0; i < CHECK_SAMPLES; i++) {
		struct pt_clock_sample *s = &all[st.nstart + i];
		double w = (double)pair(s);
		double r = (double)(int64_t)(pt_clock_tsc_to_ns(&pt_clock_line, s->hw_ns) - s->sw_ns);

		ss += r * r;
		worst = fabs(r) > worst ? fabs(r) : worst;
		wide = w > wide ? w : wide;
	}
	info->checked = true;
	info->end_samples = CHECK_SAMPLES;
	info->residual_max_ns = worst;
	info->residual_rms_ns = sqrt(ss / CHECK_SAMPLES);
	info->bracket_ns = wide;
	info->span_ns = all[st.nstart].sw_ns - all[0].sw_ns;
	/* the second fit, over start and end: how far the start's slope was
	 * off, over the whole run */
	if (!pt_clock_fit_compute(all, st.nstart + CHECK_SAMPLES, &refit))
		info->drift_ppm = (refit.slope / st.fit.slope - 1.0) * 1e6;
}
#endif

void pt_clock_check(struct pt_clock_info *info)
{
	pt_clock_get_info(info);
#if PT_CLOCK_HAVE_TSC
	if (pt_clock_line.mult)
		check_tsc(info);
#endif
}
