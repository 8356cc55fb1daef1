/* SPDX-License-Identifier: BSD-2-Clause */
/* The 6.28+ parameter negotiation block (docs/wire-protocol.md §7): byte layout
 * of both sizes, strict parsing, and the mismatch report. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/wire/negotiate.h"
#include "perftest/wire/wire.h"

static struct pt_negotiate sample(void)
{
	struct pt_negotiate n;

	memset(&n, 0, sizeof(n));
	n.v[PT_NEG_TEST_METHOD] = PT_NEG_RUN_ALL;
	n.v[PT_NEG_CONNECTION] = PT_NEG_UD;
	n.v[PT_NEG_VERB] = PT_NEG_SEND;
	n.v[PT_NEG_TST] = PT_NEG_BW;
	n.v[PT_NEG_ATOMIC_TYPE] = PT_NEG_FETCH_AND_ADD;
	n.v[PT_NEG_REPORT_FMT] = PT_NEG_MBS;
	n.v[PT_NEG_SIZE_F] = 8388608;
	n.v[PT_NEG_ITERS] = 0x100000001ll;
	n.v[PT_NEG_NUM_QPS] = 4;
	n.v[PT_NEG_DURATION_S] = 5;
	n.v[PT_NEG_USE_RDMA_CM] = 1;
	for (int i = 0; i < PT_NEG_DEV_ATTR_LEN; i++)
		n.dev_attr[i] = (uint8_t)i;
	n.mlx5dv_mask = 0x0102030405060708ull;
	return n;
}

static void test_layout(void **state)
{
	struct pt_negotiate n = sample(), back;
	uint8_t b[PT_NEG_SIZE_MLX5DV];

	(void)state;
	assert_int_equal(pt_neg_encode(&n, PT_NEG_SIZE_MLX5DV, b), 320);
	assert_memory_equal(b, "\0\0\0\1" "\0\0\0\2" "\0\0\0\0" "\0\0\0\1" "\0\0\0\1", 20);
	assert_memory_equal(b + 20, "\0\0\0\0" "\0\0\0\1" "\0\0\0\0", 12); /* test_type, fmt, pad */
	assert_memory_equal(b + 32, "\0\0\0\0\0\x80\0\0", 8);              /* size */
	assert_memory_equal(b + 40, "\0\0\0\1\0\0\0\1", 8);                /* iters */
	assert_memory_equal(b + 52, "\0\0\0\4" "\0\0\0\5" "\0\0\0\1", 12);  /* qps, duration, cm */
	assert_int_equal(b[80], 0);
	assert_int_equal(b[80 + 231], 231);                                /* attrs as they are */
	assert_memory_equal(b + 312, "\1\2\3\4\5\6\7\x08", 8);             /* mlx5dv mask, BE */
	assert_int_equal(pt_neg_parse(b, 320, &back), 0);
	assert_memory_equal(&back, &n, sizeof(n));

	assert_int_equal(pt_neg_encode(&n, PT_NEG_SIZE, b), 312);
	assert_int_equal(pt_neg_parse(b, 312, &back), 0);
	assert_int_equal(back.mlx5dv_mask, 0);
	assert_true(back.v[PT_NEG_ITERS] == n.v[PT_NEG_ITERS]);
	assert_int_equal(pt_neg_encode(&n, 316, b), -1);
	n.v[PT_NEG_VERB] = 6;                                               /* no such verb */
	assert_int_equal(pt_neg_encode(&n, PT_NEG_SIZE, b), -1);
}

static void test_parse_rejects(void **state)
{
	struct pt_negotiate n = sample(), back;
	uint8_t good[PT_NEG_SIZE_MLX5DV], b[PT_NEG_SIZE_MLX5DV];
	/* first byte of: connection 7, verb 6, size < 0, iters < 0, num_of_qps < 0, rdma_cm 2 */
	static const struct { size_t off; uint8_t v; } bad[] = {
		{ 7, 7 }, { 11, 6 }, { 32, 0x80 }, { 40, 0xff }, { 52, 0x80 }, { 63, 2 },
	};

	(void)state;
	assert_int_equal(pt_neg_encode(&n, sizeof(good), good), 320);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(b, good, sizeof(b));
		b[bad[i].off] = bad[i].v;
		assert_int_equal(pt_neg_parse(b, sizeof(b), &back), -1);
		assert_int_equal(back.v[PT_NEG_NUM_QPS], 0);
	}
	assert_int_equal(pt_neg_parse(good, 311, &back), -1);
	assert_int_equal(pt_neg_parse(good, 319, &back), -1);
	assert_int_equal(pt_neg_parse(NULL, 312, &back), -1);
}

/* Offset 76 of a 6.28 block is padding: dropped, it neither fails the parse
 * nor differs in the comparison; from a 6.29 peer the same bytes are refused. */
static void test_628_padding_dropped(void **state)
{
	struct pt_negotiate n = sample(), back;
	uint8_t b[PT_NEG_SIZE_MLX5DV];

	(void)state;
	assert_int_equal(pt_neg_encode(&n, sizeof(b), b), (int)sizeof(b));
	memcpy(b + 76, "\xde\xad\xbe\xef", 4);
	assert_int_equal(pt_neg_parse(b, sizeof(b), &back), -1);
	pt_neg_drop_629_fields(b, sizeof(b));
	assert_int_equal(pt_neg_parse(b, sizeof(b), &back), 0);
	assert_int_equal(pt_neg_compare(&n, &back, NULL, 0), 0);
	/* only those four bytes: the fields around them are intact */
	assert_true(back.v[PT_NEG_SIG_OFFLOAD] == n.v[PT_NEG_SIG_OFFLOAD]);
	assert_memory_equal(back.dev_attr, n.dev_attr, PT_NEG_DEV_ATTR_LEN);
	b[75] = 1; /* sig_offload's last byte: still read */
	pt_neg_drop_629_fields(b, sizeof(b));
	assert_int_equal(pt_neg_parse(b, sizeof(b), &back), 0);
	assert_true(back.v[PT_NEG_SIG_OFFLOAD] == 1);
}

static void test_compare(void **state)
{
	struct pt_negotiate a = sample(), b = sample();
	char why[256];

	(void)state;
	assert_int_equal(pt_neg_compare(&a, &b, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	/* device attributes and the mlx5dv mask are information, not terms */
	b.dev_attr[7] ^= 1;
	b.mlx5dv_mask = 0;
	assert_int_equal(pt_neg_compare(&a, &b, why, sizeof(why)), 0);
	b.v[PT_NEG_CONNECTION] = PT_NEG_RC;
	b.v[PT_NEG_SIZE_F] = 1024;
	assert_int_equal(pt_neg_compare(&a, &b, why, sizeof(why)), 2);
	assert_string_equal(why, "connection_type mismatch: local=UD, remote=RC; "
			    "size mismatch: local=8388608, remote=1024");
	/* a tiny buffer is never overrun */
	assert_int_equal(pt_neg_compare(&a, &b, why, 10), 2);
	assert_int_equal(strlen(why), 9);
	assert_string_equal(pt_neg_field_name(PT_NEG_DURATION_S), "duration");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_parse_rejects),
		cmocka_unit_test(test_628_padding_dropped),
		cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
