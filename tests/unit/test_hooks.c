/* SPDX-License-Identifier: BSD-2-Clause */
/* The hook layer: loader errors (missing file, bad ABI, missing symbol,
 * short table, failing init, bad specs), the example plugin loaded through
 * pt_hooks_load and called with the right values, libwrtrace.so as a
 * plugin, PERFTEST_PLUGIN, several plugins at once, and hooks that stay
 * silent outside a run. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "plugin/hooks/hooks.h"
#include "perftest/engine/engine.h"
#include "plugin/recorder/wrtrace.h"

#define SO(p) PT_TEST_BUILDDIR "/" p

static char dir[] = "/tmp/test_hooks.XXXXXX";
static const uint32_t qpns[2] = { 0x2a, 0x2b };

static int setup(void **state)
{
	(void)state;
	unsetenv(PT_HOOKS_ENV);
	unsetenv(WRT_MAX_ENV);
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static int after_each(void **state)
{
	(void)state;
	pt_hooks_unload_all();
	assert_int_equal(pt_hooks_count(), 0);
	assert_false(pt_hooks_on);
	return 0;
}

static void expect_load_error(const char *spec, const char *want)
{
	char err[512] = "";

	assert_int_equal(pt_hooks_load(spec, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("loading '%s': error '%s' lacks '%s'", spec, err, want);
	assert_int_equal(pt_hooks_count(), 0);
}

static void test_loader_errors(void **state)
{
	(void)state;
	expect_load_error("/nonexistent/x.so", "plugin /nonexistent/x.so: cannot load: ");
	expect_load_error(SO("tests/unit/bad_abi.so"),
			  "built for plugin ABI version 99, this tool speaks version 1");
	expect_load_error(SO("tests/unit/no_entry.so"), "no symbol perftest_plugin_ops");
	expect_load_error(SO("tests/unit/small_ops.so"), "ops table of 16 bytes");
	expect_load_error(SO("tests/unit/init_fails.so") ":abc",
			  "init failed: the test plugin refuses to start");
	expect_load_error("", "empty specification");
	expect_load_error(":args", "no path before ':'");
	/* a file that is not a shared object */
	expect_load_error(PT_TEST_BUILDDIR "/Makefile", "cannot load");
}

static struct pt_plugin_run_info info(uint32_t run)
{
	return (struct pt_plugin_run_info){
		.struct_size = sizeof(struct pt_plugin_run_info), .run = run, .tool = "ib_send_bw",
		.device = "rxe0", .role = PT_PLUGIN_ROLE_CLIENT, .conn = PT_PLUGIN_CONN_RC,
		.directions = PT_PLUGIN_DIR_SEND, .num_qps = 2, .qp_nums = qpns, .msg_size = 4096,
		.iterations = 6, .tx_depth = 8, .cq_mod = 3, .post_list = 2,
		.hw_ts = PT_PLUGIN_HW_TS_NONE, .hw_clock_domain = "none",
		.sw_clock = "CLOCK_MONOTONIC_RAW",
	};
}

