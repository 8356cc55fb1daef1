/* SPDX-License-Identifier: BSD-2-Clause */
/* An interval's view, built once as JSON (the --json line, stable field
 * names) and printed as text from that same object. */
#ifndef MONITOR_REPORT_H
#define MONITOR_REPORT_H

#include <stdio.h>
#include <jansson.h>

#include "cgpath.h"
#include "snapshot.h"

struct rm_report_ctx {
	struct rm_cgpaths *cg;     /* NULL: cgroups shown by id only */
	const char *const *missing_hooks;   /* NULL-terminated, may be NULL */
	unsigned hooks_attached;
	int final;                 /* the summary at exit */
	unsigned top;              /* processes listed per cgroup */
};

/* now against prev (NULL: since start). NULL on no memory. */
json_t *rm_report_json(const struct rm_snapshot *now, const struct rm_snapshot *prev,
		       const struct rm_report_ctx *ctx);
void rm_report_text(FILE *f, const json_t *r);

#endif
