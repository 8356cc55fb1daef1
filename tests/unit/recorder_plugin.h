/* SPDX-License-Identifier: BSD-2-Clause */
/* Unit tests' plugin that hands every call to one recorder (wrtrace) and
 * counts the calls: what went through the hooks' calls rather than as
 * pairs or post times in the slots (ABI 1.3, 1.2). Load it with pt_hooks_load_builtin after
 * setting recorder_plugin_target (a started recorder) and zeroing
 * recorder_plugin_calls. Header-only: each test program has its own. */
#ifndef TESTS_RECORDER_PLUGIN_H
#define TESTS_RECORDER_PLUGIN_H
#include <stdint.h>
#include "plugin/perftest_plugin.h"
#include "plugin/recorder/wrtrace.h"
#include "plugin/hooks/hooks.h"

static struct wrt *recorder_plugin_target;
static uint64_t recorder_plugin_calls;

static int rp_init(const char *args, void **state, char *err, size_t err_len)
{
	(void)args, (void)err, (void)err_len;
	*state = recorder_plugin_target;
	return 0;
}

static int rp_run_start(void *s, const struct pt_plugin_run_info *in, char *err, size_t len)
{
	(void)s, (void)in, (void)err, (void)len;   /* the recorder is started already */
	return 0;
}

static void rp_post(void *s, const struct pt_plugin_post *ev)
{
	recorder_plugin_calls++;
	wrt_post(s, ev);
}

static void rp_post_one(void *s, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	recorder_plugin_calls++;
	wrt_post_one(s, qp, seq, wr_id, t_ns);
}

static void rp_bind_posts(void *s, struct pt_plugin_post_slots *slots, uint32_t n)
{
	wrt_bind_post_slots(s, slots, n);
}

static void rp_completion(void *s, const struct pt_plugin_completion *ev)
{
	recorder_plugin_calls++;
	wrt_complete(s, ev);
}

static int rp_run_end(void *s, const struct pt_plugin_run_end *e, char *err, size_t len)
{
	return wrt_run_end(s, e, err, len);
}

static void rp_bind_pairs(void *s, struct pt_plugin_pair_slots *slots, uint32_t n)
{
	wrt_bind_pair_slots(s, slots, n);
}

static const struct pt_plugin_ops recorder_plugin_ops = {
	.abi_version = PT_PLUGIN_ABI_VERSION, .struct_size = sizeof(struct pt_plugin_ops),
	.name = "recorder-test", .init = rp_init, .run_start = rp_run_start, .post = rp_post,
	.completion = rp_completion, .run_end = rp_run_end, .bind_pair_slots = rp_bind_pairs,
	.post_one = rp_post_one, .bind_post_slots = rp_bind_posts,
};

/* A recorder of args (rows in memory, quiet; pairs_max pair slots at a
 * time, 0: as many as it wants) started for run in, behind this plugin,
 * loaded as name and started: the hooks reach it. NULL on any failure. */
static inline struct wrt *recorder_plugin_start(const char *args, uint64_t pairs_max,
						const struct pt_plugin_run_info *in, const char *name)
{
	struct wrt_config cfg;
	struct wrt *w;
	char err[256];

	if (wrt_config_parse(args, &cfg, err, sizeof(err)))
		return NULL;
	cfg.path[0] = '\0';   /* rows in memory */
	cfg.quiet = true;
	cfg.pairs_max = pairs_max;
	w = wrt_new(&cfg);
	if (!w || wrt_run_start(w, in, err, sizeof(err))) {
		wrt_free(w);
		return NULL;
	}
	recorder_plugin_target = w;
	recorder_plugin_calls = 0;
	if (pt_hooks_load_builtin(&recorder_plugin_ops, name, "", err, sizeof(err)) ||
	    pt_hooks_run_start(in, err, sizeof(err))) {
		pt_hooks_unload_all();
		wrt_free(w);
		return NULL;
	}
	return w;
}

#endif
