/* SPDX-License-Identifier: BSD-2-Clause */
/* Group "addr" of issue 18: --ipv6, --flow_label, --pkey_index,
 * --retry_count, --dlid, --force-link, --disable_pcie_relaxed, -W,
 * -O and --report-per-port. Parsing and refusals in each tool, and the -W
 * counter reader over a fake sysfs tree (counters.c). The checks against a
 * real port (pkey table, link layer, port count) run in the lab
 * (tests/lab/test_53_addressing.py). */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "perftest/cli/options.h"
#include "perftest/cli/options_int.h"
#include "perftest/engine/counters.h"
#include "options_harness.h"

static const struct pt_tool *const every_tool[] = {
	&pt_tool_send_bw, &pt_tool_send_lat, &pt_tool_write_bw, &pt_tool_write_lat,
	&pt_tool_read_bw, &pt_tool_read_lat, &pt_tool_atomic_bw, &pt_tool_atomic_lat,
};

/* Defaults: nothing asked, relaxed ordering on, rdma_cm retry count 7. */
static void test_defaults(void **state)
{
	(void)state;
	for (size_t t = 0; t < sizeof(every_tool) / sizeof(every_tool[0]); t++) {
		struct run *r = ok(every_tool[t], "host");
		const struct pt_addr_params *a = &r->p.addr;

		assert_false(a->ipv6_gid || a->no_relaxed || a->dualport || a->report_per_port);
		assert_int_equal(a->num_flow_labels, 0);
		assert_int_equal(a->pkey_index, 0);
		assert_int_equal(a->retry_count, 7);
		assert_int_equal(a->dlid, 0);
		assert_int_equal(a->force_link, PT_LINK_ANY);
		assert_int_equal(a->num_counters, 0);
	}
}

/* Every tool takes the port options (upstream's table has them for all). */
static void test_values(void **state)
{
	struct run *r;
	(void)state;

	for (size_t t = 0; t < sizeof(every_tool) / sizeof(every_tool[0]); t++) {
		r = ok(every_tool[t], "host --ipv6 --flow_label 5,0x10,1048575 --pkey_index=3"
		       " --retry_count 2 --dlid 0x12 --force-link Ethernet --disable_pcie_relaxed"
		       " -W counters/port_xmit_data,hw_counters/rcvd_pkts");
		assert_true(r->p.addr.ipv6_gid && r->p.addr.no_relaxed);
		assert_int_equal(r->p.addr.num_flow_labels, 3);
		assert_int_equal(r->p.addr.flow_labels[0], 5);
		assert_int_equal(r->p.addr.flow_labels[1], 16);
		assert_int_equal(r->p.addr.flow_labels[2], 0xfffff);
		assert_int_equal(r->p.addr.pkey_index, 3);
		assert_int_equal(r->p.addr.retry_count, 2);
		assert_int_equal(r->p.addr.dlid, 0x12);
		assert_int_equal(r->p.addr.force_link, PT_LINK_ETHERNET);
		assert_int_equal(r->p.addr.num_counters, 2);
		assert_string_equal(r->p.addr.counters[0], "counters/port_xmit_data");
		assert_string_equal(r->p.addr.counters[1], "hw_counters/rcvd_pkts");
	}
	r = ok(&pt_tool_send_bw, "--force-link IB --report-counters=counters/x");
	assert_int_equal(r->p.addr.force_link, PT_LINK_IB);
	r = ok(&pt_tool_write_bw, "host -O");
	assert_true(r->p.addr.dualport);
	r = ok(&pt_tool_read_bw, "host -O -D 2 --report-per-port");
	assert_true(r->p.addr.dualport && r->p.addr.report_per_port);
}

