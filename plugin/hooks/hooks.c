/* SPDX-License-Identifier: BSD-2-Clause */
/* Plugin loader and dispatch (hooks.h). */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hooks.h"

bool pt_hooks_on;

/* One loaded plugin. ops is a private copy, zero beyond the plugin's
 * struct_size, so a callback a v1.0 plugin never knew about reads as NULL. */
struct hook_slot {
	struct pt_plugin_ops ops;
	void *state;
	void *dl;                   /* NULL for the built-in recorder */
	char name[128];
	bool started;               /* run_start succeeded this run */
};

static struct hook_slot slots[PT_HOOKS_MAX];
static int nslots;

/* The hot callbacks of the plugins that have them, packed for the dispatch
 * loops (rebuilt whenever the set of plugins changes). */
struct post_call {
	void (*fn)(void *state, const struct pt_plugin_post *ev);
	void *state;
};
struct comp_call {
	void (*fn)(void *state, const struct pt_plugin_completion *ev);
	void *state;
};
static struct post_call post_calls[PT_HOOKS_MAX];
static struct comp_call comp_calls[PT_HOOKS_MAX];
static int npost, ncomp;

static void post_all(void *unused, const struct pt_plugin_post *ev)
{
	(void)unused;
	for (int i = 0; i < npost; i++)
		post_calls[i].fn(post_calls[i].state, ev);
}

static void completion_all(void *unused, const struct pt_plugin_completion *ev)
{
	(void)unused;
	for (int i = 0; i < ncomp; i++)
		comp_calls[i].fn(comp_calls[i].state, ev);
}

/* What post_one stands for in this run (pt_hooks_run_start). */
static struct pt_plugin_post one_template = { .struct_size = sizeof(one_template), .count = 1,
					       .wr_id_step = 1 };

/* post_one for plugins without it: the event it stands for. */
static void post_one_event(void *unused, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	struct pt_plugin_post ev = one_template;

	(void)unused;
	ev.qp = qp;
	ev.first_seq = seq;
	ev.first_wr_id = wr_id;
	ev.t_ns = t_ns;
	pt_hooks_post_fn(pt_hooks_post_state, &ev);
}

void (*pt_hooks_post_fn)(void *state, const struct pt_plugin_post *ev) = post_all;
void *pt_hooks_post_state;
void (*pt_hooks_completion_fn)(void *state, const struct pt_plugin_completion *ev) = completion_all;
void *pt_hooks_completion_state;
void (*pt_hooks_post_one_fn)(void *state, uint32_t qp, uint64_t seq, uint64_t wr_id,
			     uint64_t t_ns) = post_one_event;
void *pt_hooks_post_one_state;

/* The run's post slots (hooks.h); an empty one points at no_slot, so that
 * pos < lim compares two pointers into one object. */
static uint64_t no_slot;
struct pt_plugin_post_slots *pt_hooks_post_slots;
static uint32_t post_slots_cap, npost_slots, run_qps;
/* The plugin that gets them: the one whose post_one the hooks call, when it
 * has bind_post_slots; -1: none. */
static int post_slots_plugin = -1;

/* The run's pair slots (hooks.h): empty ones point at no_pair, and expect
 * nothing (no sequence or wr_id matches PT_PLUGIN_SEQ_UNKNOWN's value until
 * learnt), so every pair hook takes its slow path and makes the events. */
static struct pt_plugin_pair no_pair;
struct pt_plugin_pair_slots pt_hooks_pair_slots[PT_HOOKS_PAIR_QPS];
/* The plugin that gets them (as post_slots_plugin): -1 none. */
static int pair_slots_plugin = -1;
/* True once the plugin took them this run: only then the hooks learn. */
static bool pairs_bound;

static void pair_slots_empty(void)
{
	for (uint32_t q = 0; q < PT_HOOKS_PAIR_QPS; q++)
		pt_hooks_pair_slots[q] = (struct pt_plugin_pair_slots){
			.pos = &no_pair, .lim = &no_pair, .send_seq = PT_PLUGIN_SEQ_UNKNOWN,
			.send_wr_id = PT_PLUGIN_SEQ_UNKNOWN, .recv_wr_id = PT_PLUGIN_SEQ_UNKNOWN,
			.repost_seq = PT_PLUGIN_SEQ_UNKNOWN,
		};
	pairs_bound = false;
}

static void post_slots_empty(void)
{
	for (uint32_t q = 0; q < npost_slots; q++)
		pt_hooks_post_slots[q] = (struct pt_plugin_post_slots){ .pos = &no_slot, .lim = &no_slot };
	pair_slots_empty();
}

/* A send post held in the slot at pos (pt_hook_pair_post; lent slots read
 * 0 until the tool stores) is still owed to the plugins as an event: hand
 * it over, the slot cleared first (the plugin may lend it again). */
