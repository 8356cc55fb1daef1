/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace: look at per-WR traces written by --trace / libwrtrace.so. */
#include <stdio.h>
#include <string.h>
#include "wrtrace_cmd.h"

static const char usage[] =
	"usage: wrtrace report FILE             reprint the summary of a trace (CSV or JSONL)\n"
	"       wrtrace plot FILE -o OUT.png    latency over time and its histogram (gnuplot)\n";

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "report"))
		return wrt_cmd_report(argv[2], stdout);
	if (argc == 5 && !strcmp(argv[1], "plot") && !strcmp(argv[3], "-o"))
		return wrt_cmd_plot(argv[2], argv[4]);
	if (argc >= 2 && strcmp(argv[1], "report") && strcmp(argv[1], "plot"))
		fprintf(stderr, "wrtrace: unknown command '%s'\n", argv[1]);
	else
		fprintf(stderr, "wrtrace: wrong arguments\n");
	fputs(usage, stderr);
	return 2;
}
