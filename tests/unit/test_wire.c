/* SPDX-License-Identifier: BSD-2-Clause */
/* Pure OOB codecs: key messages, versions/peer rules, MTU, sys data and
 * BW report byte order (docs/wire-protocol.md §2-5, §8). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>
#include "perftest/wire/wire.h"

static const char key_txt[] =
	"1234:0010:abcdef:123456:deadbeef:00007f1234567890:00000000";
static const char key_gid_txt[] =
	"0000:0001:000abc:fedcba:00c0ffee:0000ffff00001000:"
	"00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:01:0a:00000000:";

static struct pt_key sample_key(void)
{
	struct pt_key k = {
		.lid = 0x1234, .out_reads = 0x10, .qpn = 0xabcdef,
		.psn = 0x123456, .rkey = 0xdeadbeef,
		.vaddr = 0x00007f1234567890ull, .srqn = 0,
	};
	return k;
}

static struct pt_key sample_gid_key(void)
{
	struct pt_key k = {
		.lid = 0, .out_reads = 1, .qpn = 0xabc, .psn = 0xfedcba,
		.rkey = 0xc0ffee, .vaddr = 0xffff00001000ull, .srqn = 0,
		.gid = { [10] = 0xff, [11] = 0xff, [12] = 192, [13] = 168,
			 [14] = 1, [15] = 10 },
	};
	return k;
}

static void assert_key_equal(const struct pt_key *a, const struct pt_key *b)
{
	assert_int_equal(a->lid, b->lid);
	assert_int_equal(a->out_reads, b->out_reads);
	assert_int_equal(a->qpn, b->qpn);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->rkey, b->rkey);
	assert_true(a->vaddr == b->vaddr);
	assert_memory_equal(a->gid, b->gid, 16);
	assert_int_equal(a->srqn, b->srqn);
}

static void test_key_plain_roundtrip(void **state)
{
	(void)state;
	struct pt_key k = sample_key(), got;
	char buf[PT_KEY_MSG_MAX];

	memset(buf, 'Z', sizeof(buf));
	assert_int_equal(pt_key_msg_size(0), 59);
	assert_int_equal(pt_key_encode(&k, 0, buf, sizeof(buf)), 59);
	assert_int_equal(sizeof(key_txt), 59);
	assert_memory_equal(buf, key_txt, 59); /* incl. the NUL */
	assert_int_equal(pt_key_parse(buf, 59, 0, &got), 0);
	k.srqn = 0x89abcdef;
	k.vaddr = ~0ull;
	assert_int_equal(pt_key_encode(&k, 0, buf, sizeof(buf)), 59);
	assert_int_equal(pt_key_parse(buf, 59, 0, &got), 0);
	assert_key_equal(&k, &got);
	/* Too small a buffer, too wide a QPN or PSN. */
	assert_int_equal(pt_key_encode(&k, 0, buf, 58), -1);
	k.qpn = 0x1000000;
	assert_int_equal(pt_key_encode(&k, 0, buf, sizeof(buf)), -1);
	k.qpn = 1;
	k.psn = 0x1000000;
	assert_int_equal(pt_key_encode(&k, 0, buf, sizeof(buf)), -1);
}

static void test_key_gid_roundtrip(void **state)
{
	(void)state;
	struct pt_key k = sample_gid_key(), got;
	char buf[PT_KEY_MSG_MAX];

	assert_int_equal(pt_key_msg_size(1), 108);
	assert_int_equal(sizeof(key_gid_txt), 108);
	assert_int_equal(pt_key_encode(&k, 1, buf, sizeof(buf)), 108);
	assert_memory_equal(buf, key_gid_txt, 108);
	assert_int_equal(buf[106], ':');
	assert_int_equal(buf[107], '\0');
	assert_int_equal(pt_key_parse(buf, 108, 1, &got), 0);
	assert_key_equal(&k, &got);
	for (int i = 0; i < 16; i++)
		k.gid[i] = (uint8_t)(0xf0 + i);
	k.srqn = 0xffffffff;
	k.lid = 0xffff;
	assert_int_equal(pt_key_encode(&k, 1, buf, sizeof(buf)), 108);
	assert_int_equal(pt_key_parse(buf, 108, 1, &got), 0);
	assert_key_equal(&k, &got);
	assert_int_equal(pt_key_encode(&k, 1, buf, 107), -1);
}

