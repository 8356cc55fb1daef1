/* SPDX-License-Identifier: BSD-2-Clause */
/* One panel per request flow (at most MAX_PANELS, those with the most
 * packets): x is capture time since the first RoCE packet, y the PSN's
 * distance from the flow's first PSN, so a retransmission is a point that
 * falls back below the line. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include "plugin/recorder/wrtrace_plot.h"
#include "roce_plot.h"

enum { MAX_PANELS = 4 };
enum { T_REQ, T_REXMT, T_ACK, T_NAK, T_WR, T_WR_FAILED, T_KINDS };

static int pick_panels(const struct roce_capture *c, size_t *idx)
{
	int n = 0;

	for (size_t i = 0; i < c->nflows; i++) {
		if (c->flows[i].cls != ROCE_REQUEST)
			continue;
		if (n < MAX_PANELS) {
			idx[n++] = i;
		} else {
			int min = 0;

			for (int k = 1; k < n; k++)
				if (c->flows[idx[k]].n < c->flows[idx[min]].n)
					min = k;
			if (c->flows[i].n > c->flows[idx[min]].n)
				idx[min] = i;
		}
	}
	return n;
}

/* Rows "x y type" (points) and "x y dx type" (WR spans), x in ns. */
static void write_panel(FILE *f, const struct roce_capture *c, const struct roce_join *j, size_t qi,
			uint64_t count[T_KINDS])
{
	const struct roce_flow *q = &c->flows[qi];

	for (size_t k = 0; k < q->n; k++) {
		int type = q->p[k].retransmit ? T_REXMT : T_REQ;

		fprintf(f, "%" PRIu64 " %d %d 0\n", q->p[k].t_ns - c->first_ns,
			roce_psn_diff(q->p[k].psn, q->start_psn), type);
		count[type]++;
	}
	if (q->peer >= 0) {
		const struct roce_flow *r = &c->flows[q->peer];

		for (size_t k = 0; k < r->n; k++) {
			int type;

			if (!r->p[k].has_aeth)
				continue;
			type = roce_aeth_kind(r->p[k].syndrome) == ROCE_ACK ? T_ACK : T_NAK;
			fprintf(f, "%" PRIu64 " %d %d 0\n", r->p[k].t_ns - c->first_ns,
				roce_psn_diff(r->p[k].psn, q->start_psn), type);
			count[type]++;
		}
	}
	for (size_t i = 0; j && j->has_offset && i < j->n; i++) {
		const struct roce_wr *w = &j->w[i];
		uint64_t a, b;
		int type;

		if (!w->found || (long)qi != w->req_flow || !w->posted)
			continue;
		a = roce_wr_to_capture(j, w->t_post);
		b = w->done ? roce_wr_to_capture(j, w->t_comp) : c->last_ns;
		type = w->done && w->status ? T_WR_FAILED : T_WR;
		fprintf(f, "%.0f %d %d %.0f\n", (double)(int64_t)(a - c->first_ns),
			roce_psn_diff(w->psn_first, q->start_psn), type, (double)(int64_t)(b - a));
		count[type]++;
	}
}

