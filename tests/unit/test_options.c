/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/cli/mgid.h"
#include "perftest/cli/options.h"
#include "perftest/cli/options_int.h"

#include "options_harness.h"

struct defaults {
	const struct pt_tool *tool;
	uint64_t size, iters;
	int tx, rx, cq_mod;
};

static void test_defaults_per_tool(void **state)
{
	/* client side; 64 KiB BW messages switch CQ moderation to 1 */
	static const struct defaults want[] = {
		{ &pt_tool_send_bw, 65536, 1000, 128, 512, 1 },
		{ &pt_tool_send_lat, 2, 1000, 1, 512, 1 },
		{ &pt_tool_write_bw, 65536, 5000, 128, 1, 1 },
		{ &pt_tool_write_lat, 2, 1000, 1, 1, 1 },
		{ &pt_tool_read_bw, 65536, 1000, 128, 1, 1 },
		{ &pt_tool_read_lat, 2, 1000, 1, 1, 1 },
		{ &pt_tool_atomic_bw, 8, 1000, 128, 1, 100 },
		{ &pt_tool_atomic_lat, 8, 1000, 1, 1, 1 },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct run *r = ok(want[i].tool, "server.example");
		const struct pt_params *p = &r->p;

		assert_ptr_equal(p->tool, want[i].tool);
		assert_int_equal(p->traffic.size, want[i].size);
		assert_int_equal(p->traffic.iters, want[i].iters);
		assert_int_equal(p->traffic.tx_depth, want[i].tx);
		assert_int_equal(p->traffic.rx_depth, want[i].rx);
		assert_int_equal(p->traffic.cq_mod, want[i].cq_mod);
		assert_int_equal(p->traffic.post_list, 1);
		assert_int_equal(p->traffic.test_type, PT_TEST_ITERATIONS);
		assert_int_equal(p->traffic.test_method, PT_METHOD_REGULAR);
		assert_int_equal(p->traffic.inline_size, -1);
		assert_int_equal(p->traffic.out_reads, 0);
		assert_int_equal(p->traffic.atomic_type, PT_ATOMIC_FETCH_AND_ADD);
		assert_int_equal(p->conn.type, PT_CONN_RC);
		assert_int_equal(p->conn.num_qps, 1);
		assert_int_equal(p->dev.ib_port, 1);
		assert_int_equal(p->dev.gid_index, -1);
		assert_int_equal(p->dev.qp_timeout, 14);
		assert_int_equal(p->dev.mtu, 0);
		assert_int_equal(p->dev.tos, -1);
		assert_int_equal(p->oob.port, 18515);
		assert_int_equal(p->oob.timeout_sec, 60);
		assert_true(p->oob.is_client);
		assert_string_equal(p->oob.servername, "server.example");
		assert_string_equal(p->oob.fake_version, "");
		assert_string_equal(p->report.out_json_file, "perftest_out.json");
		assert_false(p->report.no_peak);
		assert_false(p->mcast.enabled);
		assert_string_equal(r->err, "");
		assert_string_equal(r->out, "");
	}
}

static void test_server_side(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "");
	assert_false(r->p.oob.is_client);
	assert_string_equal(r->p.oob.servername, "");
	/* the SEND receiver never measures a peak */
	assert_true(r->p.report.no_peak);
	r = ok(&pt_tool_send_bw, "-b");
	assert_false(r->p.report.no_peak);
	r = ok(&pt_tool_write_bw, "");
	assert_false(r->p.report.no_peak);
	r = ok(&pt_tool_send_bw, "-N host");
	assert_true(r->p.report.no_peak);
	assert_string_equal(r->err, "");
}

static void test_rx_depth_rules(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-c UD");
	assert_int_equal(r->p.conn.type, PT_CONN_UD);
	assert_int_equal(r->p.traffic.rx_depth, 1000);
	r = ok(&pt_tool_send_bw, "-c UC -n 3000");
	assert_int_equal(r->p.traffic.rx_depth, 3000);
	r = ok(&pt_tool_send_bw, "-c UD -n 50000");
	assert_int_equal(r->p.traffic.rx_depth, 16000);
	r = ok(&pt_tool_send_bw, "-c UD -r 100");
	assert_int_equal(r->p.traffic.rx_depth, 100);
	r = ok(&pt_tool_send_bw, "-c RC -n 3000");
	assert_int_equal(r->p.traffic.rx_depth, 512);
	/* capped at iters, then made even */
	r = ok(&pt_tool_send_bw, "-n 5");
	assert_int_equal(r->p.traffic.tx_depth, 5);
	assert_int_equal(r->p.traffic.rx_depth, 6);
	r = ok(&pt_tool_send_bw, "-r 33");
	assert_int_equal(r->p.traffic.rx_depth, 34);
	r = ok(&pt_tool_send_bw, "-r 33 -a");
	assert_int_equal(r->p.traffic.rx_depth, 33);
	r = ok(&pt_tool_send_bw, "-c UD -D 10");
	assert_int_equal(r->p.traffic.rx_depth, 512);
	r = ok(&pt_tool_write_bw, "-c UC");
	assert_int_equal(r->p.traffic.rx_depth, 1);
	/* WRITE_IMM consumes receives: SEND's depth, capped at iters */
	r = ok(&pt_tool_write_bw, "--write_with_imm");
	assert_true(r->p.traffic.with_imm);
	assert_int_equal(r->p.traffic.rx_depth, 512);
	r = ok(&pt_tool_write_lat, "--write_with_imm -n 100");
	assert_int_equal(r->p.traffic.rx_depth, 100);
	r = ok(&pt_tool_write_bw, "--write_with_imm -c UC -n 3000");
	assert_int_equal(r->p.traffic.rx_depth, 3000);
}