/* 6.29 with --data_validation (docs/wire-protocol.md §5.2): the tail-markers
 * address after vaddr makes 76 and 125 bytes; the forms do not mix. */
static void test_key_dv_forms(void **state)
{
	static const char dv_txt[] =
		"1234:0010:abcdef:123456:deadbeef:00007f1234567890:00007f12345a0000:00000000";
	static const char dv_gid_txt[] =
		"0000:0001:000abc:fedcba:00c0ffee:0000ffff00001000:0000ffff00ff0040:"
		"00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:01:0a:00000000:";
	struct pt_key k = sample_key(), g = sample_gid_key(), got;
	char buf[PT_KEY_MSG_MAX];
	(void)state;

	assert_int_equal(pt_key_msg_size_dv(0, 1), 76);
	assert_int_equal(pt_key_msg_size_dv(1, 1), 125);
	assert_int_equal(pt_key_msg_size_dv(0, 0), 59);
	assert_int_equal(pt_key_msg_size_dv(1, 0), 108);
	assert_int_equal(sizeof(dv_txt), 76);
	assert_int_equal(sizeof(dv_gid_txt), 125);
	k.tail_vaddr = 0x00007f12345a0000ull;
	assert_int_equal(pt_key_encode_dv(&k, 0, 1, buf, sizeof(buf)), 76);
	assert_memory_equal(buf, dv_txt, 76);
	assert_int_equal(pt_key_parse_dv(buf, 76, 0, 1, &got), 0);
	assert_key_equal(&k, &got);
	assert_true(got.tail_vaddr == k.tail_vaddr);
	g.tail_vaddr = 0x0000ffff00ff0040ull;
	assert_int_equal(pt_key_encode_dv(&g, 1, 1, buf, sizeof(buf)), 125);
	assert_memory_equal(buf, dv_gid_txt, 125);
	assert_int_equal(pt_key_parse_dv(buf, 125, 1, 1, &got), 0);
	assert_key_equal(&g, &got);
	assert_true(got.tail_vaddr == g.tail_vaddr);
	/* without dv the old forms, tail_vaddr not carried */
	assert_int_equal(pt_key_encode_dv(&k, 0, 0, buf, sizeof(buf)), 59);
	assert_int_equal(pt_key_parse_dv(buf, 59, 0, 0, &got), 0);
	assert_true(got.tail_vaddr == 0);
	/* a form parsed as the other, and short buffers, are refused */
	assert_int_equal(pt_key_parse_dv(dv_txt, 76, 0, 0, &got), -1);
	assert_int_equal(pt_key_parse_dv(dv_txt, 76, 1, 1, &got), -1);
	assert_int_equal(pt_key_parse_dv(dv_gid_txt, 125, 0, 1, &got), -1);
	memcpy(buf, dv_txt, 76);
	buf[50] = ';';   /* not a hex digit: tail_vaddr's first */
	assert_int_equal(pt_key_parse_dv(buf, 76, 0, 1, &got), -1);
	assert_int_equal(got.qpn, 0);   /* left zeroed */
	assert_int_equal(pt_key_encode_dv(&k, 0, 1, buf, 75), -1);
	assert_int_equal(pt_key_encode_dv(&g, 1, 1, buf, 124), -1);
}

/* Which peers get 6.29's --data_validation keys: a 6.29+ peer, or any
 * when we play 6.29 (the rule of the raw layout). */
static void test_peer_rules_key_dv(void **state)
{
	static const struct { const char *peer, *ours; int dv; } t[] = {
		{ "6.06", "6.06", 0 }, { "6.28", "6.06", 0 }, { "6.29", "6.06", 1 },
		{ "7.1", "6.06", 1 }, { "6.06", "6.29", 1 }, { NULL, "6.06", 0 },
	};
	struct pt_peer_rules r;
	(void)state;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(pt_peer_rules_init(&r, t[i].peer, t[i].ours), 0);
		assert_int_equal(r.key_dv_629, t[i].dv);
	}
}

