/* SPDX-License-Identifier: BSD-2-Clause */
/* Strict reader of wrtrace files (CSV and JSON Lines, see wrtrace_write.c).
 * Derived columns are recomputed and must match: a hand-edited or damaged
 * file is an error naming its line, never a silently different summary. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "wrtrace_int.h"

struct reader {
	const char *path;
	unsigned long line;
	struct wrt_gaps gaps;       /* of the current run's rows so far */
	struct wrt_trace *t;
	char *err;
	size_t err_len;
};

static int bad(struct reader *rd, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	n = (size_t)snprintf(rd->err, rd->err_len, "%s:%lu: ", rd->path, rd->line);
	if (n < rd->err_len) {
		va_start(ap, fmt);
		vsnprintf(rd->err + n, rd->err_len - n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Integers in both formats are 0..INT64_MAX (JSON Lines holds them as
 * jansson's json_int_t), so a file converts either way. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end || *v > INT64_MAX ? -1 : 0;
}

static int parse_i64(const char *s, int64_t *v)
{
	char *end;

	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int parse_dbl(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || !*s || *end || *v != *v || *v - *v != 0 ? -1 : 0;
}

/* An enum value by name (or, for values without one, as a number). */
static int parse_enum(const struct wrt_field *k, const char *s, uint32_t *v)
{
	uint64_t u;

	for (unsigned i = 0; i < k->nnames; i++)
		if (k->names[i] && !strcmp(s, k->names[i])) {
			*v = i;
			return 0;
		}
	if (parse_u64(s, &u) || u > UINT32_MAX || (u < k->nnames && k->names[u]))
		return -1;
	*v = (uint32_t)u;
	return 0;
}

static int enum_error(struct reader *rd, const struct wrt_field *k, const char *s)
{
	char names[128] = "";

	for (unsigned i = 0; i < k->nnames; i++)
		if (k->names[i])
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 names[0] ? ", " : "", k->names[i]);
	return bad(rd, "%s '%s': want one of %s", k->key, s, names);
}

static struct wrt_run *cur_run(struct reader *rd)
{
	return rd->t->runs && rd->t->nruns ? &rd->t->runs[rd->t->nruns - 1] : NULL;
}

/* Close the current run: its metadata must account for every row. */
static int run_check(struct reader *rd)
{
	struct wrt_run *r = cur_run(rd);

	if (r && r->n != r->meta.recorded)
		return bad(rd, "run %u: metadata says %llu rows, the file has %llu (truncated file?)",
			   r->meta.run, (unsigned long long)r->meta.recorded,
			   (unsigned long long)r->n);
	return 0;
}

static int run_new(struct reader *rd, const struct wrt_meta *m)
{
	struct wrt_run *runs;

	if (run_check(rd))
		return -1;
	runs = realloc(rd->t->runs, (rd->t->nruns + 1) * sizeof(*runs));
	if (!runs)
		return bad(rd, "out of memory");
	rd->t->runs = runs;
	memset(&runs[rd->t->nruns], 0, sizeof(*runs));
	runs[rd->t->nruns].meta = *m;
	rd->t->nruns++;
	memset(&rd->gaps, 0, sizeof(rd->gaps));
	return 0;
}

static int rec_add(struct reader *rd, const struct wrt_rec *rec)
{
	struct wrt_run *r = cur_run(rd);

	if (rec->qp >= r->meta.num_qps)
		return bad(rd, "qp %u out of range (run has %u QPs)", rec->qp, r->meta.num_qps);
	if (r->n == r->cap) {
		uint64_t cap = r->cap ? 2 * r->cap : 1024;
		struct wrt_rec *v = realloc(r->recs, cap * sizeof(*v));

		if (!v)
			return bad(rd, "out of memory");
		r->recs = v;
		r->cap = cap;
	}
	r->recs[r->n++] = *rec;
	return 0;
}

/* Derived columns as the file has them vs recomputed. */
struct derived_in {
	uint64_t run;
	bool has_lat, has_tput, has_split_a, has_split_b, has_gap_sw, has_gap_hw;
	int64_t lat, a, b, gap_sw, gap_hw;
	double tput;
	const char *tput_text;      /* CSV: compared as printed */
};

static int check_derived(struct reader *rd, const struct wrt_rec *rec, const struct derived_in *in)
{
	const struct wrt_run *r = cur_run(rd);
	struct wrt_derived d;
	char t[64];

	if (!r)
		return bad(rd, "row before any run metadata");
	if (in->run != r->meta.run)
		return bad(rd, "row of run %llu inside run %u", (unsigned long long)in->run, r->meta.run);
	if (rec->qp >= r->meta.num_qps)
		return bad(rd, "qp %u out of range (run has %u QPs)", rec->qp, r->meta.num_qps);
	wrt_derive(rec, &r->meta, &rd->gaps, &d);
	if (in->has_lat != d.has_lat || (d.has_lat && in->lat != d.lat_ns))
		return bad(rd, "latency_ns does not match t_comp_ns - t_post_ns");
	if (in->has_tput != d.has_tput)
		return bad(rd, "tput_mb_s present/absent where latency says otherwise");
	if (d.has_tput) {
		snprintf(t, sizeof(t), "%.3f", d.tput_mb_s);
		if (in->tput_text ? strcmp(t, in->tput_text) != 0 : in->tput != d.tput_mb_s)
			return bad(rd, "tput_mb_s does not match bytes / latency_ns (want %s)", t);
	}
	if (in->has_gap_sw != d.has_gap_sw || (d.has_gap_sw && in->gap_sw != d.gap_sw_ns) ||
	    in->has_gap_hw != d.has_gap_hw || (d.has_gap_hw && in->gap_hw != d.gap_hw_ns))
		return bad(rd, "cqe_gap_sw_ns/cqe_gap_hw_ns do not match the previous own CQE's times");
	if (in->has_split_a != d.has_split || in->has_split_b != d.has_split ||
	    (d.has_split && (in->a != d.post_to_cqe_ns || in->b != d.cqe_to_poll_ns)))
		return bad(rd, "post_to_cqe_ns/cqe_to_poll_ns do not match hw_ns and the clock fit");
	return 0;
}

/* ------------------------------------------------------------------ CSV -- */

static int csv_meta(struct reader *rd, char *line)
{
	bool seen[128] = { 0 };
	struct wrt_meta m = { 0 };
	char *save = NULL;

	for (char *tok = strtok_r(line + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		size_t i;

		if (!eq)
			return bad(rd, "metadata token '%s' is not key=value", tok);
		*eq = '\0';
		for (i = 0; i < wrt_meta_nfields && strcmp(wrt_meta_fields[i].key, tok); i++)
			;
		if (i == wrt_meta_nfields)
			return bad(rd, "unknown metadata key '%s'", tok);
		if (seen[i])
			return bad(rd, "metadata key '%s' given twice", tok);
		seen[i] = true;
		const struct wrt_field *k = &wrt_meta_fields[i];
		char *p = (char *)&m + k->off, *v = eq + 1;
		uint64_t u;

		switch (k->type) {
		case WRT_F_ENUM:
			if (parse_enum(k, v, (uint32_t *)p))
				return enum_error(rd, k, v);
			break;
		case WRT_F_U32:
			if (parse_u64(v, &u) || u > UINT32_MAX)
				return bad(rd, "%s=%s: want an integer 0..%u", k->key, v, UINT32_MAX);
			*(uint32_t *)p = (uint32_t)u;
			break;
		case WRT_F_U64:
			if (parse_u64(v, (uint64_t *)p))
				return bad(rd, "%s=%s: want an unsigned integer", k->key, v);
			break;
		case WRT_F_STR:
			if (strlen(v) >= k->size)
				return bad(rd, "%s: longer than %zu bytes", k->key, k->size - 1);
			for (const char *c = v; *c; c++)
				if (!wrt_csv_token_char(*c))
					return bad(rd, "%s: character 0x%02x is never written there", k->key,
						   (unsigned char)*c);
			strcpy(p, strcmp(v, "-") ? v : "");
			break;
		case WRT_F_DBL:
			if (parse_dbl(v, (double *)p))
				return bad(rd, "%s=%s: want a finite number", k->key, v);
			break;
		case WRT_F_BOOL:
			if (strcmp(v, "0") && strcmp(v, "1"))
				return bad(rd, "%s=%s: want 0 or 1", k->key, v);
			*(bool *)p = v[0] == '1';
			break;
		}
	}
	for (size_t i = 0; i < wrt_meta_nfields; i++)
		if (!seen[i])
			return bad(rd, "metadata lacks '%s'", wrt_meta_fields[i].key);
	m.fit.struct_size = sizeof(m.fit);
	return run_new(rd, &m);
}

/* Split a CSV row in place (no quoting in wrtrace files). */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;

	for (char *p = line;; p++) {
		if (n == max)
			return -1;
		f[n++] = p;
		p = strchr(p, ',');
		if (!p)
			return n;
		*p = '\0';
	}
}

static int csv_opt_u64(struct reader *rd, const char *name, const char *s, uint64_t *v, bool *has)
{
	*has = *s != '\0';
	if (*has && parse_u64(s, v))
		return bad(rd, "%s '%s': want an unsigned integer or nothing", name, s);
	return 0;
}

static int csv_opt_i64(struct reader *rd, const char *name, const char *s, int64_t *v, bool *has)
{
	*has = *s != '\0';
	if (*has && parse_i64(s, v))
		return bad(rd, "%s '%s': want an integer or nothing", name, s);
	return 0;
}

static int csv_flag(struct reader *rd, const char *name, const char *s, bool *v)
{
	if (strcmp(s, "0") && strcmp(s, "1"))
		return bad(rd, "%s '%s': want 0 or 1", name, s);
	*v = s[0] == '1';
	return 0;
}

static int csv_row(struct reader *rd, char *line)
{
	char *f[WRT_CSV_NCOLS + 1];
	struct wrt_rec r = { 0 };
	struct derived_in in = { 0 };
	uint64_t u, st = 0;
	uint32_t op;
	bool has, done, posted, hw, sig = false, own = false;
	int n = csv_split(line, f, WRT_CSV_NCOLS + 1);

	if (n != WRT_CSV_NCOLS)
		return bad(rd, "%d fields, want %d", n, WRT_CSV_NCOLS);
	if (parse_u64(f[0], &in.run))
		return bad(rd, "run '%s': want an integer", f[0]);
	if (parse_u64(f[1], &u) || u > UINT32_MAX)
		return bad(rd, "qp '%s': want an integer", f[1]);
	r.qp = (uint32_t)u;
	if (parse_u64(f[2], &r.seq))
		return bad(rd, "seq '%s': want an unsigned integer", f[2]);
	if (strncmp(f[3], "0x", 2) || !f[3][2] || strspn(f[3] + 2, "0123456789abcdef") != strlen(f[3] + 2) ||
	    strlen(f[3]) > 18)
		return bad(rd, "wr_id '%s': want 0x and up to 16 lower-case hex digits", f[3]);
	r.wr_id = strtoull(f[3] + 2, NULL, 16);
	if (wrt_opcode_parse(f[4], &op))
		return bad(rd, "opcode '%s' unknown", f[4]);
	r.opcode = (uint8_t)op;
	if (parse_u64(f[5], &u) || u > UINT32_MAX)
		return bad(rd, "bytes '%s': want an integer 0..%u", f[5], UINT32_MAX);
	r.bytes = (uint32_t)u;
	if (csv_flag(rd, "signaled", f[6], &sig) || csv_flag(rd, "own_cqe", f[7], &own) ||
	    csv_opt_u64(rd, "status", f[8], &st, &has) ||
	    csv_opt_u64(rd, "t_post_ns", f[9], &r.t_post, &posted) ||
	    csv_opt_u64(rd, "t_comp_ns", f[10], &r.t_comp, &done) ||
	    csv_opt_i64(rd, "latency_ns", f[11], &in.lat, &in.has_lat) ||
	    csv_opt_i64(rd, "cqe_gap_sw_ns", f[13], &in.gap_sw, &in.has_gap_sw) ||
	    csv_opt_i64(rd, "cqe_gap_hw_ns", f[14], &in.gap_hw, &in.has_gap_hw) ||
	    csv_opt_u64(rd, "hw_ns", f[15], &r.hw_ns, &hw) ||
	    csv_opt_i64(rd, "post_to_cqe_ns", f[16], &in.a, &in.has_split_a) ||
	    csv_opt_i64(rd, "cqe_to_poll_ns", f[17], &in.b, &in.has_split_b))
		return -1;
	if (has != done)
		return bad(rd, "status is given exactly when t_comp_ns is");
	if (st > 255)
		return bad(rd, "status %llu out of range", (unsigned long long)st);
	if (own && !done)
		return bad(rd, "own_cqe without t_comp_ns");
	r.status = (uint8_t)st;
	in.has_tput = f[12][0] != '\0';
	in.tput_text = f[12];
	r.flags = (sig ? WRT_SIGNALED : 0) | (own ? WRT_CQE : 0) |
		  (op == PT_PLUGIN_OP_RECV ? WRT_RECV : 0) | (done ? WRT_DONE : 0) |
		  (hw ? WRT_HW : 0) | (posted ? WRT_POSTED : 0);
	if (check_derived(rd, &r, &in))
		return -1;
	return rec_add(rd, &r);
}

static int csv_line(struct reader *rd, char *line)
{
	if (rd->line == 1)
		return strcmp(line, WRT_CSV_MAGIC) ? bad(rd, "not a wrtrace CSV file (want '%s')", WRT_CSV_MAGIC) : 0;
	if (rd->line == 2)
		return strcmp(line, WRT_CSV_HEADER) ? bad(rd, "column header differs from '%s'", WRT_CSV_HEADER) : 0;
	return line[0] == '#' ? csv_meta(rd, line) : csv_row(rd, line);
}

/* ---------------------------------------------------------- JSON Lines -- */

static int json_meta(struct reader *rd, json_t *o)
{
	struct wrt_meta m = { 0 };

	if (json_object_size(o) != wrt_meta_nfields + 1)
		return bad(rd, "run object has %zu keys, want %zu", json_object_size(o),
			   wrt_meta_nfields + 1);
	for (size_t i = 0; i < wrt_meta_nfields; i++) {
		const struct wrt_field *k = &wrt_meta_fields[i];
		json_t *v = json_object_get(o, k->key);
		char *p = (char *)&m + k->off;

		if (!v)
			return bad(rd, "run object lacks '%s'", k->key);
		switch (k->type) {
		case WRT_F_ENUM:
			if (!json_is_string(v) || parse_enum(k, json_string_value(v), (uint32_t *)p))
				return enum_error(rd, k, json_is_string(v) ? json_string_value(v) : "?");
			break;
		case WRT_F_U32:
		case WRT_F_U64:
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    (k->type == WRT_F_U32 && json_integer_value(v) > UINT32_MAX))
				return bad(rd, "'%s': want an unsigned integer", k->key);
			if (k->type == WRT_F_U32)
				*(uint32_t *)p = (uint32_t)json_integer_value(v);
			else
				*(uint64_t *)p = (uint64_t)json_integer_value(v);
			break;
		case WRT_F_STR:
			if (!json_is_string(v) || json_string_length(v) >= k->size)
				return bad(rd, "'%s': want a string under %zu bytes", k->key, k->size);
			strcpy(p, json_string_value(v));
			break;
		case WRT_F_DBL:
			if (!json_is_number(v))
				return bad(rd, "'%s': want a number", k->key);
			*(double *)p = json_number_value(v);
			break;
		case WRT_F_BOOL:
			if (!json_is_boolean(v))
				return bad(rd, "'%s': want true or false", k->key);
			*(bool *)p = json_is_true(v);
			break;
		}
	}
	m.fit.struct_size = sizeof(m.fit);
	return run_new(rd, &m);
}

/* key holds an integer >= lo (or null when nullable). */
static int json_int(struct reader *rd, json_t *o, const char *key, bool nullable, int64_t lo,
		    int64_t *v, bool *has)
{
	json_t *x = json_object_get(o, key);

	if (!x)
		return bad(rd, "row lacks '%s'", key);
	*has = !json_is_null(x);
	if (!*has && nullable)
		return 0;
	if (!json_is_integer(x) || json_integer_value(x) < lo)
		return bad(rd, "'%s': want an integer%s", key, nullable ? " or null" : "");
	*v = json_integer_value(x);
	return 0;
}

static int json_bool(struct reader *rd, json_t *o, const char *key, bool *v)
{
	json_t *x = json_object_get(o, key);

	if (!json_is_boolean(x))
		return bad(rd, "'%s': want true or false", key);
	*v = json_is_true(x);
	return 0;
}

static int json_row(struct reader *rd, json_t *o)
{
	struct wrt_rec r = { 0 };
	struct derived_in in = { 0 };
	int64_t run, qp, seq, bytes, st = 0, tp = 0, tc = 0, hw = 0;
	bool h, has_st, posted, done, hashw, sig = false, own = false;
	json_t *wr = json_object_get(o, "wr_id"), *op = json_object_get(o, "opcode");
	json_t *tput = json_object_get(o, "tput_mb_s");
	uint32_t opc;

	if (json_object_size(o) != WRT_CSV_NCOLS + 1)
		return bad(rd, "row has %zu keys, want %d", json_object_size(o), WRT_CSV_NCOLS + 1);
	if (json_int(rd, o, "run", false, 0, &run, &h) || json_int(rd, o, "qp", false, 0, &qp, &h) ||
	    json_int(rd, o, "seq", false, 0, &seq, &h) || json_int(rd, o, "bytes", false, 0, &bytes, &h) ||
	    json_int(rd, o, "status", true, 0, &st, &has_st) ||
	    json_int(rd, o, "t_post_ns", true, 0, &tp, &posted) ||
	    json_int(rd, o, "t_comp_ns", true, 0, &tc, &done) ||
	    json_int(rd, o, "latency_ns", true, INT64_MIN, &in.lat, &in.has_lat) ||
	    json_int(rd, o, "cqe_gap_sw_ns", true, INT64_MIN, &in.gap_sw, &in.has_gap_sw) ||
	    json_int(rd, o, "cqe_gap_hw_ns", true, INT64_MIN, &in.gap_hw, &in.has_gap_hw) ||
	    json_int(rd, o, "hw_ns", true, 0, &hw, &hashw) ||
	    json_int(rd, o, "post_to_cqe_ns", true, INT64_MIN, &in.a, &in.has_split_a) ||
	    json_int(rd, o, "cqe_to_poll_ns", true, INT64_MIN, &in.b, &in.has_split_b) ||
	    json_bool(rd, o, "signaled", &sig) || json_bool(rd, o, "own_cqe", &own))
		return -1;
	if (qp > UINT32_MAX || bytes > UINT32_MAX || st > 255)
		return bad(rd, "qp, bytes or status out of range");
	if (!json_is_string(wr) || strncmp(json_string_value(wr), "0x", 2) ||
	    json_string_length(wr) < 3 || json_string_length(wr) > 18 ||
	    strspn(json_string_value(wr) + 2, "0123456789abcdef") != json_string_length(wr) - 2)
		return bad(rd, "'wr_id': want a string 0x and up to 16 lower-case hex digits");
	if (!json_is_string(op) || wrt_opcode_parse(json_string_value(op), &opc))
		return bad(rd, "'opcode': unknown");
	if (!tput || !(json_is_null(tput) || json_is_number(tput)))
		return bad(rd, "'tput_mb_s': want a number or null");
	if (has_st != done)
		return bad(rd, "status is given exactly when t_comp_ns is");
	if (own && !done)
		return bad(rd, "own_cqe without t_comp_ns");
	in.run = (uint64_t)run;
	r.qp = (uint32_t)qp;
	r.seq = (uint64_t)seq;
	r.wr_id = strtoull(json_string_value(wr) + 2, NULL, 16);
	r.opcode = (uint8_t)opc;
	r.bytes = (uint32_t)bytes;
	r.status = (uint8_t)st;
	r.t_post = (uint64_t)tp;
	r.t_comp = (uint64_t)tc;
	r.hw_ns = (uint64_t)hw;
	r.flags = (sig ? WRT_SIGNALED : 0) | (own ? WRT_CQE : 0) |
		  (opc == PT_PLUGIN_OP_RECV ? WRT_RECV : 0) | (done ? WRT_DONE : 0) |
		  (hashw ? WRT_HW : 0) | (posted ? WRT_POSTED : 0);
	in.has_tput = !json_is_null(tput);
	in.tput = in.has_tput ? json_number_value(tput) : 0;
	if (check_derived(rd, &r, &in))
		return -1;
	return rec_add(rd, &r);
}

static int json_line(struct reader *rd, char *line)
{
	json_error_t je;
	json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &je);
	const char *type;
	int rc;

	if (!o)
		return bad(rd, "bad JSON: %s (column %d)", je.text, je.column);
	type = json_string_value(json_object_get(o, "type"));
	if (!json_is_object(o) || !type)
		rc = bad(rd, "want an object with a \"type\"");
	else if (rd->line == 1)
		rc = strcmp(type, "wrtrace") ||
		     json_integer_value(json_object_get(o, "version")) != WRT_FORMAT_VERSION ?
		     bad(rd, "not a wrtrace JSON Lines file of version %d", WRT_FORMAT_VERSION) : 0;
	else if (!strcmp(type, "run"))
		rc = json_meta(rd, o);
	else if (!strcmp(type, "wr"))
		rc = json_row(rd, o);
	else
		rc = bad(rd, "unknown type \"%s\"", type);
	json_decref(o);
	return rc;
}

/* ------------------------------------------------------------------------ */

/* Every line of the file, terminated and free of NUL bytes, to one_line
 * (without its newline). */
static int read_lines(struct reader *rd, FILE *f, int (*one_line)(struct reader *, char *))
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	while (!rc && (len = getline(&line, &cap, f)) >= 0) {
		rd->line++;
		if (len == 0 || line[len - 1] != '\n') {
			rc = bad(rd, "last line is not terminated (truncated file?)");
			break;
		}
		line[len - 1] = '\0';
		if (strlen(line) != (size_t)len - 1)
			rc = bad(rd, "NUL byte in line");
		else
			rc = one_line(rd, line);
	}
	free(line);
	return rc;
}

