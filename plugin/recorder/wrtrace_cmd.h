/* SPDX-License-Identifier: BSD-2-Clause */
/* Subcommands of the wrtrace command (wrtrace_main.c); each returns the exit status. */
#ifndef PT_WRTRACE_CMD_H
#define PT_WRTRACE_CMD_H
#include <stdio.h>
#include "wrtrace.h"

/* Reprint the summary of every run of a CSV/JSONL trace. */
int wrt_cmd_report(const char *path, FILE *out);
/* PNG: latency over time (top) and its histogram (bottom), with gnuplot. */
int wrt_cmd_plot(const char *path, const char *png);

#endif
