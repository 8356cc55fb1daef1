/* SPDX-License-Identifier: BSD-2-Clause */
/* perftest plugin ABI, version 1 (1.3).
 *
 * A plugin is a shared object that exports one function,
 *
 *     const struct pt_plugin_ops *perftest_plugin_ops(void);
 *
 * returning a table of callbacks. The tools load it with --plugin=PATH.so[:ARGS]
 * or PERFTEST_PLUGIN=PATH.so[:ARGS] and call it from their measurement loops.
 * This header is self-contained (C99, no libibverbs, no perftest sources):
 * copy it next to your plugin and build with
 *     cc -shared -fPIC -o my.so my.c
 *
 * Versioning: abi_version changes only on incompatible changes. New fields are
 * only ever appended to a struct, and every struct starts with its size, so a
 * plugin built against an older header keeps working: the tools treat
 * callbacks beyond ops->struct_size as absent, and a plugin reads an event
 * field only when PT_PLUGIN_HAS(ev, type, field) says the tool filled it.
 * ABI 1.1 appended run_info->send_opcode and ops->post_one; ABI 1.2 appended
 * ops->bind_post_slots (struct pt_plugin_post_slots); ABI 1.3 appended
 * ops->bind_pair_slots (struct pt_plugin_pair_slots).
 *
 * Threading and cost: callbacks run on the measurement thread, inside the
 * timed loop. post and completion must not block, allocate or do I/O;
 * do that in run_start/run_end. All times are nanoseconds: software times on
 * the clock named by run_info->sw_clock (the CLOCK_MONOTONIC_RAW time line,
 * read directly or through the TSC), hardware times
 * on the NIC clock (see struct pt_plugin_clock_fit to map one onto the other).
 */
#ifndef PERFTEST_PLUGIN_H
#define PERFTEST_PLUGIN_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PT_PLUGIN_ABI_VERSION 1u
#define PT_PLUGIN_ENTRY perftest_plugin_ops
#define PT_PLUGIN_ENTRY_NAME "perftest_plugin_ops"

/* True when *p, a struct type that starts with uint32_t struct_size, was
 * filled by a tool that knows field: PT_PLUGIN_HAS(ev, struct pt_plugin_post, t_ns). */
