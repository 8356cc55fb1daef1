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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(atomic_type_only_in_atomic_tools),
		cmocka_unit_test(terms_follow_the_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
