/* SPDX-License-Identifier: BSD-2-Clause */
/* The measurement loops (run_bw.c, run_lat.c) and the post path (post.c)
 * over a narrow view of the run, struct pt_loop: the resources, the run's
 * shape, the few option values the loops read, the peer watch and the
 * periodic row. No options struct, no context: the tools build the view
 * (pt_loop_view, engine.h), a unit test builds one over fake verbs objects
 * (tests/unit/test_loop.c). See docs/architecture.md, "One run, as data". */
#ifndef PT_LOOP_H
#define PT_LOOP_H
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include "res.h"
#include "fault.h"

/* Set by SIGINT/SIGTERM (the tool installs the handler: tools/tool.c,
 * which calls pt_interrupt); loops stop, the tool cleans up. Defined in
 * interrupt.c. */
extern volatile sig_atomic_t pt_interrupted;
/* A latency run's bound on its iterations: its -n (no bound in duration
 * mode), lowered to 0 by pt_interrupt. The loops compare their count with
 * it, which is their end test anyway: a signal ends them at the next
 * iteration, however fast their CQEs come (a wait looks at the flag only
 * when it waits long), with no more work per iteration. A plain word,
 * stored whole (__atomic_store_n: one aligned store, so a signal handler
 * may store it), that the loops read plainly: one compare with memory. A
 * loop's iteration calls the provider through pointers, so the compiler
 * reads it again each time, as the probes' semaphores (probes.h). A
 * loop may count in other units (read_lat's and atomic_lat's hooks-off
 * copies count their stamps' address, two iterations a test:
 * lat_read_pairs): a signal's 0 ends any of them, those at the next pair. */
extern uint64_t pt_lat_until;
/* The signal handler's whole work (async-signal-safe). */
void pt_interrupt(int sig);

/* The option values the loops read, copied once per run. */
struct pt_loop_opts {
	uint64_t iters;             /* per QP (-n); 0 in duration mode */
	unsigned post_list;         /* WRs per post call (-l) */
	bool duration;              /* -D: count only inside the window */
	bool infinite;              /* --run_infinitely: a row every duration_s */
	unsigned duration_s, margin_s;
	uint64_t stall_ns;          /* no progress this long ends a run; UINT64_MAX: never */
	bool peak;                  /* BW senders track the peak as the run goes */
	bool cpu_util;              /* --cpu_util */
	bool ud;                    /* UD QPs: address per WR, GRH room per receive */
	bool connectionless;        /* a UD receiver with no peer */
	bool is_client;             /* names the side in error messages */
	bool lat;                   /* a latency tool: one buffer address, no BW counts */
	enum ibv_wr_opcode opcode;  /* the tool's verb, as the old post API's opcode */
	bool imm;                   /* --send_with_imm/--write_with_imm: receives must carry it */
	unsigned recv_post_list;    /* receive WRs per ibv_post_recv (--recv_post_list) */
	unsigned poll_batch;        /* BW: CQ poll batch; the start when poll_dynamic */
	bool poll_dynamic;          /* BW: the batch follows the load (docs/option-parity.md) */
	/* pace: the SW rate limiter (one of the two rates set, else off) and --latency_gap */
	double pace_pps;            /* messages per second (--rate_units p) */
	double pace_bytes_ps;       /* bytes per second (M, g): per message by the run's size */
	unsigned pace_burst;        /* WRs per burst (--burst_size) */
	uint64_t lat_gap_ns;        /* latency tools: a pause before each post */
	int port2_first_qp;         /* -O: QPs from here on are port 2's; 0: one port */
};

/* --run_infinitely: called every period with the messages of that period. */
typedef void (*pt_bw_period_fn)(void *arg, uint64_t msgs, uint64_t ns);

/* What a loop sees of a run. The loops change the QPs' counters in *res
 * and nothing else of the view. */
struct pt_loop {
	struct pt_res *res;         /* QPs, CQs, MR, completion channel (-e) */
	const struct pt_run *run;   /* size, depths, cq_mod, inline size, cycle */
	struct pt_loop_opts opt;
	struct pt_peer_watch peer;  /* its out-of-band connection */
	pt_bw_period_fn period_row; /* --run_infinitely; may be NULL */
	void *period_arg;
};

