/* SPDX-License-Identifier: BSD-2-Clause */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include "perftest/cli/mgid.h"

static const uint8_t v4mapped_225_1_1_20[16] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 225, 1, 1, 20
};

static void expect_ok(const char *text, const uint8_t want[16])
{
	uint8_t g[16];
	char err[160] = "untouched";

	memset(g, 0xaa, sizeof(g));
	if (pt_mgid_parse(text, g, err, sizeof(err)) != 0)
		fail_msg("'%s' rejected: %s", text, err);
	assert_memory_equal(g, want, 16);
	assert_string_equal(err, "");
}

/* The three accepted forms of 225.1.1.20 give the same 16 bytes. */
static void test_three_forms_agree(void **state)
{
	(void)state;
	expect_ok("225.1.1.20", v4mapped_225_1_1_20);
	expect_ok("0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20", v4mapped_225_1_1_20);
	expect_ok("::ffff:e101:114", v4mapped_225_1_1_20);
	/* and the variants of each */
	expect_ok("::ffff:225.1.1.20", v4mapped_225_1_1_20);
	expect_ok("0:0:0:0:0:0:0:0:0:0:0xff:0xFF:0xe1:1:1:0x14", v4mapped_225_1_1_20);
	expect_ok("0:0:0:0:0:0:0:0:0:0:0xff:0xff:0xe1:0x01:0x01:0x14", v4mapped_225_1_1_20);
	/* eight groups without "::" are IPv6, not upstream's byte form */
	expect_ok("0:0:0:0:0:ffff:e101:114", v4mapped_225_1_1_20);
	expect_ok("0:0:0:0:0:FFFF:E101:0114", v4mapped_225_1_1_20);
}

static void test_other_valid(void **state)
{
	static const uint8_t def[16] = PT_MGID_DEFAULT_INIT;
	static const uint8_t ff0e[16] = { 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					   225, 1, 1, 20 };
	static const uint8_t low[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 224, 0, 0, 0 };
	static const uint8_t high[16] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
					   239, 255, 255, 255 };
	(void)state;
	expect_ok("ff01:0:2:c985::", def);
	expect_ok("255:1:0:0:0:2:201:133:0:0:0:0:0:0:0:0", def);
	expect_ok("ff0e::ffff:e101:114", ff0e);
	expect_ok("ff0e::ffff:225.1.1.20", ff0e);
	expect_ok("224.0.0.0", low);
	expect_ok("239.255.255.255", high);
	expect_ok("0xff:0x0e:0x00:0x00:0x00:0x00:0x00:0x00:0x00:0x00:0xff:0xff:0xe1:0x01:0x01:0x14",
		  ff0e);
}

static const char *const bad_inputs[] = {
	"",
	"225.1.1",
	"225.1.1.256",
	"10.0.0.1",
	"223.255.255.255",
	"240.0.0.1",
	"225.1.1.20.5",
	"225..1.20",
	"225.1.1.",
	".225.1.1.20",
	"225.01.1.20",
	"225.1.1.20x",
	" 225.1.1.20",
	"225.1.1.20 ",
	"225.1.1.20/32",
	"-225.1.1.20",
	"1:2:3",
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20:0",          /* 17 tokens */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20:",           /* 17, last empty */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:",              /* 16, last empty */
	":0:0:0:0:0:0:0:0:0:255:255:225:1:1:20",             /* 16, first empty */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:256",           /* > 255 */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:0x100",         /* > 255 in hex */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:0x",            /* 0x without digits */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:024",           /* ambiguous octal */
	"0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:-1",
	"0:0:0:0:0:0:0:0:0:0:255:255:10:0:0:1",              /* not multicast */
	"0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:1",                   /* ::1 */
	"abc",
	"ff0e::zz",
	"ff0e::ffff:e101:114:1:2:3:4",
	"fe80::1",
	"::ffff:10.0.0.1",
	"::",
	"ff0e:::1",
	"225.1.1.20 junk",
};