static void pair_post_owed(uint32_t qp)
{
	struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[qp];
	struct pt_plugin_post ev = one_template;

	if (s->pos >= s->lim || !s->pos->t_first_ns)
		return;
	ev.qp = qp;
	ev.first_seq = s->send_seq;
	ev.first_wr_id = s->send_wr_id;
	ev.signal_period = 1;
	ev.flags = PT_PLUGIN_POST_LAST_SIGNALED;
	ev.t_ns = s->pos->t_first_ns;
	s->pos->t_first_ns = 0;
	s->open = NULL;
	pt_hooks_post_fn(pt_hooks_post_state, &ev);
}

void pt_hooks_pair_post_slow(uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	struct pt_plugin_post ev = one_template;
	const bool pair_qp = qp < PT_HOOKS_PAIR_QPS;

	ev.qp = qp;
	ev.first_seq = seq;
	ev.first_wr_id = wr_id;
	ev.signal_period = 1;
	ev.flags = PT_PLUGIN_POST_LAST_SIGNALED;
	ev.t_ns = t_ns ? t_ns : pt_now_ns();
	if (pair_qp)
		pt_hooks_pair_slots[qp].open = NULL;
	pt_hooks_post_fn(pt_hooks_post_state, &ev);
	if (!pair_qp)
		return;
	/* learnt after the call: a pair of the next WR stands for what this
	 * was; send_seq past seq says this WR's CQE has no post in a slot */
	pt_hooks_pair_slots[qp].send_seq = PT_PLUGIN_SEQ_UNKNOWN;
	if (pairs_bound && seq < PT_PLUGIN_SEQ_UNKNOWN - 1) {
		pt_hooks_pair_slots[qp].send_seq = seq + 1;
		pt_hooks_pair_slots[qp].send_wr_id = wr_id;
	}
}

void pt_hooks_pair_wc_slow(uint32_t qp, uint64_t seq, uint64_t wr_id, uint32_t status,
			   enum ibv_wc_opcode wc_op, uint32_t bytes, bool recv, uint64_t t_poll_ns,
			   const uint64_t *hw_ns)
{
	struct pt_plugin_pair_slots *s = qp < PT_HOOKS_PAIR_QPS ? &pt_hooks_pair_slots[qp] : NULL;
	/* its post went into the slot at pos (pt_hook_pair_wc) */
	const bool owed = s && !recv && seq == s->send_seq;

	if (s)
		s->open = NULL;   /* a repost after this is not the open pair's */
	if (owed)
		pair_post_owed(qp);
	pt_hook_completion(qp, wr_id, seq, status,
			   recv ? PT_PLUGIN_OP_RECV : pt_plugin_op_of_wc(wc_op), bytes,
			   (recv ? PT_PLUGIN_COMP_RECV : 0) | (hw_ns ? PT_PLUGIN_COMP_HW_TS : 0),
			   t_poll_ns, hw_ns ? *hw_ns : 0);
	if (!s || !pairs_bound)
		return;
	if (!recv) {
		if (owed)
			s->send_seq = seq + 1;
		return;
	}
	s->recv_wr_id = wr_id + 1;
	s->recv_bytes = bytes;
}

void pt_hooks_pair_repost_slow(uint32_t qp, uint64_t seq, uint64_t wr_id, uint32_t bytes,
			       uint64_t t_ns)
{
	struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[qp];   /* qp < PT_HOOKS_PAIR_QPS */
	struct pt_plugin_post ev = {
		.struct_size = sizeof(ev), .qp = qp, .first_seq = seq, .count = 1,
		.opcode = PT_PLUGIN_OP_RECV, .first_wr_id = wr_id, .wr_id_step = 1, .bytes = bytes,
		.t_ns = t_ns ? t_ns : pt_now_ns(),
	};

	s->open = NULL;   /* a repost after this is not the open pair's */
	pt_hooks_post_fn(pt_hooks_post_state, &ev);
	if (pairs_bound && seq < PT_PLUGIN_SEQ_UNKNOWN - 1) {
		s->repost_seq = seq + 1;
		s->repost_wr_id_base = wr_id - seq;
		s->repost_bytes = bytes;
	}
}

