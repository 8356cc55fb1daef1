/* SPDX-License-Identifier: BSD-2-Clause */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <setjmp.h>
#include <cmocka.h>
#include <jansson.h>
#include "perftest/report/json.h"
#include "util/clock.h"
#include "util/tsc.h"

static struct pt_test_info info(const char *name)
{
	struct pt_test_info in = {
		.test_name = name, .device = "rxe0", .num_qps = 2,
		.transport = "IB", .connection = "RC", .pcie_relax = "OFF",
		.tx_depth = 128, .post_list = 1, .recv_post_list = 1,
		.rx_depth = -1, .cq_mod = 100, .mtu = 1024,
		.link_type = "Ethernet", .gid_index = -1, .max_inline = 0,
		.data_ex_method = "Ethernet", .tos = -1,
	};
	return in;
}

/* Parse what the accumulator produces; fails the test on invalid JSON. */
static json_t *parse(const struct pt_json *j)
{
	char *text = pt_json_dumps(j);
	json_error_t err;
	json_t *doc;

	assert_non_null(text);
	doc = json_loads(text, JSON_REJECT_DUPLICATES, &err);
	if (!doc)
		fail_msg("invalid JSON at line %d: %s\n%s", err.line, err.text,
			 text);
	free(text);
	return doc;
}

static const char *get_str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_string(v));
	return json_string_value(v);
}

static long long get_int(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v || !json_is_integer(v))
		fail_msg("missing integer key %s", k);
	return json_integer_value(v);
}

static double get_real(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (!v || !json_is_real(v))
		fail_msg("missing real key %s", k);
	return json_real_value(v);
}

static void test_bw_single(void **state)
{
	(void)state;
	struct pt_test_info in = info("Send BW Test");
	struct pt_bw_result r = { .size = 65536, .iters = 1000, .bw_peak = 0,
				  .bw_avg = 62.5, .msg_rate = 0.001 };
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	json_t *doc, *ti, *res, *all;
	char *text;

	assert_non_null(j);
	assert_int_equal(pt_json_add_bw(j, &r), 0);
	doc = parse(j);
	ti = json_object_get(doc, "test_info");
	assert_true(json_is_object(ti));
	assert_string_equal(get_str(ti, "test"), "Send_BW_Test");
	assert_string_equal(get_str(ti, "Dual_port"), "OFF");
	assert_string_equal(get_str(ti, "Device"), "rxe0");
	assert_int_equal(get_int(ti, "Number_of_qps"), 2);
	assert_string_equal(get_str(ti, "Transport_type"), "IB");
	assert_string_equal(get_str(ti, "Connection_type"), "RC");
	assert_string_equal(get_str(ti, "Using_SRQ"), "OFF");
	assert_string_equal(get_str(ti, "PCIe_relax_order"), "OFF");
	assert_string_equal(get_str(ti, "ibv_wr_API"), "OFF");
	assert_int_equal(get_int(ti, "TX_depth"), 128);
	assert_int_equal(get_int(ti, "CQ_Moderation"), 100);
	assert_int_equal(get_int(ti, "Mtu"), 1024);
	assert_string_equal(get_str(ti, "Link_type"), "Ethernet");
	assert_int_equal(get_int(ti, "Max_inline_data"), 0);
	assert_string_equal(get_str(ti, "rdma_cm_QPs"), "OFF");
	assert_string_equal(get_str(ti, "Data_ex_method"), "Ethernet");
	/* Conditional keys stay out when not applicable. */
	assert_null(json_object_get(ti, "RX_depth"));
	assert_null(json_object_get(ti, "Post_List"));
	assert_null(json_object_get(ti, "GID_index"));
	assert_null(json_object_get(ti, "TOS"));
	assert_null(json_object_get(ti, "Outstand_reads"));
	assert_null(json_object_get(ti, "Test with events"));

	res = json_object_get(doc, "results");
	assert_true(json_is_object(res));
	assert_int_equal(get_int(res, "MsgSize"), 65536);
	assert_int_equal(get_int(res, "n_iterations"), 1000);
	assert_true(get_real(res, "BW_peak") == 0.0);
	assert_true(get_real(res, "BW_average") == 62.5);
	assert_true(get_real(res, "MsgRate") == 0.001);
	assert_string_equal(get_str(res, "BW_units"), "MiB/s");
	assert_null(json_object_get(res, "CPU_util"));
	all = json_object_get(doc, "all_results");
	assert_true(json_is_array(all));
	assert_int_equal(json_array_size(all), 1);
	assert_true(json_equal(json_array_get(all, 0), res));
	json_decref(doc);

	/* Reals print short: no 0.001000000000000000021 noise. */
	text = pt_json_dumps(j);
	assert_non_null(strstr(text, "0.001"));
	assert_null(strstr(text, "00000000"));
	free(text);
	pt_json_free(j);
}

