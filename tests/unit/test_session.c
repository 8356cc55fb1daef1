/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine's side of the 6.28 negotiation block, from real command lines
 * (docs/wire-protocol.md §7.3): what upstream 6.28 would fill for the same
 * tool and options, so that a 6.28 peer finds no mismatch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/cli/options.h"
#include "perftest/engine/engine.h"
#include "perftest/wire/negotiate.h"

/* The block for TOOL with ARGS (a NULL-terminated list after argv[0]). */
static void fill(const struct pt_tool *tool, const char *const *args, struct pt_negotiate *n)
{
	static struct pt_params p;
	static struct pt_ctx c;
	char *argv[16] = { (char *)"tool" };
	int argc = 1;
	FILE *devnull = fopen("/dev/null", "w");

	assert_non_null(devnull);
	for (; args && *args; args++)
		argv[argc++] = (char *)*args;
	assert_int_equal(pt_parse_args_io(tool, argc, argv, &p, devnull, devnull), 0);
	fclose(devnull);
	memset(&c, 0, sizeof(c));
	c.p = &p;
	c.res.num_qps = p.conn.num_qps;
	c.run.size = p.traffic.size;
	c.run.max_size = p.traffic.size;
	pt_session_negotiate_fill(&c, n);
}

/* Only the atomic tools say FETCH_AND_ADD; every other tool leaves the
 * field zero, as 6.28 does (it refuses 1 from them: "atomicType mismatch"). */
static void atomic_type_only_in_atomic_tools(void **state)
{
	const struct pt_tool *zero[] = { &pt_tool_send_bw, &pt_tool_send_lat, &pt_tool_write_bw,
					 &pt_tool_write_lat, &pt_tool_read_bw, &pt_tool_read_lat };
	struct pt_negotiate n;

	(void)state;
	for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++) {
		fill(zero[i], NULL, &n);
		assert_int_equal(n.v[PT_NEG_ATOMIC_TYPE], PT_NEG_CMP_AND_SWAP);
	}
	fill(&pt_tool_atomic_bw, NULL, &n);
	assert_int_equal(n.v[PT_NEG_ATOMIC_TYPE], PT_NEG_FETCH_AND_ADD);
	fill(&pt_tool_atomic_lat, NULL, &n);
	assert_int_equal(n.v[PT_NEG_ATOMIC_TYPE], PT_NEG_FETCH_AND_ADD);
	fill(&pt_tool_atomic_bw, (const char *const[]){ "-A", "CMP_AND_SWAP", NULL }, &n);
	assert_int_equal(n.v[PT_NEG_ATOMIC_TYPE], PT_NEG_CMP_AND_SWAP);
}

/* The other terms follow the command line. */
static void terms_follow_the_command(void **state)
{
	struct pt_negotiate n;

	(void)state;
	fill(&pt_tool_write_bw, (const char *const[]){ "-c", "UC", "-q", "3", "-s", "4096", NULL }, &n);
	assert_int_equal(n.v[PT_NEG_VERB], PT_NEG_WRITE);
	assert_int_equal(n.v[PT_NEG_CONNECTION], PT_NEG_UC);
	assert_int_equal(n.v[PT_NEG_TST], PT_NEG_BW);
	assert_int_equal(n.v[PT_NEG_NUM_QPS], 3);
	assert_int_equal(n.v[PT_NEG_SIZE_F], 4096);
	fill(&pt_tool_send_lat, (const char *const[]){ "-c", "UD", NULL }, &n);
	assert_int_equal(n.v[PT_NEG_VERB], PT_NEG_SEND);
	assert_int_equal(n.v[PT_NEG_CONNECTION], PT_NEG_UD);
	assert_int_equal(n.v[PT_NEG_TST], PT_NEG_LAT);
}

/* Every scalar of N, per tool and mode, as upstream fills it
 * (docs/wire-protocol.md §7.2, §7.3): written out by hand, not derived. */
struct neg_case {
	const struct pt_tool *tool;
	const char *args[8];
	/* method conn verb tst atomic test_type fmt size iters aes qps duration
	 * rdma_cm write_imm no_enh_reorder sig_offload data_validation */
	int64_t v[PT_NEG_NFIELDS];
};

