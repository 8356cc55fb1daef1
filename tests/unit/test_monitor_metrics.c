// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon --listen without a kernel: the exposition writer (monitor/metrics.c)
 * from made-up snapshots (labels, counters, rates, escaping, both formats),
 * the text checked by Prometheus's own `promtool check metrics` when it is
 * installed (Debian's prometheus, ci/deps), and the ADDR:PORT parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "monitor/cgpath.h"
#include "monitor/metrics.h"
#include "monitor/snapshot.h"

static void obj(struct rm_snapshot *s, unsigned type, uint64_t id, uint64_t cgid, unsigned kern)
{
	struct rm_obj_key k = { .id = id, .dev = 0, .type = type };
	struct rm_obj o = { .cgid = cgid, .pid = kern ? 0 : 4242, .kern = (uint8_t)kern };

	assert_int_equal(rm_snap_add_obj(s, &k, &o), 0);
}

static void call(struct rm_snapshot *s, uint64_t cgid, unsigned op, int err, uint64_t n)
{
	struct rm_op_key k = { .cgid = cgid, .op = op, .err = err };

	assert_int_equal(rm_snap_add_call(s, &k, n), 0);
}

/* A cgroup tree with /tenant-a and /pod"x (a quote, to see it escaped). */
struct fixture {
	char root[64];
	uint64_t a, pod;
	struct rm_cgpaths *cg;
	struct rm_snapshot prev, now;
};

static void make(struct fixture *f)
{
	char p[128];
	struct stat st;
	struct rm_count_key ck = { .dev = 0, .type = RM_QP };
	struct rm_count_val v = { .creates = 10, .destroys = 2 }, kv = { .creates = 1 };

	snprintf(f->root, sizeof(f->root), "/tmp/rdmamon-metrics-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(p, sizeof(p), "%s/tenant-a", f->root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(stat(p, &st), 0);
	f->a = st.st_ino;
	snprintf(p, sizeof(p), "%s/pod\"x", f->root);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(stat(p, &st), 0);
	f->pod = st.st_ino;
	f->cg = rm_cgpaths_new(f->root);
	assert_true(rm_cgpaths_scan(f->cg) >= 3);
	memset(&f->prev, 0, sizeof(f->prev));
	memset(&f->now, 0, sizeof(f->now));
	f->prev.mono_ns = 1000000000;
	f->now.mono_ns = 3000000000;     /* 2 s later */
	f->now.real_ns = 1764000000500000000ull;
	assert_int_equal(rm_snap_add_dev(&f->now, 0, "rxe0"), 0);
	obj(&f->now, RM_QP, 1, 0, 1);      /* rxe's GSI QP */
	for (int i = 0; i < 8; i++)
		obj(&f->now, RM_QP, 17 + (uint64_t)i, f->a, 0);
	obj(&f->now, RM_PD, 3, f->pod, 0);
	ck.cgid = f->a;
	assert_int_equal(rm_snap_add_count(&f->now, &ck, &v), 0);
	ck.cgid = 0;
	ck.kern = 1;
	assert_int_equal(rm_snap_add_count(&f->now, &ck, &kv), 0);
	call(&f->prev, f->a, OP_CREATE_QP, 0, 2);
	call(&f->now, f->a, OP_CREATE_QP, 0, 10);
	call(&f->now, f->a, OP_CREATE_QP, -EINVAL, 1);
	call(&f->now, 777, OP_MODIFY_QP, 0, 4);       /* a cgroup removed since */
	f->now.lost[LOST_RING_CALL] = 3;
	f->now.events[EV_ADD] = 11;
}

static void unmake(struct fixture *f)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/tenant-a", f->root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/pod\"x", f->root);
	rmdir(p);
	rmdir(f->root);
	rm_cgpaths_free(f->cg);
	rm_snap_clear(&f->prev);
	rm_snap_clear(&f->now);
}

static void has(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing: %s\n--- in:\n%s", line, text);
}

