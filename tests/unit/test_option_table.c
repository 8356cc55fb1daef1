/* SPDX-License-Identifier: BSD-2-Clause */
/* The option table against upstream 6.29 (docs/upstream-options.txt): every
 * name is there with its letter; every refused option says why in each tool
 * (hardware, not implemented yet, or another tool's option); and the options
 * added with it: -w/-y, --ipv6-addr, --bind_source_ip, --wait_destroy. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/cli/options.h"
#include "perftest/cli/options_int.h"
#include "options_harness.h"

static const struct pt_tool *const every_tool[] = {
	&pt_tool_send_bw, &pt_tool_send_lat, &pt_tool_write_bw, &pt_tool_write_lat,
	&pt_tool_read_bw, &pt_tool_read_lat, &pt_tool_atomic_bw, &pt_tool_atomic_lat,
};
#define NTOOLS (sizeof(every_tool) / sizeof(every_tool[0]))

/* The message a refused option d gets in a tool that takes its group. */
static void refusal(const struct pt_optdef *d, const char *name, char *want, size_t len)
{
	if (d->flags & PT_OPTF_UNSUPPORTED)
		snprintf(want, len, " option %s is not supported by this build: %s\n", name, d->help);
	else
		snprintf(want, len, " option %s is not implemented yet: %s (plain verbs, planned;"
			 " docs/option-parity.md)\n", name, d->help);
}

/* Every option the table refuses, short and long (bare and with a value),
 * in every tool: the reason in the tools of its group, "not available" in
 * the others. */
static void test_refused_options(void **state)
{
	size_t n, checked = 0;
	const struct pt_optdef *defs = pt_optdefs(&n);
	char cmd[96], name[64], want[512];
	(void)state;

	for (size_t i = 0; i < n; i++) {
		const struct pt_optdef *d = &defs[i];

		if (!(d->flags & (PT_OPTF_UNSUPPORTED | PT_OPTF_NOT_YET)))
			continue;
		assert_non_null(d->help);
		assert_true(strlen(d->help) > 8);
		for (size_t t = 0; t < NTOOLS; t++) {
			bool takes = !d->groups || (every_tool[t]->option_groups & d->groups);

			for (int form = 0; form < 3; form++) {
				struct run *r;

				if (form == 0 && !d->short_name)
					continue;
				if (form == 0) {
					snprintf(name, sizeof(name), "-%c", d->short_name);
					snprintf(cmd, sizeof(cmd), "host -%c", d->short_name);
				} else {
					snprintf(name, sizeof(name), "--%s", d->long_name);
					snprintf(cmd, sizeof(cmd), "host --%s%s", d->long_name,
						 form == 2 ? "=1" : "");
				}
				if (takes)
					refusal(d, name, want, sizeof(want));
				else
					snprintf(want, sizeof(want), " option %s is not available in %s\n",
						 name, every_tool[t]->name);
				r = run(every_tool[t], cmd);
				if (r->rc != 1 || strcmp(r->err, want))
					fail_msg("%s '%s': rc %d, '%s', want '%s'", every_tool[t]->name,
						 cmd, r->rc, r->err, want);
				checked++;
			}
		}
	}
	assert_true(checked > 8 * 100);

	/* a few spelled out, with their reasons */
	static const char *const named[][3] = {
		{ "--use_cuda=0", "ib_read_lat", "not supported by this build: GPU memory (CUDA)" },
		{ "--use_rocm_dmabuf", "ib_send_bw", "not supported by this build: GPU memory (AMD ROCm" },
		{ "--ethertype=0x800", "ib_send_bw", "not supported by this build: raw Ethernet" },
		{ "--aes_xts", "ib_write_bw", "not supported by this build: AES-XTS" },
		{ "--log_dci_streams=2", "ib_write_bw", "not supported by this build: the DC transport" },
		{ "--recv_post_list=2", "ib_write_bw", "--recv_post_list is not available in ib_write_bw" },
		{ "--use-srq", "ib_write_bw", "--use-srq is not available in ib_write_bw" },
		{ "--write_with_imm", "ib_send_bw", "not available in ib_send_bw" },
		{ "--latency_gap=5", "ib_send_bw", "not available in ib_send_bw" },
		{ "--reply_every=2", "ib_read_lat", "not supported by this build: raw Ethernet" },
		{ "-X 1", "ib_write_bw", "-X is not available in ib_write_bw" },
		{ "--data_validation", "ib_atomic_bw", "not available in ib_atomic_bw" },
		{ "--rate_limit 5", "ib_send_lat", "not available in ib_send_lat" },
	};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		struct run *r = run(pt_tool_find(named[i][1]), named[i][0]);

		assert_int_equal(r->rc, 1);
		if (!strstr(r->err, named[i][2]))
			fail_msg("%s %s: '%s'", named[i][1], named[i][0], r->err);
	}
	/* a long prefix names the full option: refused (raw Ethernet) and taken */
	struct run *r = run(&pt_tool_send_bw, "--reply_ev 2");
	assert_int_equal(r->rc, 1);
	assert_non_null(strstr(r->err, " option --reply_every is not supported by this build"));
	r = ok(&pt_tool_send_bw, "host --mr_per");
	assert_true(r->p.mem.mr_per_qp);
	/* upstream's getopt string has no -G and no -Y (only its long table) */
	bad(&pt_tool_send_bw, "-G", "invalid option '-G'");
	bad(&pt_tool_send_bw, "-Y", "invalid option '-Y'");
}