static void test_key_uppercase_accepted(void **state)
{
	(void)state;
	char buf[59];
	struct pt_key got;

	memcpy(buf, key_txt, 59);
	for (int i = 0; i < 58; i++)
		if (buf[i] >= 'a' && buf[i] <= 'f')
			buf[i] = (char)(buf[i] - 'a' + 'A');
	assert_int_equal(pt_key_parse(buf, 59, 0, &got), 0);
	assert_int_equal(got.rkey, 0xdeadbeef);
}

/* Parse must fail and leave the key zeroed. */
static void expect_reject(const void *buf, size_t len, int gid)
{
	struct pt_key got, zero;

	memset(&zero, 0, sizeof(zero));
	memset(&got, 0xa5, sizeof(got));
	assert_int_equal(pt_key_parse(buf, len, gid, &got), -1);
	assert_memory_equal(&got, &zero, sizeof(got));
}

static void test_key_corrupt_rejected(void **state)
{
	(void)state;
	char b[PT_KEY_MSG_MAX + 8];

	/* Empty, NULL, truncated, and the other form's size. */
	expect_reject("", 0, 0);
	expect_reject(NULL, 59, 0);
	expect_reject(key_txt, 58, 0);
	expect_reject(key_gid_txt, 107, 1);
	expect_reject(key_txt, 59, 1);
	expect_reject(key_gid_txt, 108, 0);
	/* Missing ':' (same length). */
	memcpy(b, key_txt, 59);
	b[4] = '0';
	expect_reject(b, 59, 0);
	memcpy(b, key_gid_txt, 108);
	b[106] = '0'; /* the trailing ':' of the GID form */
	expect_reject(b, 108, 1);
	memcpy(b, key_gid_txt, 108);
	b[52] = '-';
	expect_reject(b, 108, 1);
	/* Non-hex characters, signs, spaces, "0x". */
	const char *bad[] = { "g", " ", "+", "-", "x" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(b, key_txt, 59);
		b[10] = bad[i][0];
		expect_reject(b, 59, 0);
	}
	memcpy(b, key_txt, 59);
	memcpy(b + 33, "0x", 2);
	expect_reject(b, 59, 0);
	/* No NUL at the end; a NUL in the middle. */
	memcpy(b, key_txt, 59);
	b[58] = '0';
	expect_reject(b, 59, 0);
	memcpy(b, key_gid_txt, 108);
	b[107] = ':';
	expect_reject(b, 108, 1);
	memcpy(b, key_txt, 59);
	b[20] = '\0';
	expect_reject(b, 59, 0);
	/* Overlong field: widths 5 and 3 instead of 4 and 4. */
	memcpy(b, key_txt, 59);
	memcpy(b, "12340:010", 9);
	expect_reject(b, 59, 0);
	/* All 0xff bytes, and all zero bytes. */
	memset(b, 0xff, sizeof(b));
	expect_reject(b, 59, 0);
	expect_reject(b, 108, 1);
	memset(b, 0, sizeof(b));
	expect_reject(b, 59, 0);
	expect_reject(b, 108, 1);
	/* Right length but all colons / all digits. */
	memset(b, ':', 107);
	b[107] = '\0';
	expect_reject(b, 108, 1);
	memset(b, '0', 58);
	b[58] = '\0';
	expect_reject(b, 59, 0);
}

/* Every single-byte change to a valid message either keeps it valid (a
 * hex digit for a hex digit) or is rejected; nothing reads out of bounds. */
static void test_key_mutations(void **state)
{
	(void)state;
	const char *src[2] = { key_txt, key_gid_txt };

	for (int g = 0; g < 2; g++) {
		size_t n = pt_key_msg_size(g);
		char *b = malloc(n); /* exact size so ASan sees overruns */

		assert_non_null(b);
		for (size_t pos = 0; pos < n; pos++) {
			for (int v = 0; v < 256; v++) {
				struct pt_key k;
				int ok, hexpos;

				memcpy(b, src[g], n);
				hexpos = src[g][pos] != ':' && src[g][pos];
				b[pos] = (char)v;
				ok = pt_key_parse(b, n, g, &k) == 0;
				if (hexpos && strchr("0123456789abcdefABCDEF",
						     v) && v)
					assert_true(ok);
				else if ((char)v != src[g][pos])
					assert_false(ok);
			}
		}
		free(b);
	}
	/* Random garbage of random lengths never parses. */
	srand(1);
	for (int i = 0; i < 20000; i++) {
		size_t n = (size_t)(rand() % 130);
		unsigned char *b = malloc(n ? n : 1);
		struct pt_key k;

		assert_non_null(b);
		for (size_t j = 0; j < n; j++)
			b[j] = (unsigned char)rand();
		assert_int_equal(pt_key_parse(b, n, i & 1, &k), -1);
		free(b);
	}
}

