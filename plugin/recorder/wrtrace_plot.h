/* SPDX-License-Identifier: BSD-2-Clause */
/* Plotting shared by `wrtrace plot` and `rdmawire --plot` (gnuplot): a title
 * from the run, time units that fit the values, a legend entry only for a
 * series that is drawn, and running gnuplot on a script. */
#ifndef PT_WRTRACE_PLOT_H
#define PT_WRTRACE_PLOT_H
#include <stddef.h>
#include <stdio.h>
#include "wrtrace.h"

struct wrt_unit {
	const char *name;           /* "ns", "us", "ms", "s" */
	double ns;                  /* nanoseconds per unit */
};

/* The unit in which max_ns reads between 1 and 1000 (600 ms -> ms). */
struct wrt_unit wrt_time_unit(double max_ns);

/* "ib_send_bw RC client, 65536 B, 2 QPs, 300 WRs" (runs > 1: "sizes 2..8388608 B, 23 runs"). */
void wrt_run_title(const struct wrt_trace *t, uint64_t wrs, char *buf, size_t len);

/* One series of a plot command: drawn only when count > 0. */
struct wrt_gp_series {
	const char *file;           /* data file */
	const char *spec;           /* "using 1:2 with points pt 7 ps 0.3" */
	const char *title;          /* legend entry */
	uint64_t count;             /* points it has */
};

/* "plot ..." with the series that have points; with none, an empty frame
 * saying so. Returns how many were drawn. */
size_t wrt_gp_plot(FILE *gp, const struct wrt_gp_series *s, size_t n);

/* A gnuplot single-quoted string. */
void wrt_gp_quoted(FILE *f, const char *s);

/* A fresh directory under $TMPDIR (or /tmp) for the data and script:
 * 0, or -1 with the reason printed (who: the command's name). */
int wrt_plot_dir(char *dir, size_t len, const char *who);

/* Run gnuplot on script: 0, or -1 with the reason printed. */
int wrt_gp_run(const char *script, const char *who);

#endif