int wrt_read_stream(FILE *f, const char *name, struct wrt_trace *t, char *err, size_t err_len)
{
	struct reader rd = { .path = name, .t = t, .err = err, .err_len = err_len };
	int c, rc;

	memset(t, 0, sizeof(*t));
	c = getc(f);
	ungetc(c, f);
	t->jsonl = c == '{';
	rc = read_lines(&rd, f, t->jsonl ? json_line : csv_line);
	if (!rc && ferror(f))
		rc = bad(&rd, "read error: %s", strerror(errno));
	if (!rc && rd.line == 0)
		rc = bad(&rd, "empty file");
	if (!rc && t->nruns == 0)
		rc = bad(&rd, "no run in the file");
	if (!rc)
		rc = run_check(&rd);
	if (rc)
		wrt_trace_free(t);
	return rc;
}

int wrt_read(const char *path, struct wrt_trace *t, char *err, size_t err_len)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		memset(t, 0, sizeof(*t));
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	rc = wrt_read_stream(f, path, t, err, err_len);
	fclose(f);
	return rc;
}

void wrt_trace_free(struct wrt_trace *t)
{
	for (size_t i = 0; i < t->nruns; i++)
		free(t->runs[i].recs);
	free(t->runs);
	memset(t, 0, sizeof(*t));
}