/* -z/-R raw keys: the exact byte layout of both struct generations (docs/wire-protocol.md
 * §9.2), round trips, and what a strict parser refuses. */
static void test_key_raw_layouts(void **state)
{
	struct pt_key k = sample_gid_key(), back;
	uint8_t b[PT_CM_KEY_MAX + 8];
	static const uint8_t head[24] = {
		0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x0a, 0xbc, 0, 0xfe, 0xdc, 0xba,
		0, 0xc0, 0xff, 0xee, 0, 0, 0, 0,
	};

	(void)state;
	k.srqn = 0x01020304;
	k.gid_index = 3;
	assert_int_equal(pt_key_raw_encode(&k, PT_CM_KEY_SIZE, b), 56);
	assert_memory_equal(b, head, sizeof(head));
	assert_memory_equal(b + 24, "\0\0\xff\xff\0\0\x10\0", 8);   /* vaddr BE */
	assert_memory_equal(b + 32, k.gid, 16);
	assert_memory_equal(b + 48, "\x01\x02\x03\x04\0\0\0\x03", 8); /* srqn, gid_index */
	assert_int_equal(pt_key_raw_parse(b, 56, PT_CM_KEY_SIZE, &back), 0);
	assert_key_equal(&k, &back);
	assert_int_equal(back.gid_index, 3);

	k.gid_index = -1;
	assert_int_equal(pt_key_raw_encode(&k, PT_CM_KEY_SIZE_629, b), 64);
	assert_memory_equal(b, head, sizeof(head));
	assert_memory_equal(b + 32, "\0\0\0\0\0\0\0\0", 8);          /* tail markers */
	assert_memory_equal(b + 40, k.gid, 16);
	assert_memory_equal(b + 56, "\x01\x02\x03\x04\xff\xff\xff\xff", 8);
	assert_int_equal(pt_key_raw_parse(b, 64, PT_CM_KEY_SIZE_629, &back), 0);
	assert_key_equal(&k, &back);
	assert_int_equal(back.gid_index, -1);
	/* a 64-byte key read as the old layout is refused by length */
	assert_int_equal(pt_key_raw_parse(b, 64, PT_CM_KEY_SIZE, &back), -1);
	assert_int_equal(pt_key_raw_parse(b, 56, PT_CM_KEY_SIZE_629, &back), -1);
	assert_int_equal(pt_key_raw_encode(&k, 60, b), -1);
	k.qpn = 0x1000000;
	assert_int_equal(pt_key_raw_encode(&k, PT_CM_KEY_SIZE, b), -1);
}

static void test_key_raw_rejects(void **state)
{
	struct pt_key k = sample_key(), back;
	uint8_t good[PT_CM_KEY_SIZE], b[PT_CM_KEY_SIZE];
	/* byte offsets of a field's top byte that push it past its width */
	static const size_t over[] = { 1, 5, 8, 12 };  /* lid, out_reads, qpn, psn */

	(void)state;
	assert_int_equal(pt_key_raw_encode(&k, PT_CM_KEY_SIZE, good), 56);
	for (size_t i = 0; i < sizeof(over) / sizeof(over[0]); i++) {
		memcpy(b, good, sizeof(b));
		b[over[i]] = 0x01;
		assert_int_equal(pt_key_raw_parse(b, sizeof(b), PT_CM_KEY_SIZE, &back), -1);
		assert_int_equal(back.qpn, 0);
	}
	assert_int_equal(pt_key_raw_parse(good, 55, PT_CM_KEY_SIZE, &back), -1);
	assert_int_equal(pt_key_raw_parse(NULL, 56, PT_CM_KEY_SIZE, &back), -1);
}

