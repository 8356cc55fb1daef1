// SPDX-License-Identifier: BSD-2-Clause
/* monitor/'s user-space parts that need no kernel: names and errno table,
 * cgroup id -> path over a made-up tree, `rdma resource` parsing, and the
 * interval report (JSON and text) from made-up snapshots. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor/cgpath.h"
#include "monitor/names.h"
#include "monitor/report.h"
#include "monitor/seed.h"
#include "monitor/snapshot.h"

static void test_names(void **state)
{
	char buf[16];

	(void)state;
	assert_string_equal(rm_type_name(RM_QP), "qp");
	assert_string_equal(rm_type_name(RM_CM_ID), "cm_id");
	assert_string_equal(rm_type_name(RM_NTYPES), "?");
	assert_int_equal(rm_type_parse("srq"), RM_SRQ);
	assert_int_equal(rm_type_parse("nope"), -1);
	assert_int_equal(rm_type_parse(NULL), -1);
	assert_string_equal(rm_errno_name(-EINVAL, buf, sizeof(buf)), "EINVAL");
	assert_string_equal(rm_errno_name(ENOMEM, buf, sizeof(buf)), "ENOMEM");
	assert_string_equal(rm_errno_name(0, buf, sizeof(buf)), "ok");
	assert_string_equal(rm_errno_name(-4000, buf, sizeof(buf)), "E4000");
	assert_null(rm_op(OP_NOPS));
	/* every operation has a name and at least one vendor-neutral function */
	for (unsigned op = 0; op < OP_NOPS; op++) {
		assert_non_null(rm_op(op)->name);
		assert_non_null(rm_op(op)->funcs[0]);
		assert_null(strstr(rm_op(op)->funcs[0], "mlx5"));
	}
	assert_true(rm_op(OP_CREATE_QP)->returns_ptr);
	assert_false(rm_op(OP_MODIFY_QP)->returns_ptr);
}

/* -i and -c of every view: bounds, junk and overflow refused, *out untouched */
static void test_interval_count(void **state)
{
	double iv = 7;
	long n = 7;

	(void)state;
	assert_int_equal(rm_interval_parse("0.5", &iv), 0);
	assert_true(iv == 0.5);
	assert_int_equal(rm_interval_parse("3600", &iv), 0);
	assert_true(iv == 3600);
	iv = 7;
	assert_int_equal(rm_interval_parse("0.09", &iv), -1);
	assert_int_equal(rm_interval_parse("3600.5", &iv), -1);
	assert_int_equal(rm_interval_parse("1s", &iv), -1);
	assert_int_equal(rm_interval_parse("", &iv), -1);
	assert_int_equal(rm_interval_parse("nan", &iv), -1);
	assert_true(iv == 7);
	assert_int_equal(rm_count_parse("3", &n), 0);
	assert_int_equal(n, 3);
	n = 7;
	assert_int_equal(rm_count_parse("0", &n), -1);
	assert_int_equal(rm_count_parse("-2", &n), -1);
	assert_int_equal(rm_count_parse("", &n), -1);
	assert_int_equal(rm_count_parse("2x", &n), -1);
	assert_int_equal(rm_count_parse("99999999999999999999", &n), -1);
	assert_int_equal(n, 7);
}

static void test_cgpath(void **state)
{
	char root[] = "/tmp/rdmamon-cg-XXXXXX", p[256];
	struct rm_cgpaths *c;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/a", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/a/pod1", root);
	assert_int_equal(mkdir(p, 0700), 0);
	c = rm_cgpaths_new(root);
	assert_non_null(c);
	assert_int_equal(rm_cgpaths_scan(c), 3);
	assert_int_equal(stat(p, &st), 0);
	assert_string_equal(rm_cgpath(c, st.st_ino), "/a/pod1");
	assert_int_equal(rm_cgid_of(c, "/a/pod1"), st.st_ino);
	assert_int_equal(rm_cgid_of(c, "a/pod1"), st.st_ino);
	assert_int_equal(rm_cgid_of(c, "/nope"), 0);
	assert_int_equal(stat(root, &st), 0);
	assert_string_equal(rm_cgpath(c, st.st_ino), "/");
	/* a cgroup made after the first walk is found by a new walk */
	snprintf(p, sizeof(p), "%s/b", root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_string_equal(rm_cgpath(c, st.st_ino), "/b");
	assert_null(rm_cgpath(c, 1));
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a/pod1", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a", root);
	rmdir(p);
	rmdir(root);
	rm_cgpaths_free(c);
	c = rm_cgpaths_new("/nonexistent-rdmamon");
	assert_int_equal(rm_cgpaths_scan(c), -1);
	rm_cgpaths_free(c);
}

