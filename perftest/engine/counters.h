/* SPDX-License-Identifier: BSD-2-Clause */
/* -W/--report-counters: sysfs port counters (counters.c). */
#ifndef PT_COUNTERS_H
#define PT_COUNTERS_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "perftest/cli/params.h"

#define PT_SYSFS_IB "/sys/class/infiniband"

/* Read ROOT/DEV/ports/PORT/NAME for each name into vals; 0, or -1 with why
 * naming the file and the error. */
int pt_counters_read(const char *root, const char *dev, int port,
		     const char (*names)[PT_PATH_MAX / 8], int n, uint64_t *vals,
		     char *why, size_t why_len);
/* The deltas, one line per counter. */
void pt_counters_print(FILE *f, const char *dev, int port,
		       const char (*names)[PT_PATH_MAX / 8], int n,
		       const uint64_t *before, const uint64_t *after);
#endif