static void test_cq_mod_rules(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-s 8192 host");
	assert_int_equal(r->p.traffic.cq_mod, 100);
	r = ok(&pt_tool_send_bw, "-s 8193 host");
	assert_int_equal(r->p.traffic.cq_mod, 1);
	r = ok(&pt_tool_send_bw, "-s 64K -c UD host");
	assert_int_equal(r->p.traffic.cq_mod, 100);
	r = ok(&pt_tool_send_bw, "-a host");
	assert_int_equal(r->p.traffic.cq_mod, 100);
	r = ok(&pt_tool_send_bw, "-e host");
	assert_int_equal(r->p.traffic.cq_mod, 100);
	r = ok(&pt_tool_send_bw, "-Q 10 host");
	assert_int_equal(r->p.traffic.cq_mod, 10);
	assert_non_null(strstr(r->err, "Warning: CQ moderation 10"));
	r = ok(&pt_tool_send_bw, "-Q 1 host");
	assert_string_equal(r->err, "");
	/* capped at tx_depth */
	r = ok(&pt_tool_write_bw, "-s 2 -t 16 host");
	assert_int_equal(r->p.traffic.cq_mod, 16);
	/* post list */
	r = ok(&pt_tool_write_bw, "-l 4 host");
	assert_int_equal(r->p.traffic.post_list, 4);
	assert_int_equal(r->p.traffic.cq_mod, 4);
	r = ok(&pt_tool_write_bw, "-s 2 -l 4 -Q 2 host");
	assert_int_equal(r->p.traffic.cq_mod, 2);
	bad(&pt_tool_write_bw, "-l 4 -Q 3 host", "multiple of the CQ moderation");
	bad(&pt_tool_write_bw, "-l 3 host", "multiple of the post list");
	bad(&pt_tool_write_bw, "-l 256 -n 1024 host", "must not exceed the TX depth");
}

static void test_duration_rules(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-D 10 host");
	assert_int_equal(r->p.traffic.test_type, PT_TEST_DURATION);
	assert_int_equal(r->p.traffic.duration, 10);
	assert_int_equal(r->p.traffic.margin, 2);
	assert_int_equal(r->p.traffic.iters, 0);
	assert_int_equal(r->p.traffic.tx_depth, 128);
	assert_true(r->p.report.no_peak);
	r = ok(&pt_tool_send_bw, "-D 10 -f 4 host");
	assert_int_equal(r->p.traffic.margin, 4);
	r = ok(&pt_tool_send_bw, "-D 1 host");
	assert_int_equal(r->p.traffic.margin, 0);
	r = ok(&pt_tool_read_bw, "-D 3 --cpu_util host");
	assert_true(r->p.report.cpu_util);
	bad(&pt_tool_read_lat, "-D 3 --cpu_util host", "option --cpu_util is not available in ib_read_lat");
	bad(&pt_tool_send_bw, "-D 4 -f 2 host", "please check that DURATION > 2*MARGIN");
	bad(&pt_tool_send_bw, "-D 10 -f 5 host", "please check that DURATION > 2*MARGIN");
	bad(&pt_tool_send_bw, "-f 2 host", "only valid with -D");
	bad(&pt_tool_send_bw, "-D 10 -a host", "-a");
	bad(&pt_tool_send_bw, "-D 10 -e host", "events");
	bad(&pt_tool_send_bw, "-D 10 -n 100 host", "-n and -D");
	bad(&pt_tool_send_bw, "--cpu_util host", "duration mode");

	r = ok(&pt_tool_write_bw, "--run_infinitely host");
	assert_int_equal(r->p.traffic.test_method, PT_METHOD_INFINITELY);
	assert_int_equal(r->p.traffic.test_type, PT_TEST_DURATION);
	assert_int_equal(r->p.traffic.duration, 5);
	assert_int_equal(r->p.traffic.iters, 0);
	assert_true(r->p.report.no_peak);
	bad(&pt_tool_write_bw, "--run_infinitely -a host", "--run_infinitely");
}

static void test_all_sizes(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-a host");
	assert_true(r->p.traffic.all_sizes);
	assert_int_equal(r->p.traffic.test_method, PT_METHOD_ALL);
	assert_int_equal(r->p.traffic.size, 8388608);
	r = ok(&pt_tool_write_lat, "--all host");
	assert_int_equal(r->p.traffic.test_method, PT_METHOD_ALL);
	bad(&pt_tool_atomic_bw, "-a host", "not available in ib_atomic_bw");
}

static void test_no_peak_warning(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_write_bw, "-n 20000 host");
	assert_false(r->p.report.no_peak);
	assert_string_equal(r->err, "");
	r = ok(&pt_tool_write_bw, "-n 20001 host");
	assert_true(r->p.report.no_peak);
	assert_string_equal(r->err, " WARNING: BW peak won't be measured in this run.\n");
	r = ok(&pt_tool_write_bw, "-N -n 20001 host");
	assert_true(r->p.report.no_peak);
	assert_string_equal(r->err, "");
	r = ok(&pt_tool_write_lat, "-n 50000 host");
	assert_false(r->p.report.no_peak);
	assert_string_equal(r->err, "");
}

