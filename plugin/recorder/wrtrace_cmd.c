/* SPDX-License-Identifier: BSD-2-Clause */
/* The wrtrace command: report (reprint the summary of a trace file) and plot
 * (latency over time and its histogram, drawn by gnuplot). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wrtrace_cmd.h"
#include "wrtrace_plot.h"

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

/* What the data files hold, for the script: counts per series and the
 * largest values, which choose the units. */
struct plot_data {
	uint64_t sends, recvs, over, n;
	double t_max_ns, lat_max_ns;
};

/* Data files: time series (ns since the first post, latency ns, 0 send /
 * 1 recv) and a 60-bin histogram of send and recv latencies up to p99.9
 * (the rest, counted, goes in the title). */
static int write_data(const struct wrt_trace *t, FILE *series, FILE *hist, struct plot_data *pd)
{
	enum { BINS = 60 };
	uint64_t t0 = UINT64_MAX, count[BINS] = { 0 };
	struct wrt_summary all = { 0 };
	int64_t hi = 0, lo = INT64_MAX;

	memset(pd, 0, sizeof(*pd));
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
			fprintf(series, "%" PRIu64 " %" PRId64 " %d\n", r->t_comp - t0, d.lat_ns,
				(r->flags & WRT_RECV) ? 1 : 0);
			pd->n++;
			*((r->flags & WRT_RECV) ? &pd->recvs : &pd->sends) += 1;
			if ((double)(r->t_comp - t0) > pd->t_max_ns)
				pd->t_max_ns = (double)(r->t_comp - t0);
			if ((double)d.lat_ns > pd->lat_max_ns)
				pd->lat_max_ns = (double)d.lat_ns;
			if (d.lat_ns > hi) {
				pd->over++;
				continue;
			}
			b = hi > lo ? (d.lat_ns - lo) * BINS / (hi - lo + 1) : 0;
			count[b < 0 ? 0 : b]++;
		}
	for (int b = 0; b < BINS; b++)
		fprintf(hist, "%.1f %llu\n", lo + (double)(hi - lo + 1) * (b + 0.5) / BINS,
			(unsigned long long)count[b]);
	return pd->n ? 0 : 1;
}

int wrt_cmd_plot(const char *path, const char *png)
{
	char dir[512], series[544], hist[544], script[544], title[256], err[512];
	char spec[2][96], hspec[96];
	FILE *fs = NULL, *fh = NULL, *gp = NULL;
	struct plot_data pd;
	struct wrt_trace t;
	struct wrt_unit tu, lu;
	int rc = 1, w;

	if (wrt_read(path, &t, err, sizeof(err))) {
		fprintf(stderr, "wrtrace: %s\n", err);
		return 1;
	}
	if (wrt_plot_dir(dir, sizeof(dir), "wrtrace")) {
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
	w = write_data(&t, fs, fh, &pd);
	if (w) {
		fprintf(stderr, "wrtrace: %s: %s\n", path,
			w > 0 ? "no completed WR with a post time: nothing to plot" : "out of memory");
		goto out;
	}
	/* the run, not the file, names the plot; units fit the largest value */
	wrt_run_title(&t, pd.n, title, sizeof(title));
	tu = wrt_time_unit(pd.t_max_ns);
	lu = wrt_time_unit(pd.lat_max_ns);
	snprintf(spec[0], sizeof(spec[0]), "using ($1/%g):($3==0?$2/%g:1/0) with points pt 7 ps 0.3", tu.ns, lu.ns);
	snprintf(spec[1], sizeof(spec[1]), "using ($1/%g):($3==1?$2/%g:1/0) with points pt 7 ps 0.3", tu.ns, lu.ns);
	snprintf(hspec, sizeof(hspec), "using ($1/%g):2 with boxes", lu.ns);
	const struct wrt_gp_series pts[] = {
		{ series, spec[0], "send", pd.sends },
		{ series, spec[1], "recv", pd.recvs },
	};
	fprintf(gp, "set terminal pngcairo noenhanced size 1200,900\nset output ");
	wrt_gp_quoted(gp, png);
	fprintf(gp, "\nset multiplot layout 2,1 title ");
	wrt_gp_quoted(gp, title);
	fprintf(gp, "\nset xlabel 'completion time (%s since the first post)'\n"
		    "set ylabel 'post -> completion (%s)'\nset key outside\n", tu.name, lu.name);
	wrt_gp_plot(gp, pts, 2);
	fprintf(gp, "set title 'histogram up to p99.9, %" PRIu64 " WRs above it'\n"
		    "set xlabel 'post -> completion (%s)'\nset ylabel 'WRs'\n"
		    "set style fill solid 0.5\nset yrange [0:*]\nplot '%s' %s notitle\n"
		    "unset multiplot\n", pd.over, lu.name, hist, hspec);
	if (fclose(fs) | fclose(fh) | fclose(gp)) {
		fs = fh = gp = NULL;
		fprintf(stderr, "wrtrace: writing the plot data failed\n");
		goto out;
	}
	fs = fh = gp = NULL;
	if (!wrt_gp_run(script, "wrtrace")) {
		printf("wrtrace: wrote %s (%s)\n", png, title);
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
