/* SPDX-License-Identifier: BSD-2-Clause */
/* -w/-y verdict (perftest/report/verdict.h) and its "limits" object in
 * --out_json: which rows pass, what a miss prints, and what the JSON says. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "perftest/report/json.h"
#include "perftest/report/verdict.h"

static struct pt_bw_result row(uint64_t size, double bw, double rate)
{
	return (struct pt_bw_result){ .size = size, .iters = 1000, .bw_avg = bw,
				      .bw_peak = bw, .msg_rate = rate };
}

/* What pt_verdict_add_bw prints for one row (static buffer). */
static const char *said(struct pt_verdict *v, struct pt_bw_result r, unsigned *missed)
{
	static char buf[512];
	FILE *f;

	memset(buf, 0, sizeof(buf));
	f = fmemopen(buf, sizeof(buf) - 1, "w");

	assert_non_null(f);
	*missed = pt_verdict_add_bw(v, &r, f);
	fclose(f);
	return buf;
}

static void no_limits_no_verdict(void **state)
{
	struct pt_verdict v;
	unsigned m;

	(void)state;
	pt_verdict_init(&v, -1, -1);
	assert_false(pt_verdict_active(&v));
	assert_string_equal(said(&v, row(64, 0, 0), &m), "");
	assert_int_equal(m, 0);
	assert_int_equal(v.rows, 0);
	assert_true(pt_verdict_pass(&v));
}

static void bw_limit(void **state)
{
	struct pt_verdict v;
	unsigned m;
	const char *s;

	(void)state;
	pt_verdict_init(&v, 90, -1);
	assert_true(pt_verdict_active(&v));
	assert_string_equal(said(&v, row(65536, 100, 0.001), &m), "");
	assert_int_equal(m, 0);
	assert_string_equal(said(&v, row(65536, 90, 0.001), &m), ""); /* equal passes */
	assert_true(pt_verdict_pass(&v));
	s = said(&v, row(4096, 80.5, 0.001), &m);
	assert_int_equal(m, PT_LIMIT_BW);
	assert_string_equal(s, " Error: BW result is below bw limit: 80.50 < 90.00 MiB/s"
			    " (-w/--limit_bw, 4096-byte messages)\n");
	/* a later good row does not undo the miss */
	assert_string_equal(said(&v, row(8192, 120, 0.001), &m), "");
	assert_false(pt_verdict_pass(&v));
	assert_int_equal(v.failed, PT_LIMIT_BW);
	assert_int_equal(v.rows, 4);
	assert_true(v.min_bw == 80.5);
}

static void msgrate_limit_alone_and_units(void **state)
{
	struct pt_verdict v;
	struct pt_bw_result r = row(2, 0.5, 0.2);
	unsigned m;
	const char *s;

	(void)state;
	/* -y without -w fires (upstream only checks it when -w is set too) */
	pt_verdict_init(&v, -1, 0.25);
	s = said(&v, r, &m);
	assert_int_equal(m, PT_LIMIT_MSGRATE);
	assert_non_null(strstr(s, " Error: Msg rate is below msg_rate limit: 0.200000 < 0.250000 Mpps"));
	/* both at once, in Gb/s */
	pt_verdict_init(&v, 1, 1);
	r.gbits = true;
	s = said(&v, r, &m);
	assert_int_equal(m, PT_LIMIT_BW | PT_LIMIT_MSGRATE);
	assert_non_null(strstr(s, "0.50 < 1.00 Gb/s"));
	assert_non_null(strstr(s, "msg_rate limit"));
}

static void nan_fails(void **state)
{
	struct pt_verdict v;
	unsigned m;

	(void)state;
	pt_verdict_init(&v, 0, 0);
	said(&v, row(2, NAN, NAN), &m);
	assert_int_equal(m, PT_LIMIT_BW | PT_LIMIT_MSGRATE);
	assert_false(pt_verdict_pass(&v));
	/* a zero limit passes any real result, zero included */
	pt_verdict_init(&v, 0, 0);
	said(&v, row(2, 0, 0), &m);
	assert_int_equal(m, 0);
}

static json_t *doc_of(struct pt_json *j)
{
	char *text = pt_json_dumps(j);
	json_t *doc;

	assert_non_null(text);
	doc = json_loads(text, 0, NULL);
	free(text);
	assert_non_null(doc);
	return doc;
}

static void json_limits_object(void **state)
{
	struct pt_test_info in = {
		.test_name = "RDMA_Write BW Test", .device = "rxe0", .num_qps = 1,
		.transport = "IB", .connection = "RC", .pcie_relax = "OFF", .tx_depth = 128,
		.post_list = 1, .recv_post_list = 1, .rx_depth = -1, .cq_mod = 100,
		.mtu = 1024, .link_type = "Ethernet", .gid_index = -1,
		.data_ex_method = "Ethernet", .tos = -1,
	};
	struct pt_json *j = pt_json_begin(&in, PT_REPORT_FULL);
	struct pt_verdict v;
	struct pt_bw_result r = row(65536, 80, 0.01);
	json_t *doc, *lim, *failed;

	(void)state;
	assert_non_null(j);
	assert_int_equal(pt_json_add_bw(j, &r), 0);
	doc = doc_of(j);
	assert_null(json_object_get(doc, "limits")); /* no -w/-y: no object */
	json_decref(doc);

	pt_verdict_init(&v, 90, 0.005);
	pt_verdict_add_bw(&v, &r, NULL);
	assert_int_equal(pt_json_set_verdict(j, &v), 0);
	doc = doc_of(j);
	lim = json_object_get(doc, "limits");
	assert_true(json_is_object(lim));
	assert_true(json_is_false(json_object_get(lim, "pass")));
	assert_true(json_real_value(json_object_get(lim, "limit_bw")) == 90);
	assert_true(json_real_value(json_object_get(lim, "limit_msgrate")) == 0.005);
	assert_true(json_real_value(json_object_get(lim, "lowest_BW_average")) == 80);
	assert_int_equal(json_integer_value(json_object_get(lim, "rows_checked")), 1);
	failed = json_object_get(lim, "failed");
	assert_int_equal(json_array_size(failed), 1);
	assert_string_equal(json_string_value(json_array_get(failed, 0)), "limit_bw");
	json_decref(doc);

	/* a passing verdict replaces it */
	pt_verdict_init(&v, 50, -1);
	pt_verdict_add_bw(&v, &r, NULL);
	assert_int_equal(pt_json_set_verdict(j, &v), 0);
	doc = doc_of(j);
	lim = json_object_get(doc, "limits");
	assert_true(json_is_true(json_object_get(lim, "pass")));
	assert_int_equal(json_array_size(json_object_get(lim, "failed")), 0);
	assert_null(json_object_get(lim, "limit_msgrate"));
	json_decref(doc);
	pt_json_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_limits_no_verdict),
		cmocka_unit_test(bw_limit),
		cmocka_unit_test(msgrate_limit_alone_and_units),
		cmocka_unit_test(nan_fails),
		cmocka_unit_test(json_limits_object),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