static void test_unknown_and_malformed(void **state)
{
	(void)state;
	bad(&pt_tool_send_bw, "--no_such_option", "unrecognized or ambiguous option '--no_such_option'");
	bad(&pt_tool_send_bw, "--no_such_option", "Invalid Command or flag.");
	bad(&pt_tool_send_bw, "--report", "unrecognized or ambiguous");
	bad(&pt_tool_send_bw, "-1", "invalid option '-1'");
	bad(&pt_tool_send_bw, "-n", "missing argument for '-n'");
	bad(&pt_tool_send_bw, "--iters", "missing argument for '--iters'");
	bad(&pt_tool_send_bw, "--all=3", "no argument allowed for '--all'");
	bad(&pt_tool_send_bw, "host1 host2", "Invalid Command line");
	/* upstream's documented spelling is accepted next to its own */
	struct run *r = ok(&pt_tool_send_lat, "--report-histogram");
	assert_true(r->p.report.histogram);
	r = ok(&pt_tool_send_lat, "--report-histogrm -U -C");
	assert_true(r->p.report.histogram);
	assert_true(r->p.report.unsorted);
	assert_true(r->p.report.report_cycles);
}

static void test_bad_numbers(void **state)
{
	static const char *const cmds[] = {
		"-n abc", "-n 10x", "-n -5", "-n +5", "-n 4", "-n 100000001", "-n \x01",
		"-n 99999999999999999999999", "-n 010", "-n 0x", "-n 1e3", "-n 5.0",
		"-s 0", "-s 2048M", "-s 1G", "-s 4KB", "-s K", "-s 2147483648", "-s -1",
		"-p 70000", "-p 0", "-i 0", "-i 256", "-S 16", "-t 0", "-t 15001", "-q 0",
		"-q 16385", "-Q 0", "-Q 1025", "-r 0", "-r 16385", "-x 65", "-x -1",
		"-u 32", "-m 1000", "-m abc", "-m 0", "-I 1025", "-D 0", "-D x", "-f -1",
		"--tclass 256", "--oob_timeout 1e3", "--oob_timeout=86401", "-l 0",
		"-T 256 -R", "-d \x01", "--out_json_file=", "--trace=",
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		bad(&pt_tool_send_bw, cmds[i], NULL);
	bad(&pt_tool_send_bw, "-n 4", "expected an integer in 5..100000000");
	bad(&pt_tool_read_bw, "-o 0", "1..255");
}

static void test_good_numbers(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-n 0x10 -s 4K -p 0x4853 -i 2 -S 15 -x 64 -u 0 -m 4096 -I 1024");
	assert_int_equal(r->p.traffic.iters, 16);
	assert_int_equal(r->p.traffic.size, 4096);
	assert_int_equal(r->p.oob.port, 0x4853);
	assert_int_equal(r->p.dev.ib_port, 2);
	assert_int_equal(r->p.dev.sl, 15);
	assert_int_equal(r->p.dev.gid_index, 64);
	assert_true(r->p.dev.gid_index_given);
	assert_int_equal(r->p.dev.qp_timeout, 0);
	assert_int_equal(r->p.dev.mtu, 4096);
	assert_int_equal(r->p.traffic.inline_size, 1024);
	r = ok(&pt_tool_send_bw, "--size=1M --iters=100000000 --qp=16384 --tclass=255");
	assert_int_equal(r->p.traffic.size, 1048576);
	assert_int_equal(r->p.traffic.iters, 100000000);
	assert_int_equal(r->p.conn.num_qps, 16384);
	assert_int_equal(r->p.dev.tclass, 255);
	r = ok(&pt_tool_send_bw, "-s 2147483647 -n 5");
	assert_int_equal(r->p.traffic.size, 2147483647);
	r = ok(&pt_tool_send_bw, "-d rxe0 -p 5 -p 1");
	assert_string_equal(r->p.dev.ib_devname, "rxe0");
	assert_int_equal(r->p.oob.port, 1);
}

static void test_multicast_rules(void **state)
{
	static const uint8_t v4[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 225, 1, 1, 20 };
	static const uint8_t def[16] = PT_MGID_DEFAULT_INIT;
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "-g");
	assert_true(r->p.mcast.enabled);
	assert_int_equal(r->p.conn.type, PT_CONN_UD);
	assert_int_equal(r->p.dev.gid_index, 0);
	assert_false(r->p.dev.gid_index_given);
	assert_false(r->p.mcast.mgid_given);
	assert_memory_equal(r->p.mcast.mgid, def, 16);
	r = ok(&pt_tool_send_bw, "-g -x 3 -c UD -M 225.1.1.20");
	assert_int_equal(r->p.dev.gid_index, 3);
	assert_true(r->p.mcast.mgid_given);
	assert_memory_equal(r->p.mcast.mgid, v4, 16);
	r = ok(&pt_tool_send_lat, "-g --MGID=0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20 host");
	assert_memory_equal(r->p.mcast.mgid, v4, 16);

	bad(&pt_tool_write_bw, "-g", "MultiCast feature only available on SEND verb\n");
	bad(&pt_tool_read_lat, "--mcg", "MultiCast feature only available on SEND verb\n");
	bad(&pt_tool_send_bw, "-g -b", "Bidirectional mode not supported in multicast\n");
	bad(&pt_tool_send_bw, "-g -q 2", "Only 1 QP supported in multicast\n");
	bad(&pt_tool_send_bw, "-g -R", "multicast");
	bad(&pt_tool_send_bw, "-g -c RC", "UD only");
	bad(&pt_tool_send_bw, "-M 225.1.1.20", "needs -g");
	bad(&pt_tool_send_bw, "-g -M 225.1.1", "Invalid MGID '225.1.1' for -M");
	bad(&pt_tool_send_bw, "-g -M 10.0.0.1", "not an IPv4 multicast");
	bad(&pt_tool_write_bw, "-M 225.1.1.20", "not available in ib_write_bw");
	/* send_lat: -g on both sides, but a ping needs a peer */
	r = ok(&pt_tool_send_lat, "-g -M 225.1.1.20");
	assert_true(r->p.mcast.enabled);
	assert_int_equal(r->p.conn.type, PT_CONN_UD);
	bad(&pt_tool_send_lat, "-g --connectionless",
	    "option --connectionless is not available in ib_send_lat");
	r = run(&pt_tool_send_lat, "-h");
	assert_non_null(strstr(r->out, "-g, --mcg"));
	assert_non_null(strstr(r->out, "-M, --MGID <mgid>"));
	assert_non_null(strstr(r->out, "-e, --events"));
	assert_null(strstr(r->out, "--connectionless"));
	r = run(&pt_tool_send_bw, "-h");
	assert_non_null(strstr(r->out, "--connectionless"));
}