/* The immediate data of --send_with_imm/--write_with_imm (upstream sends 0). */
#define PT_IMM_DATA 0u

/* post.c ---------------------------------------------------------------------- */
/* Post n receives on QP i (UD adds the GRH room). */
int pt_post_recv(const struct pt_loop *l, int i, uint64_t n);
/* A receive of QP i was consumed: repost it, with --recv_post_list N only
 * once N are owed (or the run's last few); unlimited: no -n bound (-D). */
int pt_recv_repost(const struct pt_loop *l, int i, bool unlimited);
/* Post n send WRs (a post list) on QP i; signaled flags per the cq_mod rule. */
int pt_post_send(const struct pt_loop *l, int i, unsigned n, uint64_t iters);
/* A run's first post on QP q: the send plan (send_wr.h) and q's place. */
void pt_send_plan_start(const struct pt_loop *l, struct pt_qp *q);
/* The old post API's WR k = q->posted of QP i, the plan set (its local
 * address, remote address, wr_id and flags the caller's per WR), for a
 * loop that posts one WR at a time with it. */
void pt_send_wr_old(const struct pt_loop *l, int i, struct ibv_send_wr *wr, struct ibv_sge *sge);
/* A failed post of QP i (rc: the provider's errno), said on stderr: -1. */
int pt_post_send_failed(const struct pt_loop *l, int i, int rc);
/* With l->opt.imm a receive completion must carry immediate data: 0, or -1
 * after saying which completion lacked it (docs/upstream-behaviour.md §5.3). */
int pt_check_imm(const struct pt_loop *l, const struct ibv_wc *wc);

/* The latency loops' two WRs, built once per run (pt_lat_wrs_init): a
 * latency tool keeps one buffer address, so the send WR and the receive
 * are the same every iteration but for the receive's wr_id. Holds pointers
 * into itself: initialise it where it stays. */
struct pt_lat_wrs {
	struct ibv_send_wr send;    /* the old API's WR; the new API's wr_id, flags */
	struct ibv_sge send_sge;
	uint64_t raddr;             /* RDMA/atomic target */
	uint32_t rkey;
	bool inl;
	struct ibv_recv_wr recv;
	struct ibv_sge recv_sge;
};
void pt_lat_wrs_init(const struct pt_loop *l, struct pt_lat_wrs *w);
/* QP 0's one send WR, as pt_post_send(l, 0, 1, 1) with posted reset to 0. */
int pt_lat_post_send(const struct pt_loop *l, const struct pt_lat_wrs *w);
/* The latency post failed with rc (an errno): said, -1. */
int pt_lat_post_failed(int rc);
/* QP 0's receive consumed: repost it, as pt_recv_repost does. */
int pt_lat_repost(const struct pt_loop *l, struct pt_lat_wrs *w, bool unlimited);

/* pace.c ---------------------------------------------------------------------- */
/* The SW rate limiter: bursts of `burst` WRs, a burst every gap_ns
 * (perftest/tools/ib_send_bw.1, --rate_limit_type). credit is the WRs the current burst
 * still allows; a post list may overdraw it, later bursts repay. A burst late
 * by less than one gap keeps the schedule (no drift); later than that the
 * schedule restarts (no catch-up burst). */
struct pt_pacer {
	uint64_t gap_ns, next_t;
	int64_t credit, burst;
	bool started;               /* a burst was allowed: the schedule runs from it */
};
/* The run's messages per second: pps, else bytes_ps / size; 0 when off. */
double pt_pace_rate_pps(double pps, double bytes_ps, uint64_t size);
/* 0, or -1 when pps or burst is not positive. The first burst may go from
 * now on; the schedule runs from the time it goes (a run's measured span
 * starts at its first post, so a schedule counted from before it would
 * shorten the span by the delay). */
int pt_pacer_init(struct pt_pacer *pc, double pps, unsigned burst, uint64_t now);
/* May a post of n WRs go at time now? When it may, the n are counted. */
static inline bool pt_pacer_allow(struct pt_pacer *pc, unsigned n, uint64_t now)
{
	if (pc->credit <= 0) {
		if (now < pc->next_t)
			return false;
		if (__builtin_expect(!pc->started, 0)) {
			pc->started = true;
			pc->next_t = now;
		}
		pc->next_t = (now - pc->next_t < pc->gap_ns ? pc->next_t : now) + pc->gap_ns;
		pc->credit += pc->burst;
		if (pc->credit <= 0)
			return false;
	}
	pc->credit -= n;
	return true;
}
/* --latency_gap: busy-wait ns (a pause before a latency post; SIGINT ends it). */
void pt_lat_gap(uint64_t ns);