int roce_plot(const struct roce_capture *c, const struct roce_join *j, const struct wrt_trace *t,
	      const char *png)
{
	char dir[512], data[MAX_PANELS][560], script[560], title[400], run[256] = "";
	size_t idx[MAX_PANELS];
	int n = pick_panels(c, idx), rc = 1;
	FILE *gp = NULL;
	struct wrt_unit tu;

	if (!n) {
		fprintf(stderr, "rdmawire: %s: no request flow to plot\n", c->path);
		return 1;
	}
	if (wrt_plot_dir(dir, sizeof(dir), "rdmawire"))
		return 1;
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	for (int p = 0; p < n; p++)
		snprintf(data[p], sizeof(data[p]), "%s/panel%d", dir, p);
	gp = fopen(script, "w");
	if (!gp) {
		fprintf(stderr, "rdmawire: cannot write in %s: %s\n", dir, strerror(errno));
		goto out;
	}
	tu = wrt_time_unit((double)(c->last_ns - c->first_ns));
	if (t)
		wrt_run_title(t, j ? j->n : 0, run, sizeof(run));
	snprintf(title, sizeof(title), "RoCE wire, %" PRIu64 " packets over %.3g %s%s%s", c->roce,
		 (double)(c->last_ns - c->first_ns) / tu.ns, tu.name, run[0] ? "; trace: " : "", run);
	fprintf(gp, "set terminal pngcairo noenhanced size 1200,%d\nset output ", 300 + 320 * n);
	wrt_gp_quoted(gp, png);
	fprintf(gp, "\nset multiplot layout %d,1 title ", n);
	wrt_gp_quoted(gp, title);
	fprintf(gp, "\nset key outside\nset xlabel 'capture time (%s since the first RoCE packet)'\n"
		    "set ylabel 'PSN - first PSN'\n", tu.name);
	for (int p = 0; p < n; p++) {
		uint64_t count[T_KINDS] = { 0 };
		char name[128], spec[T_KINDS][160];
		FILE *f = fopen(data[p], "w");

		if (!f) {
			fprintf(stderr, "rdmawire: cannot write %s: %s\n", data[p], strerror(errno));
			goto out;
		}
		write_panel(f, c, j, idx[p], count);
		if (fclose(f)) {
			fprintf(stderr, "rdmawire: writing %s failed\n", data[p]);
			goto out;
		}
		snprintf(spec[T_REQ], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0) with points pt 7 ps 0.3 lc rgb '#1f77b4'", tu.ns, T_REQ);
		snprintf(spec[T_REXMT], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0) with points pt 2 ps 1.2 lc rgb '#d62728'", tu.ns, T_REXMT);
		snprintf(spec[T_ACK], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0) with points pt 6 ps 0.4 lc rgb '#2ca02c'", tu.ns, T_ACK);
		snprintf(spec[T_NAK], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0) with points pt 9 ps 2 lc rgb '#9467bd'", tu.ns, T_NAK);
		snprintf(spec[T_WR], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0):($4/%g):(0) with vectors nohead lc rgb '#7f7f7f'", tu.ns, T_WR, tu.ns);
		snprintf(spec[T_WR_FAILED], sizeof(spec[0]), "using ($1/%g):($3==%d?$2:1/0):($4/%g):(0) with vectors nohead lw 3 lc rgb '#ff7f0e'", tu.ns, T_WR_FAILED, tu.ns);
		const struct wrt_gp_series s[T_KINDS] = {
			{ data[p], spec[T_REQ], "request packets", count[T_REQ] },
			{ data[p], spec[T_REXMT], "retransmissions", count[T_REXMT] },
			{ data[p], spec[T_ACK], "ACKs", count[T_ACK] },
			{ data[p], spec[T_NAK], "NAKs", count[T_NAK] },
			{ data[p], spec[T_WR], "WRs, post to completion", count[T_WR] },
			{ data[p], spec[T_WR_FAILED], "failed WRs", count[T_WR_FAILED] },
		};
		roce_flow_name(&c->flows[idx[p]], name, sizeof(name));
		fprintf(gp, "set title ");
		wrt_gp_quoted(gp, name);
		fputc('\n', gp);
		wrt_gp_plot(gp, s, T_KINDS);
	}
	fprintf(gp, "unset multiplot\n");
	if (fclose(gp)) {
		gp = NULL;
		fprintf(stderr, "rdmawire: writing the plot script failed\n");
		goto out;
	}
	gp = NULL;
	if (!wrt_gp_run(script, "rdmawire")) {
		fprintf(stderr, "rdmawire: wrote %s\n", png);
		rc = 0;
	}
out:
	if (gp)
		fclose(gp);
	for (int p = 0; p < n; p++)
		unlink(data[p]);
	unlink(script);
	rmdir(dir);
	return rc;
}