static void test_connection_types(void **state)
{
	struct run *r;
	(void)state;

	bad(&pt_tool_send_bw, "-c XYZ", "Invalid connection type 'XYZ'");
	bad(&pt_tool_send_bw, "-c rc", "Invalid connection type");
	bad(&pt_tool_send_bw, "-c XRC", "connection type XRC is not supported by this build");
	bad(&pt_tool_write_bw, "-c DC", "not supported by this build");
	bad(&pt_tool_write_bw, "-c UD", "connection type UD is not supported by ib_write_bw");
	bad(&pt_tool_read_bw, "-c UC", "not supported by ib_read_bw");
	bad(&pt_tool_atomic_lat, "-c UD", "not supported by ib_atomic_lat");
	r = ok(&pt_tool_write_lat, "-c UC");
	assert_int_equal(r->p.conn.type, PT_CONN_UC);
	r = ok(&pt_tool_send_lat, "--connection=UD");
	assert_int_equal(r->p.conn.type, PT_CONN_UD);

	/* rdma_cm */
	r = ok(&pt_tool_read_bw, "-R -T 32");
	assert_true(r->p.conn.rdma_cm_qps);
	assert_true(r->p.conn.rdma_cm_oob);
	assert_int_equal(r->p.dev.tos, 32);
	r = ok(&pt_tool_read_bw, "-z");
	assert_false(r->p.conn.rdma_cm_qps);
	assert_true(r->p.conn.rdma_cm_oob);
	bad(&pt_tool_send_bw, "-T 32", "TOS only valid for rdma_cm based QP and RawEth QP");
	bad(&pt_tool_send_bw, "-R -c UC", "does not support UC");
}