static void test_peer_rules_cm_key_size(void **state)
{
	static const struct { const char *v; size_t size; } t[] = {
		{ "5.70", 56 }, { "6.06", 56 }, { "6.27", 56 }, { "6.29", 64 }, { "7.0", 64 },
	};
	struct pt_peer_rules r;

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(pt_peer_rules_init(&r, t[i].v, "6.06"), 0);
		assert_int_equal(r.cm_key_size, t[i].size);
	}
	assert_int_equal(pt_peer_rules_init(&r, NULL, "6.06"), 0);
	assert_int_equal(r.cm_key_size, 56);
	/* announcing 6.29 (a test playing a 6.29 build) takes its layout */
	assert_int_equal(pt_peer_rules_init(&r, "6.06", "6.29"), 0);
	assert_int_equal(r.cm_key_size, 64);
	assert_int_equal(pt_peer_rules_init(&r, NULL, "6.29"), 0);
	assert_int_equal(r.cm_key_size, 64);
}

static void test_version_codec(void **state)
{
	(void)state;
	uint8_t raw[PT_VERSION_LEN];
	char s[PT_VERSION_LEN + 1];
	static const uint8_t want[16] = { '6', '.', '0', '6' };

	pt_version_encode("6.06", raw);
	assert_memory_equal(raw, want, 16);
	pt_version_encode("0123456789abcdefXYZ", raw); /* strncpy: no NUL */
	assert_memory_equal(raw, "0123456789abcdef", 16);
	pt_version_decode(raw, s);
	assert_string_equal(s, "0123456789abcdef");
	pt_version_encode(NULL, raw);
	assert_memory_equal(raw, (uint8_t[16]){ 0 }, 16);

	char out[8];
	pt_str_printable("a\x01\xff" "b", out, sizeof(out));
	assert_string_equal(out, "a??b");
	pt_str_printable("abcdefghij", out, sizeof(out));
	assert_string_equal(out, "abcdefg");
}

struct rule_case {
	const char *peer;
	int compatible, sysdata, mtu_size, iters_size, negotiate;
};