static void test_bad_inputs_rejected(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad_inputs) / sizeof(bad_inputs[0]); i++) {
		uint8_t g[16], before[16];
		char err[160] = "";

		memset(g, 0x5a, sizeof(g));
		memcpy(before, g, sizeof(g));
		if (pt_mgid_parse(bad_inputs[i], g, err, sizeof(err)) != -1)
			fail_msg("accepted '%s'", bad_inputs[i]);
		if (err[0] == '\0')
			fail_msg("no message for '%s'", bad_inputs[i]);
		/* a failed parse leaves the caller's MGID alone */
		assert_memory_equal(g, before, 16);
	}
	assert_true(sizeof(bad_inputs) / sizeof(bad_inputs[0]) >= 15);
}

static void test_null_overlong_and_messages(void **state)
{
	uint8_t g[16];
	char err[160];
	char big[201];
	(void)state;

	assert_int_equal(pt_mgid_parse(NULL, g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "empty"));

	memset(big, '1', 200);
	big[200] = '\0';
	assert_int_equal(pt_mgid_parse(big, g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));

	/* 80 characters: one more than the longest valid text */
	memset(big, '1', 80);
	big[80] = '\0';
	assert_int_equal(pt_mgid_parse(big, g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));

	assert_int_equal(pt_mgid_parse("1:2:3", g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "expected 16"));
	assert_int_equal(pt_mgid_parse("0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:0", g, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, "more than 16"));
	assert_int_equal(pt_mgid_parse("225.1.1.256", g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "greater than 255"));
	assert_int_equal(pt_mgid_parse("10.0.0.1", g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not an IPv4 multicast"));
	assert_int_equal(pt_mgid_parse("fe80::1", g, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a multicast"));
	/* no error buffer is fine */
	assert_int_equal(pt_mgid_parse("abc", g, NULL, 0), -1);
	/* a tiny buffer is truncated, not overrun */
	char tiny[4] = "zzz";
	assert_int_equal(pt_mgid_parse("abc", g, tiny, 2), -1);
	assert_int_equal(tiny[1], '\0');
	assert_int_equal(tiny[2], 'z');
}

static void test_format(void **state)
{
	static const uint8_t def[16] = PT_MGID_DEFAULT_INIT;
	char buf[PT_MGID_STRLEN];
	(void)state;

	assert_int_equal(pt_mgid_format(v4mapped_225_1_1_20, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "::ffff:225.1.1.20");
	assert_int_equal(pt_mgid_format(def, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "ff01:0:2:c985::");
	assert_int_equal(pt_mgid_format(def, buf, 10), -1);
}

static void test_ipv4_group(void **state)
{
	static const uint8_t def[16] = PT_MGID_DEFAULT_INIT;
	uint8_t g[16];
	struct in_addr a = { 0 };
	char txt[INET_ADDRSTRLEN];
	(void)state;

	assert_true(pt_mgid_ipv4(v4mapped_225_1_1_20, &a));
	assert_string_equal(inet_ntop(AF_INET, &a, txt, sizeof(txt)), "225.1.1.20");

	assert_int_equal(pt_mgid_parse("ff0e::ffff:239.1.2.3", g, NULL, 0), 0);
	a.s_addr = 0;
	assert_true(pt_mgid_ipv4(g, &a));
	assert_string_equal(inet_ntop(AF_INET, &a, txt, sizeof(txt)), "239.1.2.3");

	assert_false(pt_mgid_ipv4(def, &a));
	assert_int_equal(pt_mgid_parse("ff12:401b:ffff::e101:114", g, NULL, 0), 0);
	assert_false(pt_mgid_ipv4(g, NULL));
	assert_true(pt_mgid_ipv4(v4mapped_225_1_1_20, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_three_forms_agree),
		cmocka_unit_test(test_other_valid),
		cmocka_unit_test(test_bad_inputs_rejected),
		cmocka_unit_test(test_null_overlong_and_messages),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_ipv4_group),
	};
	return cmocka_run_group_tests_name("mgid", tests, NULL, NULL);
}