static void test_bw_sweep_keeps_all(void **state)
{
	(void)state;
	struct pt_test_info in = info("RDMA_Write BW Test");
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	json_t *doc, *all;

	assert_non_null(j);
	for (uint64_t sz = 2; sz <= 8; sz *= 2) {
		struct pt_bw_result r = { .size = sz, .iters = 5000,
					  .bw_peak = 10.0 * sz,
					  .bw_avg = 5.0 * sz, .msg_rate = 1.5,
					  .gbits = true, .has_cpu_util = true,
					  .cpu_util = 99.5 };
		assert_int_equal(pt_json_add_bw(j, &r), 0);
	}
	doc = parse(j);
	all = json_object_get(doc, "all_results");
	assert_int_equal(json_array_size(all), 3);
	for (size_t i = 0; i < 3; i++) {
		json_t *row = json_array_get(all, i);
		long long sz = 2ll << i;

		assert_int_equal(get_int(row, "MsgSize"), sz);
		assert_true(get_real(row, "BW_average") == 5.0 * (double)sz);
		assert_true(get_real(row, "BW_peak") == 10.0 * (double)sz);
		assert_true(get_real(row, "CPU_util") == 99.5);
		assert_string_equal(get_str(row, "BW_units"), "Gb/s");
	}
	/* "results" = the last size, as upstream's file ended up with. */
	assert_int_equal(get_int(json_object_get(doc, "results"), "MsgSize"), 8);
	assert_string_equal(get_str(json_object_get(doc, "test_info"), "test"),
			    "RDMA_Write_BW_Test");
	json_decref(doc);
	pt_json_free(j);
}

static void test_lat_rows(void **state)
{
	(void)state;
	struct pt_test_info in = info("RDMA_Read Latency Test");
	struct pt_lat_result r = {
		.size = 2, .iters = 1000, .t_min = 1.5, .t_max = 9.25,
		.t_typical = 2.0, .t_avg = 2.25, .t_stdev = 0.5, .p50 = 2.0,
		.p90 = 3.0, .p99 = 4.0, .p99_9 = 5.0, .p99_99 = 6.0,
		.p99_999 = 7.0, .max_all = 12.0,
	};
	struct pt_json *j;
	json_t *doc, *res, *ti;

	in.events = true;
	in.events_name = "rxe0";
	in.events_vector = 1;
	in.mcast_ud = true;
	in.outstanding_reads = true;
	in.out_reads = 16;
	in.gid_index = 1;
	in.tos = 3;
	in.rx_depth = 512;
	in.post_list = 2;
	in.recv_post_list = 4;
	in.cq_mod = -1;
	in.numa_node_id = 1;
	in.nic_numa_node = 1;
	in.numa_source = "NIC";
	in.cpu_affinity = "1";
	j = pt_json_begin(&in, PT_REPORT_FULL);
	assert_non_null(j);
	assert_int_equal(pt_json_add_lat(j, &r), 0);
	doc = parse(j);
	ti = json_object_get(doc, "test_info");
	assert_string_equal(get_str(ti, "test"), "RDMA_Read_Latency_Test");
	assert_string_equal(get_str(ti, "Test with events"), "rxe0_comp1");
	assert_string_equal(get_str(ti, "MultiCast_runs"), "on_UD");
	assert_int_equal(get_int(ti, "Outstand_reads"), 16);
	assert_null(json_object_get(ti, "Max_inline_data"));
	assert_null(json_object_get(ti, "CQ_Moderation"));
	assert_int_equal(get_int(ti, "GID_index"), 1);
	assert_int_equal(get_int(ti, "TOS"), 3);
	assert_int_equal(get_int(ti, "RX_depth"), 512);
	assert_int_equal(get_int(ti, "Post_List"), 2);
	assert_int_equal(get_int(ti, "Recv_Post_List"), 4);
	assert_int_equal(get_int(ti, "NUMA_node"), 1);
	assert_int_equal(get_int(ti, "NIC_NUMA_node"), 1);
	assert_string_equal(get_str(ti, "NUMA_source"), "NIC");
	assert_string_equal(get_str(ti, "CPU_affinity"), "1");

	res = json_object_get(doc, "results");
	assert_int_equal(get_int(res, "MsgSize"), 2);
	assert_int_equal(get_int(res, "n_iterations"), 1000);
	assert_true(get_real(res, "t_min") == 1.5);
	assert_true(get_real(res, "t_max") == 9.25);
	assert_true(get_real(res, "t_typical") == 2.0);
	assert_true(get_real(res, "t_avg") == 2.25);
	assert_true(get_real(res, "t_stdev") == 0.5);
	assert_true(get_real(res, "percentile_99") == 4.0);
	assert_true(get_real(res, "percentile_99.9") == 5.0);
	assert_true(get_real(res, "percentile_50") == 2.0);
	assert_true(get_real(res, "percentile_90") == 3.0);
	assert_true(get_real(res, "percentile_99.99") == 6.0);
	assert_true(get_real(res, "percentile_99.999") == 7.0);
	assert_true(get_real(res, "max") == 12.0);
	json_decref(doc);
	pt_json_free(j);
}