#define SEND_ PT_NEG_SEND
#define WRITE_ PT_NEG_WRITE
#define READ_ PT_NEG_READ
#define ATOM_ PT_NEG_ATOMIC
static const struct neg_case neg_cases[] = {
	{ &pt_tool_send_bw, { NULL }, { 0, 0, SEND_, 1, 0, 0, 1, 65536, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_send_lat, { NULL }, { 0, 0, SEND_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_bw, { NULL }, { 0, 0, WRITE_, 1, 0, 0, 1, 65536, 5000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_lat, { NULL }, { 0, 0, WRITE_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_read_bw, { NULL }, { 0, 0, READ_, 1, 0, 0, 1, 65536, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_read_lat, { NULL }, { 0, 0, READ_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_atomic_bw, { NULL }, { 0, 0, ATOM_, 1, 1, 0, 1, 8, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_atomic_lat, { NULL }, { 0, 0, ATOM_, 0, 1, 0, 1, 8, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	/* 6.29's opcodes with immediate data: the verb, and the write flag */
	{ &pt_tool_send_bw, { "--send_with_imm" },
	  { 0, 0, PT_NEG_SEND_IMM, 1, 0, 0, 1, 65536, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_send_lat, { "--send_with_imm" },
	  { 0, 0, PT_NEG_SEND_IMM, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_bw, { "--write_with_imm" },
	  { 0, 0, PT_NEG_WRITE_IMM, 1, 0, 0, 1, 65536, 5000, 0, 1, 5, 0, 1, 0, 0, 0 } },
	{ &pt_tool_write_lat, { "--write_with_imm" },
	  { 0, 0, PT_NEG_WRITE_IMM, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 1, 0, 0, 0 } },
	{ &pt_tool_atomic_lat, { "-A", "CMP_AND_SWAP" },
	  { 0, 0, ATOM_, 0, 0, 0, 1, 8, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	/* -a: method 1, the largest size of the sweep */
	{ &pt_tool_write_bw, { "-a" }, { 1, 0, WRITE_, 1, 0, 0, 1, 8388608, 5000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_send_lat, { "-a" }, { 1, 0, SEND_, 0, 0, 0, 1, 8388608, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	/* -D: duration type, iterations 0, the duration given */
	{ &pt_tool_send_bw, { "-D", "10" }, { 0, 0, SEND_, 1, 0, 1, 1, 65536, 0, 0, 1, 10, 0, 0, 0, 0, 0 } },
	{ &pt_tool_read_lat, { "-D", "4" }, { 0, 0, READ_, 0, 0, 1, 1, 2, 0, 0, 1, 4, 0, 0, 0, 0, 0 } },
	/* --run_infinitely alone: method 2, still an iteration run at N */
	{ &pt_tool_read_bw, { "--run_infinitely" },
	  { 2, 0, READ_, 1, 0, 0, 1, 65536, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_bw, { "--run_infinitely" },
	  { 2, 0, WRITE_, 1, 0, 0, 1, 65536, 5000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_bw, { "--run_infinitely", "-D", "3" },
	  { 2, 0, WRITE_, 1, 0, 1, 1, 65536, 0, 0, 1, 3, 0, 0, 0, 0, 0 } },
	/* report format, QP count, size and iterations from the command line */
	{ &pt_tool_send_bw, { "--report_gbits", "-q", "4", "-n", "200", "-s", "1024" },
	  { 0, 0, SEND_, 1, 0, 0, 0, 1024, 200, 0, 4, 5, 0, 0, 0, 0, 0 } },
	/* -b is not negotiated */
	{ &pt_tool_atomic_bw, { "-b" }, { 0, 0, ATOM_, 1, 1, 0, 1, 8, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	/* use_rdma_cm: -z, and -R which implies it */
	{ &pt_tool_send_bw, { "-z" }, { 0, 0, SEND_, 1, 0, 0, 1, 65536, 1000, 0, 1, 5, 1, 0, 0, 0, 0 } },
	{ &pt_tool_read_lat, { "-R" }, { 0, 0, READ_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 1, 0, 0, 0, 0 } },
	/* connection types */
	{ &pt_tool_send_lat, { "-c", "UD" }, { 0, 2, SEND_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
	{ &pt_tool_write_lat, { "-c", "UC" }, { 0, 1, WRITE_, 0, 0, 0, 1, 2, 1000, 0, 1, 5, 0, 0, 0, 0, 0 } },
};

static void every_term_per_tool_and_mode(void **state)
{
	struct pt_negotiate n;
	int bad = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(neg_cases) / sizeof(neg_cases[0]); i++) {
		const struct neg_case *k = &neg_cases[i];

		fill(k->tool, k->args, &n);
		for (int f = 0; f < PT_NEG_NFIELDS; f++) {
			if (n.v[f] == k->v[f])
				continue;
			print_message("%s %s%s: %s = %lld, upstream %lld\n", k->tool->name,
				      k->args[0] ? k->args[0] : "(defaults)",
				      k->args[0] && k->args[1] ? " ..." : "",
				      pt_neg_field_name((enum pt_neg_field)f),
				      (long long)n.v[f], (long long)k->v[f]);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(atomic_type_only_in_atomic_tools),
		cmocka_unit_test(terms_follow_the_command),
		cmocka_unit_test(every_term_per_tool_and_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
