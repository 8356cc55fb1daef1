// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon's lifecycle and conns views without a kernel: names, GID and
 * address text, the filters, one event as JSON and as a line, and the
 * connection table from made-up per-QP state. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/conntable.h"
#include "monitor/lifecycle.h"

static void v4mapped(uint8_t gid[16], const char *ip)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, ip, gid + 12), 1);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(rm_qp_state_name(0), "RESET");
	assert_string_equal(rm_qp_state_name(2), "RTR");
	assert_string_equal(rm_qp_state_name(6), "ERR");
	assert_string_equal(rm_qp_state_name(RM_QPS_UNKNOWN), "?");
	assert_string_equal(rm_qp_type_name(2), "RC");
	assert_string_equal(rm_qp_type_name(4), "UD");
	assert_string_equal(rm_qp_type_name(10), "XRC_TGT");
	assert_string_equal(rm_qp_type_name(77), "?");
	assert_string_equal(rm_life_kind_name(LE_QP_MODIFY), "qp_modify");
	assert_string_equal(rm_life_kind_name(LE_CM_REQ_RECV), "cm_req_recv");
	assert_string_equal(rm_life_kind_name(LE_NKINDS), "?");
}

static void test_text_forms(void **state)
{
	uint8_t gid[16], sa[RM_SA_LEN] = { 0 };
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons(18515) };
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6, .sin6_port = htons(7) };
	char buf[80];

	(void)state;
	v4mapped(gid, "198.18.0.1");
	assert_string_equal(rm_gid_str(gid, buf, sizeof(buf)), "::ffff:198.18.0.1");
	assert_string_equal(rm_sockaddr_str(sa, buf, sizeof(buf)), "-");
	inet_pton(AF_INET, "10.0.0.2", &in.sin_addr);
	memcpy(sa, &in, sizeof(in));
	assert_string_equal(rm_sockaddr_str(sa, buf, sizeof(buf)), "10.0.0.2:18515");
	inet_pton(AF_INET6, "fe80::1", &in6.sin6_addr);
	memcpy(sa, &in6, sizeof(in6));
	assert_string_equal(rm_sockaddr_str(sa, buf, sizeof(buf)), "[fe80::1]:7");
	sa[0] = 27;   /* AF_IB */
	sa[1] = 0;
	assert_string_equal(rm_sockaddr_str(sa, buf, sizeof(buf)), "family-27");
	assert_int_equal(rm_qpn_parse("0x0011"), 17);
	assert_int_equal(rm_qpn_parse("17"), 17);
	assert_int_equal(rm_qpn_parse("0xffffff"), 0xffffff);
	assert_int_equal(rm_qpn_parse("0x1000000"), -1);
	assert_int_equal(rm_qpn_parse("-1"), -1);
	assert_int_equal(rm_qpn_parse("12x"), -1);
	assert_int_equal(rm_qpn_parse(""), -1);
	assert_int_equal(rm_qpn_parse(NULL), -1);
}

static struct rm_life_event rtr_event(void)
{
	struct rm_life_event e = { .ts_ns = 5000000123ull, .cgid = 42, .pid = 100, .tid = 101,
				   .dev = 0, .port = 1, .qpn = 0x11, .rqpn = 0x12,
				   .kind = LE_QP_MODIFY, .qp_type = 2, .old_state = 1,
				   .new_state = 2, .has_remote = 1, .has_sgid = 1, .sgid_index = 3 };

	v4mapped(e.sgid, "198.18.0.1");
	v4mapped(e.dgid, "198.18.0.2");
	strcpy(e.comm, "ib_send_bw");
	return e;
}

static void test_filter(void **state)
{
	struct rm_life_event e = rtr_event(), ah = { .kind = LE_AH_CREATE, .pid = 100 };
	struct rm_life_filter f;

	(void)state;
	rm_life_filter_init(&f);
	assert_true(rm_life_match(&f, &e, NULL, NULL));   /* nothing set: all */
	f.pid = 100;
	assert_true(rm_life_match(&f, &e, "rxe0", "/a"));
	f.pid = 99;
	assert_false(rm_life_match(&f, &e, "rxe0", "/a"));
	rm_life_filter_init(&f);
	f.cgroup = "/a";
	assert_true(rm_life_match(&f, &e, "rxe0", "/a"));
	assert_true(rm_life_match(&f, &e, "rxe0", "/a/b"));
	assert_false(rm_life_match(&f, &e, "rxe0", "/ab"));
	assert_false(rm_life_match(&f, &e, "rxe0", "/"));
	assert_false(rm_life_match(&f, &e, "rxe0", NULL));
	f.cgroup = "a/";
	assert_true(rm_life_match(&f, &e, "rxe0", "/a/b"));
	assert_false(rm_life_match(&f, &e, "rxe0", "/ab"));
	f.cgroup = "/";
	assert_true(rm_life_match(&f, &e, "rxe0", "/x"));
	rm_life_filter_init(&f);
	f.dev = "rxe0";
	assert_true(rm_life_match(&f, &e, "rxe0", NULL));
	assert_false(rm_life_match(&f, &e, "rxe1", NULL));
	assert_false(rm_life_match(&f, &e, NULL, NULL));
	rm_life_filter_init(&f);
	f.qpn = 0x11;
	assert_true(rm_life_match(&f, &e, NULL, NULL));
	assert_false(rm_life_match(&f, &ah, NULL, NULL));   /* an AH has no QPN */
	f.qpn = 0x12;                                       /* the remote's is not ours */
	assert_false(rm_life_match(&f, &e, NULL, NULL));
}