static void test_tool_specific_options(void **state)
{
	struct run *r;
	(void)state;

	bad(&pt_tool_send_bw, "-A CMP_AND_SWAP", "option -A is not available in ib_send_bw");
	bad(&pt_tool_read_bw, "-I 64", "option -I is not available in ib_read_bw");
	bad(&pt_tool_write_bw, "-e", "option -e is not available in ib_write_bw");
	bad(&pt_tool_write_bw, "-o 4", "not available");
	bad(&pt_tool_send_lat, "-b", "option -b is not available in ib_send_lat");
	bad(&pt_tool_send_lat, "--report_gbits", "option --report_gbits is not available");
	bad(&pt_tool_send_bw, "-C", "option -C is not available in ib_send_bw");
	bad(&pt_tool_write_bw, "-r 10", "not available");
	bad(&pt_tool_atomic_bw, "-s 16", "fixed at 8");
	bad(&pt_tool_atomic_bw, "-A SWAP", "Invalid atomic type");
	/* immediate data: SEND tools and write tools, as upstream offers them */
	bad(&pt_tool_write_bw, "--send_with_imm", "option --send_with_imm is not available in ib_write_bw");
	bad(&pt_tool_read_lat, "--send_with_imm", "not available");
	bad(&pt_tool_send_bw, "--write_with_imm", "option --write_with_imm is not available in ib_send_bw");
	bad(&pt_tool_read_bw, "--write_with_imm", "not available");
	bad(&pt_tool_atomic_lat, "--write_with_imm", "not available");
	bad(&pt_tool_send_bw, "--send_with_imm=1", "send_with_imm");
	r = ok(&pt_tool_send_lat, "--send_with_imm");
	assert_true(r->p.traffic.with_imm);
	r = ok(&pt_tool_write_lat, "--write_with_imm");
	assert_true(r->p.traffic.with_imm);
	r = ok(&pt_tool_send_bw, "");
	assert_false(r->p.traffic.with_imm);
	assert_false(r->p.traffic.use_srq);
	/* --use-srq: SEND tools only; the SRQ depth covers every QP */
	r = ok(&pt_tool_send_bw, "--use-srq -c UD -q 2");
	assert_true(r->p.traffic.use_srq);
	r = ok(&pt_tool_send_lat, "--use-srq");
	assert_true(r->p.traffic.use_srq);
	bad(&pt_tool_write_bw, "--use-srq", "option --use-srq is not available in ib_write_bw");
	bad(&pt_tool_read_lat, "--use-srq", "not available");
	bad(&pt_tool_send_bw, "--use-srq -q 4 -r 2", "must be at least the number of QPs");
	r = ok(&pt_tool_send_bw, "--use-srq -R");   /* rdma_create_qp with the SRQ */
	assert_true(r->p.traffic.use_srq && r->p.conn.rdma_cm_qps);
	/* --recv_post_list: SEND tools, at most -r */
	r = ok(&pt_tool_send_bw, "");
	assert_int_equal(r->p.traffic.recv_post_list, 1);
	r = ok(&pt_tool_send_bw, "--recv_post_list 8");
	assert_int_equal(r->p.traffic.recv_post_list, 8);
	r = ok(&pt_tool_send_lat, "--recv_post_list=2 -r 4");
	assert_int_equal(r->p.traffic.recv_post_list, 2);
	bad(&pt_tool_send_bw, "--recv_post_list 0", "Invalid value '0' for --recv_post_list");
	bad(&pt_tool_send_bw, "--recv_post_list 1024 -n 2048", "must not exceed the receive depth (-r 512)");
	bad(&pt_tool_send_bw, "--recv_post_list 16 -r 8 -n 1600", "must not exceed");
	bad(&pt_tool_send_bw, "--recv_post_list 8 -n 300", "must be a multiple of --recv_post_list");
	r = ok(&pt_tool_send_bw, "--recv_post_list 8 -D 2");
	assert_int_equal(r->p.traffic.recv_post_list, 8);
	bad(&pt_tool_write_bw, "--recv_post_list 2", "option --recv_post_list is not available in ib_write_bw");
	bad(&pt_tool_read_lat, "--recv_post_list 2", "not available");
	/* placement and queues (helper numa): every tool; -X only with -e */
	r = ok(&pt_tool_send_bw, "");
	assert_int_equal(r->p.numa_node, -1);
	assert_string_equal(r->p.pin_cores, "");
	assert_false(r->p.disable_numa || r->p.no_lock || r->p.vector_given);
	r = ok(&pt_tool_write_lat, "--numa_node 1 --pin_cores 0-1,3");
	assert_int_equal(r->p.numa_node, 1);
	assert_string_equal(r->p.pin_cores, "0-1,3");
	r = ok(&pt_tool_atomic_bw, "--disable_numa --no_lock");
	assert_true(r->p.disable_numa);
	assert_true(r->p.no_lock);
	r = ok(&pt_tool_send_lat, "-e -X 3");
	assert_true(r->p.vector_given);
	assert_int_equal(r->p.comp_vector, 3);
	r = ok(&pt_tool_read_bw, "-e --vector=0");
	assert_int_equal(r->p.comp_vector, 0);
	bad(&pt_tool_send_bw, "-X 1", "-X/--vector 1 needs -e");
	bad(&pt_tool_send_bw, "-e -X 2049", "Invalid value '2049' for");
	bad(&pt_tool_write_bw, "-e -X 0", "not available in ib_write_bw");
	bad(&pt_tool_send_bw, "--numa_node 0 --disable_numa", "contradict");
	bad(&pt_tool_send_bw, "--numa_node x", "Invalid value 'x' for --numa_node");
	bad(&pt_tool_send_bw, "--numa_node 1024", "0..1023");
	bad(&pt_tool_send_bw, "--pin_cores 1;2", "expected a CPU list");
	bad(&pt_tool_send_bw, "--pin_cores=", "expected a CPU list");
	/* --perform_warm_up: RDMA BW tools */
	r = ok(&pt_tool_write_bw, "");
	assert_false(r->p.traffic.warm_up);
	r = ok(&pt_tool_write_bw, "--perform_warm_up");
	assert_true(r->p.traffic.warm_up);
	r = ok(&pt_tool_read_bw, "--perform_warm_up -b");
	assert_true(r->p.traffic.warm_up);
	r = ok(&pt_tool_atomic_bw, "--perform_warm_up");
	assert_true(r->p.traffic.warm_up);
	bad(&pt_tool_send_bw, "--perform_warm_up", "option --perform_warm_up is not available in ib_send_bw");
	bad(&pt_tool_write_lat, "--perform_warm_up", "not available");
	r = ok(&pt_tool_write_bw, "--perform_warm_up --write_with_imm");   /* the receiver counts its writes */
	assert_true(r->p.traffic.warm_up && r->p.traffic.with_imm);
	/* --cqe_poll / --disable_dynamic_polling: BW tools, 1..65535 */
	r = ok(&pt_tool_send_bw, "");
	assert_int_equal(r->p.traffic.cqe_poll, 0);
	assert_false(r->p.traffic.no_dynamic_poll);
	r = ok(&pt_tool_write_bw, "--cqe_poll 1");
	assert_int_equal(r->p.traffic.cqe_poll, 1);
	r = ok(&pt_tool_atomic_bw, "--cqe_poll=65535 --disable_dynamic_polling");
	assert_int_equal(r->p.traffic.cqe_poll, 65535);
	assert_true(r->p.traffic.no_dynamic_poll);
	r = ok(&pt_tool_read_bw, "--disable_dynamic_polling");
	assert_true(r->p.traffic.no_dynamic_poll);
	bad(&pt_tool_send_bw, "--cqe_poll 0", "Invalid value '0' for --cqe_poll");
	bad(&pt_tool_send_bw, "--cqe_poll 65536", "1..65535");
	bad(&pt_tool_send_bw, "--cqe_poll x", "Invalid value 'x'");
	bad(&pt_tool_send_lat, "--cqe_poll 4", "option --cqe_poll is not available in ib_send_lat");
	bad(&pt_tool_read_lat, "--disable_dynamic_polling", "not available");

	r = ok(&pt_tool_atomic_bw, "-s 8 -A CMP_AND_SWAP -o 4");
	assert_int_equal(r->p.traffic.atomic_type, PT_ATOMIC_CMP_AND_SWAP);
	assert_int_equal(r->p.traffic.out_reads, 4);
	assert_int_equal(r->p.traffic.size, 8);
	r = ok(&pt_tool_atomic_lat, "--atomic_type=FETCH_AND_ADD --outs=16");
	assert_int_equal(r->p.traffic.atomic_type, PT_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(r->p.traffic.out_reads, 16);
	r = ok(&pt_tool_send_bw, "-b -e -q 4 -l 2 -t 64 -Q 2 -r 1024 -n 2000 host");
	assert_true(r->p.traffic.bidirectional);
	assert_true(r->p.traffic.use_event);
	assert_int_equal(r->p.conn.num_qps, 4);
	assert_int_equal(r->p.traffic.tx_depth, 64);
	assert_int_equal(r->p.traffic.rx_depth, 1024);

	r = ok(&pt_tool_send_bw, "--output=bandwidth --report_gbits --report-both");
	assert_int_equal(r->p.report.output, PT_OUTPUT_BANDWIDTH);
	assert_true(r->p.report.gbits);
	assert_true(r->p.report.report_both);
	r = ok(&pt_tool_write_bw, "--output message_rate");
	assert_int_equal(r->p.report.output, PT_OUTPUT_MESSAGE_RATE);
	r = ok(&pt_tool_send_lat, "--output=latency");
	assert_int_equal(r->p.report.output, PT_OUTPUT_LATENCY);
	bad(&pt_tool_send_bw, "--output=latency", "only valid for latency tests");
	bad(&pt_tool_read_lat, "--output=bandwidth", "only valid for bandwidth tests");
	bad(&pt_tool_send_bw, "--output=foo", "Invalid value 'foo' for --output");
}

/* Issue 18, memory group: where each is offered, what it stores, and the
 * combinations refused before any device is opened. */
static void test_memory_options(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_write_bw, "--use_hugepages --mr_per_qp --odp --payload_file_path=/p.txt"
	       " --data_validation_debug");
	assert_true(r->p.mem.use_hugepages && r->p.mem.mr_per_qp && r->p.mem.odp);
	assert_string_equal(r->p.mem.payload_file, "/p.txt");
	assert_true(r->p.mem.data_validation && r->p.mem.data_validation_debug);
	r = ok(&pt_tool_send_lat, "--mmap /dev/shm/f --mmap-offset 8192");
	assert_string_equal(r->p.mem.mmap_file, "/dev/shm/f");
	assert_int_equal(r->p.mem.mmap_offset, 8192);
	r = ok(&pt_tool_read_bw, "--data_validation");
	assert_true(r->p.mem.data_validation);
	assert_false(r->p.mem.data_validation_debug);
	/* the null MR: write and read tools, BW and latency */
	assert_true(ok(&pt_tool_write_lat, "--use-null-mr")->p.mem.null_mr);
	assert_true(ok(&pt_tool_read_bw, "--use-null-mr")->p.mem.null_mr);
	bad(&pt_tool_send_bw, "--use-null-mr", "option --use-null-mr is not available in ib_send_bw");
	bad(&pt_tool_atomic_bw, "--use-null-mr", "not available");
	/* data validation: write and read BW only */
	bad(&pt_tool_write_lat, "--data_validation", "not available in ib_write_lat");
	bad(&pt_tool_send_bw, "--data_validation_debug", "not available in ib_send_bw");
	bad(&pt_tool_write_bw, "--mmap-offset 4096", "--mmap-offset needs --mmap");
	bad(&pt_tool_write_bw, "--mmap f --mmap-offset 100", "multiple of the page size");
	bad(&pt_tool_write_bw, "--mmap f --mmap-offset -1", "Invalid value '-1' for --mmap-offset");
	bad(&pt_tool_write_bw, "--mmap f --use_hugepages", "cannot be combined");
	bad(&pt_tool_write_bw, "--use-null-mr --data_validation", "a null MR carries no data");
	bad(&pt_tool_read_bw, "--use-null-mr --payload_file_path=p", "a null MR carries no data");
	bad(&pt_tool_write_bw, "--payload_file_path=", "Empty value for --payload_file_path");
}

