/* SPDX-License-Identifier: BSD-2-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>
#include "perftest/report/report.h"

/* Capture what a report function prints. */
struct cap {
	FILE *f;
	char *buf;
	size_t len;
};

static void cap_open(struct cap *c)
{
	c->buf = NULL;
	c->len = 0;
	c->f = open_memstream(&c->buf, &c->len);
	assert_non_null(c->f);
}

/* Closes the stream; the caller frees the returned text. */
static char *cap_close(struct cap *c)
{
	assert_int_equal(fclose(c->f), 0);
	return c->buf;
}

static const char *const DASHES =
	"---------------------------------------------------------------------------------------\n";

static struct pt_test_info send_bw_info(void)
{
	struct pt_test_info in = {
		.test_name = "Send BW Test", .device = "mlx5_0",
		.num_qps = 1, .transport = "IB", .connection = "RC",
		.pcie_relax = "ON", .wr_api = true, .tx_depth = 128,
		.post_list = 1, .recv_post_list = 1, .rx_depth = -1,
		.cq_mod = 100, .mtu = 4096, .link_type = "Ethernet",
		.gid_index = 3, .max_inline = 0,
		.data_ex_method = "Ethernet", .tos = -1,
	};
	return in;
}

static void test_result_line(void **state)
{
	(void)state;
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_result_line(c.f), 0);
	s = cap_close(&c);
	assert_int_equal(strlen(s), 88);
	assert_int_equal(strspn(s, "-"), 87);
	assert_int_equal(s[87], '\n');
	assert_string_equal(s, DASHES);
	assert_int_equal(strlen(PT_RESULT_LINE), 88);
	free(s);
}

static void test_header_full(void **state)
{
	(void)state;
	struct pt_test_info in = send_bw_info();
	struct cap c;
	char *s;
	char want[2048];

	snprintf(want, sizeof(want), "%s%s", DASHES,
		 "                    Send BW Test\n"
		 " Dual-port       : OFF\t\tDevice         : mlx5_0\n"
		 " Number of qps   : 1\t\tTransport type : IB\n"
		 " Connection type : RC\t\tUsing SRQ      : OFF\n"
		 " PCIe relax order: ON\n"
		 " ibv_wr* API     : ON\n"
		 " TX depth        : 128\n"
		 " CQ Moderation   : 100\n"
		 " Mtu             : 4096[B]\n"
		 " Link type       : Ethernet\n"
		 " GID index       : 3\n"
		 " Max inline data : 0[B]\n"
		 " rdma_cm QPs\t : OFF\n"
		 " Data ex. method : Ethernet\n");
	strcat(want, DASHES);
	cap_open(&c);
	assert_int_equal(pt_report_header(c.f, &in), 0);
	s = cap_close(&c);
	assert_string_equal(s, want);
	free(s);
}

/* The placement line: after the ibv_wr* line, only when something was placed. */
static void test_header_numa(void **state)
{
	(void)state;
	struct pt_test_info in = send_bw_info();
	struct cap c;
	char *s;

	in.numa_shown = true;
	in.numa_node = "1 (NIC)";
	in.cpu_affinity = "1";
	cap_open(&c);
	assert_int_equal(pt_report_header(c.f, &in), 0);
	s = cap_close(&c);
	assert_non_null(strstr(s, " ibv_wr* API     : ON\n"
				  " NUMA node       : 1 (NIC)\t\tCPU affinity   : 1\n"));
	free(s);
}

