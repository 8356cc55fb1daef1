/* SPDX-License-Identifier: BSD-2-Clause */
/* Faults during a run: noticing that the peer has gone, reporting a failed
 * completion, and the test-only hook that freezes this process at a chosen
 * stage so a lab test can kill it there (tests/lab/test_36_faults.py). */
#ifndef PT_FAULT_H
#define PT_FAULT_H
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct pt_res;
struct pt_oob;

/* Stages where PT_TEST_STOP_AT=version|keys|run|report stops us. */
enum pt_stage {
	PT_STAGE_NONE = 0,
	PT_STAGE_VERSION,       /* connected, before the version exchange */
	PT_STAGE_KEYS,          /* before the first key message */
	PT_STAGE_RUN,           /* after the first completion of a run */
	PT_STAGE_REPORT,        /* before the BW report exchange */
};

/* The stage to stop at, PT_STAGE_NONE once stopped (it fires once). */
extern int pt_test_stop_stage;

/* PT_TEST_BREAK=rkey (test-only, read with PT_TEST_STOP_AT): the key
 * messages we send carry a wrong rkey, a bug of ours on purpose, which must
 * fail a run on a busy host too (tests/lab/test_36_faults.py). */
extern bool pt_test_break_rkey;
/* PT_TEST_BREAK=payload: the first byte QP 0 sends (or serves to READ)
 * differs from the pattern, so --data_validation must fail the run
 * (tests/lab/test_47_memory_options.py). */
extern bool pt_test_break_payload;

/* "version", "keys", "run" or "report" -> stage; NULL or "" -> NONE;
 * anything else -> -1. */
int pt_stage_parse(const char *s);
/* Read PT_TEST_STOP_AT (undocumented, for tests): 0, or -1 with a message
 * for an unknown value (a typo must not silently disable a test). */
int pt_test_stop_init(void);
/* raise(SIGSTOP) on ourselves; the test kills us from outside. */
void pt_test_stop(void);
/* The one-liner placed at each stage: a load and a compare when unused. */
#define PT_TEST_STOP(stage) do { if (pt_test_stop_stage == (stage)) pt_test_stop(); } while (0)

/* 1 when the peer has closed (or reset) the connection fd, even with its
 * data still unread; 0 while it is open (unread data only means the peer is
 * ahead of us) or fd < 0. Never blocks, never consumes data. */
int pt_fd_peer_closed(int fd);

/* A run loop without progress for idle_ns: keep going, probe the peer's
 * out-of-band connection (after PT_PEER_PROBE_NS), or give up (stall_ns,
 * the --oob_timeout). */
#define PT_PEER_PROBE_NS 200000000ull
enum pt_idle { PT_IDLE_WAIT, PT_IDLE_PROBE, PT_IDLE_STALLED };
enum pt_idle pt_idle_state(uint64_t idle_ns, uint64_t stall_ns);

/* The peer as a run loop sees it: two questions about its out-of-band
 * connection, asked only after PT_PEER_PROBE_NS without progress. Either
 * pointer may be NULL (no peer: the answer is 0). */
struct pt_peer_watch {
	/* 1 once the peer's connection has closed or reset: it went away */
	int (*closed)(void *arg);
	/* 1 once the peer has written or closed: it has finished its side */
	int (*finished)(void *arg);
	void *arg;
};
/* The watch over an out-of-band channel (TCP, or rdma_cm's with -z/-R). */
void pt_peer_watch_oob(struct pt_peer_watch *w, struct pt_oob *o);
static inline int pt_peer_closed(const struct pt_peer_watch *w)
{
	return w && w->closed ? w->closed(w->arg) : 0;
}
static inline int pt_peer_finished(const struct pt_peer_watch *w)
{
	return w && w->finished ? w->finished(w->arg) : 0;
}

/* What pt_run_idle() found. */
enum pt_run_state { PT_RUN_OK = 0, PT_RUN_PEER_GONE, PT_RUN_STALLED };
/* pt_idle_state() plus the probe: now and last_progress in ns. */
enum pt_run_state pt_run_idle(const struct pt_peer_watch *peer, uint64_t now,
			      uint64_t last_progress, uint64_t stall_ns);

/* Where a failed completion was seen. */
struct pt_wc_where {
	const char *side;           /* "client" or "server" */
	bool recv;                  /* a receive WR, else a send-queue WR */
	int qp;                     /* QP index */
	uint64_t seq;               /* the WR's sequence on that QP */
	bool counts;                /* BW: add the QP's posted and completed counts */
};
/* Print a failed completion: side, the QP (index and number), which WR
 * (send queue or receive, its sequence and wr_id), the status text, behind
 * a flushed WR the error that caused it (still queued on r's CQs), and
 * whether the peer has gone (peer may be NULL). Returns -1. */
int pt_wc_error(const struct pt_res *r, const struct ibv_wc *wc, const struct pt_wc_where *at,
		const struct pt_peer_watch *peer);
/* SIGINT: the line above a partial row, on stdout next to the table: how
 * far the run got (done of want, or in duration mode done in elapsed_ns of
 * the window); unit is "messages" or "iterations". */
void pt_say_partial(bool duration, uint64_t done, uint64_t want, uint64_t elapsed_ns,
		    const char *unit);
/* The line every loop prints when the peer went away mid-run; fmt says how
 * far the run got. */
void pt_say_peer_gone(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