static void test_misc_options(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "--out_json_file=/tmp/x.json --plugin=/a/b.so:k=1:z "
	       "--trace=t.bin --announce_version=5.60 --oob_timeout=0 --dont_xchg_versions "
	       "--use_old_post_send -F");
	assert_true(r->p.report.out_json);
	assert_string_equal(r->p.report.out_json_file, "/tmp/x.json");
	assert_string_equal(r->p.plugin.plugin_path, "/a/b.so");
	assert_string_equal(r->p.plugin.plugin_args, "k=1:z");
	assert_string_equal(r->p.plugin.trace_file, "t.bin");
	assert_string_equal(r->p.oob.fake_version, "5.60");
	assert_int_equal(r->p.oob.timeout_sec, 0);
	assert_true(r->p.oob.dont_xchg_versions);
	assert_true(r->p.traffic.use_old_post_send);
	assert_true(r->p.report.cpu_freq_warn_off);
	r = ok(&pt_tool_send_bw, "--use_old_post_send --use_new_post_send --out_json --plugin=p.so");
	assert_false(r->p.traffic.use_old_post_send);
	assert_true(r->p.report.out_json);
	assert_string_equal(r->p.report.out_json_file, "perftest_out.json");
	assert_string_equal(r->p.plugin.plugin_args, "");
	bad(&pt_tool_send_bw, "--announce_version=1234567890123456", "too long");
	bad(&pt_tool_send_bw, "--plugin=:x", "needs a path");
	/* arguments are permuted: options after the host name are read */
	r = ok(&pt_tool_send_bw, "host -n 10");
	assert_int_equal(r->p.traffic.iters, 10);
	assert_string_equal(r->p.oob.servername, "host");
}

