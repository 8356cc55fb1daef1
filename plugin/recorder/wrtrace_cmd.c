/* SPDX-License-Identifier: BSD-2-Clause */
/* The wrtrace command: report (reprint the summary of a trace file) and plot
 * (latency over time and its histogram, drawn by gnuplot). */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "wrtrace_cmd.h"

extern char **environ;

int wrt_cmd_report(const char *path, FILE *out)
{
	struct wrt_trace t;
	char err[512];

	if (wrt_read(path, &t, err, sizeof(err))) {
		fprintf(stderr, "wrtrace: %s\n", err);
		return 1;
	}
	for (size_t i = 0; i < t.nruns; i++) {
		struct wrt_summary s;

		if (wrt_summarize(&t.runs[i].meta, t.runs[i].recs, t.runs[i].n, NULL, &s)) {
			fprintf(stderr, "wrtrace: out of memory\n");
			wrt_trace_free(&t);
			return 1;
		}
		wrt_summary_print(out, &t.runs[i].meta, &s);
	}
	wrt_trace_free(&t);
	return 0;
}

/* gnuplot single-quoted string: a quote is doubled. */
static void gp_quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* Data files: time series (ms since the first post, usec, 0 send / 1 recv)
 * and a 60-bin histogram of send and recv latencies up to p99.9 (the rest,
 * counted, goes in the title). */
static int write_data(const struct wrt_trace *t, FILE *series, FILE *hist, char *title,
		      size_t title_len)
{
	enum { BINS = 60 };
	uint64_t t0 = UINT64_MAX, count[BINS] = { 0 }, over = 0, n = 0;
	struct wrt_summary all = { 0 };
	int64_t hi = 0, lo = INT64_MAX;

	for (size_t i = 0; i < t->nruns; i++)
		for (uint64_t j = 0; j < t->runs[i].n; j++)
			if ((t->runs[i].recs[j].flags & WRT_POSTED) && t->runs[i].recs[j].t_post < t0)
				t0 = t->runs[i].recs[j].t_post;
	for (size_t i = 0; i < t->nruns; i++) {
		struct wrt_summary s;

		if (wrt_summarize(&t->runs[i].meta, t->runs[i].recs, t->runs[i].n, NULL, &s))
			return -1;
		if (s.send_lat.count && s.send_lat.p99_9 > hi)
			hi = s.send_lat.p99_9;
		if (s.recv_lat.count && s.recv_lat.p99_9 > hi)
			hi = s.recv_lat.p99_9;
		if (s.send_lat.count && s.send_lat.min < lo)
			lo = s.send_lat.min;
		if (s.recv_lat.count && s.recv_lat.min < lo)
			lo = s.recv_lat.min;
		all.sends += s.send_lat.count;
		all.recvs += s.recv_lat.count;
	}
	if (all.sends + all.recvs == 0)
		return 1;
	for (size_t i = 0; i < t->nruns; i++)
		for (uint64_t j = 0; j < t->runs[i].n; j++) {
			const struct wrt_rec *r = &t->runs[i].recs[j];
			struct wrt_derived d;
			int64_t b;

			wrt_derive(r, &t->runs[i].meta, NULL, &d);
			if (!d.has_lat || r->status)
				continue;
			fprintf(series, "%.6f %.3f %d\n", (double)(r->t_comp - t0) / 1e6, d.lat_ns / 1e3,
				(r->flags & WRT_RECV) ? 1 : 0);
			n++;
			if (d.lat_ns > hi) {
				over++;
				continue;
			}
			b = hi > lo ? (d.lat_ns - lo) * BINS / (hi - lo + 1) : 0;
			count[b < 0 ? 0 : b]++;
		}
	for (int b = 0; b < BINS; b++)
		fprintf(hist, "%.3f %llu\n", (lo + (double)(hi - lo + 1) * (b + 0.5) / BINS) / 1e3,
			(unsigned long long)count[b]);
	snprintf(title, title_len, "%llu WRs; histogram up to p99.9, %llu above it", (unsigned long long)n,
		 (unsigned long long)over);
	return 0;
}

static int run_gnuplot(const char *script)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	int status;
	pid_t pid;
	int rc = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);

	if (rc) {
		fprintf(stderr, "wrtrace: cannot run gnuplot: %s (install gnuplot-nox; ci/deps does)\n",
			strerror(rc));
		return -1;
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "wrtrace: gnuplot failed (see its message above)\n");
		return -1;
	}
	return 0;
}

int wrt_cmd_plot(const char *path, const char *png)
{
	char dir[512], series[544], hist[544], script[544], title[160], err[512];
	const char *tmp = getenv("TMPDIR");
	FILE *fs = NULL, *fh = NULL, *gp = NULL;
	struct wrt_trace t;
	int rc = 1, w;

	/* $TMPDIR as every tool honours it (a read-only /tmp exists); its path
	 * goes into the gnuplot script between quotes, so none may be in it */
	if (!tmp || !*tmp || strlen(tmp) > 400 || strpbrk(tmp, "'\"\n"))
		tmp = "/tmp";
	snprintf(dir, sizeof(dir), "%s/wrtrace.XXXXXX", tmp);
	if (wrt_read(path, &t, err, sizeof(err))) {
		fprintf(stderr, "wrtrace: %s\n", err);
		return 1;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "wrtrace: cannot make a temporary directory in %s: %s\n", tmp,
			strerror(errno));
		wrt_trace_free(&t);
		return 1;
	}
	snprintf(series, sizeof(series), "%s/series", dir);
	snprintf(hist, sizeof(hist), "%s/hist", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	fs = fopen(series, "w");
	fh = fopen(hist, "w");
	gp = fopen(script, "w");
	if (!fs || !fh || !gp) {
		fprintf(stderr, "wrtrace: cannot write in %s: %s\n", dir, strerror(errno));
		goto out;
	}
	w = write_data(&t, fs, fh, title, sizeof(title));
	if (w) {
		fprintf(stderr, "wrtrace: %s: %s\n", path,
			w > 0 ? "no completed WR with a post time: nothing to plot" : "out of memory");
		goto out;
	}
	fprintf(gp, "set terminal pngcairo size 1200,900\nset output ");
	gp_quoted(gp, png);
	fprintf(gp, "\nset multiplot layout 2,1 title ");
	gp_quoted(gp, path);
	fprintf(gp, "\nset xlabel 'completion time (ms since the first post)'\n"
		    "set ylabel 'post -> completion (usec)'\nset key outside\n"
		    "plot '%s' using 1:($3==0?$2:1/0) with points pt 7 ps 0.3 title 'send', "
		    "'' using 1:($3==1?$2:1/0) with points pt 7 ps 0.3 title 'recv'\n"
		    "set title '%s'\nset xlabel 'post -> completion (usec)'\nset ylabel 'WRs'\n"
		    "set style fill solid 0.5\nset yrange [0:*]\nplot '%s' using 1:2 with boxes notitle\n"
		    "unset multiplot\n", series, title, hist);
	if (fclose(fs) | fclose(fh) | fclose(gp)) {
		fs = fh = gp = NULL;
		fprintf(stderr, "wrtrace: writing the plot data failed\n");
		goto out;
	}
	fs = fh = gp = NULL;
	if (!run_gnuplot(script)) {
		printf("wrtrace: wrote %s\n", png);
		rc = 0;
	}
out:
	if (fs)
		fclose(fs);
	if (fh)
		fclose(fh);
	if (gp)
		fclose(gp);
	unlink(series);
	unlink(hist);
	unlink(script);
	rmdir(dir);
	wrt_trace_free(&t);
	return rc;
}