/* -w/-y: BW tools only, a real >= 0 (docs/upstream-behaviour.md §12). */
static void test_limits(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "host");
	assert_true(r->p.report.limit_bw < 0 && r->p.report.limit_msgrate < 0);
	r = ok(&pt_tool_write_bw, "host -w 90.5 --limit_msgrate=0.25");
	assert_true(r->p.report.limit_bw == 90.5);
	assert_true(r->p.report.limit_msgrate == 0.25);
	r = ok(&pt_tool_atomic_bw, "--limit_bw 0 -y 1e1");
	assert_true(r->p.report.limit_bw == 0 && r->p.report.limit_msgrate == 10);
	bad(&pt_tool_send_bw, "-w -1", "expected a number >= 0");
	bad(&pt_tool_send_bw, "-w 9x", "expected a number >= 0");
	bad(&pt_tool_send_bw, "-w nan", "expected a number >= 0");
	bad(&pt_tool_send_bw, "-y inf", "expected a number >= 0");
	bad(&pt_tool_send_bw, "-y \x01", "expected a number >= 0");
	bad(&pt_tool_send_lat, "-w 1", "-w is not available in ib_send_lat");
	bad(&pt_tool_send_bw, "-y 1 --run_infinitely", "need a run that ends");
	ok(&pt_tool_send_bw, "-y 1 -D 4");
	bad(&pt_tool_read_lat, "--limit_msgrate=1", "--limit_msgrate is not available in ib_read_lat");
}

/* --ipv6-addr, --bind_source_ip (TCP and rdma_cm channels) and --wait_destroy. */
static void test_channel_and_wait_options(void **state)
{
	struct run *r;
	(void)state;

	r = ok(&pt_tool_send_bw, "host --ipv6-addr --bind_source_ip=fe80::1%2");
	assert_true(r->p.oob.ipv6_addr);
	assert_string_equal(r->p.oob.source_ip, "fe80::1%2");
	r = ok(&pt_tool_read_lat, "host --bind_source_ip 10.0.0.7");
	assert_false(r->p.oob.ipv6_addr);
	assert_string_equal(r->p.oob.source_ip, "10.0.0.7");
	r = ok(&pt_tool_write_lat, "--ipv6-addr");  /* a server listens on IPv6 */
	assert_true(r->p.oob.ipv6_addr);
	bad(&pt_tool_send_bw, "host --bind_source_ip=myhost", "expected a numeric IPv4 or IPv6");
	bad(&pt_tool_send_bw, "host --bind_source_ip=10.0.0.256", "expected a numeric IPv4");
	bad(&pt_tool_send_bw, "host --ipv6-addr --bind_source_ip=10.0.0.1", "is IPv4, but --ipv6-addr");
	/* rdma_cm (-z, -R) takes both too: the cm id binds / resolves with them */
	r = ok(&pt_tool_send_bw, "host -z --ipv6-addr");
	assert_true(r->p.oob.ipv6_addr && r->p.conn.rdma_cm_oob);
	r = ok(&pt_tool_send_bw, "host -R --bind_source_ip=10.0.0.1");
	assert_string_equal(r->p.oob.source_ip, "10.0.0.1");
	assert_true(r->p.conn.rdma_cm_qps);
	bad(&pt_tool_send_bw, "host -R --ipv6-addr --bind_source_ip=10.0.0.1", "is IPv4, but --ipv6-addr");
	r = ok(&pt_tool_atomic_bw, "host --wait_destroy=3");
	assert_int_equal(r->p.traffic.wait_destroy, 3);
	r = ok(&pt_tool_atomic_bw, "host");
	assert_int_equal(r->p.traffic.wait_destroy, 0);
	bad(&pt_tool_write_bw, "host --wait_destroy=-1", "expected an integer in 0..86400");
	bad(&pt_tool_write_lat, "host --wait_destroy=1", "--wait_destroy is not available in ib_write_lat");
}

/* Every name of docs/upstream-options.txt is in the table with its short
 * letter (srcdir from the environment, as automake runs the tests). */
static void test_every_upstream_name(void **state)
{
	const char *dir = getenv("srcdir");
	char path[4096], line[256];
	size_t n, names = 0;
	const struct pt_optdef *defs = pt_optdefs(&n);
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/docs/upstream-options.txt", dir ? dir : ".");
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char lname[128], sname[8], arg[8];
		const struct pt_optdef *d = NULL;

		if (line[0] == '#' || sscanf(line, "%127s %7s %7s", lname, sname, arg) != 3)
			continue;
		names++;
		for (size_t i = 0; i < n && !d; i++)
			if ((defs[i].long_name && !strcmp(defs[i].long_name, lname)) ||
			    (defs[i].long_alias && !strcmp(defs[i].long_alias, lname)))
				d = &defs[i];
		if (!d)
			fail_msg("upstream option --%s is not in the table", lname);
		if (sname[0] != '-' && d->short_name != sname[0])
			fail_msg("--%s: short -%s upstream, -%c here", lname, sname,
				 d->short_name ? d->short_name : '?');
		if (sname[0] == '-' && d->short_name)
			fail_msg("--%s: no short letter upstream, -%c here", lname, d->short_name);
	}
	fclose(f);
	assert_int_equal(names, 156);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_options),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_channel_and_wait_options),
		cmocka_unit_test(test_every_upstream_name),
	};
	return cmocka_run_group_tests_name("option_table", tests, NULL, teardown);
}
