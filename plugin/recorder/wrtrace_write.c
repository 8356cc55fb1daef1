/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace files: CSV (with '#' metadata lines) and JSON Lines (jansson).
 * Layout, both formats: a format line, then per run one metadata record
 * followed by its rows (CSV has the column header once, after line 1). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <string.h>
#include "wrtrace_int.h"

#define M(field) offsetof(struct wrt_meta, field)
#define MS(field) .off = M(field), .size = sizeof(((struct wrt_meta *)0)->field)
#define NAMES(a) .names = a, .nnames = sizeof(a) / sizeof(a[0])

static const char *const role_names[] = { "client", "server" };
static const char *const conn_names[] = {
	[PT_PLUGIN_CONN_RC] = "RC", [PT_PLUGIN_CONN_UC] = "UC", [PT_PLUGIN_CONN_UD] = "UD",
	[PT_PLUGIN_CONN_XRC] = "XRC", [PT_PLUGIN_CONN_DC] = "DC", [PT_PLUGIN_CONN_SRD] = "SRD",
	[PT_PLUGIN_CONN_OTHER] = "OTHER",
};
static const char *const hw_ts_names[] = {
	[PT_PLUGIN_HW_TS_NONE] = "none", [PT_PLUGIN_HW_TS_ON] = "on", [PT_PLUGIN_HW_TS_OFF] = "off",
};

const struct wrt_field wrt_meta_fields[] = {
	{ "run", WRT_F_U32, MS(run) },
	{ "tool", WRT_F_STR, MS(tool) },
	{ "device", WRT_F_STR, MS(device) },
	{ "role", WRT_F_ENUM, MS(role), NAMES(role_names) },
	{ "conn", WRT_F_ENUM, MS(conn), NAMES(conn_names) },
	{ "num_qps", WRT_F_U32, MS(num_qps) },
	{ "qpns", WRT_F_STR, MS(qpns) },
	{ "msg_size", WRT_F_U64, MS(msg_size) },
	{ "iterations", WRT_F_U64, MS(iterations) },
	{ "tx_depth", WRT_F_U32, MS(tx_depth) },
	{ "rx_depth", WRT_F_U32, MS(rx_depth) },
	{ "cq_mod", WRT_F_U32, MS(cq_mod) },
	{ "post_list", WRT_F_U32, MS(post_list) },
	{ "hw_ts", WRT_F_ENUM, MS(hw_ts), NAMES(hw_ts_names) },
	{ "hw_hz", WRT_F_U64, MS(hw_hz) },
	{ "hw_domain", WRT_F_STR, MS(hw_domain) },
	{ "sw_clock", WRT_F_STR, MS(sw_clock) },
	{ "fit", WRT_F_BOOL, MS(has_fit) },
	{ "fit_samples", WRT_F_U32, MS(fit.samples) },
	{ "fit_hw_ref_ns", WRT_F_U64, MS(fit.hw_ref_ns) },
	{ "fit_sw_ref_ns", WRT_F_U64, MS(fit.sw_ref_ns) },
	{ "fit_intercept_ns", WRT_F_DBL, MS(fit.intercept_ns) },
	{ "fit_slope", WRT_F_DBL, MS(fit.slope) },
	{ "fit_residual_rms_ns", WRT_F_DBL, MS(fit.residual_rms_ns) },
	{ "fit_residual_max_ns", WRT_F_DBL, MS(fit.residual_max_ns) },
	{ "cap", WRT_F_U64, MS(cap) },
	{ "wrs", WRT_F_U64, MS(wrs) },
	{ "recorded", WRT_F_U64, MS(recorded) },
	{ "dropped", WRT_F_U64, MS(dropped) },
	{ "untracked", WRT_F_U64, MS(untracked) },
	{ "incomplete", WRT_F_U64, MS(incomplete) },
	{ "recv_pending", WRT_F_U64, MS(recv_pending) },
	{ "unmatched", WRT_F_U64, MS(unmatched) },
	{ "errors", WRT_F_U64, MS(errors) },
	{ "all_count", WRT_F_U64, MS(all_count) },
	{ "all_p50", WRT_F_U64, MS(all_p50) },
	{ "all_p90", WRT_F_U64, MS(all_p90) },
	{ "all_p99", WRT_F_U64, MS(all_p99) },
	{ "all_p99_9", WRT_F_U64, MS(all_p99_9) },
	{ "all_p99_99", WRT_F_U64, MS(all_p99_99) },
	{ "all_max", WRT_F_U64, MS(all_max) },
};
const size_t wrt_meta_nfields = sizeof(wrt_meta_fields) / sizeof(wrt_meta_fields[0]);

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
	return -1;
}

