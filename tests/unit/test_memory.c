/* SPDX-License-Identifier: BSD-2-Clause */
/* Issue 18, memory group (perftest/engine/memory.h): the payload file's
 * parser, data validation's pattern, extent and check, the ODP capability
 * check over a fake device's caps, MR access flags and the per-QP layout. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/engine/memory.h"

static int parse_text(const char *text, uint8_t **out, size_t *len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int rc;

	assert_non_null(f);
	rc = pt_payload_parse(f, "test.txt", out, len);
	fclose(f);
	return rc;
}

static void test_payload_parse(void **state)
{
	uint8_t *pat = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(parse_text("0x11223344, 0xaabbccdd,\n0x1\n", &pat, &len), 0);
	assert_int_equal(len, 12);
	/* little endian: the word's low byte first */
	const uint8_t want[12] = { 0x44, 0x33, 0x22, 0x11, 0xdd, 0xcc, 0xbb, 0xaa, 1, 0, 0, 0 };
	assert_memory_equal(pat, want, 12);
	free(pat);
	/* every bad input fails with nothing kept */
	const char *bad[] = { "", " ,\n", "0x123456789", "12345678", "0x12zz", "0x", "0x1,,0xg" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_text(bad[i], &pat, &len), -1);
		assert_null(pat);
		assert_int_equal(len, 0);
	}
}

static void test_pattern_and_extent(void **state)
{
	const uint8_t pat[4] = { 1, 2, 3, 4 };
	struct pt_extent e;
	unsigned zeros = 0;

	(void)state;
	assert_int_equal(pt_pattern_byte(pat, 4, 3, 9), 2);
	/* its own pattern differs between QPs and is rarely zero */
	assert_int_not_equal(pt_pattern_byte(NULL, 0, 0, 100), pt_pattern_byte(NULL, 0, 1, 100));
	for (size_t o = 0; o < 4096; o++)
		zeros += !pt_pattern_byte(NULL, 0, 0, o);
	assert_true(zeros < 40);
	/* big messages: one slot; small: cache-line steps through a page */
	e = pt_written_extent(65536, 4096, 64, 1000);
	assert_int_equal(e.slots, 1);
	assert_int_equal(e.size, 65536);
	e = pt_written_extent(100, 4096, 64, 1000);
	assert_int_equal(e.step, 128);
	assert_int_equal(e.slots, 32);
	e = pt_written_extent(100, 4096, 64, 5);
	assert_int_equal(e.slots, 5);
	e = pt_written_extent(100, 4096, 64, 0);   /* duration: the whole cycle */
	assert_int_equal(e.slots, 32);
}

static void test_dv_check(void **state)
{
	struct pt_extent e = pt_written_extent(100, 4096, 64, 1000);
	uint8_t *buf = calloc(1, 8192);
	char *text = NULL;
	size_t tlen = 0;
	FILE *dbg;

	(void)state;
	assert_non_null(buf);
	/* zeros where data should be: almost every byte differs */
	assert_true(pt_dv_check(buf, NULL, 0, 1, e, NULL) > 3000);
	for (size_t o = 0; o < 8192; o++)
		buf[o] = pt_pattern_byte(NULL, 0, 1, o);
	assert_int_equal(pt_dv_check(buf, NULL, 0, 1, e, NULL), 0);
	/* QP 0's data in QP 1's region shows */
	assert_true(pt_dv_check(buf, NULL, 0, 0, e, NULL) > 0);
	/* bytes in the gaps between slots are not checked */
	buf[100] ^= 0xff;
	assert_int_equal(pt_dv_check(buf, NULL, 0, 1, e, NULL), 0);
	buf[5] ^= 0xff;
	buf[130] ^= 0x01;
	buf[4095] ^= 0x80;   /* past the last slot (31 * 128 + 100) */
	dbg = open_memstream(&text, &tlen);
	assert_int_equal(pt_dv_check(buf, NULL, 0, 1, e, dbg), 2);
	fclose(dbg);
	assert_non_null(strstr(text, "QP 1 offset 5: expected"));
	assert_non_null(strstr(text, "QP 1 offset 130:"));
	free(text);
	free(buf);
}

static void test_odp_check(void **state)
{
	struct ibv_odp_caps caps = { 0 };
	struct pt_params p;
	char why[200];

	(void)state;
	pt_params_defaults(&pt_tool_write_bw, &p);
	/* rxe on 6.1: no ODP at all */
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "IBV_ODP_SUPPORT"));
	/* a device with RC WRITE ODP accepts write_bw */
	caps.general_caps = IBV_ODP_SUPPORT;
	caps.per_transport_caps.rc_odp_caps = IBV_ODP_SUPPORT_WRITE;
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), 0);
	/* but not read_bw, nor write_bw on UC */
	pt_params_defaults(&pt_tool_read_bw, &p);
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "RC READ"));
	pt_params_defaults(&pt_tool_write_bw, &p);
	p.conn.type = PT_CONN_UC;
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), -1);
	/* SEND needs both directions */
	pt_params_defaults(&pt_tool_send_bw, &p);
	p.conn.type = PT_CONN_UD;
	caps.per_transport_caps.ud_odp_caps = IBV_ODP_SUPPORT_SEND;
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), -1);
	caps.per_transport_caps.ud_odp_caps |= IBV_ODP_SUPPORT_RECV;
	assert_int_equal(pt_odp_check(&caps, &p, why, sizeof(why)), 0);
	/* the accepted path registers ODP MRs */
	assert_false(pt_mem_access(&p) & IBV_ACCESS_ON_DEMAND);
	p.mem.odp = true;
	assert_true(pt_mem_access(&p) & IBV_ACCESS_ON_DEMAND);
}

static void test_layout(void **state)
{
	uint8_t buf[8];
	struct pt_res r = { .buf = buf, .region = 1, .num_qps = 4 };
	uint8_t *s, *v;

	(void)state;
	pt_mem_layout(&r, false, 1, &s, &v);
	assert_ptr_equal(s, buf + 1);
	assert_ptr_equal(v, buf + 5);
	/* --mr_per_qp: a QP's two regions side by side, under its own MR */
	pt_mem_layout(&r, true, 1, &s, &v);
	assert_ptr_equal(s, buf + 2);
	assert_ptr_equal(v, buf + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payload_parse),
		cmocka_unit_test(test_pattern_and_extent),
		cmocka_unit_test(test_dv_check),
		cmocka_unit_test(test_odp_check),
		cmocka_unit_test(test_layout),
	};
	return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