/* One run: 2 QPs x 6 WRs in post lists of 2, a CQE every 3rd. */
static int drive_run(uint32_t run)
{
	struct pt_plugin_run_info in = info(run);
	struct pt_plugin_run_end end = { .struct_size = sizeof(end), .run = run };
	char err[512];
	uint64_t t = 1000;

	if (pt_hooks_run_start(&in, err, sizeof(err)))
		return -1;
	for (uint32_t q = 0; q < 2; q++) {
		for (uint64_t s = 0; s < 6; s += 2)
			pt_hook_post(q, s, 2, PT_PLUGIN_OP_SEND, ((uint64_t)q << 32) | s, 1, 4096, 3,
				     s == 4 ? PT_PLUGIN_POST_LAST_SIGNALED : 0, t += 10);
		pt_hook_completion(q, ((uint64_t)q << 32) | 2, 2, 0, PT_PLUGIN_OP_SEND, 4096, 0,
				   t += 500, 0);
		pt_hook_completion(q, ((uint64_t)q << 32) | 5, 5, 0, PT_PLUGIN_OP_SEND, 4096, 0,
				   t += 500, 0);
	}
	return pt_hooks_run_end(&end, err, sizeof(err));
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

/* The example plugin, built only against perftest_plugin.h, sees exactly
 * what the loop reported, and nothing outside a run. */
static void test_example_plugin(void **state)
{
	char spec[600], out[256], err[512], *text;

	(void)state;
	snprintf(out, sizeof(out), "%s/count.txt", dir);
	snprintf(spec, sizeof(spec), "%s:%s", SO("plugin/examples/count_plugin.so"), out);
	assert_int_equal(pt_hooks_load(spec, err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_count(), 1);
	pt_hook_post(0, 0, 1, PT_PLUGIN_OP_SEND, 0, 1, 1, 1, 0, 1); /* before any run: ignored */
	assert_int_equal(drive_run(0), 0);
	pt_hook_post(0, 0, 1, PT_PLUGIN_OP_SEND, 0, 1, 1, 1, 0, 1); /* after it: ignored */
	pt_hook_completion(0, 0, 0, 0, 0, 0, 0, 1, 0);
	pt_hooks_unload_all(); /* fini closes the file */
	text = slurp(out);
	assert_string_equal(text,
		"start run=0 tool=ib_send_bw device=rxe0 qps=2 qpn0=0x2a size=4096 iters=6\n"
		"end run=0 posts=6 wrs=12 bytes=49152 last_seq=5 cqes=4 recvs=0 hw=0 last_wr_id=0x100000005\n");
	free(text);
}

/* libwrtrace.so through the same loader writes a trace the reader accepts. */
static void test_wrtrace_so(void **state)
{
	char spec[600], out[256], err[512];
	struct wrt_trace t;

	(void)state;
	snprintf(out, sizeof(out), "%s/so.csv", dir);
	snprintf(spec, sizeof(spec), "%s:%s:quiet", SO("plugin/libwrtrace.so"), out);
	assert_int_equal(pt_hooks_load(spec, err, sizeof(err)), 0);
	assert_int_equal(drive_run(0), 0);
	assert_int_equal(drive_run(1), 0);
	pt_hooks_unload_all();
	assert_int_equal(wrt_read(out, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nruns, 2);
	assert_int_equal(t.runs[1].n, 12);
	assert_int_equal(t.runs[1].meta.incomplete, 0);
	/* QP 1, seq 0 was posted at 2040 and retired by the CQE at 2560 */
	assert_int_equal(t.runs[1].recs[6].qp, 1);
	assert_int_equal(t.runs[1].recs[6].t_post, 2040);
	assert_int_equal(t.runs[1].recs[6].t_comp, 2560);
	assert_int_equal(t.runs[1].recs[6].wr_id, 1ull << 32);
	wrt_trace_free(&t);
	/* its argument errors come back through the loader */
	snprintf(spec, sizeof(spec), "%s:%s:max=ten", SO("plugin/libwrtrace.so"), out);
	expect_load_error(spec, "init failed: max 'ten'");
	snprintf(spec, sizeof(spec), "%s", SO("plugin/libwrtrace.so"));
	expect_load_error(spec, "init failed: no output file");
	snprintf(spec, sizeof(spec), "%s:/nonexistent/t.csv", SO("plugin/libwrtrace.so"));
	expect_load_error(spec, "cannot write /nonexistent/t.csv");
}

/* PERFTEST_PLUGIN loads like --plugin and names itself in errors. */
static void test_env(void **state)
{
	char spec[600], out[256], err[512] = "";

	(void)state;
	assert_int_equal(pt_hooks_load_env(err, sizeof(err)), 0); /* unset: nothing */
	assert_int_equal(pt_hooks_count(), 0);
	snprintf(out, sizeof(out), "%s/env.txt", dir);
	snprintf(spec, sizeof(spec), "%s:%s", SO("plugin/examples/count_plugin.so"), out);
	setenv(PT_HOOKS_ENV, spec, 1);
	assert_int_equal(pt_hooks_load_env(err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_count(), 1);
	pt_hooks_unload_all();
	setenv(PT_HOOKS_ENV, "/nonexistent/p.so", 1);
	assert_int_equal(pt_hooks_load_env(err, sizeof(err)), -1);
	assert_non_null(strstr(err, "(from PERFTEST_PLUGIN)"));
	unsetenv(PT_HOOKS_ENV);
}

/* Files of a test that loads the example plugin (counts in DIR/STEM.txt)
 * and the recorder (DIR/STEM.EXT), and the load specs for both. */
struct specs {
	char out[256], trace[256], count[600], rec[300];
};

static void specs_for(struct specs *p, const char *stem, const char *ext)
{
	snprintf(p->out, sizeof(p->out), "%s/%s.txt", dir, stem);
	snprintf(p->trace, sizeof(p->trace), "%s/%s.%s", dir, stem, ext);
	snprintf(p->count, sizeof(p->count), "%s:%s", SO("plugin/examples/count_plugin.so"), p->out);
	snprintf(p->rec, sizeof(p->rec), "%s:quiet", p->trace);
}

/* --trace and a plugin together both see every event; a failing run start
 * of the second still gives the first its run end. */
static void test_two_plugins(void **state)
{
	struct pt_plugin_run_info bad = info(0);
	char err[512], *text;
	struct wrt_trace t;
	struct specs f;

	(void)state;
	specs_for(&f, "two", "jsonl");
	assert_int_equal(pt_hooks_load(f.count, err, sizeof(err)), 0);
	assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), f.rec, err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_count(), 2);
	assert_int_equal(drive_run(0), 0);
	bad.num_qps = 0; /* the recorder refuses it */
	assert_int_equal(pt_hooks_run_start(&bad, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "plugin wrtrace: run start failed: run with 0 QPs"));
	assert_false(pt_hooks_on);
	pt_hooks_unload_all();
	text = slurp(f.out);
	assert_non_null(strstr(text, "end run=0 posts=6 wrs=12"));
	/* the counter got start and end for the refused run */
	assert_non_null(strstr(text, "qps=0"));
	assert_int_equal(strstr(strstr(text, "qps=0"), "end run=0") != NULL, 1);
	free(text);
	assert_int_equal(wrt_read(f.trace, &t, err, sizeof(err)), 0);
	assert_int_equal(t.runs[0].n, 12);
	wrt_trace_free(&t);
	expect_load_error("", "empty");
	assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), "", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--trace: give an output file"));
}

/* A run of 6 plain WRs on QP 0 through post_one and the last one through
 * post (as run_bw.c posts), CQEs at seq 2 and 5. */
static int drive_post_one(uint32_t send_opcode)
{
	struct pt_plugin_run_info in = info(0);
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	char err[512];

	in.num_qps = 1;
	in.post_list = 1;
	in.send_opcode = send_opcode;
	if (pt_hooks_run_start(&in, err, sizeof(err)))
		return -1;
	for (uint64_t s = 0; s < 5; s++)
		pt_hook_post_one(0, s, 0x700 + s, 100 + s);
	pt_hook_post(0, 5, 1, send_opcode, 0x705, 1, 4096, 3, PT_PLUGIN_POST_LAST_SIGNALED, 105);
	pt_hook_completion(0, 0x702, 2, 0, send_opcode, 4096, 0, 300, 0);
	pt_hook_completion(0, 0x705, 5, 0, send_opcode, 4096, 0, 400, 0);
	return pt_hooks_run_end(&end, err, sizeof(err));
}

/* post_one reaches a plugin without it (the example) as the post event it
 * stands for, the recorder directly, and both when both are loaded. */
static void test_post_one(void **state)
{
	char err[512], *text;
	struct wrt_trace t;
	struct specs f;

	(void)state;
	specs_for(&f, "one", "csv");
	for (int both = 0; both < 2; both++) {
		if (both)
			assert_int_equal(pt_hooks_load(f.count, err, sizeof(err)), 0);
		assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), f.rec, err, sizeof(err)), 0);
		assert_int_equal(drive_post_one(PT_PLUGIN_OP_WRITE), 0);
		pt_hooks_unload_all();
		assert_int_equal(wrt_read(f.trace, &t, err, sizeof(err)), 0);
		assert_int_equal(t.runs[t.nruns - 1].n, 6);
		for (uint64_t s = 0; s < 6; s++) {
			const struct wrt_rec *r = &t.runs[t.nruns - 1].recs[s];

			assert_int_equal(r->seq, s);
			assert_int_equal(r->wr_id, 0x700 + s);
			assert_int_equal(r->t_post, 100 + s);
			assert_int_equal(r->t_comp, s < 3 ? 300 : 400);
			assert_int_equal(r->bytes, 4096);
			assert_int_equal(r->opcode, PT_PLUGIN_OP_WRITE);
			assert_int_equal(!!(r->flags & WRT_SIGNALED), s == 2 || s == 5);
		}
		wrt_trace_free(&t);
	}
	/* the example has no post_one: it counted 6 posts of 4096 bytes, with
	 * the recorder (above) and alone (below) */
	text = slurp(f.out);
	assert_non_null(strstr(text, "end run=0 posts=6 wrs=6 bytes=24576 last_seq=5 cqes=2"));
	free(text);
	unlink(f.out);
	assert_int_equal(pt_hooks_load(f.count, err, sizeof(err)), 0);
	assert_int_equal(drive_post_one(PT_PLUGIN_OP_SEND), 0);
	pt_hooks_unload_all();
	text = slurp(f.out);
	assert_non_null(strstr(text, "end run=0 posts=6 wrs=6 bytes=24576 last_seq=5 cqes=2"));
	free(text);
}