/* Metadata values are single CSV tokens: no blanks, no quotes; "-" is "". */
static void csv_token(FILE *f, const char *s)
{
	if (!*s) {
		fputc('-', f);
		return;
	}
	for (; *s; s++)
		fputc(wrt_csv_token_char(*s) ? *s : '_', f);
}

/* Name of an enum value; a value without a name is written as a number. */
static const char *enum_name(const struct wrt_field *k, uint32_t v, char *buf, size_t len)
{
	if (v < k->nnames && k->names[v])
		return k->names[v];
	snprintf(buf, len, "%" PRIu32, v);
	return buf;
}

static void csv_meta(FILE *f, const struct wrt_meta *m)
{
	const char *base = (const char *)m;

	fputc('#', f);
	for (size_t i = 0; i < wrt_meta_nfields; i++) {
		const struct wrt_field *k = &wrt_meta_fields[i];
		const void *p = base + k->off;
		char num[16];

		fprintf(f, " %s=", k->key);
		switch (k->type) {
		case WRT_F_ENUM: fputs(enum_name(k, *(const uint32_t *)p, num, sizeof(num)), f); break;
		case WRT_F_U32: fprintf(f, "%" PRIu32, *(const uint32_t *)p); break;
		case WRT_F_U64: fprintf(f, "%" PRIu64, *(const uint64_t *)p); break;
		case WRT_F_STR: csv_token(f, p); break;
		case WRT_F_DBL: fprintf(f, "%.17g", *(const double *)p); break;
		case WRT_F_BOOL: fputc(*(const bool *)p ? '1' : '0', f); break;
		}
	}
	fputc('\n', f);
}

static void csv_opt_u64(FILE *f, bool has, uint64_t v)
{
	if (has)
		fprintf(f, "%" PRIu64, v);
	fputc(',', f);
}

static void csv_opt_i64(FILE *f, bool has, int64_t v, char sep)
{
	if (has)
		fprintf(f, "%" PRId64, v);
	if (sep)
		fputc(sep, f);
}

static void csv_row(FILE *f, const struct wrt_meta *m, const struct wrt_rec *r,
		    struct wrt_gaps *gaps)
{
	struct wrt_derived d;

	wrt_derive(r, m, gaps, &d);
	fprintf(f, "%" PRIu32 ",%" PRIu32 ",%" PRIu64 ",0x%" PRIx64 ",%s,%" PRIu32 ",%d,%d,", m->run,
		r->qp, r->seq, r->wr_id, wrt_opcode_name(r->opcode), r->bytes,
		(r->flags & WRT_SIGNALED) ? 1 : 0, (r->flags & WRT_CQE) ? 1 : 0);
	csv_opt_u64(f, r->flags & WRT_DONE, r->status);
	csv_opt_u64(f, r->flags & WRT_POSTED, r->t_post);
	csv_opt_u64(f, r->flags & WRT_DONE, r->t_comp);
	csv_opt_i64(f, d.has_lat, d.lat_ns, ',');
	if (d.has_tput)
		fprintf(f, "%.3f", d.tput_mb_s);
	fputc(',', f);
	csv_opt_i64(f, d.has_gap_sw, d.gap_sw_ns, ',');
	csv_opt_i64(f, d.has_gap_hw, d.gap_hw_ns, ',');
	csv_opt_u64(f, r->flags & WRT_HW, r->hw_ns);
	csv_opt_i64(f, d.has_split, d.post_to_cqe_ns, ',');
	csv_opt_i64(f, d.has_split, d.cqe_to_poll_ns, '\n');
}