static void test_seed_parse(void **state)
{
	const char *qp = "[{\"ifindex\":0,\"ifname\":\"rxe0\",\"port\":1,\"lqpn\":1,\"type\":\"GSI\","
			 "\"comm\":\"ib_core\"},{\"ifindex\":2,\"ifname\":\"mlx5_1\",\"lqpn\":17,"
			 "\"pid\":4242,\"comm\":\"ib_write_bw\"}]";
	struct rm_seed_row *rows;
	size_t n;
	char err[256];

	(void)state;
	assert_int_equal(rm_seed_parse(qp, RM_QP, &rows, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_equal(rows[0].k.id, 1);
	assert_int_equal(rows[0].k.dev, 0);
	assert_true(rows[0].o.kern);
	assert_string_equal(rows[0].ifname, "rxe0");
	assert_int_equal(rows[1].k.id, 17);
	assert_int_equal(rows[1].k.dev, 2);
	assert_int_equal(rows[1].k.type, RM_QP);
	assert_false(rows[1].o.kern);
	assert_int_equal(rows[1].o.pid, 4242);
	assert_string_equal(rows[1].o.comm, "ib_write_bw");
	free(rows);
	/* the id field is per type: a cq listing has no lqpn */
	assert_int_equal(rm_seed_parse(qp, RM_CQ, &rows, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cqn"));
	assert_int_equal(rm_seed_parse("{", RM_QP, &rows, &n, err, sizeof(err)), -1);
	assert_int_equal(rm_seed_parse("[]", RM_AH, &rows, &n, err, sizeof(err)), -1);
	assert_int_equal(rm_seed_parse("[]", RM_PD, &rows, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	free(rows);
}

static void test_proc_cgroup(void **state)
{
	char root[] = "/tmp/rdmamon-proc-XXXXXX", p[256], buf[64];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(p, sizeof(p), "%s/77", root);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/77/cgroup", root);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("1:name=systemd:/x\n0::/kubepods/pod-abc/ctr\n", f);
	fclose(f);
	assert_int_equal(rm_proc_cgroup(root, 77, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/kubepods/pod-abc/ctr");
	assert_int_equal(rm_proc_cgroup(root, 78, buf, sizeof(buf)), -1);
	assert_int_equal(rm_proc_cgroup(root, 77, buf, 4), -1);   /* does not fit */
	unlink(p);
	snprintf(p, sizeof(p), "%s/77", root);
	rmdir(p);
	rmdir(root);
}

static void obj(struct rm_snapshot *s, unsigned type, uint64_t id, uint64_t cg, uint32_t pid,
		const char *comm, int kern)
{
	struct rm_obj_key k = { .id = id, .dev = 0, .type = type };
	struct rm_obj o = { .cgid = cg, .pid = pid, .kern = (uint8_t)kern };

	strncpy(o.comm, comm, sizeof(o.comm) - 1);
	assert_int_equal(rm_snap_add_obj(s, &k, &o), 0);
}

static void call(struct rm_snapshot *s, uint64_t cg, unsigned op, int err, uint64_t n)
{
	struct rm_op_key k = { .cgid = cg, .op = op, .err = err };

	assert_int_equal(rm_snap_add_call(s, &k, n), 0);
}

static json_int_t geti(const json_t *o, const char *path)
{
	char buf[128], *save, *tok;
	const json_t *v = o;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save))
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(tok)) : json_object_get(v, tok);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_report(void **state)
{
	struct rm_snapshot prev = { 0 }, now = { 0 };
	struct rm_count_key ck = { .cgid = 500, .dev = 0, .type = RM_QP };
	struct rm_count_val v0 = { .creates = 2, .destroys = 0 }, v1 = { .creates = 10, .destroys = 2 };
	struct rm_report_ctx ctx = { .top = 2 };
	const char *miss[] = { "ib_uverbs_alloc_pd", NULL };
	json_t *r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	ctx.missing_hooks = miss;
	ctx.hooks_attached = 20;
	prev.mono_ns = 1000000000;
	now.mono_ns = 3000000000;    /* 2 s later */
	now.real_ns = 1764000000123456789ull;
	assert_int_equal(rm_snap_add_dev(&now, 0, "rxe0"), 0);
	obj(&now, RM_QP, 1, 0, 0, "ib_core", 1);        /* the GSI QP, kernel-owned */
	obj(&now, RM_PD, 0, 0, 0, "ib_core", 1);
	for (int i = 0; i < 8; i++)
		obj(&now, RM_QP, 17 + (uint64_t)i, 500, 4242, "ib_write_bw", 0);
	obj(&now, RM_PD, 3, 500, 4242, "ib_write_bw", 0);
	obj(&now, RM_CQ, 3, 600, 99, "other", 0);
	assert_int_equal(rm_snap_add_count(&prev, &ck, &v0), 0);
	assert_int_equal(rm_snap_add_count(&now, &ck, &v1), 0);
	call(&prev, 500, OP_CREATE_QP, 0, 2);
	call(&now, 500, OP_CREATE_QP, 0, 10);
	call(&now, 500, OP_CREATE_QP, -EINVAL, 1);
	call(&now, 600, OP_CREATE_QP, -EINVAL, 2);
	call(&now, 500, OP_MODIFY_QP, 0, 24);
	now.lost[LOST_RING_CALL] = 3;
	now.events[EV_ADD] = 11;

	r = rm_report_json(&now, &prev, &ctx);
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "time")), "2025-11-24T16:00:00.123Z");
	assert_int_equal(geti(r, "live.qp"), 8);
	assert_int_equal(geti(r, "live.pd"), 1);
	assert_int_equal(geti(r, "kernel.qp"), 1);   /* apart from the users' */
	assert_int_equal(geti(r, "devices.0.total.qp"), 9);
	assert_int_equal(geti(r, "devices.0.kernel.pd"), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "devices"), 0),
							      "name")), "rxe0");
	/* cgroup 500: live, and the interval's creates/destroys/modifies/failures */
	assert_int_equal(geti(r, "cgroups.0.id"), 500);
	assert_int_equal(geti(r, "cgroups.0.live.qp"), 8);
	assert_int_equal(geti(r, "cgroups.0.creates"), 8);
	assert_int_equal(geti(r, "cgroups.0.destroys"), 2);
	assert_int_equal(geti(r, "cgroups.0.modifies"), 24);
	assert_int_equal(geti(r, "cgroups.0.failed"), 1);
	assert_int_equal(geti(r, "cgroups.0.top.0.pid"), 4242);
	assert_int_equal(geti(r, "cgroups.0.top.0.objects"), 9);
	assert_int_equal(geti(r, "cgroups.1.live.cq"), 1);
	assert_int_equal(json_array_size(json_object_get(r, "cgroups")), 2);
	/* calls: totals and per second over the 2 s interval */
	assert_int_equal(geti(r, "calls.create_qp.total"), 13);
	assert_int_equal(geti(r, "calls.create_qp.interval"), 11);
	assert_int_equal(geti(r, "calls.create_qp.failed_total"), 3);
	assert_true(json_real_value(json_object_get(json_object_get(json_object_get(r, "calls"),
								     "create_qp"), "per_s")) == 5.5);
	/* failures: one row per (op, errno) summed over cgroups */
	assert_int_equal(json_array_size(json_object_get(r, "failed")), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(r, "failed"), 0),
							      "errno")), "EINVAL");
	assert_int_equal(geti(r, "failed.0.total"), 3);
	assert_int_equal(geti(r, "failed.0.err"), EINVAL);
	assert_int_equal(geti(r, "lost.ring_call"), 3);
	assert_int_equal(geti(r, "events.add"), 11);
	assert_string_equal(json_string_value(json_array_get(json_object_get(r, "hooks_missing"), 0)),
			    "ib_uverbs_alloc_pd");

	f = open_memstream(&text, &len);
	assert_non_null(f);
	rm_report_text(f, r);
	fclose(f);
	assert_non_null(strstr(text, "FAILED   create_qp EINVAL: 3 in interval, 3 total"));
	assert_non_null(strstr(text, "ib_write_bw[4242]:9"));
	assert_non_null(strstr(text, "MISSING  hook ib_uverbs_alloc_pd"));
	assert_non_null(strstr(text, "ring add 0 del 0 call 3"));
	assert_non_null(strstr(text, "cgroup:500"));
	free(text);
	json_decref(r);
	rm_snap_clear(&prev);
	rm_snap_clear(&now);
	assert_null(now.objs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_interval_count),
		cmocka_unit_test(test_cgpath),
		cmocka_unit_test(test_seed_parse),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