/* A plugin that lends QP 0 three post slots at each post_one call. */
static struct {
	struct pt_plugin_post_slots *slots;
	uint32_t n, binds, calls, posts;
	uint64_t times[16], seqs[8], bases[8];
	unsigned used;
} lender;

static void lender_bind(void *st, struct pt_plugin_post_slots *slots, uint32_t n)
{
	(void)st;
	lender.slots = slots;
	lender.n = n;
	lender.binds++;
}

static void lender_post(void *st, const struct pt_plugin_post *ev)
{
	(void)st;
	(void)ev;
	lender.posts++;
}

static void lender_post_one(void *st, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t)
{
	struct pt_plugin_post_slots *s;

	(void)st;
	(void)wr_id;
	(void)t;
	if (lender.calls < 8) {
		lender.seqs[lender.calls] = seq;
		lender.bases[lender.calls] = qp < lender.n ? lender.slots[qp].wr_id_base : 0;
	}
	lender.calls++;
	if (qp != 0 || !lender.slots || lender.used + 3 > 16)
		return;
	s = &lender.slots[0];
	s->pos = &lender.times[lender.used];
	s->lim = s->pos + 3;
	s->next_seq = seq + 1;
	lender.used += 3;
}

static const struct pt_plugin_ops lender_ops = {
	.abi_version = PT_PLUGIN_ABI_VERSION, .struct_size = sizeof(struct pt_plugin_ops),
	.name = "lender", .post = lender_post, .post_one = lender_post_one,
	.bind_post_slots = lender_bind,
};