static void test_event_json_text(void **state)
{
	struct rm_life_event e = rtr_event(), c = { .kind = LE_QP_CREATE, .qpn = 5, .qp_type = 4,
						    .old_state = RM_QPS_UNKNOWN };
	json_t *j = rm_life_json(&e, "rxe0", "/lab", 1000);
	json_t *loc, *rem;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "event")), "qp_modify");
	assert_int_equal(json_integer_value(json_object_get(j, "mono_ns")), 5000000123ll);
	assert_int_equal(json_integer_value(json_object_get(j, "time_ns")), 5000001123ll);
	assert_string_equal(json_string_value(json_object_get(j, "old_state")), "INIT");
	assert_string_equal(json_string_value(json_object_get(j, "new_state")), "RTR");
	assert_string_equal(json_string_value(json_object_get(j, "qp_type")), "RC");
	assert_string_equal(json_string_value(json_object_get(j, "cgroup")), "/lab");
	assert_string_equal(json_string_value(json_object_get(j, "comm")), "ib_send_bw");
	loc = json_object_get(j, "local");
	rem = json_object_get(j, "remote");
	assert_string_equal(json_string_value(json_object_get(loc, "gid")), "::ffff:198.18.0.1");
	assert_int_equal(json_integer_value(json_object_get(loc, "sgid_index")), 3);
	assert_int_equal(json_integer_value(json_object_get(loc, "qpn")), 0x11);
	assert_string_equal(json_string_value(json_object_get(rem, "gid")), "::ffff:198.18.0.2");
	assert_int_equal(json_integer_value(json_object_get(rem, "qpn")), 0x12);
	json_decref(j);
	j = rm_life_json(&c, NULL, NULL, 0);
	assert_true(json_is_null(json_object_get(j, "old_state")));
	assert_true(json_is_null(json_object_get(j, "dev")));
	assert_null(json_object_get(j, "remote"));
	json_decref(j);

	f = open_memstream(&text, &len);
	rm_life_text(f, &e, "rxe0", "/lab");
	fclose(f);
	assert_non_null(strstr(text, "5.000000123 qp_modify   rxe0/1 qpn 0x000011 RC INIT->RTR"));
	assert_non_null(strstr(text, "local ::ffff:198.18.0.1 [3] qpn 0x000011 -> remote "
				     "::ffff:198.18.0.2 qpn 0x000012"));
	assert_non_null(strstr(text, "pid 100 tid 101 (ib_send_bw) /lab"));
	free(text);
}

static void test_conns(void **state)
{
	struct rm_conn_row rows[4] = {
		{ .k = { 0, 0x20 }, .v = { .state = 3, .has_remote = 1, .qp_type = 2, .rqpn = 0x30,
					   .pid = 7, .port = 1 }, .dev = "rxe0", .cgroup = "/a" },
		{ .k = { 0, 0x11 }, .v = { .state = 2, .has_remote = 1, .qp_type = 2, .rqpn = 0x12,
					   .pid = 7, .port = 1, .has_sgid = 1 }, .dev = "rxe0" },
		{ .k = { 0, 0x13 }, .v = { .state = 6, .has_remote = 1 } },   /* ERR: gone */
		{ .k = { 0, 0x14 }, .v = { .state = 3, .qp_type = 4 } },      /* UD: no peer */
	};
	uint64_t lost[LE_NKINDS] = { [LE_QP_MODIFY] = 2 };
	json_t *t, *c0;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	v4mapped(rows[1].v.sgid, "198.18.0.1");
	v4mapped(rows[1].v.dgid, "198.18.0.2");
	assert_true(rm_conn_established(&rows[0].v));
	assert_false(rm_conn_established(&rows[2].v));
	assert_false(rm_conn_established(&rows[3].v));
	t = rm_conns_json(rows, 4, 10, 5, 1, lost);
	assert_non_null(t);
	assert_int_equal(json_integer_value(json_object_get(t, "count")), 2);
	assert_true(json_is_true(json_object_get(t, "final")));
	assert_int_equal(json_integer_value(json_object_get(t, "time_ns")), 15);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(t, "lost"), "qp_modify")), 2);
	c0 = json_array_get(json_object_get(t, "conns"), 0);   /* sorted by QPN */
	assert_int_equal(json_integer_value(json_object_get(json_object_get(c0, "local"), "qpn")), 0x11);
	assert_string_equal(json_string_value(json_object_get(json_object_get(c0, "local"), "gid")),
			    "::ffff:198.18.0.1");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(c0, "remote"), "qpn")), 0x12);
	assert_string_equal(json_string_value(json_object_get(c0, "state")), "RTR");
	assert_true(json_is_null(json_object_get(json_object_get(json_array_get(json_object_get(t, "conns"), 1),
								 "local"), "gid")));
	f = open_memstream(&text, &len);
	rm_conns_text(f, t);
	fclose(f);
	assert_non_null(strstr(text, "rdmamon conns (final): 2 established, 2 events lost"));
	assert_non_null(strstr(text, "0x000011 ::ffff:198.18.0.1"));
	assert_non_null(strstr(text, "0x000030"));
	free(text);
	json_decref(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_text_forms),
		cmocka_unit_test(test_filter),
		cmocka_unit_test(test_event_json_text),
		cmocka_unit_test(test_conns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