static void test_prometheus(void **state)
{
	struct fixture f;
	const char *miss[] = { "ib_uverbs_alloc_pd", NULL };
	struct rm_report_ctx ctx = { .missing_hooks = miss, .hooks_attached = 20 };
	char *t, line[256];

	(void)state;
	make(&f);
	ctx.cg = f.cg;
	t = rm_metrics_text(&f.now, &f.prev, &ctx, RM_FMT_PROMETHEUS);
	assert_non_null(t);
	has(t, "# TYPE rdmamon_objects gauge\n");
	has(t, "rdmamon_objects{device=\"rxe0\",type=\"qp\",owner=\"user\"} 8\n");
	has(t, "rdmamon_objects{device=\"rxe0\",type=\"qp\",owner=\"kernel\"} 1\n");
	has(t, "rdmamon_cgroup_objects{cgroup=\"/tenant-a\",device=\"rxe0\",type=\"qp\"} 8\n");
	has(t, "rdmamon_cgroup_objects{cgroup=\"/pod\\\"x\",device=\"rxe0\",type=\"pd\"} 1\n");
	/* the Prometheus text format names a counter's family with _total */
	has(t, "# TYPE rdmamon_creates_total counter\n");
	has(t, "rdmamon_creates_total{cgroup=\"/tenant-a\",device=\"rxe0\",type=\"qp\",owner=\"user\"} 10\n");
	has(t, "rdmamon_destroys_total{cgroup=\"/tenant-a\",device=\"rxe0\",type=\"qp\",owner=\"user\"} 2\n");
	has(t, "rdmamon_creates_total{cgroup=\"(kernel)\",device=\"rxe0\",type=\"qp\",owner=\"kernel\"} 1\n");
	has(t, "rdmamon_calls_total{cgroup=\"/tenant-a\",operation=\"create_qp\",errno=\"ok\"} 10\n");
	has(t, "rdmamon_calls_total{cgroup=\"/tenant-a\",operation=\"create_qp\",errno=\"EINVAL\"} 1\n");
	has(t, "rdmamon_calls_total{cgroup=\"cgroup-id:777\",operation=\"modify_qp\",errno=\"ok\"} 4\n");
	/* (10 + 1 - 2) create_qp calls over 2 s */
	has(t, "rdmamon_calls_per_second{operation=\"create_qp\"} 4.5\n");
	has(t, "rdmamon_calls_per_second{operation=\"modify_qp\"} 2\n");
	has(t, "rdmamon_lost_total{what=\"ring_call\"} 3\n");
	has(t, "rdmamon_ring_events_total{kind=\"add\"} 11\n");
	has(t, "rdmamon_hooks_attached 20\n");
	has(t, "rdmamon_hook_missing{function=\"ib_uverbs_alloc_pd\"} 1\n");
	has(t, "rdmamon_interval_seconds 2\n");
	has(t, "rdmamon_last_update_timestamp_seconds 1764000000.5\n");
	assert_null(strstr(t, "# EOF"));
	/* every sample line belongs to the family whose TYPE came last */
	{
		char fam[128] = "";
		const char *p = t;

		while (*p) {
			const char *nl = strchr(p, '\n');
			size_t n = (size_t)(nl - p);

			assert_non_null(nl);
			assert_true(n < sizeof(line));
			memcpy(line, p, n);
			line[n] = 0;
			if (sscanf(line, "# TYPE %127s", fam) != 1 && line[0] != '#')
				assert_int_equal(strncmp(line, fam, strlen(fam)), 0);
			p = nl + 1;
		}
	}
	free(t);
	/* no previous reading: rates 0, not garbage */
	t = rm_metrics_text(&f.now, NULL, &ctx, RM_FMT_PROMETHEUS);
	has(t, "rdmamon_calls_per_second{operation=\"create_qp\"} 0\n");
	free(t);
	unmake(&f);
}

static void test_openmetrics(void **state)
{
	struct fixture f;
	struct rm_report_ctx ctx = { 0 };
	char *t;
	size_t n;

	(void)state;
	make(&f);
	t = rm_metrics_text(&f.now, &f.prev, &ctx, RM_FMT_OPENMETRICS);
	assert_non_null(t);
	/* OpenMetrics: the family without _total, the samples with it, # EOF last */
	has(t, "# TYPE rdmamon_creates counter\n");
	has(t, "rdmamon_creates_total{cgroup=\"cgroup-id:");
	n = strlen(t);
	assert_true(n > 6);
	assert_string_equal(t + n - 6, "# EOF\n");
	free(t);
	unmake(&f);
}

/* Prometheus's own parser and linter on what we serve. */
static void test_promtool(void **state)
{
	struct fixture f;
	struct rm_report_ctx ctx = { .hooks_attached = 20 };
	char file[] = "/tmp/rdmamon-metrics-XXXXXX", cmd[256];
	char *t;
	int fd, rc;

	(void)state;
	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		printf("# promtool is not installed (Debian's prometheus, ci/deps): skipped\n");
		skip();
	}
	make(&f);
	ctx.cg = f.cg;
	t = rm_metrics_text(&f.now, &f.prev, &ctx, RM_FMT_PROMETHEUS);
	assert_non_null(t);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, t, strlen(t)), (ssize_t)strlen(t));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 1>&2", file);
	rc = system(cmd);
	unlink(file);
	assert_true(WIFEXITED(rc));
	assert_int_equal(WEXITSTATUS(rc), 0);
	free(t);
	unmake(&f);
}

static void test_listen_parse(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char msg[256], a[64];

	(void)state;
	assert_int_equal(rm_listen_parse("9435", &ss, &len, msg, sizeof(msg)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, a, sizeof(a));
	assert_string_equal(a, "127.0.0.1");    /* only a port: loopback */
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9435);
	assert_int_equal(rm_listen_parse("0.0.0.0:80", &ss, &len, msg, sizeof(msg)), 0);
	assert_int_equal(rm_listen_parse("[::1]:9435", &ss, &len, msg, sizeof(msg)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9435);
	assert_int_equal(rm_listen_parse("0", &ss, &len, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "not a port number"));
	assert_int_equal(rm_listen_parse("65536", &ss, &len, msg, sizeof(msg)), -1);
	assert_int_equal(rm_listen_parse("1.2.3.4:", &ss, &len, msg, sizeof(msg)), -1);
	assert_int_equal(rm_listen_parse("1.2.3.4:x9", &ss, &len, msg, sizeof(msg)), -1);
	assert_int_equal(rm_listen_parse("300.1.1.1:9435", &ss, &len, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "not a numeric IPv4 or [IPv6] address"));
	assert_int_equal(rm_listen_parse("localhost:9435", &ss, &len, msg, sizeof(msg)), -1);
	assert_int_equal(rm_listen_parse("::1:9435", &ss, &len, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "[ADDR]:PORT"));
	assert_int_equal(rm_listen_parse("[::1", &ss, &len, msg, sizeof(msg)), -1);
	assert_int_equal(rm_listen_parse(":9435", &ss, &len, msg, sizeof(msg)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prometheus),
		cmocka_unit_test(test_openmetrics),
		cmocka_unit_test(test_promtool),
		cmocka_unit_test(test_listen_parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