static json_t *json_meta(const struct wrt_meta *m)
{
	const char *base = (const char *)m;
	json_t *o = json_pack("{s:s}", "type", "run");

	for (size_t i = 0; o && i < wrt_meta_nfields; i++) {
		const struct wrt_field *k = &wrt_meta_fields[i];
		const void *p = base + k->off;
		json_t *v = NULL;
		char num[16];

		switch (k->type) {
		case WRT_F_ENUM: v = json_string(enum_name(k, *(const uint32_t *)p, num, sizeof(num))); break;
		case WRT_F_U32: v = json_integer(*(const uint32_t *)p); break;
		case WRT_F_U64: v = json_integer((json_int_t)*(const uint64_t *)p); break;
		case WRT_F_STR: v = json_string(p); break;
		case WRT_F_DBL: v = json_real(*(const double *)p); break;
		case WRT_F_BOOL: v = json_boolean(*(const bool *)p); break;
		}
		if (json_object_set_new(o, k->key, v)) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static json_t *opt_int(bool has, int64_t v)
{
	return has ? json_integer(v) : json_null();
}

static json_t *json_row(const struct wrt_meta *m, const struct wrt_rec *r, struct wrt_gaps *gaps)
{
	struct wrt_derived d;
	char wr_id[24];

	wrt_derive(r, m, gaps, &d);
	snprintf(wr_id, sizeof(wr_id), "0x%" PRIx64, r->wr_id);
	return json_pack("{s:s, s:I, s:I, s:I, s:s, s:s, s:I, s:b, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
			 "type", "wr", "run", (json_int_t)m->run, "qp", (json_int_t)r->qp,
			 "seq", (json_int_t)r->seq, "wr_id", wr_id,
			 "opcode", wrt_opcode_name(r->opcode), "bytes", (json_int_t)r->bytes,
			 "signaled", (r->flags & WRT_SIGNALED) != 0,
			 "own_cqe", (r->flags & WRT_CQE) != 0,
			 "status", opt_int(r->flags & WRT_DONE, r->status),
			 "t_post_ns", opt_int(r->flags & WRT_POSTED, (int64_t)r->t_post),
			 "t_comp_ns", opt_int(r->flags & WRT_DONE, (int64_t)r->t_comp),
			 "latency_ns", opt_int(d.has_lat, d.lat_ns),
			 "tput_mb_s", d.has_tput ? json_real(d.tput_mb_s) : json_null(),
			 "cqe_gap_sw_ns", opt_int(d.has_gap_sw, d.gap_sw_ns),
			 "cqe_gap_hw_ns", opt_int(d.has_gap_hw, d.gap_hw_ns),
			 "hw_ns", opt_int(r->flags & WRT_HW, (int64_t)r->hw_ns),
			 "post_to_cqe_ns", opt_int(d.has_split, d.post_to_cqe_ns),
			 "cqe_to_poll_ns", opt_int(d.has_split, d.cqe_to_poll_ns));
}

/* One JSON value per line; consumes o. */
static int json_line(FILE *f, json_t *o)
{
	int rc;

	if (!o)
		return -1;
	rc = json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (rc == 0 && fputc('\n', f) == EOF)
		rc = -1;
	return rc;
}

int wrt_write_stream(FILE *f, bool jsonl, bool header, const struct wrt_meta *m,
		     const struct wrt_rec *recs, uint64_t n)
{
	struct wrt_gaps gaps = { 0 };
	int rc = 0;

	if (!jsonl) {
		if (header)
			fprintf(f, "%s\n%s\n", WRT_CSV_MAGIC, WRT_CSV_HEADER);
		csv_meta(f, m);
		for (uint64_t i = 0; i < n; i++)
			csv_row(f, m, &recs[i], &gaps);
	} else {
		if (header)
			rc = json_line(f, json_pack("{s:s, s:i}", "type", "wrtrace", "version",
						    WRT_FORMAT_VERSION));
		if (!rc)
			rc = json_line(f, json_meta(m));
		for (uint64_t i = 0; !rc && i < n; i++)
			rc = json_line(f, json_row(m, &recs[i], &gaps));
	}
	return rc;
}

int wrt_write_run(const char *path, bool jsonl, bool append, const struct wrt_meta *m,
		  const struct wrt_rec *recs, uint64_t n, char *err, size_t err_len)
{
	FILE *f = fopen(path, append ? "a" : "w");
	static char buf[1 << 20];
	int rc;

	if (!f)
		return fail(err, err_len, "cannot write trace %s: %s", path, strerror(errno));
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	rc = wrt_write_stream(f, jsonl, !append, m, recs, n);
	if (ferror(f))
		rc = -1;
	if (fclose(f) || rc) {
		int e = errno;

		return fail(err, err_len, "writing trace %s failed: %s", path,
			    rc && !e ? "JSON encoding error" : strerror(e));
	}
	return 0;
}
