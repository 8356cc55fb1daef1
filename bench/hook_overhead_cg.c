/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/hook-overhead's instruction counts: callgrind runs this program
 * again with arguments that run one loop, counted by function name. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hook_overhead.h"

/* Whether line holds one of the '|'-separated strings of any. */
static bool matches_any(const char *line, const char *any)
{
	char one[128];

	while (*any) {
		size_t k = strcspn(any, "|");

		if (k && k < sizeof(one)) {
			memcpy(one, any, k);
			one[k] = 0;
			if (strstr(line, one))
				return true;
		}
		any += k + (any[k] == '|');
	}
	return false;
}

/* Whether an annotate line names a file of glibc's own build tree
 * ("./nptl/../nptl/descr.h:..."): libc's code that callgrind shows with no
 * object (as a second thread's cancellation points around read()). */
static bool glibc_source(const char *line)
{
	line += strspn(line, " ,0123456789");
	if (*line == '(')
		line += strcspn(line, ")") + 1;
	line += strspn(line, " ");
	return !strncmp(line, "./", 2);
}

/* The instructions in callgrind file `out` of the code whose
 * callgrind_annotate name (file:function) holds `minus` (or one of its
 * '|'-separated strings): self cost, so code
 * inlined from a header into a loop (file bw_peak.h, function post_window)
 * counts once and a call out of it is not counted twice; -1 when
 * callgrind_annotate cannot be run. */
static double annotate_ir(const char *out, const char *minus)
{
	char cmd[512], line[1024];
	double sum = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "callgrind_annotate --inclusive=no --auto=no --threshold=100 '%s' "
		 "2>/dev/null", out);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char digits[64];
		size_t k = 0;

		if (!(matches_any(line, minus) && strstr(line, " [")) && !glibc_source(line))
			continue;
		for (const char *c = line; *c == ' ' || *c == ',' || (*c >= '0' && *c <= '9'); c++)
			if (*c >= '0' && *c <= '9' && k + 1 < sizeof(digits))
				digits[k++] = *c;
		digits[k] = 0;
		sum += k ? strtod(digits, NULL) : 0;
	}
	return pclose(p) == 0 ? sum : -1;
}

/* Instructions of fn (inclusive), counted by callgrind running this
 * program with args (--probe-loops N, --real-loop off|on N, --lat-loop ...),
 * less those of the functions named by minus (NULL: none; *apart gets
 * them); -1 when valgrind cannot be run (said on stderr). */
double callgrind_ir_less(const char *self, const char *fn, const char *args,
			 const char *minus, double *apart)
{
	char out[] = "/tmp/hook-overhead.callgrind.XXXXXX", cmd[8192], line[512];
	long long ir = -1;
	double less = 0;
	FILE *f;
	int fd = mkstemp(out);

	if (fd < 0 || strchr(self, '\'')) {
		fprintf(stderr, "hook-overhead: no instruction counts (temporary file or program path)\n");
		return -1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "valgrind --tool=callgrind --callgrind-out-file=%s --collect-atstart=no "
		 "--toggle-collect=%s '%s' %s >/dev/null 2>&1", out, fn, self, args);
	if (system(cmd) != 0) {
		fprintf(stderr, "hook-overhead: no instruction counts: `%s` failed\n", cmd);
		unlink(out);
		return -1;
	}
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "totals: %lld", &ir) == 1 || sscanf(line, "summary: %lld", &ir) == 1)
			break;
	if (f)
		fclose(f);
	if (minus && ir > 0 && (less = annotate_ir(out, minus)) < 0) {
		fprintf(stderr, "hook-overhead: callgrind_annotate failed on %s\n", out);
		ir = -1;
	}
	unlink(out);
	if (ir <= 0)
		fprintf(stderr, "hook-overhead: no instruction total in callgrind's output for %s\n", fn);
	if (apart)
		*apart = less;
	return ir > 0 ? (double)ir - less : -1;
}

double callgrind_ir_of(const char *self, const char *fn, const char *args)
{
	return callgrind_ir_less(self, fn, args, NULL, NULL);
}
