/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace files: CSV and JSON Lines round trips through the strict reader
 * (every field, the derived columns, two runs in one file, the summary the
 * report prints equals the live one), reader errors with line numbers, and
 * write errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "plugin/recorder/wrtrace_int.h"

static char dir[] = "/tmp/test_wrtrace_io.XXXXXX";

static int setup(void **state)
{
	(void)state;
	unsetenv(WRT_MAX_ENV);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static const uint32_t qpns[2] = { 0x1a, 0x1b };

/* A run with sends (cq_mod 3, one unsignaled tail), receives with and
 * without post times, NIC times and a fit; summary text into *summary. */
static struct wrt *record_run(const char *args, uint32_t run, FILE *summary, bool hw)
{
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .run = run, .tool = "ib_send_bw", .device = "mlx5_0",
		.role = PT_PLUGIN_ROLE_SERVER, .conn = PT_PLUGIN_CONN_UD, .num_qps = 2,
		.qp_nums = qpns, .msg_size = 4096, .iterations = 8, .tx_depth = 8, .rx_depth = 2,
		.cq_mod = 3, .post_list = 2, .hw_ts = hw ? PT_PLUGIN_HW_TS_ON : PT_PLUGIN_HW_TS_NONE,
		.hw_clock_hz = hw ? 156250000 : 0, .hw_clock_domain = hw ? "hca-free-running" : "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW",
	};
	struct pt_plugin_clock_fit fit = {
		.struct_size = sizeof(fit), .samples = 3, .hw_ref_ns = 5000000000ull,
		.sw_ref_ns = 1000000, .intercept_ns = -12.25, .slope = 1.0000123456789,
		.residual_rms_ns = 4.5, .residual_max_ns = 7.125,
	};
	struct wrt_config cfg;
	char err[256];
	struct wrt *w;
	uint64_t t = 1000000;

	assert_int_equal(wrt_config_parse(args, &cfg, err, sizeof(err)), 0);
	cfg.summary = summary;
	w = wrt_new(&cfg);
	assert_int_equal(wrt_run_start(w, &in, err, sizeof(err)), 0);
	if (hw)
		wrt_clock_fit(w, &fit);
	for (uint32_t q = 0; q < 2; q++) {
		for (uint64_t s = 0; s < 8; s += 2) {
			struct pt_plugin_post p = {
				.struct_size = sizeof(p), .qp = q, .first_seq = s, .count = 2,
				.opcode = PT_PLUGIN_OP_SEND, .first_wr_id = ((uint64_t)q << 48) | s,
				.wr_id_step = 1, .bytes = 4096, .signal_period = 3, .t_ns = t += 37,
			};
			wrt_post(w, &p);
		}
		for (uint64_t s = 2; s < 8; s += 3) {
			struct pt_plugin_completion c = {
				.struct_size = sizeof(c), .qp = q, .wr_id = s, .seq = s,
				.opcode = PT_PLUGIN_OP_SEND, .bytes = 4096, .t_poll_ns = t += 1001,
				.flags = hw ? PT_PLUGIN_COMP_HW_TS : 0, .hw_ns = 5000000000ull + t - 400,
			};
			wrt_complete(w, &c);
		}
		struct pt_plugin_post r = { .struct_size = sizeof(r), .qp = q, .first_seq = 1,
					    .count = 1, .opcode = PT_PLUGIN_OP_RECV, .bytes = 4096,
					    .t_ns = t += 5 };
		wrt_post(w, &r);
		for (int k = 0; k < 2; k++) {
			struct pt_plugin_completion c = {
				.struct_size = sizeof(c), .qp = q, .wr_id = q, .seq = PT_PLUGIN_SEQ_UNKNOWN,
				.status = k, .opcode = PT_PLUGIN_OP_RECV, .bytes = 4136,
				.flags = PT_PLUGIN_COMP_RECV, .t_poll_ns = t += 333,
			};
			wrt_complete(w, &c);
		}
	}
	struct pt_plugin_run_end e = { .struct_size = sizeof(e), .run = run };

	assert_int_equal(wrt_run_end(w, &e, err, sizeof(err)), 0);
	return w;
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void check_same_records(const struct wrt_rec *a, const struct wrt_rec *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		assert_int_equal(a[i].qp, b[i].qp);
		assert_int_equal(a[i].seq, b[i].seq);
		assert_int_equal(a[i].wr_id, b[i].wr_id);
		assert_int_equal(a[i].opcode, b[i].opcode);
		assert_int_equal(a[i].bytes, b[i].bytes);
		assert_int_equal(a[i].status, b[i].status);
		assert_int_equal(a[i].flags, b[i].flags);
		if (a[i].flags & WRT_POSTED)
			assert_int_equal(a[i].t_post, b[i].t_post);
		if (a[i].flags & WRT_DONE)
			assert_int_equal(a[i].t_comp, b[i].t_comp);
		if (a[i].flags & WRT_HW)
			assert_int_equal(a[i].hw_ns, b[i].hw_ns);
	}
}

