/* SPDX-License-Identifier: BSD-2-Clause */
/* gnuplot helpers for wrtrace plot and rdmawire --plot. */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "wrtrace_plot.h"

extern char **environ;

struct wrt_unit wrt_time_unit(double max_ns)
{
	static const struct wrt_unit units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 } };
	size_t i = 0;

	while (i + 1 < sizeof(units) / sizeof(units[0]) && max_ns >= units[i + 1].ns)
		i++;
	return units[i];
}

void wrt_run_title(const struct wrt_trace *t, uint64_t wrs, char *buf, size_t len)
{
	const struct wrt_meta *m = t->nruns ? &t->runs[0].meta : NULL;
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t n = 0;

	if (!m) {
		snprintf(buf, len, "%" PRIu64 " WRs", wrs);
		return;
	}
	for (size_t i = 0; i < t->nruns; i++) {
		lo = t->runs[i].meta.msg_size < lo ? t->runs[i].meta.msg_size : lo;
		hi = t->runs[i].meta.msg_size > hi ? t->runs[i].meta.msg_size : hi;
	}
	n += (size_t)snprintf(buf, len, "%s %s %s, ", m->tool[0] ? m->tool : "?", wrt_conn_name(m->conn),
			      wrt_role_name(m->role));
	if (n < len && lo == hi)
		n += (size_t)snprintf(buf + n, len - n, "%" PRIu64 " B, ", lo);
	else if (n < len)
		n += (size_t)snprintf(buf + n, len - n, "%" PRIu64 "..%" PRIu64 " B in %zu runs, ", lo, hi,
				      t->nruns);
	if (n < len && m->num_qps > 1)
		n += (size_t)snprintf(buf + n, len - n, "%u QPs, ", m->num_qps);
	if (n < len)
		snprintf(buf + n, len - n, "%" PRIu64 " WRs", wrs);
}

void wrt_gp_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);         /* gnuplot: a quote inside '' is doubled */
		fputc(*s, f);
	}
	fputc('\'', f);
}

size_t wrt_gp_plot(FILE *gp, const struct wrt_gp_series *s, size_t n)
{
	size_t drawn = 0;

	for (size_t i = 0; i < n; i++) {
		if (!s[i].count)
			continue;
		fprintf(gp, "%s", drawn ? ", " : "plot ");
		wrt_gp_quoted(gp, s[i].file);
		fprintf(gp, " %s title ", s[i].spec);
		wrt_gp_quoted(gp, s[i].title);
		drawn++;
	}
	if (!drawn)
		fprintf(gp, "set label 'nothing to draw' at graph 0.5, graph 0.5 center\n"
			    "set xrange [0:1]\nset yrange [0:1]\nplot 2 notitle");
	fputc('\n', gp);
	return drawn;
}

int wrt_plot_dir(char *dir, size_t len, const char *who)
{
	const char *tmp = getenv("TMPDIR");

	/* $TMPDIR as every tool honours it; its path goes into the gnuplot
	 * script between quotes, so none may be in it */
	if (!tmp || !*tmp || strlen(tmp) > len - 32 || strpbrk(tmp, "'\"\n"))
		tmp = "/tmp";
	snprintf(dir, len, "%s/%s.XXXXXX", tmp, who);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "%s: cannot make a temporary directory in %s: %s\n", who, tmp,
			strerror(errno));
		return -1;
	}
	return 0;
}

int wrt_gp_run(const char *script, const char *who)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int status;
	pid_t pid;
	int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);

	if (rc) {
		fprintf(stderr, "%s: cannot run gnuplot: %s (install gnuplot-nox; ci/deps does)\n", who,
			strerror(rc));
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s: gnuplot failed (see its message above)\n", who);
		return -1;
	}
	return 0;
}