static void test_header_variants(void **state)
{
	(void)state;
	struct pt_test_info in = send_bw_info();
	struct cap c;
	char *s;

	in.test_name = "RDMA_Read BW Test";
	in.events = true;
	in.events_name = "mlx5_0";
	in.events_vector = 2;
	in.mcast_ud = true;
	in.use_srq = true;
	in.tx_depth = -1;
	in.rx_depth = 512;
	in.post_list = 4;
	in.recv_post_list = 2;
	in.cq_mod = -1;
	in.gid_index = -1;
	in.outstanding_reads = true;
	in.out_reads = 16;
	in.rdma_cm_qps = true;
	in.data_ex_method = "rdma_cm";
	in.tos = 5;
	in.link_type = "IB";
	cap_open(&c);
	assert_int_equal(pt_report_header(c.f, &in), 0);
	s = cap_close(&c);
	assert_non_null(strstr(s, "\n                    RDMA_Read BW Test\n"
				  " Test with events. Using mlx5_0_comp2\n"
				  " MultiCast runs on UD!\n Dual-port"));
	assert_non_null(strstr(s, " Connection type : RC\t\tUsing SRQ      : ON\n"));
	assert_non_null(strstr(s, " Post List       : 4\n"));
	assert_non_null(strstr(s, " Recv Post List  : 2\n"));
	assert_non_null(strstr(s, " RX depth        : 512\n"));
	assert_null(strstr(s, "NUMA node"));   /* nothing placed: no line */
	assert_non_null(strstr(s, " Link type       : IB\n"));
	assert_non_null(strstr(s, " Outstand reads  : 16\n"));
	assert_non_null(strstr(s, " rdma_cm QPs\t : ON\n"));
	assert_non_null(strstr(s, " Data ex. method : rdma_cm \tTOS    : 5\n"));
	assert_null(strstr(s, "TX depth"));
	assert_null(strstr(s, "CQ Moderation"));
	assert_null(strstr(s, "GID index"));
	assert_null(strstr(s, "Max inline"));
	free(s);
}

static void test_address(void **state)
{
	(void)state;
	struct pt_addr_print a = { .lid = 1, .qpn = 0x1234, .psn = 0xabcdef };
	static const uint8_t gid[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 255, 255, 192, 168, 1, 10 };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_address(c.f, &a), 0);
	a.remote = true;
	a.show_out = true;
	a.out_reads = 16;
	a.show_rkey_vaddr = true;
	a.rkey = 0x1234;
	a.vaddr = 0x7f0000001000ull;
	a.show_srqn = true;
	a.srqn = 0x55;
	a.show_gid = true;
	memcpy(a.gid, gid, 16);
	assert_int_equal(pt_report_address(c.f, &a), 0);
	a.remote = false;
	a.show_out = a.show_rkey_vaddr = a.show_srqn = false;
	a.gid_is_mgid = true;
	assert_int_equal(pt_report_address(c.f, &a), 0);
	s = cap_close(&c);
	assert_string_equal(s,
		" local address: LID 0x01 QPN 0x1234 PSN 0xabcdef\n"
		" remote address: LID 0x01 QPN 0x1234 PSN 0xabcdef OUT 0x10"
		" RKey 0x001234 VAddr 0x007f0000001000 SRQn 0x000055\n"
		" GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:10\n"
		" local address: LID 0x01 QPN 0x1234 PSN 0xabcdef\n"
		" MGID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:10\n");
	free(s);
}

static void test_bw_table(void **state)
{
	(void)state;
	struct pt_bw_result r = { .size = 65536, .iters = 1000, .bw_peak = 0,
				  .bw_avg = 62.5, .msg_rate = 0.001 };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_bw_header(c.f, false, false), 0);
	assert_int_equal(pt_report_bw_row(c.f, &r), 0);
	r.has_cpu_util = true;
	r.cpu_util = 12.5;
	r.bw_peak = 11240.234;
	assert_int_equal(pt_report_bw_row(c.f, &r), 0);
	s = cap_close(&c);
	assert_string_equal(s,
		" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
		" 65536      1000             0.00               62.50  \t\t   0.001000\n"
		" 65536      1000             11240.23            62.50  \t\t   0.001000\t    12.50\n");
	free(s);
}

static void test_bw_gbits(void **state)
{
	(void)state;
	struct pt_bw_result r = { .size = 64, .iters = 1000, .bw_peak = 0.05,
				  .bw_avg = 0.04, .msg_rate = 0.078125,
				  .gbits = true };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_bw_header(c.f, true, true), 0);
	assert_int_equal(pt_report_bw_row(c.f, &r), 0); /* < 0.1: 6 decimals */
	r.bw_avg = 93.5;
	r.bw_peak = 96.25;
	assert_int_equal(pt_report_bw_row(c.f, &r), 0);
	s = cap_close(&c);
	assert_string_equal(s,
		" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]    CPU_Util[%]\n"
		" 64         1000       0.050000            0.040000            0.078125\n"
		" 64         1000             96.25              93.50  \t\t   0.078125\n");
	free(s);
}

