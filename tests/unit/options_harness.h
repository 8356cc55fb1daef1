/* SPDX-License-Identifier: BSD-2-Clause */
/* Parse "<tool> <cmdline>" with the streams captured, for the option tests
 * (test_options.c, test_option_table.c). Include after <cmocka.h>. */
#ifndef PT_OPTIONS_HARNESS_H
#define PT_OPTIONS_HARNESS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perftest/cli/options.h"

/* One parse of "<tool> <cmdline>" with stdout/stderr captured. */
struct run {
	int rc;
	char *out, *err;
	struct pt_params p;
};

#define MAX_ARGS 32

/* The last parse; its captured output is freed by the next one. */
static struct run last_run;

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* Words are split on blanks; "\x01" stands for an empty word. */
static inline struct run *run(const struct pt_tool *tool, const char *cmdline)
{
	struct run *r = &last_run;
	char *argv[MAX_ARGS + 1];
	char *copy = strdup(cmdline), *save = NULL;
	int argc = 0;
	size_t ol = 0, el = 0;
	FILE *o, *e;

	run_free(r);
	argv[argc++] = (char *)tool->name;
	for (char *w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		assert_true(argc < MAX_ARGS);
		argv[argc++] = strcmp(w, "\x01") ? w : (char *)"";
	}
	argv[argc] = NULL;
	o = open_memstream(&r->out, &ol);
	e = open_memstream(&r->err, &el);
	assert_non_null(o);
	assert_non_null(e);
	r->rc = pt_parse_args_io(tool, argc, argv, &r->p, o, e);
	fclose(o);
	fclose(e);
	free(copy);
	return r;
}

static inline struct run *ok(const struct pt_tool *tool, const char *cmdline)
{
	struct run *r = run(tool, cmdline);

	if (r->rc != 0)
		fail_msg("'%s %s' failed: %s", tool->name, cmdline, r->err);
	return r;
}

/* Fails with a message that contains want. */
static inline void bad(const struct pt_tool *tool, const char *cmdline, const char *want)
{
	struct run *r = run(tool, cmdline);

	if (r->rc != 1)
		fail_msg("'%s %s' accepted", tool->name, cmdline);
	if (!r->err[0])
		fail_msg("'%s %s': no message", tool->name, cmdline);
	if (want && !strstr(r->err, want))
		fail_msg("'%s %s': '%s' not in '%s'", tool->name, cmdline, want, r->err);
}

static inline int teardown(void **state)
{
	(void)state;
	run_free(&last_run);
	return 0;
}

#endif