static void test_output_modes(void **state)
{
	(void)state;
	struct pt_test_info in = info("Send BW Test");
	struct pt_bw_result b = { .size = 64, .iters = 10, .bw_avg = 3.5,
				  .msg_rate = 0.25 };
	struct pt_lat_result l = { .size = 2, .t_avg = 1.75 };
	struct pt_lat_dur_result d = { .size = 2, .iters = 9, .t_avg = 0.5,
				       .tps = 1e6 };
	struct pt_json *j;
	json_t *doc, *res;

	j = pt_json_begin(&in, PT_REPORT_BANDWIDTH);
	assert_int_equal(pt_json_add_bw(j, &b), 0);
	assert_int_equal(pt_json_add_lat(j, &l), -EINVAL);
	doc = parse(j);
	res = json_object_get(doc, "results");
	assert_true(get_real(res, "bw_avg") == 3.5);
	assert_null(json_object_get(res, "BW_average"));
	json_decref(doc);
	pt_json_free(j);

	j = pt_json_begin(&in, PT_REPORT_MSG_RATE);
	assert_int_equal(pt_json_add_bw(j, &b), 0);
	doc = parse(j);
	assert_true(get_real(json_object_get(doc, "results"), "msgRate_avg") == 0.25);
	json_decref(doc);
	pt_json_free(j);

	j = pt_json_begin(&in, PT_REPORT_LATENCY);
	assert_int_equal(pt_json_add_bw(j, &b), -EINVAL);
	assert_int_equal(pt_json_add_lat(j, &l), 0);
	assert_int_equal(pt_json_add_lat_dur(j, &d), 0);
	doc = parse(j);
	res = json_object_get(doc, "all_results");
	assert_int_equal(json_array_size(res), 2);
	assert_true(get_real(json_array_get(res, 0), "avg_lat") == 1.75);
	assert_true(get_real(json_array_get(res, 1), "t_avg") == 0.5);
	json_decref(doc);
	pt_json_free(j);

	j = pt_json_begin(&in, PT_REPORT_FULL);
	assert_int_equal(pt_json_add_lat_dur(j, &d), 0);
	doc = parse(j);
	res = json_object_get(doc, "results");
	assert_true(get_real(res, "t_avg") == 0.5);
	assert_true(get_real(res, "tps_average") == 1e6);
	assert_int_equal(get_int(res, "n_iterations"), 9);
	assert_null(json_object_get(res, "percentile_50")); /* none measured */
	json_decref(doc);
	pt_json_free(j);

	/* duration mode with percentiles: the iteration-mode keys */
	d.has_pct = true;
	d.samples = 8;
	d.t_min = 0.25;
	d.p50 = 0.5;
	d.p90 = 0.75;
	d.p99 = d.p99_9 = d.p99_99 = d.p99_999 = 1.0;
	d.max = 1.5;
	j = pt_json_begin(&in, PT_REPORT_FULL);
	assert_int_equal(pt_json_add_lat_dur(j, &d), 0);
	doc = parse(j);
	res = json_object_get(doc, "results");
	assert_true(get_real(res, "t_avg") == 0.5 && get_real(res, "tps_average") == 1e6);
	assert_int_equal(get_int(res, "n_samples"), 8);
	assert_true(get_real(res, "t_min") == 0.25);
	assert_true(get_real(res, "percentile_50") == 0.5);
	assert_true(get_real(res, "percentile_90") == 0.75);
	assert_true(get_real(res, "percentile_99") == 1.0);
	assert_true(get_real(res, "percentile_99.9") == 1.0);
	assert_true(get_real(res, "percentile_99.99") == 1.0);
	assert_true(get_real(res, "percentile_99.999") == 1.0);
	assert_true(get_real(res, "max") == 1.5);
	json_decref(doc);
	pt_json_free(j);

	/* No rows: no "results", an empty "all_results". */
	j = pt_json_begin(&in, PT_REPORT_FULL);
	doc = parse(j);
	assert_null(json_object_get(doc, "results"));
	assert_int_equal(json_array_size(json_object_get(doc, "all_results")), 0);
	json_decref(doc);
	pt_json_free(j);
	assert_null(pt_json_begin(NULL, PT_REPORT_FULL));
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_write_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/pt_json_XXXXXX", path[256], bad[300];
	struct pt_test_info in = info("Send BW Test");
	struct pt_bw_result r = { .size = 4096, .iters = 1000, .bw_avg = 100.0 };
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	json_error_t err;
	json_t *doc;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/perftest_out.json", dir);
	f = fopen(path, "w"); /* an older file is replaced whole */
	assert_non_null(f);
	fputs("old contents, not JSON", f);
	fclose(f);

	assert_int_equal(pt_json_add_bw(j, &r), 0);
	assert_int_equal(pt_json_write(j, path), 0);
	doc = json_load_file(path, 0, &err);
	assert_non_null(doc);
	assert_int_equal(get_int(json_object_get(doc, "results"), "MsgSize"), 4096);
	json_decref(doc);
	assert_int_equal(count_entries(dir), 1); /* no temp file left */

	/* I/O errors come back as -errno and leave nothing behind. */
	snprintf(bad, sizeof(bad), "%s/missing/out.json", dir);
	assert_int_equal(pt_json_write(j, bad), -ENOENT);
	assert_int_equal(pt_json_write(j, dir), -EISDIR); /* rename onto a dir */
	assert_int_equal(count_entries(dir), 1);
	assert_int_equal(pt_json_write(j, ""), -EINVAL);
	assert_int_equal(pt_json_write(NULL, path), -EINVAL);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	pt_json_free(j);
}

