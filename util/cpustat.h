/* SPDX-License-Identifier: BSD-2-Clause */
/* --cpu_util: the share of CPU time spent in user mode over the measured
 * window, from the first ("cpu ") line of /proc/stat, as upstream computes
 * it: delta user / (delta user + delta idle) * 100 (nice and system are not
 * counted, docs/upstream-behaviour.md §5.4). */
#ifndef PT_CPUSTAT_H
#define PT_CPUSTAT_H
#include <stdbool.h>
#include <stdint.h>

struct pt_cpu_sample {
	bool valid;
	uint64_t user, idle;
};

/* Parse the text of /proc/stat; 0, or -1 when the "cpu " line is missing
 * or malformed. */
int pt_cpu_parse(const char *text, struct pt_cpu_sample *s);
/* Read a /proc/stat-like file (path NULL: /proc/stat); s->valid says. */
int pt_cpu_read(const char *path, struct pt_cpu_sample *s);
/* Percent between two samples; -1 when either is invalid or nothing moved. */
double pt_cpu_util(const struct pt_cpu_sample *a, const struct pt_cpu_sample *b);

#endif
