// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon's command-line pieces shared by its views (cli_common.h). */
#include "cli_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "names.h"

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("rdmamon: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

int rm_opt_interval_count(int c, const char *arg, double *interval, long *count)
{
	if (c == 'i') {
		if (rm_interval_parse(arg, interval))
			die("-i: '%s' is not a number of seconds in 0.1..3600", arg);
		return 1;
	}
	if (c == 'c') {
		if (rm_count_parse(arg, count))
			die("-c: '%s' is not a positive count", arg);
		return 1;
	}
	return 0;
}

void rm_opt_no_operands(int argc, char **argv)
{
	if (optind < argc)
		die("unexpected argument '%s'", argv[optind]);
}
