/* SPDX-License-Identifier: BSD-2-Clause */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "cpustat.h"

int pt_cpu_parse(const char *text, struct pt_cpu_sample *s)
{
	uint64_t user, nice, system, idle;

	s->valid = false;
	if (!text || strncmp(text, "cpu ", 4))
		return -1;
	if (sscanf(text + 4, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		   &user, &nice, &system, &idle) != 4)
		return -1;
	s->user = user;
	s->idle = idle;
	s->valid = true;
	return 0;
}

int pt_cpu_read(const char *path, struct pt_cpu_sample *s)
{
	char line[512];
	FILE *f = fopen(path ? path : "/proc/stat", "r");
	int rc = -1;

	s->valid = false;
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		rc = pt_cpu_parse(line, s);
	fclose(f);
	return rc;
}

double pt_cpu_util(const struct pt_cpu_sample *a, const struct pt_cpu_sample *b)
{
	uint64_t du, di;

	if (!a->valid || !b->valid || b->user < a->user || b->idle < a->idle)
		return -1;
	du = b->user - a->user;
	di = b->idle - a->idle;
	if (du + di == 0)
		return -1;
	return 100.0 * (double)du / (double)(du + di);
}