static void test_lat_tables(void **state)
{
	(void)state;
	struct pt_lat_result r = { .size = 2, .iters = 1000, .t_min = 1.23,
				   .t_max = 4.56, .t_typical = 1.5,
				   .t_avg = 1.6, .t_stdev = 0.1, .p99 = 2.5,
				   .p99_9 = 3.75 };
	struct pt_lat_dur_result d = { .size = 2, .iters = 123456,
				       .t_avg = 1.25, .tps = 400000.0 };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_lat_header(c.f), 0);
	assert_int_equal(pt_report_lat_row(c.f, &r), 0);
	assert_int_equal(pt_report_lat_dur_header(c.f), 0);
	assert_int_equal(pt_report_lat_dur_row(c.f, &d), 0);
	s = cap_close(&c);
	assert_string_equal(s,
		" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] \n"
		" 2       1000          1.23           4.56         1.50     \t       1.60        \t0.10   \t\t2.50    \t\t3.75   \n"
		" #bytes #iterations       t_avg[usec]    tps average\n"
		" 2             123456            1.25       400000.00\n");
	free(s);
}

/* Duration mode: upstream's table, then ours with the percentiles. */
static void test_lat_dur_percentiles(void **state)
{
	(void)state;
	struct pt_lat_dur_result d = { .size = 2, .iters = 4000, .t_avg = 12.5, .tps = 40000.0,
				       .has_pct = true, .samples = 3999, .t_min = 10.0,
				       .p50 = 12.25, .p90 = 13.5, .p99 = 20.0, .p99_9 = 31.25,
				       .p99_99 = 40.0, .p99_999 = 41.0, .max = 41.5 };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_lat_dur_pct(c.f, &d), 0);
	d.has_pct = false;
	assert_int_equal(pt_report_lat_dur_pct(c.f, &d), 0); /* nothing */
	assert_int_equal(pt_report_lat_dur_pct(c.f, NULL), -EINVAL);
	s = cap_close(&c);
	assert_string_equal(s,
		" Percentiles of the 3999 round trips in the measured window (histogram, at most 0.78% error):\n"
		" #bytes #samples   t_min[usec]    p50[usec]      p90[usec]      p99[usec]      p99.9[usec]    p99.99[usec]   p99.999[usec]  t_max[usec]\n"
		" 2       3999       10.00          12.25          13.50          20.00          31.25          40.00          41.00          41.50\n");
	free(s);
}

static void test_output_numbers(void **state)
{
	(void)state;
	struct pt_bw_result b = { .size = 65536, .iters = 1000, .bw_avg = 62.5,
				  .msg_rate = 0.001 };
	struct pt_lat_result l = { .size = 2, .t_avg = 1.625 };
	struct pt_lat_dur_result d = { .size = 2, .t_avg = 2.5 };
	struct cap c;
	char *s;

	cap_open(&c);
	assert_int_equal(pt_report_bw_number(c.f, PT_REPORT_BANDWIDTH, &b), 0);
	assert_int_equal(pt_report_bw_number(c.f, PT_REPORT_MSG_RATE, &b), 0);
	assert_int_equal(pt_report_bw_number(c.f, PT_REPORT_LATENCY, &b), -EINVAL);
	assert_int_equal(pt_report_lat_number(c.f, PT_REPORT_LATENCY, &l), 0);
	assert_int_equal(pt_report_lat_number(c.f, PT_REPORT_BANDWIDTH, &l), -EINVAL);
	assert_int_equal(pt_report_lat_dur_number(c.f, PT_REPORT_LATENCY, &d), 0);
	s = cap_close(&c);
	assert_string_equal(s, "62.500000\n0.001000\n1.625000\n2.500000\n");
	free(s);
}

static void test_io_error(void **state)
{
	(void)state;
	struct pt_bw_result b = { .size = 2, .iters = 5, .bw_avg = 1 };
	FILE *f = fopen("/dev/null", "r"); /* every write fails */

	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	assert_int_equal(pt_report_bw_row(f, &b), -EIO);
	assert_int_equal(pt_report_result_line(f), -EIO);
	fclose(f);
	assert_int_equal(pt_report_bw_row(NULL, &b), -EINVAL);
	assert_int_equal(pt_report_header(stdout, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result_line),
		cmocka_unit_test(test_header_full),
		cmocka_unit_test(test_header_variants),
		cmocka_unit_test(test_header_numa),
		cmocka_unit_test(test_address),
		cmocka_unit_test(test_bw_table),
		cmocka_unit_test(test_bw_gbits),
		cmocka_unit_test(test_lat_tables),
		cmocka_unit_test(test_lat_dur_percentiles),
		cmocka_unit_test(test_output_numbers),
		cmocka_unit_test(test_io_error),
	};
	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