/* test_info "clock": the source, its line and the end check; a fallback
 * names why instead; a second call replaces the first. */
static void test_clock(void **state)
{
	(void)state;
	struct pt_test_info in = info("Send BW Test");
	struct pt_clock_info tsc = {
		.source = "tsc", .sw_clock = PT_CLOCK_NAME_TSC, .ns_per_tick = 0.385187,
		.calib_ns = 10100000, .start_samples = 21, .start_residual_max_ns = 6.5,
		.start_residual_rms_ns = 2.25, .slope_err_ppm = 0.5, .checked = true,
		.end_samples = 9, .residual_max_ns = 18, .residual_rms_ns = 9.5, .bracket_ns = 40,
		.drift_ppm = -0.125, .span_ns = 2500000000ull,
	};
	struct pt_clock_info raw = { .source = PT_CLOCK_NAME_RAW, .sw_clock = PT_CLOCK_NAME_RAW,
				     .why = "PERFTEST_CLOCK=raw" };
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	json_t *doc, *c;

	assert_non_null(j);
	assert_int_equal(pt_json_set_clock(j, NULL), -EINVAL);
	assert_int_equal(pt_json_set_clock(j, &tsc), 0);
	doc = parse(j);
	c = json_object_get(json_object_get(doc, "test_info"), "clock");
	assert_true(json_is_object(c));
	assert_string_equal(get_str(c, "source"), "tsc");
	assert_string_equal(get_str(c, "sw_clock"), "tsc->CLOCK_MONOTONIC_RAW");
	assert_true(get_real(c, "ns_per_tick") == 0.385187);
	assert_true(get_real(c, "calibration_ms") == 10.1);
	assert_int_equal(get_int(c, "start_samples"), 21);
	assert_true(get_real(c, "start_residual_max_ns") == 6.5);
	assert_true(get_real(c, "slope_err_ppm") == 0.5);
	assert_int_equal(get_int(c, "end_samples"), 9);
	assert_true(get_real(c, "residual_ns") == 18);
	assert_true(get_real(c, "residual_rms_ns") == 9.5);
	assert_true(get_real(c, "end_bracket_ns") == 40);
	assert_true(get_real(c, "drift_ppm") == -0.125);
	assert_true(get_real(c, "span_s") == 2.5);
	assert_null(json_object_get(c, "fallback"));
	json_decref(doc);

	assert_int_equal(pt_json_set_clock(j, &raw), 0);
	doc = parse(j);
	c = json_object_get(json_object_get(doc, "test_info"), "clock");
	assert_string_equal(get_str(c, "source"), "CLOCK_MONOTONIC_RAW");
	assert_string_equal(get_str(c, "fallback"), "PERFTEST_CLOCK=raw");
	assert_null(json_object_get(c, "ns_per_tick"));
	assert_null(json_object_get(c, "residual_ns"));
	json_decref(doc);
	pt_json_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bw_single),
		cmocka_unit_test(test_bw_sweep_keeps_all),
		cmocka_unit_test(test_lat_rows),
		cmocka_unit_test(test_output_modes),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_clock),
	};
	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
