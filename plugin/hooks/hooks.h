/* SPDX-License-Identifier: BSD-2-Clause */
/* Engine side of the plugin ABI (perftest_plugin.h): loading plugins and the
 * inline hook calls the measurement loops make.
 *
 * With no plugin loaded (or outside a run) every pt_hook_*() call costs one
 * load and one predicted-not-taken branch: the event struct is only built on
 * the taken side. Up to PT_HOOKS_MAX plugins run at once, called in load order.
 *
 * Order of calls for a tool:
 *   pt_hooks_load()/pt_hooks_load_builtin()/pt_hooks_load_env()  (options)
 *   per run: pt_hooks_run_start(); loops call pt_hook_post/pt_hook_completion;
 *            pt_hooks_clock_fit() when the clocks are (re)fitted;
 *            pt_hooks_run_end() after the result row is printed
 *   pt_hooks_unload_all() at exit.
 * Every function that can fail returns 0 or -1 with a one-line message in err.
 * Single-threaded: hooks fire from the measurement thread only. */
#ifndef PT_HOOKS_H
#define PT_HOOKS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "util/clock.h"
#include "util/opcodes.h"
#include "plugin/perftest_plugin.h"

#define PT_HOOKS_MAX 4
#define PT_HOOKS_ENV "PERFTEST_PLUGIN"
/* As a time argument: let the hook read the clock, only when a plugin
 * listens (a loop that has no time at hand pays nothing when off). */
#define PT_HOOK_NOW 0

/* True between a successful pt_hooks_run_start() and pt_hooks_run_end(). */
extern bool pt_hooks_on;

/* "PATH.so[:ARGS]": dlopen PATH, check its ABI, call init(ARGS). */
int pt_hooks_load(const char *spec, char *err, size_t err_len);
/* A plugin linked into the program (the tools' --trace recorder): the same
 * checks and init(ARGS) as a loaded one. The loader knows no plugin by name. */
int pt_hooks_load_builtin(const struct pt_plugin_ops *ops, const char *who, const char *args,
			  char *err, size_t err_len);
/* PERFTEST_PLUGIN, when set and not empty. */
int pt_hooks_load_env(char *err, size_t err_len);
/* Plugins loaded so far. */
int pt_hooks_count(void);

int pt_hooks_run_start(const struct pt_plugin_run_info *info, char *err, size_t err_len);
void pt_hooks_clock_fit(const struct pt_plugin_clock_fit *fit);
/* Every plugin gets run_end even when one fails; the first failure is reported. */
int pt_hooks_run_end(const struct pt_plugin_run_end *end, char *err, size_t err_len);
/* fini + dlclose every plugin (safe to call twice). */
void pt_hooks_unload_all(void);

/* Where the hooks go: the plugin's own callback when one plugin listens,
 * else a loop over all of them (hooks.c); state goes with it. */
extern void (*pt_hooks_post_fn)(void *state, const struct pt_plugin_post *ev);
extern void *pt_hooks_post_state;
extern void (*pt_hooks_completion_fn)(void *state, const struct pt_plugin_completion *ev);
extern void *pt_hooks_completion_state;
/* post_one: the plugin's own when the one plugin with post has it, else
 * hooks.c turns it into a post event. */
extern void (*pt_hooks_post_one_fn)(void *state, uint32_t qp, uint64_t seq, uint64_t wr_id,
				    uint64_t t_ns);
extern void *pt_hooks_post_one_state;


/* The run's pair slots (perftest_plugin.h, bind_pair_slots), for the first
 * PT_HOOKS_PAIR_QPS QPs (the latency loops post on QP 0 alone): a fixed
 * array, so a hook on QP 0 finds them at an address known at link time.
 * Empty, with nothing learnt, unless the one plugin took them. The slow
 * paths make the events and learn what the next pairs stand for (hooks.c). */
#define PT_HOOKS_PAIR_QPS 1u
extern struct pt_plugin_pair_slots pt_hooks_pair_slots[PT_HOOKS_PAIR_QPS];
__attribute__((cold)) void pt_hooks_pair_post_slow(uint32_t qp, uint64_t seq, uint64_t wr_id,
						   uint64_t t_ns);
/* The CQE's fields by value, its opcode as polled: the conversion inline
 * cost the hooks-off loop 3 instructions (registers kept for it). */
__attribute__((cold)) void pt_hooks_pair_wc_slow(uint32_t qp, uint64_t seq, uint64_t wr_id,
						 uint32_t status, enum ibv_wc_opcode wc_op, uint32_t bytes,
						 bool recv, uint64_t t_poll_ns, const uint64_t *hw_ns);