static void test_peer_rules_table(void **state)
{
	(void)state;
	static const struct rule_case cases[] = {
		{ "5.5", 0, 1, 2, 8, 0 },
		{ "5.31", 0, 0, 4, 4, 0 }, /* (float)5.31 < 5.31 */
		{ "5.32", 0, 1, 2, 4, 0 },
		{ "5.33", 0, 1, 2, 4, 0 }, /* (float)5.33 < 5.33 */
		{ "5.34", 0, 1, 2, 8, 0 },
		{ "5.60", 0, 1, 2, 8, 0 },
		{ "5.70", 1, 1, 2, 8, 0 },
		{ "5.92", 1, 1, 2, 8, 0 },
		{ "6.06", 1, 1, 2, 8, 0 },
		{ "6.27", 1, 1, 2, 8, 0 },
		{ "6.28", 1, 1, 2, 8, 1 }, /* always negotiates: we speak N */
		{ "6.29", 1, 1, 2, 8, 0 }, /* skips N since we say 6.06 */
		{ "", 0, 0, 4, 4, 0 },
		{ "nan", 0, 0, 4, 4, 0 },
		{ "inf", 0, 0, 4, 4, 0 },
		{ "garbage", 0, 0, 4, 4, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rule_case *c = &cases[i];
		struct pt_peer_rules r;
		int rc = pt_peer_rules_init(&r, c->peer, "6.06");

		print_message("peer '%s'\n", c->peer);
		assert_int_equal(rc, c->compatible ? 0 : -1);
		assert_int_equal(r.known, 1);
		assert_int_equal(r.compatible, c->compatible);
		assert_int_equal(r.sysdata, c->sysdata);
		assert_int_equal(r.mtu_msg_size, c->mtu_size);
		assert_int_equal(r.iters_size, c->iters_size);
		assert_int_equal(r.negotiate, c->negotiate);
		assert_string_equal(r.version, c->peer);
		if (c->compatible)
			assert_string_equal(r.why, "");
		else
			assert_non_null(strstr(r.why, "(we are 6.06)"));
	}
}

static void test_peer_rules_messages(void **state)
{
	(void)state;
	struct pt_peer_rules r;

	assert_int_equal(pt_peer_rules_init(&r, "5.60", "6.06"), -1);
	assert_string_equal(r.why,
		"peer perftest version '5.60' is older than 5.70, the oldest compatible with this build (we are 6.06)");
	assert_int_equal(pt_peer_rules_init(&r, "6.28", "6.06"), 0);
	assert_int_equal(r.peer_is_628plus, 1);
	assert_int_equal(r.negotiate, 1);
	/* A 6.29 peer negotiates only if we announce >= 6.28. */
	assert_int_equal(pt_peer_rules_init(&r, "6.29", "6.06"), 0);
	assert_int_equal(r.peer_is_628plus, 1);
	assert_int_equal(r.negotiate, 0);
	assert_int_equal(pt_peer_rules_init(&r, "6.29", "6.29"), 0);
	assert_int_equal(r.negotiate, 1);
	/* Announcing 6.28 (a test playing that build) negotiates with anyone. */
	assert_int_equal(pt_peer_rules_init(&r, "6.06", "6.28"), 0);
	assert_int_equal(r.negotiate, 1);
	assert_int_equal(pt_peer_rules_init(&r, "6.06", "6.29"), 0);
	assert_int_equal(r.negotiate, 0);
	/* Default for ours is WIRE_VERSION. */
	assert_int_equal(pt_peer_rules_init(&r, "5.0", NULL), -1);
	assert_non_null(strstr(r.why, "(we are " WIRE_VERSION ")"));
	/* Overlong string passed directly is bounded to 16 characters. */
	assert_int_equal(pt_peer_rules_init(&r, "6.10-very-long-version-xyz",
					    "6.06"), 0);
	assert_int_equal(strlen(r.version), 16);
	assert_string_equal(r.version, "6.10-very-long-v");
}

static void test_peer_rules_raw(void **state)
{
	(void)state;
	struct pt_peer_rules r;
	uint8_t raw[PT_VERSION_LEN];
	char s[PT_VERSION_LEN + 1];

	/* 16 bytes without NUL: decoded and bounded. */
	memcpy(raw, "6.06ZZZZZZZZZZZZ", 16);
	pt_version_decode(raw, s);
	assert_int_equal(strlen(s), 16);
	assert_int_equal(pt_peer_rules_init(&r, s, "6.06"), 0);
	assert_int_equal(r.mtu_msg_size, 2);
	/* Binary garbage: refused, printable in the message. */
	for (int i = 0; i < 16; i++)
		raw[i] = (uint8_t)(0x80 + i * 7);
	raw[3] = '\n';
	pt_version_decode(raw, s);
	assert_int_equal(pt_peer_rules_init(&r, s, "6.06"), -1);
	assert_int_equal(strlen(r.shown), 16);
	for (const char *p = r.shown; *p; p++)
		assert_true(*p >= 0x20 && *p < 0x7f);
	assert_non_null(strstr(r.why, "'" "????????????????" "'"));
	/* Leading NUL then junk reads as "". */
	memset(raw, 0xff, 16);
	raw[0] = 0;
	pt_version_decode(raw, s);
	assert_int_equal(pt_peer_rules_init(&r, s, "6.06"), -1);
	assert_string_equal(r.version, "");
}

static void test_peer_rules_dont_xchg(void **state)
{
	(void)state;
	struct pt_peer_rules r;

	assert_int_equal(pt_peer_rules_init(&r, NULL, "6.06"), 0);
	assert_int_equal(r.known, 0);
	assert_int_equal(r.compatible, 1);
	assert_int_equal(r.sysdata, 0);
	assert_int_equal(r.mtu_xchg, 0);
	assert_int_equal(r.iters_size, 8);
	assert_int_equal(r.negotiate, 0);
}

static void test_mtu_sizing_table(void **state)
{
	(void)state;
	static const struct { const char *v; size_t n; int xchg; } t[] = {
		{ "5.0", 4, 0 }, { "5.1", 4, 0 }, /* (float)5.1 < 5.1 */
		{ "5.2", 4, 1 }, { "5.3", 4, 1 }, { "5.31", 4, 1 },
		{ "5.32", 2, 1 }, { "5.5", 2, 1 }, { "6.06", 2, 1 },
	};
	struct pt_peer_rules r;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		pt_peer_rules_init(&r, t[i].v, "6.06");
		assert_int_equal(r.mtu_msg_size, t[i].n);
		assert_int_equal(r.mtu_xchg, t[i].xchg);
	}
}