/* Every metadata field, through the shared key table. */
static void check_same_meta(const struct wrt_meta *a, const struct wrt_meta *b)
{
	for (size_t i = 0; i < wrt_meta_nfields; i++) {
		const struct wrt_field *k = &wrt_meta_fields[i];
		const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;

		if (k->type == WRT_F_STR ? strcmp(pa, pb) != 0 : memcmp(pa, pb, k->size) != 0)
			fail_msg("metadata '%s' differs after the round trip", k->key);
	}
}

/* Live summary == summary of the file read back; records identical. */
static void round_trip(const char *name, bool hw)
{
	char path[256], *live = NULL, *again = NULL, err[512], *last;
	size_t live_len, again_len;
	FILE *ls = open_memstream(&live, &live_len), *as = open_memstream(&again, &again_len);
	struct wrt *w;
	struct wrt_trace t;
	struct wrt_summary s;
	const struct wrt_rec *r;
	uint64_t n;

	path_of(path, sizeof(path), name);
	w = record_run(path, 0, ls, hw);
	fclose(ls);
	assert_int_equal(wrt_read(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nruns, 1);
	assert_int_equal(t.jsonl, strstr(name, ".jsonl") != NULL);
	r = wrt_records(w, &n);
	assert_int_equal(n, 20);
	assert_int_equal(t.runs[0].n, n);
	check_same_records(r, t.runs[0].recs, n);
	check_same_meta(&t.runs[0].meta, wrt_meta(w));
	assert_int_equal(t.runs[0].meta.has_fit, hw);
	assert_int_equal(wrt_summarize(&t.runs[0].meta, t.runs[0].recs, t.runs[0].n, NULL, &s), 0);
	assert_int_equal(s.post_to_cqe.count, hw ? 12 : 0);
	wrt_summary_print(as, &t.runs[0].meta, &s);
	fclose(as);
	/* live = the summary + " wrtrace: 20 rows written to PATH" */
	last = strstr(live, " wrtrace: 20 rows written to ");
	assert_non_null(last);
	/* the run's receive CQE for a receive posted before it ended the
	 * deferral after QP 0's 8 sends and 1 receive: said after the file line */
	assert_non_null(strstr(last, "\n wrtrace: rows built at each CQE from WR 9 on "
				   "(a receive posted before the run)\n"));
	*last = '\0';
	assert_string_equal(again, live);
	wrt_trace_free(&t);
	wrt_free(w);
	free(live);
	free(again);
}

static void test_csv_round_trip(void **state)
{
	(void)state;
	round_trip("a.csv", false);
	round_trip("h.csv", true);
}

static void test_jsonl_round_trip(void **state)
{
	(void)state;
	round_trip("a.jsonl", false);
	round_trip("h.jsonl", true);
}

/* One recorder over two runs appends: both runs come back, in order. */
static void test_two_runs_one_file(void **state)
{
	const char *names[] = { "two.csv", "two.jsonl" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		char path[256], err[512];
		struct wrt_trace t;
		FILE *null = fopen("/dev/null", "w");
		struct wrt *w = record_run((path_of(path, sizeof(path), names[i]), path), 0, null, true);
		struct pt_plugin_run_info in = {
			.struct_size = sizeof(in), .run = 1, .tool = "t", .device = "d", .num_qps = 1,
			.qp_nums = qpns, .iterations = 1, .tx_depth = 1, .post_list = 1,
			/* a tool whose pt_now_ns reads the TSC (util/tsc.h) */
			.sw_clock = "tsc->CLOCK_MONOTONIC_RAW",
		};
		struct pt_plugin_post p = { .struct_size = sizeof(p), .count = 1, .signal_period = 1,
					    .t_ns = 10 };
		struct pt_plugin_completion c = { .struct_size = sizeof(c), .seq = 0, .t_poll_ns = 25 };
		struct pt_plugin_run_end e = { .struct_size = sizeof(e), .run = 1 };

		assert_int_equal(wrt_run_start(w, &in, err, sizeof(err)), 0);
		wrt_post(w, &p);
		wrt_complete(w, &c);
		assert_int_equal(wrt_run_end(w, &e, err, sizeof(err)), 0);
		assert_int_equal(wrt_read(path, &t, err, sizeof(err)), 0);
		assert_int_equal(t.nruns, 2);
		assert_int_equal(t.runs[0].meta.run, 0);
		assert_int_equal(t.runs[1].meta.run, 1);
		assert_int_equal(t.runs[1].n, 1);
		assert_int_equal(t.runs[1].recs[0].t_comp - t.runs[1].recs[0].t_post, 15);
		assert_string_equal(t.runs[0].meta.sw_clock, "CLOCK_MONOTONIC_RAW");
		assert_string_equal(t.runs[1].meta.sw_clock, "tsc->CLOCK_MONOTONIC_RAW");
		wrt_trace_free(&t);
		wrt_free(w);
		fclose(null);
	}
}

/* Write a file of len bytes and expect the reader to fail with want in err. */
static void expect_bad_n(const char *name, const char *text, size_t len, const char *want)
{
	char path[256], err[512];
	struct wrt_trace t;
	FILE *f;

	path_of(path, sizeof(path), name);
	f = fopen(path, "w");
	fwrite(text, 1, len, f);
	fclose(f);
	err[0] = '\0';
	assert_int_equal(wrt_read(path, &t, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_null(t.runs);
}

static void expect_bad(const char *name, const char *text, const char *want)
{
	expect_bad_n(name, text, strlen(text), want);
}

/* Replace the first occurrence of from in s (a copy). */
static char *edit(const char *s, const char *from, const char *to)
{
	const char *p = strstr(s, from);
	char *out = malloc(strlen(s) + strlen(to) + 1);

	assert_non_null(p);
	sprintf(out, "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
	return out;
}

/* Replace field idx (0-based) of CSV line ln (1-based) with to (a copy). */
static char *edit_field(const char *s, int ln, int idx, const char *to)
{
	const char *p = s, *q;
	char *out = malloc(strlen(s) + strlen(to) + 1);

	for (int i = 1; i < ln; i++)
		p = strchr(p, '\n') + 1;
	for (int i = 0; i < idx; i++)
		p = strchr(p, ',') + 1;
	q = p + strcspn(p, ",\n");
	sprintf(out, "%.*s%s%s", (int)(p - s), s, to, q);
	return out;
}

/* Add one to the first integer after "key": in a JSON line (a copy). */
static char *bump_json(const char *s, const char *key)
{
	char pat[96], num[96];
	const char *p;
	long long v;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(s, pat);
	assert_non_null(p);
	v = strtoll(p + strlen(pat), NULL, 10);
	snprintf(pat + strlen(pat), sizeof(pat) - strlen(pat), "%lld", v);
	snprintf(num, sizeof(num), "\"%s\":%lld", key, v + 1);
	return edit(s, pat, num);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
	assert_false(ferror(f));
	fclose(f);
	return buf;
}

static void test_reader_errors(void **state)
{
	char path[256], want[300], *good, *bad;
	FILE *null = fopen("/dev/null", "w");

	(void)state;
	path_of(path, sizeof(path), "good.csv");
	wrt_free(record_run(path, 0, null, true));
	good = slurp(path);
	snprintf(want, sizeof(want), "%s/x.csv:1: not a wrtrace CSV", dir);
	expect_bad("x.csv", "qp,seq\n", want);
	expect_bad("x.csv", "", "empty file");
	expect_bad("x.csv", "# wrtrace 1\nrun,qp\n", "x.csv:2: column header");
	/* row 1 is line 4: change its latency */
	bad = edit_field(good, 4, 11, "1");
	expect_bad("x.csv", bad, "x.csv:4: latency_ns does not match");
	free(bad);
	bad = edit_field(good, 5, 4, "SNED");
	expect_bad("x.csv", bad, "x.csv:5: opcode 'SNED' unknown");
	free(bad);
	bad = edit_field(good, 4, 4, "SEND,");
	expect_bad("x.csv", bad, "x.csv:4: 19 fields, want 18");
	free(bad);
	bad = edit_field(good, 4, 3, "0X0");
	expect_bad("x.csv", bad, "x.csv:4: wr_id '0X0'");
	free(bad);
	bad = edit_field(good, 6, 12, "1.5");
	expect_bad("x.csv", bad, "x.csv:6: tput_mb_s does not match");
	free(bad);
	/* row 3 owns the first CQE: claiming it does not shifts every gap */
	bad = edit_field(good, 6, 7, "0");
	expect_bad("x.csv", bad, "x.csv:9: cqe_gap_sw_ns/cqe_gap_hw_ns do not match");
	free(bad);
	bad = edit_field(good, 23, 7, "1"); /* the last row: a send never completed */
	expect_bad("x.csv", bad, "x.csv:23: own_cqe without t_comp_ns");
	free(bad);
	bad = edit(good, " dropped=0", " dropped=x");
	expect_bad("x.csv", bad, "x.csv:3: dropped=x: want an unsigned integer");
	free(bad);
	bad = edit(good, " dropped=0", "");
	expect_bad("x.csv", bad, "x.csv:3: metadata lacks 'dropped'");
	free(bad);
	bad = edit(good, " conn=UD", " conn=IB");
	expect_bad("x.csv", bad, "x.csv:3: conn 'IB': want one of RC, UC, UD, XRC, DC, SRD, OTHER");
	free(bad);
	bad = edit(good, " fit_slope=", " fit_slope=nan x=");
	expect_bad("x.csv", bad, "x.csv:3: fit_slope=nan: want a finite number");
	free(bad);
	/* found by fuzz_trace: what the writer never writes, or what the JSON
	 * Lines form cannot hold, would not survive being written back */
	bad = edit(good, " device=mlx5_0", " device=mlx\"5");
	expect_bad("x.csv", bad, "x.csv:3: device: character 0x22 is never written there");
	free(bad);
	bad = edit(good, " msg_size=4096", " msg_size=9223372036854775808");
	expect_bad("x.csv", bad, "x.csv:3: msg_size=9223372036854775808: want an unsigned integer");
	free(bad);
	bad = edit_field(good, 4, 2, "18446744073709551615");
	expect_bad("x.csv", bad, "x.csv:4: seq '18446744073709551615'");
	free(bad);
	/* a fit mapping NIC times off the ns range: no split (was a signed
	 * overflow under UBSan), so the file's split columns do not match */
	{
		const char *p = strstr(good, " fit_slope=");
		char slope[64];

		snprintf(slope, sizeof(slope), "%.*s", (int)strcspn(p + 1, " ") + 1, p);
		bad = edit(good, slope, " fit_slope=1e300");
		expect_bad("x.csv", bad, "x.csv:4: post_to_cqe_ns/cqe_to_poll_ns do not match");
		free(bad);
	}
	/* a lost row: the metadata count catches it */
	{
		char *row = strstr(strstr(good, "\n0,0,0,") + 1, "\n") + 1;

		bad = malloc(strlen(good) + 1);
		sprintf(bad, "%.*s%s", (int)(row - good - 0), good, strchr(row, '\n') + 1);
		expect_bad("x.csv", bad, "metadata says 20 rows, the file has 19");
		free(bad);
	}
	/* truncated mid-line */
	good[strlen(good) - 3] = '\0';
	expect_bad("x.csv", good, "not terminated");
	free(good);

	path_of(path, sizeof(path), "good.jsonl");
	wrt_free(record_run(path, 0, null, true));
	good = slurp(path);
	expect_bad("x.jsonl", "{\"type\":\"wrtrace\",\"version\":2}\n", "x.jsonl:1: not a wrtrace JSON Lines file");
	bad = bump_json(good, "latency_ns");
	expect_bad("x.jsonl", bad, "x.jsonl:3: latency_ns does not match");
	free(bad);
	bad = edit(good, "\"seq\":0,", "\"seq\":0,\"seq\":1,");
	expect_bad("x.jsonl", bad, "x.jsonl:3: bad JSON");
	free(bad);
	bad = edit(good, "\"hw_ns\":", "\"hw_nz\":");
	expect_bad("x.jsonl", bad, "x.jsonl:3: row lacks 'hw_ns'");
	free(bad);
	bad = edit(good, "\"type\":\"wr\"", "\"type\":\"wx\"");
	expect_bad("x.jsonl", bad, "x.jsonl:3: unknown type \"wx\"");
	free(bad);
	bad = edit(good, "\"role\":\"server\"", "\"role\":\"boss\"");
	expect_bad("x.jsonl", bad, "x.jsonl:2: role 'boss': want one of client, server");
	free(bad);
	bad = edit(good, "\"status\":0", "\"status\":\"0\"");
	expect_bad("x.jsonl", bad, "'status': want an integer or null");
	free(bad);
	/* found by fuzz_trace: json_loads stopped at a NUL, so the rest of the
	 * line was never read */
	bad = edit(good, "\"type\":\"wr\"", "\"type\":\"wr\"}@{\"x\":1");
	*strchr(bad, '@') = '\0';
	expect_bad_n("x.jsonl", bad, strlen(good) + 8, "x.jsonl:3: NUL byte in line");
	free(bad);
	free(good);
	fclose(null);
	{
		struct wrt_trace t;
		char err[256];

		assert_int_equal(wrt_read("/nonexistent/t.csv", &t, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "/nonexistent/t.csv: No such file"));
	}
}

/* A trace that cannot be written is an error of run end, not silence. */
static void test_write_errors(void **state)
{
	struct wrt_meta m = { .recorded = 0 };
	char err[256];

	(void)state;
	assert_int_equal(wrt_write_run("/nonexistent/t.csv", false, false, &m, NULL, 0, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot write trace /nonexistent/t.csv"));
	if (access("/dev/full", W_OK) == 0) {
		struct wrt_rec r[2000] = { 0 };

		m.recorded = 2000;
		assert_int_equal(wrt_write_run("/dev/full", false, false, &m, r, 2000, err,
					       sizeof(err)), -1);
		assert_non_null(strstr(err, "No space left"));
	}
}

/* Drops: the file says so and keeps the capture-time percentiles. */
static void test_drops_in_file(void **state)
{
	char path[256], args[300], err[512], *text = NULL;
	size_t len;
	FILE *out = open_memstream(&text, &len), *null = fopen("/dev/null", "w");
	struct wrt_trace t;
	struct wrt_summary s;

	(void)state;
	path_of(path, sizeof(path), "drop.csv");
	snprintf(args, sizeof(args), "%s:max=5", path);
	wrt_free(record_run(args, 0, null, false));
	assert_int_equal(wrt_read(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.runs[0].n, 5);
	assert_int_equal(t.runs[0].meta.dropped, 15);
	assert_int_equal(t.runs[0].meta.all_count, 12); /* retired sends */
	assert_int_equal(wrt_summarize(&t.runs[0].meta, t.runs[0].recs, 5, NULL, &s), 0);
	wrt_summary_print(out, &t.runs[0].meta, &s);
	fclose(out);
	assert_non_null(strstr(text, "dropped over the 5-record cap: 15"));
	assert_non_null(strstr(text, "at capture over all 12 WRs"));
	assert_non_null(strstr(text, "rows cover the first 5 WRs completed only"));
	free(text);
	wrt_trace_free(&t);
	fclose(null);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv_round_trip),
		cmocka_unit_test(test_jsonl_round_trip),
		cmocka_unit_test(test_two_runs_one_file),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_write_errors),
		cmocka_unit_test(test_drops_in_file),
	};
	return cmocka_run_group_tests_name("wrtrace_io", tests, setup, teardown);
}
