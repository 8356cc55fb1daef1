/* SPDX-License-Identifier: BSD-2-Clause */
/* Command line of the eight tools (docs/upstream-behaviour.md §1-3, §9).
 * Parsing is pure: no device or network access, so every command line error
 * is reported before anything else happens. */
#ifndef PT_OPTIONS_H
#define PT_OPTIONS_H
#include <stdio.h>
#include "params.h"

/* Parse argv for tool into *out: defaults, options, then derived parameters
 * and validation. Returns 0 when the run can start; 1 after a message on
 * stderr (bad command line), or after -h (usage on stdout) or -V
 * ("Version: <WIRE_VERSION>" on stdout): upstream exits 1 for all three.
 * Warnings (e.g. BW peak disabled) go to stderr and do not fail.
 * argv may be permuted (GNU getopt). Callable any number of times. */
int pt_parse_args(const struct pt_tool *tool, int argc, char **argv, struct pt_params *out);

/* The same, printing to the given streams (for tests). */
int pt_parse_args_io(const struct pt_tool *tool, int argc, char **argv,
		     struct pt_params *out, FILE *out_stream, FILE *err_stream);

/* The option list printed by -h: exactly the options this tool accepts. */
void pt_print_usage(const struct pt_tool *tool, FILE *f);

#endif