static void test_help_and_version(void **state)
{
	struct run *r;
	(void)state;

	r = run(&pt_tool_send_bw, "-V");
	assert_int_equal(r->rc, 1);
	assert_string_equal(r->out, "Version: " WIRE_VERSION "\n");
	assert_string_equal(WIRE_VERSION, "6.06");
	assert_string_equal(r->err, "");
	r = run(&pt_tool_atomic_lat, "--version");
	assert_int_equal(r->rc, 1);
	assert_string_equal(r->out, "Version: 6.06\n");

	r = run(&pt_tool_send_bw, "-h");
	assert_int_equal(r->rc, 1);
	assert_string_equal(r->err, "");
	assert_non_null(strstr(r->out, "Usage:"));
	assert_non_null(strstr(r->out, "ib_send_bw <host>"));
	assert_non_null(strstr(r->out, "-s, --size <size>"));
	assert_non_null(strstr(r->out, "(default 65536)"));
	assert_non_null(strstr(r->out, "-g, --mcg"));
	assert_non_null(strstr(r->out, "-M, --MGID <mgid>"));
	assert_non_null(strstr(r->out, "--out_json_file=<file>"));
	assert_non_null(strstr(r->out, "RC/UC/UD (default RC)"));
	assert_null(strstr(r->out, "--atomic_type"));
	assert_null(strstr(r->out, "--report-cycles"));
	assert_null(strstr(r->out, "use_cuda"));
	assert_null(strstr(r->out, "announce_version"));
	assert_null(strstr(r->out, "(null)"));

	r = run(&pt_tool_atomic_bw, "--help");
	assert_int_equal(r->rc, 1);
	assert_non_null(strstr(r->out, "-A, --atomic_type <type>"));
	assert_non_null(strstr(r->out, "-o, --outs <num>"));
	assert_non_null(strstr(r->out, "(fixed at 8)"));
	assert_null(strstr(r->out, "--all"));
	assert_null(strstr(r->out, "--mcg"));
	assert_null(strstr(r->out, "--inline_size"));

	r = run(&pt_tool_write_bw, "-h");
	assert_non_null(strstr(r->out, "(default 5000)"));
	assert_non_null(strstr(r->out, "RC/UC (default RC)"));
	assert_null(strstr(r->out, "--events"));
	assert_null(strstr(r->out, "--rx-depth"));

	r = run(&pt_tool_read_lat, "-h");
	assert_non_null(strstr(r->out, "-C, --report-cycles"));
	assert_non_null(strstr(r->out, "-H, --report-histogrm"));
	assert_null(strstr(r->out, "--bidirectional"));
	assert_null(strstr(r->out, "--tx-depth"));
}

/* getopt state is reset: an aborted parse does not leak into the next. */
static void test_reparse(void **state)
{
	struct run *r;
	(void)state;

	bad(&pt_tool_send_bw, "-n 10 -Z -s 4", "not supported");
	r = ok(&pt_tool_send_bw, "-s 4");
	assert_int_equal(r->p.traffic.size, 4);
	assert_int_equal(r->p.traffic.iters, 1000);
	for (int i = 0; i < 3; i++) {
		r = ok(&pt_tool_write_bw, "-s 128 host");
		assert_int_equal(r->p.traffic.size, 128);
		assert_int_equal(r->p.traffic.iters, 5000);
	}
}

static void test_tool_lookup_and_inline(void **state)
{
	struct pt_params p;
	(void)state;

	assert_ptr_equal(pt_tool_find("/usr/bin/ib_read_lat"), &pt_tool_read_lat);
	assert_ptr_equal(pt_tool_find("ib_send_bw"), &pt_tool_send_bw);
	assert_null(pt_tool_find("ib_send"));
	assert_null(pt_tool_find(NULL));

	pt_params_defaults(&pt_tool_send_lat, &p);
	assert_int_equal(pt_inline_default(&p, false), 0);
	assert_int_equal(pt_inline_default(&p, true), 236);
	p.conn.type = PT_CONN_UD;
	assert_int_equal(pt_inline_default(&p, true), 188);
	p.traffic.inline_size = 12;
	assert_int_equal(pt_inline_default(&p, false), 12);
	pt_params_defaults(&pt_tool_write_lat, &p);
	assert_int_equal(pt_inline_default(&p, true), 220);
	pt_params_defaults(&pt_tool_write_bw, &p);
	assert_int_equal(pt_inline_default(&p, true), 0);
	pt_params_defaults(&pt_tool_read_lat, &p);
	assert_int_equal(pt_inline_default(&p, true), 0);
}