/* One listener: the hooks call it directly, without the loop. */
static void pack_calls(void)
{
	npost = ncomp = 0;
	for (int i = 0; i < nslots; i++) {
		if (slots[i].ops.post)
			post_calls[npost++] = (struct post_call){ slots[i].ops.post, slots[i].state };
		if (slots[i].ops.completion)
			comp_calls[ncomp++] = (struct comp_call){ slots[i].ops.completion, slots[i].state };
	}
	pt_hooks_post_fn = npost == 1 ? post_calls[0].fn : post_all;
	pt_hooks_post_state = npost == 1 ? post_calls[0].state : NULL;
	pt_hooks_completion_fn = ncomp == 1 ? comp_calls[0].fn : completion_all;
	pt_hooks_completion_state = ncomp == 1 ? comp_calls[0].state : NULL;
	pt_hooks_post_one_fn = post_one_event;
	pt_hooks_post_one_state = NULL;
	post_slots_plugin = -1;
	pair_slots_plugin = -1;
	for (int i = 0; nslots == 1 && i < nslots; i++)
		if (slots[i].ops.post && slots[i].ops.completion && slots[i].ops.bind_pair_slots)
			pair_slots_plugin = i;
	for (int i = 0; npost == 1 && i < nslots; i++)
		if (slots[i].ops.post && slots[i].ops.post_one) {
			pt_hooks_post_one_fn = slots[i].ops.post_one;
			pt_hooks_post_one_state = slots[i].state;
			if (slots[i].ops.bind_post_slots)
				post_slots_plugin = i;
		}
}

/* Smallest table this loader accepts: version 1 up to fini. */
#define OPS_V1_SIZE (offsetof(struct pt_plugin_ops, fini) + sizeof(void (*)(void *)))

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int pt_hooks_count(void)
{
	return nslots;
}

/* Check the table, copy it into the next slot and call init(args). */
static int attach(const struct pt_plugin_ops *ops, const char *who, const char *args, void *dl,
		  char *err, size_t err_len)
{
	struct hook_slot *s;
	char why[256] = "";

	if (nslots == PT_HOOKS_MAX)
		return fail(err, err_len, "plugin %s: at most %d plugins at once", who, PT_HOOKS_MAX);
	if (!ops)
		return fail(err, err_len, "plugin %s: %s() returned NULL", who, PT_PLUGIN_ENTRY_NAME);
	if (ops->abi_version != PT_PLUGIN_ABI_VERSION)
		return fail(err, err_len,
			    "plugin %s: built for plugin ABI version %u, this tool speaks version %u; rebuild it against this tool's perftest_plugin.h",
			    who, ops->abi_version, PT_PLUGIN_ABI_VERSION);
	if (ops->struct_size < OPS_V1_SIZE)
		return fail(err, err_len,
			    "plugin %s: ops table of %u bytes, smaller than the %zu bytes of ABI version 1 (corrupt table?)",
			    who, ops->struct_size, (size_t)OPS_V1_SIZE);
	s = &slots[nslots];
	memset(s, 0, sizeof(*s));
	memcpy(&s->ops, ops, ops->struct_size < sizeof(s->ops) ? ops->struct_size : sizeof(s->ops));
	snprintf(s->name, sizeof(s->name), "%s", ops->name ? ops->name : who);
	if (s->ops.init && s->ops.init(args ? args : "", &s->state, why, sizeof(why)))
		return fail(err, err_len, "plugin %s: init failed: %s", who,
			    why[0] ? why : "no reason given");
	s->dl = dl;
	nslots++;
	pack_calls();
	return 0;
}

int pt_hooks_load(const char *spec, char *err, size_t err_len)
{
	const struct pt_plugin_ops *(*entry)(void);
	const char *colon;
	char path[4096];
	void *dl;
	size_t len;

	if (!spec || !*spec)
		return fail(err, err_len, "plugin: empty specification (want PATH.so[:ARGS])");
	colon = strchr(spec, ':');
	len = colon ? (size_t)(colon - spec) : strlen(spec);
	if (len == 0)
		return fail(err, err_len, "plugin '%s': no path before ':' (want PATH.so[:ARGS])", spec);
	if (len >= sizeof(path))
		return fail(err, err_len, "plugin: path longer than %zu bytes", sizeof(path) - 1);
	memcpy(path, spec, len);
	path[len] = '\0';
	/* a bare name is searched like any dlopen: LD_LIBRARY_PATH, ld.so.cache */
	dlerror();
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		return fail(err, err_len, "plugin %s: cannot load: %s", path, dlerror());
	*(void **)&entry = dlsym(dl, PT_PLUGIN_ENTRY_NAME);
	if (!entry) {
		dlclose(dl);
		return fail(err, err_len,
			    "plugin %s: no symbol %s (not a perftest plugin? it must export %s() from perftest_plugin.h)",
			    path, PT_PLUGIN_ENTRY_NAME, PT_PLUGIN_ENTRY_NAME);
	}
	if (attach(entry(), path, colon ? colon + 1 : "", dl, err, err_len)) {
		dlclose(dl);
		return -1;
	}
	return 0;
}

int pt_hooks_load_builtin(const struct pt_plugin_ops *ops, const char *who, const char *args,
			  char *err, size_t err_len)
{
	return attach(ops, who, args, NULL, err, err_len);
}