/* Post slots (ABI 1.2): the tool stores post times in the slots lent and
 * calls post_one only when they run out, the sequence jumps or the QP has
 * none, with wr_id_base set; the slots are empty again after the run; with
 * a second plugin that takes posts nothing is bound. */
static void test_post_slots(void **state)
{
	static const uint64_t want_seq[] = { 0, 4, 8, 0, 1, 20 };
	struct pt_plugin_run_info in = info(0);
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	char err[512];
	struct specs f;

	(void)state;
	memset(&lender, 0, sizeof(lender));
	assert_int_equal(pt_hooks_load_builtin(&lender_ops, "lender", "", err, sizeof(err)), 0);
	pt_hooks_set_qps(3);   /* a QP more than the plugin hears of */
	assert_int_equal(pt_hooks_run_start(&in, err, sizeof(err)), 0);
	assert_int_equal(lender.binds, 1);
	assert_int_equal(lender.n, in.num_qps);
	assert_true(pt_hooks_post_slots[2].pos == pt_hooks_post_slots[2].lim);
	for (uint64_t s = 0; s < 9; s++)
		pt_hook_post_one(0, s, 0x900 + s, 100 + s);
	pt_hook_post_one(1, 0, (1ull << 48) + 0, 200);   /* QP 1: never lent */
	pt_hook_post_one(1, 1, (1ull << 48) + 1, 201);
	pt_hook_post_one(0, 20, 0x900 + 20, 300);        /* not next_seq (9) */
	assert_int_equal(lender.calls, 6);
	assert_int_equal(lender.posts, 0);
	for (int k = 0; k < 6; k++) {
		assert_int_equal(lender.seqs[k], want_seq[k]);
		assert_int_equal(lender.bases[k], k == 3 || k == 4 ? 1ull << 48 : 0x900);
	}
	for (int k = 0; k < 6; k++)   /* seq 1-3 and 5-7 */
		assert_int_equal(lender.times[k], 100 + 1 + k + k / 3);
	assert_int_equal(lender.times[6], 0);   /* lent at 8, 20 did not fit */
	pt_hook_post_one(2, 0, 0x2000, 600);             /* past num_qps: the call */
	assert_int_equal(lender.calls, 7);
	lender.calls = 6;
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	assert_true(pt_hooks_post_slots[0].pos == pt_hooks_post_slots[0].lim);
	pt_hook_post_one(0, 21, 0x900 + 21, 400);        /* outside a run: nothing */
	assert_int_equal(lender.calls, 6);
	/* with the example plugin too, post_one becomes post events for both */
	specs_for(&f, "slots", "csv");
	assert_int_equal(pt_hooks_load(f.count, err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_run_start(&in, err, sizeof(err)), 0);
	assert_int_equal(lender.binds, 1);
	pt_hook_post_one(0, 0, 0x900, 500);
	pt_hook_post_one(0, 1, 0x901, 501);
	assert_int_equal(lender.posts, 2);
	assert_int_equal(lender.calls, 6);
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
}

/* A plugin that logs the latency events it gets and, with pairs on, lends
 * QP 0 the three pairs of mem at bind time and never again. */
static struct {
	char log[64][48];
	unsigned n;
	bool lend;
	struct pt_plugin_pair_slots *slots;
	struct pt_plugin_pair mem[3];
} pairer;

static void pairer_post(void *st, const struct pt_plugin_post *ev)
{
	(void)st;
	if (pairer.n < 64)
		snprintf(pairer.log[pairer.n++], 48, "P%s q%u s%llu id%llu n%u o%u b%u p%u f%u t%llu",
			 "", ev->qp, (unsigned long long)ev->first_seq,
			 (unsigned long long)ev->first_wr_id, ev->count, ev->opcode, ev->bytes,
			 ev->signal_period, ev->flags, (unsigned long long)ev->t_ns);
}

static void pairer_completion(void *st, const struct pt_plugin_completion *ev)
{
	(void)st;
	if (pairer.n < 64)
		snprintf(pairer.log[pairer.n++], 48, "C q%u s%lld id%llu st%u f%u b%u t%llu", ev->qp,
			 (long long)ev->seq, (unsigned long long)ev->wr_id, ev->status, ev->flags,
			 ev->bytes, (unsigned long long)ev->t_poll_ns);
}

static void pairer_bind(void *st, struct pt_plugin_pair_slots *slots, uint32_t n)
{
	(void)st;
	assert_int_equal(n, 1);
	pairer.slots = slots;
	if (pairer.lend) {
		slots[0].pos = pairer.mem;
		slots[0].lim = pairer.mem + 3;
	}
}

/* send_lat's client, two iterations and a third send whose CQE never
 * comes, through the pair hooks; the events the plugin got, in order. */
static void drive_pairs(const struct pt_plugin_ops *ops)
{
	struct pt_plugin_run_info in = info(0);
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND, .byte_len = 64 };
	char err[512];

	memset(&pairer, 0, sizeof(pairer));
	pairer.lend = ops->struct_size > offsetof(struct pt_plugin_ops, bind_pair_slots);
	in.num_qps = 1;
	in.tx_depth = 1;
	in.msg_size = 64;
	in.cq_mod = 1;
	in.post_list = 1;
	in.send_opcode = PT_PLUGIN_OP_SEND;
	assert_int_equal(pt_hooks_load_builtin(ops, "pairer", "", err, sizeof(err)), 0);
	assert_int_equal(pt_hooks_run_start(&in, err, sizeof(err)), 0);
	pt_hook_post(0, 0, 1, PT_PLUGIN_OP_RECV, 0, 1, 64, 0, 0, 10);
	for (uint64_t i = 0; i < 3; i++) {
		pt_hook_pair_post(0, i, 0, 100 + 10 * i);
		if (i == 2)
			break;
		wc.wr_id = 0;
		pt_hook_pair_wc(0, i, &wc, false, 101 + 10 * i, NULL);
		wc.wr_id = i;
		pt_hook_pair_wc(0, PT_PLUGIN_SEQ_UNKNOWN, &wc, true, 102 + 10 * i, NULL);
		pt_hook_post(0, i + 1, 1, PT_PLUGIN_OP_RECV, i + 1, 1, 64, 0, 0, 103 + 10 * i);
	}
	assert_int_equal(pt_hooks_run_end(&end, err, sizeof(err)), 0);
	pt_hooks_unload_all();
}