static void test_mtu_codec(void **state)
{
	(void)state;
	char b[4];
	int m = 0;

	memset(b, 'Z', 4);
	assert_int_equal(pt_mtu_encode(3, 2, b), 2);
	assert_memory_equal(b, "3\0ZZ", 4);
	assert_int_equal(pt_mtu_encode(5, 4, b), 4);
	assert_memory_equal(b, "5\0\0\0", 4);
	assert_int_equal(pt_mtu_encode(0, 2, b), -1);
	assert_int_equal(pt_mtu_encode(6, 2, b), -1);
	assert_int_equal(pt_mtu_encode(3, 3, b), -1);
	for (int i = 1; i <= 5; i++) {
		char s[2] = { (char)('0' + i), 0 };

		assert_int_equal(pt_mtu_parse(s, 2, &m), 0);
		assert_int_equal(m, i);
	}
	assert_int_equal(pt_mtu_parse("4\0\xab\xcd", 4, &m), 0);
	assert_int_equal(m, 4);
	static const char *const bad[] = { "0", "6", "", "33", "a", " 3",
					   "-1", "3x", "\xff\xff" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char s[4] = { 0 };

		memcpy(s, bad[i], strlen(bad[i]));
		m = 77;
		assert_int_equal(pt_mtu_parse(s, 2, &m), -1);
		assert_int_equal(m, 77);
	}
	assert_int_equal(pt_mtu_parse("3", 1, &m), -1);
	assert_int_equal(pt_mtu_parse("3\0\0\0\0", 5, &m), -1);
	assert_int_equal(pt_mtu_min(5, 3), 3);
	assert_int_equal(pt_mtu_min(2, 4), 2);
}

static void test_sysdata(void **state)
{
	(void)state;
	uint8_t b[4];
	int32_t v = 0;

	pt_sysdata_encode(4096, b);
	assert_memory_equal(b, "\x00\x00\x10\x00", 4);
	assert_int_equal(pt_sysdata_parse(b, &v), 0);
	assert_int_equal(v, 4096);
	pt_sysdata_encode(64, b);
	assert_memory_equal(b, "\x00\x00\x00\x40", 4);
	pt_sysdata_encode(1 << 30, b);
	assert_int_equal(pt_sysdata_parse(b, &v), 0);
	assert_int_equal(v, 1 << 30);
	v = 5;
	assert_int_equal(pt_sysdata_parse((uint8_t *)"\0\0\0\0", &v), -1);
	assert_int_equal(pt_sysdata_parse((uint8_t *)"\xff\xff\xff\xff", &v),
			 -1);
	assert_int_equal(pt_sysdata_parse((uint8_t *)"\x40\0\0\x01", &v), -1);
	assert_int_equal(pt_sysdata_parse((uint8_t *)"\x7f\xff\xff\xff", &v),
			 -1);
	assert_int_equal(v, 5);
	assert_int_equal(pt_sysdata_max(4096, 65536), 65536);
	assert_int_equal(pt_sysdata_max(128, 64), 128);
}