__attribute__((cold)) void pt_hooks_pair_repost_slow(uint32_t qp, uint64_t seq, uint64_t wr_id,
						     uint32_t bytes, uint64_t t_ns);

/* count WRs just posted on QP index qp (see struct pt_plugin_post). A
 * single receive WR (send_lat's repost) goes into the receive pair stored
 * just before, when it is the one the pair slots expect. */
static inline void pt_hook_post(uint32_t qp, uint64_t first_seq, uint32_t count, uint32_t opcode,
				uint64_t first_wr_id, uint64_t wr_id_step, uint32_t bytes,
				uint32_t signal_period, uint32_t flags, uint64_t t_ns)
{
	if (__builtin_expect(pt_hooks_on, 0)) {
		if (opcode == PT_PLUGIN_OP_RECV && count == 1 && !signal_period && !flags &&
		    qp < PT_HOOKS_PAIR_QPS) {
			struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[qp];

			/* open only while it is the last pair stored: the receive
			 * posted right after that pair's CQE, nothing between (a
			 * NULL open never equals pos - 1, which is compared, not read) */
			if (__builtin_expect(s->open == s->pos - 1 &&
					     first_seq == s->repost_seq &&
					     first_wr_id == s->repost_wr_id_base + first_seq &&
					     bytes == s->repost_bytes, 1)) {
				s->open->t_second_ns = t_ns ? t_ns : pt_now_ns();
				s->open = NULL;
				s->repost_seq = first_seq + 1;
				return;
			}
			pt_hooks_pair_repost_slow(qp, first_seq, first_wr_id, bytes, t_ns);
			return;
		}
		struct pt_plugin_post ev = {
			.struct_size = sizeof(ev), .qp = qp, .first_seq = first_seq,
			.count = count, .opcode = opcode, .first_wr_id = first_wr_id,
			.wr_id_step = wr_id_step, .bytes = bytes,
			.signal_period = signal_period, .flags = flags,
			.t_ns = t_ns ? t_ns : pt_now_ns(),
		};
		pt_hooks_post_fn(pt_hooks_post_state, &ev);
	}
}

/* Post-time slots of the run, one per QP (perftest_plugin.h,
 * bind_post_slots): empty unless the plugin that takes post_one lent some.
 * As many as the run has QPs (pt_hooks_set_qps), at least num_qps. */
extern struct pt_plugin_post_slots *pt_hooks_post_slots;
/* The QPs the loops post on, when more than the run info's num_qps (a tool
 * tells plugins of the first few only); before pt_hooks_run_start. */
void pt_hooks_set_qps(uint32_t n);

/* One send WR of the run's kind, not forced signaled (pt_plugin_ops.post_one):
 * opcode, size and signal period must be what pt_hooks_run_start was given
 * as send_opcode, msg_size and cq_mod; qp below the run's QPs (num_qps or
 * pt_hooks_set_qps) and wr_id - seq the same on a QP for the whole run. The
 * common case is two compares and a store into the slots a recorder lent;
 * the call only when they run out. */
static inline void pt_hook_post_one(uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns);

/* The same for a loop that holds QP qp's slots (s = &pt_hooks_post_slots[qp],
 * taken while the hooks are on, good for the run) and the time (t_ns, not
 * PT_HOOK_NOW), and tested pt_hooks_on itself: the store alone, nothing to
 * reload or test but the slots' bound and sequence. */
static inline void pt_hook_post_one_in(struct pt_plugin_post_slots *s, uint32_t qp, uint64_t seq,
				       uint64_t wr_id, uint64_t t_ns)
{
	if (__builtin_expect(s->pos < s->lim && seq == s->next_seq, 1)) {
		*s->pos++ = t_ns;
		s->next_seq = seq + 1;
		return;
	}
	s->wr_id_base = wr_id - seq;
	pt_hooks_post_one_fn(pt_hooks_post_one_state, qp, seq, wr_id, t_ns);
}

/* A loop that posts WRs seq, seq + 1, ... of one QP in a row (a BW
 * window) holds that QP's slots in a local: each WR's time is a store and
 * one bound test, the sequence tested once when taken. Given back
 * (pt_hook_post_run_give, with the next WR's sequence) before any other
 * hook call and when the window ends; a NULL run (not in sequence) takes
 * the general path at every WR. */
struct pt_hook_post_run {
	uint64_t *pos, *lim;
};

