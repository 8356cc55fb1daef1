/* SPDX-License-Identifier: BSD-2-Clause */
/* NUMA placement's plan (perftest/engine/placement.h): which node from the
 * options and the NIC's node, the refusals, the header's words. The plan
 * touches nothing; the lab (test_89_placement.py) checks the applied one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/cli/options.h"
#include "perftest/engine/placement.h"

static const struct pt_params *parse(const char *a1, const char *a2)
{
	static struct pt_params p;
	char *argv[4] = { (char *)"ib_send_bw" };
	int argc = 1;
	FILE *devnull = fopen("/dev/null", "w");

	assert_non_null(devnull);
	if (a1)
		argv[argc++] = (char *)a1;
	if (a2)
		argv[argc++] = (char *)a2;
	assert_int_equal(pt_parse_args_io(&pt_tool_send_bw, argc, argv, &p, devnull, devnull), 0);
	fclose(devnull);
	return &p;
}

static void default_follows_the_nic(void **state)
{
	struct pt_place pl;
	char why[160] = "", buf[48];

	(void)state;
	assert_int_equal(pt_place_plan(parse(NULL, NULL), 1, 1, &pl, why, sizeof(why)), 0);
	assert_int_equal(pl.node, 1);
	assert_int_equal(pl.nic_node, 1);
	assert_int_equal(pl.source, PT_PLACE_NIC);
	assert_string_equal(pt_place_node_str(&pl, buf, sizeof(buf)), "1 (NIC)");
	assert_string_equal(pt_place_source_name(pl.source), "NIC");
	/* the NIC's node unknown (a one-node host says -1): nothing placed */
	assert_int_equal(pt_place_plan(parse(NULL, NULL), -1, 0, &pl, why, sizeof(why)), 0);
	assert_int_equal(pl.node, -1);
	assert_int_equal(pl.source, PT_PLACE_NONE);
	assert_string_equal(pt_place_node_str(&pl, buf, sizeof(buf)), "unknown");
	/* no NUMA support at all: nothing either */
	assert_int_equal(pt_place_plan(parse(NULL, NULL), 0, -1, &pl, why, sizeof(why)), 0);
	assert_int_equal(pl.node, -1);
}

static void option_overrides_and_is_checked(void **state)
{
	struct pt_place pl;
	char why[160] = "", buf[48];

	(void)state;
	assert_int_equal(pt_place_plan(parse("--numa_node", "0"), 1, 1, &pl, why, sizeof(why)), 0);
	assert_int_equal(pl.node, 0);
	assert_int_equal(pl.source, PT_PLACE_OPTION);
	assert_string_equal(pt_place_node_str(&pl, buf, sizeof(buf)), "0 (--numa_node)");
	assert_int_equal(pt_place_plan(parse("--numa_node", "2"), 1, 1, &pl, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "--numa_node 2: this host has NUMA nodes 0..1"));
	assert_int_equal(pt_place_plan(parse("--numa_node", "0"), -1, -1, &pl, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no NUMA support"));
}

static void disable_turns_the_default_off(void **state)
{
	struct pt_place pl;
	char why[160] = "", buf[48];

	(void)state;
	assert_int_equal(pt_place_plan(parse("--disable_numa", NULL), 1, 1, &pl, why, sizeof(why)), 0);
	assert_int_equal(pl.node, -1);
	assert_int_equal(pl.nic_node, 1);
	assert_int_equal(pl.source, PT_PLACE_DISABLED);
	assert_string_equal(pt_place_node_str(&pl, buf, sizeof(buf)), "OFF (--disable_numa)");
	assert_string_equal(pt_place_source_name(pl.source), "disable_numa");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_follows_the_nic),
		cmocka_unit_test(option_overrides_and_is_checked),
		cmocka_unit_test(disable_turns_the_default_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