/* pace: the rate limiter, --latency_gap, --reversed; --reply_every is raw Ethernet's */
static void test_pace_options(void **state)
{
	struct run *r;

	(void)state;
	r = ok(&pt_tool_send_bw, "");
	assert_int_equal(r->p.pace.limit_type, PT_RATE_LIMIT_OFF);
	assert_false(r->p.pace.reversed);
	r = ok(&pt_tool_write_bw, "--rate_limit 0.5");          /* upstream: HW unless told */
	assert_int_equal(r->p.pace.limit_type, PT_RATE_LIMIT_HW);
	assert_int_equal(r->p.pace.rate_units, PT_RATE_GBPS);
	assert_int_equal(r->p.pace.burst_size, 0);
	r = ok(&pt_tool_send_bw, "--rate_limit=2.5 --rate_limit_type=SW --rate_units=M -t 64");
	assert_int_equal(r->p.pace.limit_type, PT_RATE_LIMIT_SW);
	assert_int_equal(r->p.pace.rate_units, PT_RATE_MIBPS);
	assert_true(r->p.pace.rate_limit == 2.5);
	assert_int_equal(r->p.pace.burst_size, 64);              /* SW default: tx depth */
	r = ok(&pt_tool_read_bw, "--rate_limit 1000 --rate_units p --rate_limit_type SW --burst_size 8");
	assert_int_equal(r->p.pace.rate_units, PT_RATE_PPS);
	assert_int_equal(r->p.pace.burst_size, 8);
	r = ok(&pt_tool_atomic_bw, "--rate_limit 1 --burst_size 4 --typical_pkt_size 1024");
	assert_int_equal(r->p.pace.typical_pkt_size, 1024);
	bad(&pt_tool_send_bw, "--rate_limit 0", "the rate must be above 0");
	bad(&pt_tool_send_bw, "--rate_limit -1", "Invalid value '-1' for --rate_limit");
	bad(&pt_tool_send_bw, "--rate_limit x", "Invalid value 'x' for --rate_limit");
	bad(&pt_tool_send_bw, "--rate_limit 1 --rate_units G", "expected M (MiB/s), g (Gb/s) or p");
	bad(&pt_tool_send_bw, "--rate_limit 1 --rate_limit_type sw", "expected SW, HW or PP");
	bad(&pt_tool_send_bw, "--rate_limit 1 --rate_limit_type PP", "not supported by this build");
	bad(&pt_tool_send_bw, "--rate_limit 1 --rate_units p", "not supported by the HW rate limiter");
	bad(&pt_tool_send_bw, "--rate_limit 1 --rate_limit_type SW --typical_pkt_size 9",
	    "--typical_pkt_size is for the HW rate limiter");
	/* upstream refuses -R with the HW limiter (its default type); SW is fine */
	bad(&pt_tool_send_bw, "--rate_limit 1 -R",
	    "The HW rate limiter (--rate_limit_type HW, the default type) is not allowed with rdma_cm QPs (-R)");
	bad(&pt_tool_write_bw, "--rate_limit 1 --rate_limit_type HW -R", "use --rate_limit_type SW");
	r = ok(&pt_tool_send_bw, "--rate_limit 1 --rate_limit_type SW -R");
	assert_true(r->p.pace.limit_type == PT_RATE_LIMIT_SW && r->p.conn.rdma_cm_qps);
	r = ok(&pt_tool_send_bw, "--rate_limit 1 --rate_limit_type SW -R");
	assert_int_equal(r->p.pace.limit_type, PT_RATE_LIMIT_SW);
	bad(&pt_tool_send_bw, "--rate_limit_type SW", "need --rate_limit");
	bad(&pt_tool_send_bw, "--burst_size 4", "need --rate_limit");
	bad(&pt_tool_send_bw, "--rate_limit 1 --burst_size 0", "Invalid value '0' for --burst_size");
	bad(&pt_tool_send_lat, "--rate_limit 1", "option --rate_limit is not available in ib_send_lat");
	bad(&pt_tool_read_lat, "--burst_size 1", "not available");
	/* --latency_gap: latency tools, microseconds */
	r = ok(&pt_tool_read_lat, "--latency_gap 250");
	assert_int_equal(r->p.pace.latency_gap_us, 250);
	r = ok(&pt_tool_write_lat, "");
	assert_int_equal(r->p.pace.latency_gap_us, 0);
	bad(&pt_tool_send_lat, "--latency_gap -3", "Invalid value '-3' for --latency_gap");
	bad(&pt_tool_send_bw, "--latency_gap 3", "option --latency_gap is not available in ib_send_bw");
	/* --reversed: BW tools; the BW sender is the server, OOB roles stay */
	r = ok(&pt_tool_write_bw, "--reversed");          /* the server sends */
	assert_true(r->p.pace.reversed);
	assert_true(pt_bw_sender_side(&r->p));
	assert_false(r->p.oob.is_client);
	r = ok(&pt_tool_send_bw, "--reversed peer");
	assert_true(r->p.oob.is_client);
	assert_false(pt_bw_sender_side(&r->p));
	assert_true(r->p.report.no_peak);        /* the SEND receiver: no peak */
	r = ok(&pt_tool_send_bw, "--reversed");
	assert_true(pt_bw_sender_side(&r->p));
	assert_false(r->p.report.no_peak);
	r = ok(&pt_tool_send_bw, "peer");
	assert_true(pt_bw_sender_side(&r->p));
	bad(&pt_tool_send_lat, "--reversed", "option --reversed is not available in ib_send_lat");
	/* multicast: the roles swap, the server sends to the group */
	r = ok(&pt_tool_send_bw, "--reversed -g");
	assert_true(pt_bw_sender_side(&r->p) && r->p.mcast.enabled);
	r = ok(&pt_tool_send_bw, "peer --reversed -g");
	assert_false(pt_bw_sender_side(&r->p));
	bad(&pt_tool_send_bw, "--reversed -g --connectionless --run_infinitely",
	    "--connectionless is for a multicast receiver: -g, no server name and no --reversed");
	bad(&pt_tool_send_bw, "--reply_every 2", "raw Ethernet");
	bad(&pt_tool_read_lat, "--reply_every 2", "not supported by this build");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_per_tool),
		cmocka_unit_test(test_server_side),
		cmocka_unit_test(test_rx_depth_rules),
		cmocka_unit_test(test_cq_mod_rules),
		cmocka_unit_test(test_duration_rules),
		cmocka_unit_test(test_all_sizes),
		cmocka_unit_test(test_no_peak_warning),
		cmocka_unit_test(test_unknown_and_malformed),
		cmocka_unit_test(test_bad_numbers),
		cmocka_unit_test(test_good_numbers),
		cmocka_unit_test(test_multicast_rules),
		cmocka_unit_test(test_connection_types),
		cmocka_unit_test(test_tool_specific_options),
		cmocka_unit_test(test_misc_options),
		cmocka_unit_test(test_memory_options),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_reparse),
		cmocka_unit_test(test_tool_lookup_and_inline),
		cmocka_unit_test(test_pace_options),
	};
	return cmocka_run_group_tests_name("options", tests, NULL, teardown);
}