static inline struct pt_hook_post_run pt_hook_post_run_take(const struct pt_plugin_post_slots *s,
							     uint64_t seq)
{
	if (s->next_seq == seq)
		return (struct pt_hook_post_run){ s->pos, s->lim };
	return (struct pt_hook_post_run){ NULL, NULL };
}

static inline void pt_hook_post_run_give(const struct pt_hook_post_run *r,
					 struct pt_plugin_post_slots *s, uint64_t next_seq)
{
	if (r->pos) {
		s->pos = r->pos;
		s->next_seq = next_seq;
	}
}

static inline void pt_hook_post_run_one(struct pt_hook_post_run *r, struct pt_plugin_post_slots *s,
					uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	if (__builtin_expect(r->pos < r->lim, 1)) {
		*r->pos++ = t_ns;
		return;
	}
	pt_hook_post_run_give(r, s, seq);
	pt_hook_post_one_in(s, qp, seq, wr_id, t_ns);
	*r = pt_hook_post_run_take(s, seq + 1);
}

static inline void pt_hook_post_one(uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	if (__builtin_expect(pt_hooks_on, 0))
		pt_hook_post_one_in(&pt_hooks_post_slots[qp], qp, seq, wr_id, t_ns ? t_ns : pt_now_ns());
}

/* One CQE (see struct pt_plugin_completion); flags PT_PLUGIN_COMP_*. */
static inline void pt_hook_completion(uint32_t qp, uint64_t wr_id, uint64_t seq, uint32_t status,
				      uint32_t opcode, uint32_t bytes, uint32_t flags,
				      uint64_t t_poll_ns, uint64_t hw_ns)
{
	if (__builtin_expect(pt_hooks_on, 0)) {
		struct pt_plugin_completion ev = {
			.struct_size = sizeof(ev), .qp = qp, .wr_id = wr_id, .seq = seq,
			.status = status, .opcode = opcode, .bytes = bytes, .flags = flags,
			.t_poll_ns = t_poll_ns ? t_poll_ns : pt_now_ns(), .hw_ns = hw_ns,
		};
		pt_hooks_completion_fn(pt_hooks_completion_state, &ev);
	}
}

/* The same from a polled ibv_wc; hw_ns NULL when there is no CQE timestamp. */
static inline void pt_hook_wc(uint32_t qp, uint64_t seq, const struct ibv_wc *wc, bool recv,
			      uint64_t t_poll_ns, const uint64_t *hw_ns)
{
	if (__builtin_expect(pt_hooks_on, 0))
		pt_hook_completion(qp, wc->wr_id, seq, (uint32_t)wc->status,
				   recv ? PT_PLUGIN_OP_RECV : pt_plugin_op_of_wc(wc->opcode),
				   wc->byte_len,
				   (recv ? PT_PLUGIN_COMP_RECV : 0) | (hw_ns ? PT_PLUGIN_COMP_HW_TS : 0),
				   t_poll_ns, hw_ns ? *hw_ns : 0);
}

/* The latency loops (one WR in flight on QP qp): the send WR of sequence
 * seq and wr_id wr_id, of the run's send_opcode and msg_size, signal period
 * 1 and LAST_SIGNALED, posted at t_ns (not PT_HOOK_NOW). With pair slots
 * its time waits in the next slot for its CQE: the loop's next hook call
 * on the QP is pt_hook_pair_wc for this WR's CQE (or none: run end). */
static inline void pt_hook_pair_post(uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns)
{
	if (__builtin_expect(pt_hooks_on, 0)) {
		if (__builtin_expect(qp < PT_HOOKS_PAIR_QPS, 1)) {
			struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[qp];

			if (__builtin_expect(s->pos < s->lim && seq == s->send_seq &&
					     wr_id == s->send_wr_id, 1)) {
				s->pos->t_first_ns = t_ns;
				return;
			}
		}
		pt_hooks_pair_post_slow(qp, seq, wr_id, t_ns);
	}
}

/* That WR's CQE (recv false, seq the post's), or a receive CQE (recv true,
 * as pt_hook_wc with PT_PLUGIN_SEQ_UNKNOWN), polled at t_poll_ns (not
 * PT_HOOK_NOW): a pair when it succeeded, carries no NIC time and is what
 * the slots expect; else the events (pt_hook_wc's). A send CQE of seq
 * send_seq is one whose post went into the slot at pos: a post that did
 * not left send_seq past it (hooks.c). */