static void test_bw_report_byte_order(void **state)
{
	(void)state;
	uint8_t b[8];
	static const uint8_t one_five[8] = { 0x3f, 0xf8, 0, 0, 0, 0, 0, 0 };
	static const uint8_t minus_two[8] = { 0xc0, 0, 0, 0, 0, 0, 0, 0 };
	struct pt_bw_report r = {
		.size = 65536, .iters = 0x123456789aull, .bw_peak = 1.5,
		.bw_avg = -2.0, .msg_rate = 0.1234567890123,
	}, got;

	pt_double_put(1.5, b);
	assert_memory_equal(b, one_five, 8);
	assert_true(pt_double_get(one_five) == 1.5);
	pt_be64_put(0x0102030405060708ull, b);
	assert_memory_equal(b, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);

	assert_int_equal(pt_bw_field_encode(&r, PT_BW_SIZE, 8, b), 8);
	assert_memory_equal(b, "\0\0\0\0\0\x01\0\0", 8);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_ITERS, 8, b), 8);
	assert_memory_equal(b, "\0\0\0\x12\x34\x56\x78\x9a", 8);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_ITERS, 4, b), 4);
	assert_memory_equal(b, "\x34\x56\x78\x9a", 4);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_ITERS, 5, b), -1);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_PEAK, 8, b), 8);
	assert_memory_equal(b, one_five, 8);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_AVG, 8, b), 8);
	assert_memory_equal(b, minus_two, 8);
	assert_int_equal(pt_bw_field_encode(&r, PT_BW_NFIELDS, 8, b), -1);

	memset(&got, 0, sizeof(got));
	for (int f = 0; f < PT_BW_NFIELDS; f++) {
		int n = pt_bw_field_encode(&r, f, 8, b);

		assert_int_equal(pt_bw_field_decode(&got, f, 8, b), n);
	}
	assert_true(got.size == r.size && got.iters == r.iters);
	assert_memory_equal(&got.bw_peak, &r.bw_peak, sizeof(double));
	assert_memory_equal(&got.bw_avg, &r.bw_avg, sizeof(double));
	assert_memory_equal(&got.msg_rate, &r.msg_rate, sizeof(double));
	/* 4-byte iters keeps the low 32 bits. */
	pt_bw_field_encode(&r, PT_BW_ITERS, 4, b);
	pt_bw_field_decode(&got, PT_BW_ITERS, 4, b);
	assert_true(got.iters == 0x3456789aull);
}

/* Found by tests/fuzz/fuzz_bw_report.c: a peer's NaN, infinite or negative
 * figures were summed into our -b row, printed as "nan"/"-1.00" and the JSON
 * row was dropped without a word. */
static void test_bw_report_check(void **state)
{
	(void)state;
	const struct pt_bw_report good = { .size = 65536, .iters = 5000,
		.bw_peak = 11.5, .bw_avg = 10.25, .msg_rate = 0.0195 };
	const struct { int field; double v; const char *needle; } bad[] = {
		{ 0, NAN, "peak bandwidth" },
		{ 1, -1.0, "average bandwidth" },
		{ 1, INFINITY, "average bandwidth" },
		{ 2, -INFINITY, "message rate" },
		{ 2, PT_BW_REPORT_MAX * 2, "message rate" },
	};
	char why[128];

	assert_int_equal(pt_bw_report_check(&good, why, sizeof(why)), 0);
	assert_int_equal(pt_bw_report_check(&(struct pt_bw_report){ 0 }, NULL, 0), 0);
	assert_int_equal(pt_bw_report_check(&(struct pt_bw_report){
		.bw_peak = PT_BW_REPORT_MAX, .bw_avg = PT_BW_REPORT_MAX,
		.msg_rate = PT_BW_REPORT_MAX }, NULL, 0), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pt_bw_report r = good;
		double *f[] = { &r.bw_peak, &r.bw_avg, &r.msg_rate };

		*f[bad[i].field] = bad[i].v;
		why[0] = '\0';
		assert_int_equal(pt_bw_report_check(&r, why, sizeof(why)), -1);
		print_message("%s\n", why);
		assert_non_null(strstr(why, bad[i].needle));
		assert_int_equal(pt_bw_report_check(&r, NULL, 0), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_plain_roundtrip),
		cmocka_unit_test(test_key_gid_roundtrip),
		cmocka_unit_test(test_key_dv_forms),
		cmocka_unit_test(test_peer_rules_key_dv),
		cmocka_unit_test(test_key_uppercase_accepted),
		cmocka_unit_test(test_key_corrupt_rejected),
		cmocka_unit_test(test_key_mutations),
		cmocka_unit_test(test_key_raw_layouts),
		cmocka_unit_test(test_key_raw_rejects),
		cmocka_unit_test(test_peer_rules_cm_key_size),
		cmocka_unit_test(test_version_codec),
		cmocka_unit_test(test_peer_rules_table),
		cmocka_unit_test(test_peer_rules_messages),
		cmocka_unit_test(test_peer_rules_raw),
		cmocka_unit_test(test_peer_rules_dont_xchg),
		cmocka_unit_test(test_mtu_sizing_table),
		cmocka_unit_test(test_mtu_codec),
		cmocka_unit_test(test_sysdata),
		cmocka_unit_test(test_bw_report_byte_order),
		cmocka_unit_test(test_bw_report_check),
	};
	return cmocka_run_group_tests_name("wire", tests, NULL, NULL);
}