/* Pair slots (ABI 1.3): a plugin of ABI 1.2 (no bind_pair_slots) gets
 * every event of the latency hooks, as pt_hook_post and pt_hook_wc made
 * them; a plugin that lends three pairs gets the first iteration as
 * events (what the pairs stand for is learnt from them), finds the second
 * iteration's send pair and receive pair with its repost in the slots (no
 * call), and gets the last send, whose CQE never comes and whose post
 * time waited in the third slot, at run end. */
static void test_pair_slots(void **state)
{
	static const char *const want[] = {
		"P q0 s0 id0 n1 o7 b64 p0 f0 t10", "P q0 s0 id0 n1 o0 b64 p1 f1 t100",
		"C q0 s0 id0 st0 f0 b64 t101", "C q0 s-1 id0 st0 f1 b64 t102",
		"P q0 s1 id1 n1 o7 b64 p0 f0 t103", "P q0 s1 id0 n1 o0 b64 p1 f1 t110",
		"C q0 s1 id0 st0 f0 b64 t111", "C q0 s-1 id1 st0 f1 b64 t112",
		"P q0 s2 id2 n1 o7 b64 p0 f0 t113", "P q0 s2 id0 n1 o0 b64 p1 f1 t120",
	};
	struct pt_plugin_ops ops = {
		.abi_version = PT_PLUGIN_ABI_VERSION,
		.struct_size = offsetof(struct pt_plugin_ops, bind_pair_slots), .name = "pairer",
		.post = pairer_post, .completion = pairer_completion, .bind_pair_slots = pairer_bind,
	};

	(void)state;
	drive_pairs(&ops);   /* ABI 1.2: bind_pair_slots beyond its size */
	assert_null(pairer.slots);
	assert_int_equal(pairer.n, 10);
	for (unsigned k = 0; k < 10; k++)
		assert_string_equal(pairer.log[k], want[k]);
	ops.struct_size = sizeof(ops);
	drive_pairs(&ops);
	assert_non_null(pairer.slots);
	assert_int_equal(pairer.n, 6);
	for (unsigned k = 0; k < 5; k++)
		assert_string_equal(pairer.log[k], want[k]);
	assert_string_equal(pairer.log[5], want[9]);
	assert_int_equal(pairer.mem[0].t_first_ns, 110);
	assert_int_equal(pairer.mem[0].t_second_ns, 111);
	assert_int_equal(pairer.mem[1].t_first_ns, 112 | PT_PLUGIN_PAIR_RECV);
	assert_int_equal(pairer.mem[1].t_second_ns, 113);
	assert_int_equal(pairer.mem[2].t_first_ns, 0);   /* handed over: cleared */
	assert_true(pairer.slots[0].pos == pairer.slots[0].lim);   /* empty after the run */
}