int pt_hooks_load_env(char *err, size_t err_len)
{
	const char *spec = getenv(PT_HOOKS_ENV);

	if (!spec || !*spec)
		return 0;
	if (pt_hooks_load(spec, err, err_len)) {
		/* name the source: the user may not remember the variable is set */
		size_t n = err ? strlen(err) : 0;

		if (err && n + 1 < err_len)
			snprintf(err + n, err_len - n, " (from %s)", PT_HOOKS_ENV);
		return -1;
	}
	return 0;
}

void pt_hooks_set_qps(uint32_t n)
{
	run_qps = n;
}

int pt_hooks_run_start(const struct pt_plugin_run_info *info, char *err, size_t err_len)
{
	char why[256];
	uint32_t n;

	pt_hooks_on = false;
	n = info->num_qps > run_qps ? info->num_qps : run_qps;
	if (n > post_slots_cap) {
		struct pt_plugin_post_slots *p = realloc(pt_hooks_post_slots, n * sizeof(*p));

		if (!p)
			return fail(err, err_len, "out of memory for the post slots of %u QPs", n);
		pt_hooks_post_slots = p;
		post_slots_cap = n;
	}
	npost_slots = n;
	post_slots_empty();
	one_template.opcode = PT_PLUGIN_HAS(info, struct pt_plugin_run_info, send_opcode) ?
			      info->send_opcode : PT_PLUGIN_OP_OTHER;
	one_template.bytes = (uint32_t)info->msg_size;
	one_template.signal_period = info->cq_mod;
	for (int i = 0; i < nslots; i++) {
		struct hook_slot *s = &slots[i];

		s->started = false;
		why[0] = '\0';
		if (s->ops.run_start && s->ops.run_start(s->state, info, why, sizeof(why))) {
			/* the ones already started still get run_end */
			fail(err, err_len, "plugin %s: run start failed: %s", s->name,
			     why[0] ? why : "no reason given");
			for (int j = 0; j < i; j++) {
				struct pt_plugin_run_end end = { .struct_size = sizeof(end),
								 .run = info->run, .status = -1 };

				if (slots[j].ops.run_end)
					slots[j].ops.run_end(slots[j].state, &end, why, sizeof(why));
				slots[j].started = false;
			}
			return -1;
		}
		s->started = true;
	}
	/* the plugin hears of num_qps QPs: the slots of the rest stay empty */
	if (post_slots_plugin >= 0 && info->num_qps)
		slots[post_slots_plugin].ops.bind_post_slots(slots[post_slots_plugin].state,
							     pt_hooks_post_slots, info->num_qps);
	if (pair_slots_plugin >= 0 && info->num_qps) {
		slots[pair_slots_plugin].ops.bind_pair_slots(
			slots[pair_slots_plugin].state, pt_hooks_pair_slots,
			info->num_qps < PT_HOOKS_PAIR_QPS ? info->num_qps : PT_HOOKS_PAIR_QPS);
		pairs_bound = true;
	}
	pt_hooks_on = nslots > 0;
	return 0;
}

void pt_hooks_clock_fit(const struct pt_plugin_clock_fit *fit)
{
	for (int i = 0; i < nslots; i++)
		if (slots[i].started && slots[i].ops.clock_fit)
			slots[i].ops.clock_fit(slots[i].state, fit);
}

int pt_hooks_run_end(const struct pt_plugin_run_end *end, char *err, size_t err_len)
{
	char why[256];
	int rc = 0;

	/* posts held back for a CQE that never came: the plugin hears of them */
	for (uint32_t q = 0; pt_hooks_on && q < PT_HOOKS_PAIR_QPS; q++)
		pair_post_owed(q);
	pt_hooks_on = false;
	for (int i = 0; i < nslots; i++) {
		struct hook_slot *s = &slots[i];

		if (!s->started)
			continue;
		s->started = false;
		why[0] = '\0';
		if (s->ops.run_end && s->ops.run_end(s->state, end, why, sizeof(why)) && !rc)
			rc = fail(err, err_len, "plugin %s: %s", s->name,
				  why[0] ? why : "run end failed, no reason given");
	}
	post_slots_empty();   /* what was lent belongs to the plugin again */
	return rc;
}

void pt_hooks_unload_all(void)
{
	pt_hooks_on = false;
	for (int i = nslots - 1; i >= 0; i--) {
		if (slots[i].ops.fini)
			slots[i].ops.fini(slots[i].state);
		if (slots[i].dl)
			dlclose(slots[i].dl);
		memset(&slots[i], 0, sizeof(slots[i]));
	}
	nslots = 0;
	pack_calls();
	free(pt_hooks_post_slots);
	pt_hooks_post_slots = NULL;
	post_slots_cap = npost_slots = run_qps = 0;
}