static void test_bad_values(void **state)
{
	(void)state;
	bad(&pt_tool_send_bw, "--flow_label 1048576", "expected an integer in 0..1048575");
	bad(&pt_tool_send_bw, "--flow_label -1", "expected an integer in 0..1048575");
	bad(&pt_tool_send_bw, "--flow_label 1,,2", "single commas");
	bad(&pt_tool_send_bw, "--flow_label 1,", "single commas");
	bad(&pt_tool_send_bw, "--flow_label 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", "at most 16");
	bad(&pt_tool_send_bw, "--pkey_index x", "expected an integer in 0..65535");
	bad(&pt_tool_send_bw, "--pkey_index 65536", "expected an integer in 0..65535");
	bad(&pt_tool_send_bw, "--retry_count 8", "expected an integer in 0..7");
	bad(&pt_tool_send_bw, "--dlid 0", "expected an integer in 1..49151");
	bad(&pt_tool_send_bw, "--dlid 0xc000", "expected an integer in 1..49151");
	bad(&pt_tool_send_bw, "--force-link RoCE", "use IB or Ethernet");
	bad(&pt_tool_send_bw, "--force-link ib", "use IB or Ethernet");
	bad(&pt_tool_send_bw, "-W port_xmit_data", "expected counters/NAME or hw_counters/NAME");
	bad(&pt_tool_send_bw, "-W counters/../../x", "expected counters/NAME");
	bad(&pt_tool_send_bw, "-W /etc/passwd", "expected counters/NAME");
	bad(&pt_tool_send_bw, "-W counters/", "expected counters/NAME");
	bad(&pt_tool_send_bw, "-W counters/a/b", "expected counters/NAME");
	bad(&pt_tool_send_bw, "-W ,", "expected counters/NAME");
	/* what needs what, and the BW-only pair (upstream's groups) */
	bad(&pt_tool_send_bw, "host --report-per-port", "needs --dualport (-O) and duration mode");
	bad(&pt_tool_send_bw, "host -O --report-per-port", "needs --dualport (-O) and duration mode");
	bad(&pt_tool_send_bw, "host -O -R", "--dualport (-O) cannot be combined with rdma_cm");
	bad(&pt_tool_send_bw, "-O -g", "--dualport (-O) cannot be combined with multicast");
	bad(&pt_tool_send_lat, "host -O", "option -O is not available in ib_send_lat");
	bad(&pt_tool_read_lat, "host --report-per-port",
	    "option --report-per-port is not available in ib_read_lat");
}

/* A fake ports/1 tree under a temporary root. */
static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/rxe9/ports/1/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_counters(void **state)
{
	char root[] = "/tmp/pt_counters_XXXXXX", dir[512], why[512], out[1024];
	const char names[3][PT_PATH_MAX / 8] = { "counters/port_xmit_data",
						 "hw_counters/rcvd_pkts", "counters/wrapped" };
	uint64_t before[3], after[3];
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(root));
	snprintf(dir, sizeof(dir), "%s/rxe9", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/rxe9/ports", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/rxe9/ports/1", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/rxe9/ports/1/counters", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/rxe9/ports/1/hw_counters", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put(root, "counters/port_xmit_data", "1000\n");
	put(root, "hw_counters/rcvd_pkts", "7\n");
	put(root, "counters/wrapped", "18446744073709551615\n");
	assert_int_equal(pt_counters_read(root, "rxe9", 1, names, 3, before, why, sizeof(why)), 0);
	assert_int_equal(before[0], 1000);
	assert_int_equal(before[1], 7);
	put(root, "counters/port_xmit_data", "251000\n");
	put(root, "hw_counters/rcvd_pkts", "7\n");
	put(root, "counters/wrapped", "4\n");
	assert_int_equal(pt_counters_read(root, "rxe9", 1, names, 3, after, why, sizeof(why)), 0);
	f = fmemopen(out, sizeof(out), "w");
	assert_non_null(f);
	pt_counters_print(f, "rxe9", 1, names, 3, before, after);
	fclose(f);
	assert_non_null(strstr(out, " Port counters of rxe9 port 1 (change over the run):\n"));
	/* one line each: the name padded to 40 columns, the delta */
	static const char *const want[3] = { "counters/port_xmit_data", "hw_counters/rcvd_pkts",
					     "counters/wrapped" };
	static const char *const delta[3] = { "250000", "0", "5" };
	for (int i = 0; i < 3; i++) {
		char line[128];

		snprintf(line, sizeof(line), "\n %-40s : %s\n", want[i], delta[i]);
		if (!strstr(out, line))
			fail_msg("no line '%s' in '%s'", line + 1, out);
	}
	/* a counter the port lacks, and one that is not a number: named */
	const char missing[1][PT_PATH_MAX / 8] = { "hw_counters/nope" };
	assert_int_equal(pt_counters_read(root, "rxe9", 1, missing, 1, before, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "Couldn't read counter hw_counters/nope of rxe9 port 1"));
	assert_non_null(strstr(why, "No such file"));
	put(root, "counters/wrapped", "abc\n");
	assert_int_equal(pt_counters_read(root, "rxe9", 1, names, 3, before, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "counters/wrapped of rxe9 port 1"));
	assert_non_null(strstr(why, "is not a number"));
	assert_int_equal(pt_counters_read(root, "rxe9", 2, names, 1, before, why, sizeof(why)), -1);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_counters),
	};
	return cmocka_run_group_tests_name("addr_options", tests, NULL, teardown);
}
