/* SPDX-License-Identifier: BSD-2-Clause */
/* -W/--report-counters: port counters read from sysfs before and after the
 * run, their deltas printed after the results (docs/upstream-behaviour.md §13).
 * Apart from device.c so the unit tests can read a fake sysfs tree. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"

int pt_counters_read(const char *root, const char *dev, int port,
		     const char (*names)[PT_PATH_MAX / 8], int n, uint64_t *vals,
		     char *why, size_t why_len)
{
	for (int i = 0; i < n; i++) {
		char path[PT_PATH_MAX * 2], line[64], *end;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/ports/%d/%s", root, dev, port, names[i]);
		f = fopen(path, "r");
		if (!f) {
			snprintf(why, why_len, "Couldn't read counter %s of %s port %d (%s): %s",
				 names[i], dev, port, path, strerror(errno));
			return -1;
		}
		if (!fgets(line, sizeof(line), f)) {
			snprintf(why, why_len, "Counter %s of %s port %d (%s) is empty", names[i],
				 dev, port, path);
			fclose(f);
			return -1;
		}
		fclose(f);
		errno = 0;
		vals[i] = strtoull(line, &end, 0);
		if (errno || end == line || (*end && *end != '\n')) {
			snprintf(why, why_len, "Counter %s of %s port %d (%s) is not a number: %.20s",
				 names[i], dev, port, path, line);
			return -1;
		}
	}
	return 0;
}

void pt_counters_print(FILE *f, const char *dev, int port,
		       const char (*names)[PT_PATH_MAX / 8], int n,
		       const uint64_t *before, const uint64_t *after)
{
	fprintf(f, " Port counters of %s port %d (change over the run):\n", dev, port);
	for (int i = 0; i < n; i++)
		/* unsigned difference: a counter that wrapped still gives its increment */
		fprintf(f, " %-40s : %" PRIu64 "\n", names[i], after[i] - before[i]);
}