/* run_bw.c -------------------------------------------------------------------- */
/* Dynamic polling's bounds: 6.2x's adaptive batch (--cqe_poll fixes it). */
#define PT_POLL_BATCH_MIN 16u
#define PT_POLL_BATCH_MAX 1024u
/* The next poll batch after a poll of cur returned got: doubled when the
 * poll filled it, halved when it came back less than half full. */
unsigned pt_poll_batch_next(unsigned cur, int got, bool dynamic);
struct pt_bw_meas {
	uint64_t msgs;              /* completed messages over all QPs */
	uint64_t lost;              /* UD receiver: messages that never arrived */
	uint64_t elapsed_ns;
	struct pt_bw_peak *peak;    /* the BW peak as the run goes, NULL without */
	double cpu_util;            /* --cpu_util percent, < 0 when not measured */
	bool interrupted;           /* SIGINT: msgs and elapsed_ns so far */
	uint64_t msgs_port[2];      /* -O: msgs split by the QPs' port (1, 2) */
};
/* Each fills *m (0 on success; -1 after an error said on stderr, or
 * interrupted with what was measured so far). */
int pt_run_bw_send(const struct pt_loop *l, struct pt_bw_meas *m);
int pt_run_bw_recv(const struct pt_loop *l, struct pt_bw_meas *m);
int pt_run_bw_bidir(const struct pt_loop *l, struct pt_bw_meas *m);
void pt_bw_meas_free(struct pt_bw_meas *m);
/* --perform_warm_up: one untimed, uncounted sender pass of tx_depth WRs per
 * QP (whole post lists) before the run; 0, or -1 after saying why. */
int pt_run_bw_warm_up(const struct pt_loop *l);
uint64_t pt_warm_up_iters(const struct pt_loop *l);
/* --perform_warm_up with --write_with_imm, the receiving side: consume the
 * peer's warm-up writes (pt_warm_up_iters per QP: same -t and -l on both
 * sides), reposting each, so the receives the run posted (recv_prepost per
 * QP) are all outstanding again and the run counts only its own writes. */
int pt_run_bw_warm_up_recv(const struct pt_loop *l, uint64_t recv_prepost);

/* run_lat.c ------------------------------------------------------------------- */
/* Beyond this many iterations latency samples go to a histogram (results.h)
 * instead of an array: bounded memory, <= 0.78 % error. */
#define PT_LAT_RAW_MAX 10000000ull
struct pt_hist;
struct pt_lat_meas {
	uint64_t *stamps;           /* iteration mode: post time of each iteration */
	struct pt_hist *hist;       /* instead of stamps beyond PT_LAT_RAW_MAX, and
	                             * in duration mode (the window's round trips) */
	uint64_t t_prev;            /* with hist: the previous post time */
	uint64_t n;                 /* stamps taken */
	uint64_t iters;             /* duration mode: round trips inside the window */
	uint64_t elapsed_ns;        /* duration mode: the window */
	bool interrupted;           /* SIGINT: n (or iters, elapsed_ns) so far */
	bool raw;                   /* stamps are pt_now_raw() times (a plain copy kept the
	                             * conversion out of its loop): pt_lat_meas_ns first */
	bool ts;                    /* with raw: struct timespec, two words a stamp (the
	                             * copies stamping with clock_gettime, which writes
	                             * them in place); stamps has room for 2 * -n words
	                             * whenever the TSC is off */
};
/* The stamps in nanoseconds (exactly what pt_now_ns() read then), when
 * they are raw; nothing otherwise. Before anything reads them. */
void pt_lat_meas_ns(struct pt_lat_meas *m);
int pt_run_lat_send(const struct pt_loop *l, struct pt_lat_meas *m);
int pt_run_lat_write(const struct pt_loop *l, struct pt_lat_meas *m);
int pt_run_lat_read(const struct pt_loop *l, struct pt_lat_meas *m);
void pt_lat_meas_free(struct pt_lat_meas *m);

#endif
