/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace: per-row derived columns, the summary and names (wrtrace.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "wrtrace.h"

static const char *const opcode_names[] = {
	[PT_PLUGIN_OP_SEND] = "SEND", [PT_PLUGIN_OP_SEND_IMM] = "SEND_IMM",
	[PT_PLUGIN_OP_WRITE] = "WRITE", [PT_PLUGIN_OP_WRITE_IMM] = "WRITE_IMM",
	[PT_PLUGIN_OP_READ] = "READ", [PT_PLUGIN_OP_ATOMIC_FA] = "ATOMIC_FA",
	[PT_PLUGIN_OP_ATOMIC_CS] = "ATOMIC_CS", [PT_PLUGIN_OP_RECV] = "RECV",
	[PT_PLUGIN_OP_OTHER] = "OTHER",
};

const char *wrt_opcode_name(uint32_t op)
{
	if (op < sizeof(opcode_names) / sizeof(opcode_names[0]) && opcode_names[op])
		return opcode_names[op];
	return "OTHER";
}

int wrt_opcode_parse(const char *s, uint32_t *op)
{
	for (uint32_t i = 0; i < sizeof(opcode_names) / sizeof(opcode_names[0]); i++)
		if (opcode_names[i] && !strcmp(s, opcode_names[i])) {
			*op = i;
			return 0;
		}
	return -1;
}

const char *wrt_role_name(uint32_t role)
{
	return role == PT_PLUGIN_ROLE_SERVER ? "server" : "client";
}

const char *wrt_conn_name(uint32_t conn)
{
	static const char *const n[] = { "RC", "UC", "UD", "XRC", "DC", "SRD" };

	return conn < sizeof(n) / sizeof(n[0]) ? n[conn] : "OTHER";
}

void wrt_derive(const struct wrt_rec *r, const struct wrt_meta *m, struct wrt_gaps *gaps,
		struct wrt_derived *d)
{
	memset(d, 0, sizeof(*d));
	if ((r->flags & (WRT_DONE | WRT_POSTED)) == (WRT_DONE | WRT_POSTED)) {
		d->has_lat = true;
		d->lat_ns = (int64_t)(r->t_comp - r->t_post);
		if (d->lat_ns > 0) {
			d->has_tput = true;
			d->tput_mb_s = (double)r->bytes * 1e3 / (double)d->lat_ns;
		}
	}
	if (d->has_lat && (r->flags & WRT_HW) && m->has_fit) {
		/* a fit that maps the NIC time off the int64 ns range (a broken
		 * fit, or a damaged file) gives no split rather than garbage */
		double sw = pt_plugin_hw_to_sw(&m->fit, r->hw_ns);
		int64_t cqe = sw > -0x1p62 && sw < 0x1p62 ? (int64_t)llround(sw) : 0;

		d->has_split = sw > -0x1p62 && sw < 0x1p62 &&
			       !__builtin_sub_overflow(cqe, (int64_t)r->t_post, &d->post_to_cqe_ns) &&
			       !__builtin_sub_overflow((int64_t)r->t_comp, cqe, &d->cqe_to_poll_ns);
		if (!d->has_split)
			d->post_to_cqe_ns = d->cqe_to_poll_ns = 0;
	}
	/* the same rule as the recorder's hot path (retire_own) */
	if (!gaps || !(r->flags & WRT_CQE))
		return;
	if (gaps->have_sw) {
		d->has_gap_sw = true;
		d->gap_sw_ns = r->t_comp >= gaps->last_sw ? (int64_t)(r->t_comp - gaps->last_sw) : 0;
	}
	gaps->last_sw = r->t_comp;
	gaps->have_sw = true;
	if (r->flags & WRT_HW) {
		if (gaps->have_hw) {
			d->has_gap_hw = true;
			d->gap_hw_ns = (int64_t)(r->hw_ns - gaps->last_hw);
		}
		gaps->last_hw = r->hw_ns;
		gaps->have_hw = true;
	}
}

/* Values of one distribution, grown off the hot path. */
struct vals {
	int64_t *v;
	uint64_t n, cap;
	bool nomem;
};

static void vals_add(struct vals *a, int64_t x)
{
	if (a->n == a->cap) {
		uint64_t cap = a->cap ? 2 * a->cap : 1024;
		int64_t *v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			a->nomem = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = x;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Exact nearest-rank percentiles, or, when the overflow histogram holds
 * dropped samples, percentiles of both merged into one histogram. */
static int dist_finish(struct vals *a, const struct wrt_hist *over, uint64_t neg_over,
		       struct wrt_dist *d)
{
	static const uint32_t ppm[] = { 500000, 900000, 990000, 999000, 999900 };
	int64_t *out[] = { &d->p50, &d->p90, &d->p99, &d->p99_9, &d->p99_99 };

	memset(d, 0, sizeof(*d));
	if (a->nomem)
		return -ENOMEM;
	if (over && over->count) {
		struct wrt_hist *h = malloc(sizeof(*h));

		if (!h)
			return -ENOMEM;
		*h = *over;
		for (uint64_t i = 0; i < a->n; i++)
			if (a->v[i] >= 0)
				wrt_hist_add(h, (uint64_t)a->v[i]);
			else
				neg_over++;
		d->count = h->count + neg_over;
		d->min = (int64_t)h->min;
		d->max = (int64_t)h->max;
		for (int i = 0; i < 5; i++)
			*out[i] = (int64_t)wrt_hist_percentile(h, ppm[i]);
		d->approx = true;
		free(h);
		return 0;
	}
	if (!a->n)
		return 0;
	qsort(a->v, a->n, sizeof(*a->v), cmp_i64);
	d->count = a->n;
	d->min = a->v[0];
	d->max = a->v[a->n - 1];
	for (int i = 0; i < 5; i++)
		*out[i] = a->v[wrt_rank(a->n, ppm[i]) - 1];
	return 0;
}

int wrt_summarize(const struct wrt_meta *m, const struct wrt_rec *recs, uint64_t n,
		  const struct wrt_overflow *ov, struct wrt_summary *s)
{
	struct vals v[6] = { 0 }; /* send_lat recv_lat gap_sw gap_hw post_to_cqe cqe_to_poll */
	struct wrt_gaps gaps = { 0 };
	int rc = 0;

	memset(s, 0, sizeof(*s));
	for (uint64_t i = 0; i < n; i++) {
		const struct wrt_rec *r = &recs[i];
		bool recv = r->flags & WRT_RECV;
		struct wrt_derived d;

		recv ? s->recvs++ : s->sends++;
		wrt_derive(r, m, &gaps, &d);
		if (d.has_lat && r->status == 0)
			vals_add(&v[recv ? 1 : 0], d.lat_ns);
		if (d.has_gap_sw)
			vals_add(&v[2], d.gap_sw_ns);
		if (d.has_gap_hw)
			vals_add(&v[3], d.gap_hw_ns);
		if (d.has_split && r->status == 0) {
			vals_add(&v[4], d.post_to_cqe_ns);
			vals_add(&v[5], d.cqe_to_poll_ns);
		}
	}
	if (dist_finish(&v[0], ov ? ov->send_lat : NULL, 0, &s->send_lat) ||
	    dist_finish(&v[1], ov ? ov->recv_lat : NULL, 0, &s->recv_lat) ||
	    dist_finish(&v[2], ov ? ov->gap_sw : NULL, 0, &s->gap_sw) ||
	    dist_finish(&v[3], ov ? ov->gap_hw : NULL, ov ? ov->gap_hw_negative : 0, &s->gap_hw) ||
	    dist_finish(&v[4], NULL, 0, &s->post_to_cqe) ||
	    dist_finish(&v[5], NULL, 0, &s->cqe_to_poll))
		rc = -ENOMEM;
	for (int i = 0; i < 6; i++)
		free(v[i].v);
	return rc;
}

void wrt_hw_line(char *buf, size_t len, const struct wrt_meta *m)
{
	const char *dev = m->device[0] ? m->device : "the device";

	if (m->hw_ts == PT_PLUGIN_HW_TS_NONE)
		snprintf(buf, len, "hardware CQE timestamps: not supported by %s", dev);
	else if (m->hw_ts == PT_PLUGIN_HW_TS_OFF)
		snprintf(buf, len, "hardware CQE timestamps: supported by %s but not used", dev);
	else if (!m->has_fit)
		snprintf(buf, len,
			 "hardware CQE timestamps: %s, %s clock at %llu Hz; no clock fit, so no post->CQE split",
			 dev, m->hw_domain, (unsigned long long)m->hw_hz);
	else
		snprintf(buf, len,
			 "hardware CQE timestamps: %s, %s clock at %llu Hz; fit onto %s over %u samples: residual rms %.1f ns, max %.1f ns, slope %.9f",
			 dev, m->hw_domain, (unsigned long long)m->hw_hz, m->sw_clock, m->fit.samples,
			 m->fit.residual_rms_ns, m->fit.residual_max_ns, m->fit.slope);
}

static void dist_line(FILE *out, const char *name, const struct wrt_dist *d)
{
	if (!d->count)
		return;
	fprintf(out, " %-20s %10llu %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f%s\n", name,
		(unsigned long long)d->count, d->min / 1e3, d->p50 / 1e3, d->p90 / 1e3,
		d->p99 / 1e3, d->p99_9 / 1e3, d->p99_99 / 1e3, d->max / 1e3, d->approx ? " ~" : "");
}

void wrt_summary_print(FILE *out, const struct wrt_meta *m, const struct wrt_summary *s)
{
	char hw[512];
	bool approx = s->send_lat.approx || s->recv_lat.approx || s->gap_sw.approx ||
		      s->gap_hw.approx;

	wrt_hw_line(hw, sizeof(hw), m);
	fprintf(out, "---------------------------------------------------------------------------------------\n");
	fprintf(out, " wrtrace run %u (%s %s %s, %llu bytes): %llu WRs on %u QP(s), %llu rows (%llu send, %llu recv)\n",
		m->run, m->tool, wrt_role_name(m->role), wrt_conn_name(m->conn),
		(unsigned long long)m->msg_size, (unsigned long long)m->wrs, m->num_qps,
		(unsigned long long)m->recorded, (unsigned long long)s->sends,
		(unsigned long long)s->recvs);
	fprintf(out, " dropped over the %llu-record cap: %llu; untracked: %llu; sends without CQE: %llu; unmatched CQEs: %llu; error CQEs: %llu; receives still posted: %llu\n",
		(unsigned long long)m->cap, (unsigned long long)m->dropped,
		(unsigned long long)m->untracked, (unsigned long long)m->incomplete,
		(unsigned long long)m->unmatched, (unsigned long long)m->errors,
		(unsigned long long)m->recv_pending);
	fprintf(out, " %s\n", hw);
	fprintf(out, " %-20s %10s %10s %10s %10s %10s %10s %10s %10s\n", "usec", "count", "min", "p50",
		"p90", "p99", "p99.9", "p99.99", "max");
	dist_line(out, "send post->compl", &s->send_lat);
	dist_line(out, "recv post->compl", &s->recv_lat);
	dist_line(out, "CQE gap (sw)", &s->gap_sw);
	dist_line(out, "CQE gap (hw)", &s->gap_hw);
	dist_line(out, "post->CQE (hw)", &s->post_to_cqe);
	dist_line(out, "CQE->poll (hw)", &s->cqe_to_poll);
	if (approx)
		fprintf(out, " ~ over every WR, rows and dropped ones, from a histogram (<= %.2f%% error)\n",
			100.0 * wrt_hist_max_rel_error());
	if (m->dropped && !approx && m->all_count)
		fprintf(out, " send post->compl at capture over all %llu WRs (histogram): p50 %.3f p90 %.3f p99 %.3f p99.9 %.3f p99.99 %.3f max %.3f usec\n",
			(unsigned long long)m->all_count, m->all_p50 / 1e3, m->all_p90 / 1e3,
			m->all_p99 / 1e3, m->all_p99_9 / 1e3, m->all_p99_99 / 1e3, m->all_max / 1e3);
	if (m->dropped && (s->post_to_cqe.count || !approx))
		fprintf(out, " rows cover the first %llu WRs completed only\n", (unsigned long long)m->recorded);
}