#define PT_PLUGIN_HAS(p, type, field) \
	((p)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

enum pt_plugin_role {
	PT_PLUGIN_ROLE_CLIENT = 0, /* the side that connects (usually the sender) */
	PT_PLUGIN_ROLE_SERVER = 1,
};

enum pt_plugin_conn {
	PT_PLUGIN_CONN_RC = 0,
	PT_PLUGIN_CONN_UC = 1,
	PT_PLUGIN_CONN_UD = 2,
	PT_PLUGIN_CONN_XRC = 3,
	PT_PLUGIN_CONN_DC = 4,
	PT_PLUGIN_CONN_SRD = 5,
	PT_PLUGIN_CONN_OTHER = 15,
};

enum pt_plugin_opcode {
	PT_PLUGIN_OP_SEND = 0,
	PT_PLUGIN_OP_SEND_IMM = 1,
	PT_PLUGIN_OP_WRITE = 2,
	PT_PLUGIN_OP_WRITE_IMM = 3,
	PT_PLUGIN_OP_READ = 4,
	PT_PLUGIN_OP_ATOMIC_FA = 5,
	PT_PLUGIN_OP_ATOMIC_CS = 6,
	PT_PLUGIN_OP_RECV = 7,      /* a receive WR / receive completion */
	PT_PLUGIN_OP_OTHER = 15,
};

/* run_info->hw_ts */
enum pt_plugin_hw_ts {
	PT_PLUGIN_HW_TS_NONE = 0,   /* the device has no CQE timestamps (e.g. rxe) */
	PT_PLUGIN_HW_TS_ON = 1,     /* completions carry hw_ns */
	PT_PLUGIN_HW_TS_OFF = 2,    /* the device has them but they are not used */
};

/* run_info->directions */
#define PT_PLUGIN_DIR_SEND (1u << 0)
#define PT_PLUGIN_DIR_RECV (1u << 1)

/* Given once per run (one message size), before the first post. */
struct pt_plugin_run_info {
	uint32_t struct_size;
	uint32_t run;               /* 0, 1, ... (one per size with -a) */
	const char *tool;           /* "ib_send_bw" */
	const char *device;         /* "mlx5_0", "rxe0" */
	enum pt_plugin_role role;
	enum pt_plugin_conn conn;
	uint32_t directions;        /* PT_PLUGIN_DIR_* this side posts; 0 = unknown */
	uint32_t num_qps;
	const uint32_t *qp_nums;    /* num_qps entries; QP index i has qp_nums[i] */
	uint64_t msg_size;          /* bytes per message */
	uint64_t iterations;        /* per QP; 0 in duration mode */
	uint32_t tx_depth, rx_depth;
	uint32_t cq_mod;            /* a send CQE every cq_mod WRs */
	uint32_t post_list;         /* WRs per post call */
	enum pt_plugin_hw_ts hw_ts;
	uint64_t hw_clock_hz;       /* nominal NIC clock (hca_core_clock), 0 if none */
	const char *hw_clock_domain; /* NIC ticks -> ns: "mlx5-clock-info" (the kernel's
	                                mlx5 clock info), "hca-free-running" (ticks /
	                                hca_core_clock), "none" */
	const char *sw_clock;       /* "CLOCK_MONOTONIC_RAW", or "tsc->CLOCK_MONOTONIC_RAW":
	                               the TSC converted onto that time line */
	/* Appended in ABI 1.1: the kind of send WR a post_one call stands for
	 * (enum pt_plugin_opcode; PT_PLUGIN_OP_OTHER when this side posts none). */
	uint32_t send_opcode;
};

/* post event flags */
#define PT_PLUGIN_POST_LAST_SIGNALED (1u << 0) /* the last WR of this post is signaled */

/* count WRs posted in one call on QP index qp: sequence numbers first_seq ..
 * first_seq + count - 1 (per QP and direction, from 0 each run), wr_ids
 * first_wr_id + i * wr_id_step. A send WR with sequence s is signaled when
 * signal_period && (s + 1) % signal_period == 0, or when it is the last of
 * the post and PT_PLUGIN_POST_LAST_SIGNALED is set. Receive WRs always
 * complete. */
struct pt_plugin_post {
	uint32_t struct_size;
	uint32_t qp;
	uint64_t first_seq;
	uint32_t count;
	uint32_t opcode;            /* enum pt_plugin_opcode */
	uint64_t first_wr_id;
	uint64_t wr_id_step;
	uint32_t bytes;             /* per WR */
	uint32_t signal_period;
	uint32_t flags;
	uint32_t reserved;
	uint64_t t_ns;              /* software time of the post call */
};

#define PT_PLUGIN_SEQ_UNKNOWN UINT64_MAX

/* completion event flags */
#define PT_PLUGIN_COMP_RECV (1u << 0)  /* from the receive queue */
#define PT_PLUGIN_COMP_HW_TS (1u << 1) /* hw_ns is valid */

/* One CQE. A send CQE retires its WR and every earlier WR of the same send
 * queue (the unsignaled ones). seq is the WR's sequence number, or
 * PT_PLUGIN_SEQ_UNKNOWN when the tool cannot tell (then it is the oldest
 * signaled WR still outstanding). */
struct pt_plugin_completion {
	uint32_t struct_size;
	uint32_t qp;
	uint64_t wr_id;
	uint64_t seq;
	uint32_t status;            /* ibv_wc_status: 0 = success */
	uint32_t opcode;            /* enum pt_plugin_opcode */
	uint32_t bytes;             /* byte_len of the CQE (receives) or of the WR */
	uint32_t flags;
	uint64_t t_poll_ns;         /* software time the poll returned */
	uint64_t hw_ns;             /* NIC clock, ns; valid with PT_PLUGIN_COMP_HW_TS */
};

/* Least-squares line mapping NIC time onto software time, from paired
 * samples of both clocks:
 *     sw = sw_ref_ns + intercept_ns + slope * (hw - hw_ref_ns)
 * residual_* say how well the samples fit the line (how far to trust a
 * per-WR split into post->CQE and CQE->poll). */
struct pt_plugin_clock_fit {
	uint32_t struct_size;
	uint32_t samples;
	uint64_t hw_ref_ns, sw_ref_ns;
	double intercept_ns;
	double slope;
	double residual_rms_ns;
	double residual_max_ns;
};

static inline double pt_plugin_hw_to_sw(const struct pt_plugin_clock_fit *f, uint64_t hw_ns)
{
	double dhw = (double)(int64_t)(hw_ns - f->hw_ref_ns);

	return (double)f->sw_ref_ns + f->intercept_ns + f->slope * dhw;
}

/* Given once per run, after the last completion. */
struct pt_plugin_run_end {
	uint32_t struct_size;
	uint32_t run;
	int32_t status;             /* 0, or negative: the run failed or was interrupted */
	uint32_t reserved;
	uint64_t elapsed_ns;
};

/* Post-time slots a plugin lends the tool for one QP (ABI 1.2, see
 * ops->bind_post_slots): the tool stores the post time of a WR post_one
 * stands for straight into the plugin's memory instead of calling it, so a
 * recorder that keeps only post times pays a compare and a store per WR.
 * Lent: pos < lim. The tool moves pos and next_seq, the plugin everything
 * else; nothing here is read by another thread. */
struct pt_plugin_post_slots {
	uint64_t *pos;              /* where the next post time goes */
	uint64_t *lim;              /* end of the slots lent; pos == lim: none */
	uint64_t next_seq;          /* the sequence the WR stored at pos has */
	uint64_t wr_id_base;        /* the tool's: its post_one WRs on this QP have
	                               wr_id wr_id_base + seq (set before each post_one) */
};

/* One pair slot (ABI 1.3, see ops->bind_pair_slots): two times of a
 * latency loop's WR. A send pair: t_first_ns its post time, t_second_ns its
 * CQE's poll time. A receive pair (PT_PLUGIN_PAIR_RECV set in t_first_ns):
 * t_first_ns without that bit the receive CQE's poll time, t_second_ns the
 * post time of the receive posted right after it, 0 when none was. */
#define PT_PLUGIN_PAIR_RECV (1ull << 63)
struct pt_plugin_pair {
	uint64_t t_first_ns;
	uint64_t t_second_ns;
};

/* Pair slots a plugin lends the tool for one QP (ABI 1.3). Lent: pos < lim,
 * and the pairs from pos to lim read 0 (the tool tells a stored time from
 * none by it). The plugin sets pos and lim when it lends, and open to NULL
 * when it takes the pairs; the tool moves pos and sets everything else.
 * The tool changes the fields below only by storing a pair (as said at
 * each; it may write the counters of several pairs at once, always before
 * its next callback) or, to learn them, right after a callback it made
 * returns: at any callback the plugin finds the pairs stored since its last
 * callback, and counts back from these fields what each stands for. What a pair stands for:
 *  - send pair: the post (count 1, opcode run_info->send_opcode, bytes
 *    run_info->msg_size, first_seq send_seq, first_wr_id send_wr_id,
 *    wr_id_step 1, signal_period 1, flags PT_PLUGIN_POST_LAST_SIGNALED,
 *    t_ns t_first_ns), then its CQE (the same seq and wr_id, status 0, opcode
 *    send_opcode, bytes msg_size, no flags, t_poll_ns t_second_ns);
 *    send_seq then counts one up.
 *  - receive pair: a receive CQE (seq PT_PLUGIN_SEQ_UNKNOWN, wr_id
 *    recv_wr_id, status 0, opcode PT_PLUGIN_OP_RECV, bytes recv_bytes, flags
 *    PT_PLUGIN_COMP_RECV); recv_wr_id then counts one up. With t_second_ns,
 *    then a receive post (count 1, opcode PT_PLUGIN_OP_RECV, first_seq
 *    repost_seq, first_wr_id repost_wr_id_base + repost_seq, wr_id_step 1,
 *    bytes repost_bytes, no period or flags); repost_seq then counts one up.
 * The events come in the order of the pairs; a send's post may come to the
 * plugin only with its CQE (the tool holds it back until then). */
struct pt_plugin_pair_slots {
	struct pt_plugin_pair *pos; /* where the next pair goes */
	struct pt_plugin_pair *lim; /* end of the slots lent; pos == lim: none */
	struct pt_plugin_pair *open;/* a receive pair whose repost may still be stored */
	uint64_t send_seq, send_wr_id;
	uint64_t recv_wr_id;
	uint64_t repost_seq, repost_wr_id_base;
	uint32_t recv_bytes, repost_bytes;
};

/* The table a plugin returns. Unused callbacks may be NULL. Callbacks that
 * return int return 0 on success; on failure they write a one-line reason
 * to err (err_len bytes) and the tool stops with that message. */
struct pt_plugin_ops {
	uint32_t abi_version;       /* PT_PLUGIN_ABI_VERSION */
	uint32_t struct_size;       /* sizeof(struct pt_plugin_ops) */
	const char *name;

	/* args: the text after ':' in PATH.so:ARGS ("" when none). */
	int (*init)(const char *args, void **state, char *err, size_t err_len);
	int (*run_start)(void *state, const struct pt_plugin_run_info *info,
			 char *err, size_t err_len);
	void (*post)(void *state, const struct pt_plugin_post *ev);
	void (*completion)(void *state, const struct pt_plugin_completion *ev);
	/* At the start of a run and each time the tool refits the clocks. */
	void (*clock_fit)(void *state, const struct pt_plugin_clock_fit *fit);
	int (*run_end)(void *state, const struct pt_plugin_run_end *end,
		       char *err, size_t err_len);
	void (*fini)(void *state);

	/* Appended in ABI 1.1, optional; used only with post. The same as post
	 * with count 1, opcode run_info->send_opcode, bytes run_info->msg_size,
	 * signal_period run_info->cq_mod, first_wr_id wr_id, wr_id_step 1 and no
	 * flags: the plain WR a BW loop posts over and over, with the arguments
	 * in registers instead of an event in memory. Tools call it only for
	 * WRs exactly like that, and call post for every other. */
	void (*post_one)(void *state, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns);

	/* Appended in ABI 1.2, optional; used only with post_one, by a tool
	 * whose post_one WRs on a QP keep wr_id - seq the same for a run. After
	 * run_start the tool hands slots[n], one per QP (n = run_info->num_qps),
	 * all empty, valid until run_end returns. From any of its callbacks the
	 * plugin may lend QP i slots (slots[i].pos, lim, next_seq). For a WR
	 * post_one would stand for with seq == slots[i].next_seq and pos < lim,
	 * the tool does *pos++ = t_ns, next_seq++ and does not call post_one;
	 * otherwise it sets wr_id_base and calls post_one. So the WR stored in
	 * slot k has sequence next_seq + k and wr_id wr_id_base + that: the
	 * plugin counts the slots used at its next callback (and at run_end). */
	void (*bind_post_slots)(void *state, struct pt_plugin_post_slots *slots, uint32_t n);

	/* Appended in ABI 1.3, optional; used only with post and completion
	 * (both of this plugin, the only one loaded). After run_start (and
	 * bind_post_slots) the tool hands slots[n], one for each of its first
	 * n QPs (n <= run_info->num_qps, maybe fewer), all empty,
	 * valid until run_end returns. From any of its callbacks the plugin may
	 * lend QP i pair slots; a latency loop (one WR in flight) then stores a
	 * send WR's post and CQE, or a receive CQE and its repost, as one pair
	 * instead of calling (struct pt_plugin_pair_slots says what each stands
	 * for), and makes the calls as before for anything else: a failed CQE,
	 * one with a NIC time, the slots full. The plugin takes the pairs at
	 * its next callback (and at run_end), before the event of that call. */
	void (*bind_pair_slots)(void *state, struct pt_plugin_pair_slots *slots, uint32_t n);
};

/* The one symbol a plugin exports. */
const struct pt_plugin_ops *PT_PLUGIN_ENTRY(void);

#ifdef __cplusplus
}
#endif
#endif