/* Five plugins are one too many; the fifth is refused by name. */
static void test_plugin_limit(void **state)
{
	char arg[600], err[512];

	(void)state;
	for (int i = 0; i < PT_HOOKS_MAX; i++) {
		snprintf(arg, sizeof(arg), "%s/l%d.csv:quiet", dir, i);
		assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), arg, err, sizeof(err)), 0);
	}
	assert_int_equal(pt_trace_load_builtin(wrt_plugin_get_ops(), arg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "at most 4 plugins"));
}

static void test_opcodes(void **state)
{
	(void)state;
	assert_int_equal(pt_plugin_op_of_wc(IBV_WC_RDMA_WRITE), PT_PLUGIN_OP_WRITE);
	assert_int_equal(pt_plugin_op_of_wc(IBV_WC_RECV_RDMA_WITH_IMM), PT_PLUGIN_OP_RECV);
	assert_int_equal(pt_plugin_op_of_wc((enum ibv_wc_opcode)999), PT_PLUGIN_OP_OTHER);
	assert_int_equal(pt_plugin_op_of_wr(IBV_WR_SEND_WITH_IMM), PT_PLUGIN_OP_SEND_IMM);
	assert_int_equal(pt_plugin_op_of_wr(IBV_WR_ATOMIC_CMP_AND_SWP), PT_PLUGIN_OP_ATOMIC_CS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_loader_errors, after_each),
		cmocka_unit_test_teardown(test_example_plugin, after_each),
		cmocka_unit_test_teardown(test_wrtrace_so, after_each),
		cmocka_unit_test_teardown(test_env, after_each),
		cmocka_unit_test_teardown(test_two_plugins, after_each),
		cmocka_unit_test_teardown(test_post_one, after_each),
		cmocka_unit_test_teardown(test_post_slots, after_each),
		cmocka_unit_test_teardown(test_pair_slots, after_each),
		cmocka_unit_test_teardown(test_plugin_limit, after_each),
		cmocka_unit_test_teardown(test_opcodes, after_each),
	};
	return cmocka_run_group_tests_name("hooks", tests, setup, teardown);
}