static inline void pt_hook_pair_wc(uint32_t qp, uint64_t seq, const struct ibv_wc *wc, bool recv,
				   uint64_t t_poll_ns, const uint64_t *hw_ns)
{
	if (__builtin_expect(pt_hooks_on, 0)) {
		if (__builtin_expect(qp < PT_HOOKS_PAIR_QPS && wc->status == IBV_WC_SUCCESS && !hw_ns, 1)) {
			struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[qp];

			if (!recv && __builtin_expect(seq == s->send_seq, 1)) {
				s->pos->t_second_ns = t_poll_ns;
				s->pos++;
				s->send_seq = seq + 1;
				return;
			}
			if (recv && __builtin_expect(s->pos < s->lim && wc->wr_id == s->recv_wr_id &&
						     wc->byte_len == s->recv_bytes, 1)) {
				s->pos->t_first_ns = t_poll_ns | PT_PLUGIN_PAIR_RECV;
				s->open = s->pos++;
				s->recv_wr_id++;
				return;
			}
		}
		pt_hooks_pair_wc_slow(qp, seq, wc->wr_id, (uint32_t)wc->status, wc->opcode,
				      wc->byte_len, recv, t_poll_ns, hw_ns);
	}
}

/* A latency loop's hold on QP 0's pair slots while the hooks are on: the
 * cursor lives in the loop's registers, so a pair costs its stores and no
 * test of sequence or wr_id. Taken only where the slots expect the loop's
 * next send (and, with reposts, its next repost) and have room for `need`
 * pairs; while held the loop stores pairs of exactly the WRs they stand for
 * (perftest_plugin.h), in order: a send pair per send, seq counting up from
 * the take; a receive pair per receive CQE the slots expect
 * (pt_hook_pairs_recv); its repost's time into it, repost_seq counting up.
 * Anything else goes through the hooks above, after pt_hook_pairs_give has
 * written back where the loop stands; so does the loop's end. pos < lim:
 * held, with room for `need` pairs (lim is the slots' end less need - 1);
 * not held: pos == lim. */
struct pt_hook_pairs {
	struct pt_plugin_pair *pos, *lim;
	bool held;
};

/* The next send is send_seq with wr_id send_wr_id; with reposts, the next
 * repost is repost_seq, wr_id repost_wr_id_base + repost_seq, of
 * repost_bytes. Held when the slots expect exactly that. */
static inline void pt_hook_pairs_take(struct pt_hook_pairs *h, unsigned need, uint64_t send_seq,
				      uint64_t send_wr_id, bool reposts, uint64_t repost_seq,
				      uint64_t repost_wr_id_base, uint32_t repost_bytes)
{
	const struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[0];

	*h = (struct pt_hook_pairs){ .pos = s->pos, .lim = s->pos };
	if (s->lim - s->pos >= (ptrdiff_t)need && s->send_seq == send_seq &&
	    s->send_wr_id == send_wr_id &&
	    (!reposts || (s->repost_seq == repost_seq && s->repost_wr_id_base == repost_wr_id_base &&
			  s->repost_bytes == repost_bytes))) {
		h->lim = s->lim - (need - 1);
		h->held = true;
	}
}

/* Held: a successful receive CQE without a NIC time, polled at t, as a
 * pair when it is the one the slots expect (recv_wr_id, which then counts
 * up, as the ABI has the tool do, and recv_bytes); false when not. */
static inline bool pt_hook_pairs_recv(struct pt_hook_pairs *h, uint64_t wr_id, uint32_t bytes,
				      uint64_t t)
{
	struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[0];

	if (__builtin_expect(wr_id != s->recv_wr_id || bytes != s->recv_bytes, 0))
		return false;
	h->pos->t_first_ns = t | PT_PLUGIN_PAIR_RECV;
	h->pos++;
	s->recv_wr_id = wr_id + 1;
	return true;
}

/* Give the slots back: send_seq is the loop's next send not yet completed
 * (a post stored at pos has it); with reposts, repost_seq its next repost;
 * open: the last pair is a receive whose repost the hooks may still store
 * (pt_hook_post). */
static inline void pt_hook_pairs_give(struct pt_hook_pairs *h, uint64_t send_seq, bool reposts,
				      uint64_t repost_seq, bool open)
{
	struct pt_plugin_pair_slots *s = &pt_hooks_pair_slots[0];

	if (!h->held)
		return;
	s->pos = h->pos;
	s->open = open ? h->pos - 1 : NULL;
	s->send_seq = send_seq;
	if (reposts)
		s->repost_seq = repost_seq;
	h->held = false;
	h->lim = h->pos;
}

#endif
