/* SPDX-License-Identifier: BSD-2-Clause */
/* Faults during a run: noticing that the peer has gone, reporting a failed
 * completion, and the test-only hook that freezes this process at a chosen
 * stage so a lab test can kill it there (tests/lab/test_36_faults.py). */
#ifndef PT_FAULT_H
#define PT_FAULT_H
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct pt_ctx;

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

/* What pt_run_idle() found. */
enum pt_run_state { PT_RUN_OK = 0, PT_RUN_PEER_GONE, PT_RUN_STALLED };
/* pt_idle_state() plus the probe: now and last_progress in ns. */
enum pt_run_state pt_run_idle(const struct pt_ctx *c, uint64_t now, uint64_t last_progress,
			      uint64_t stall_ns);

/* Print a failed completion: side ("client"/"server"), the QP (index qp and
 * number), which WR (send queue or receive, its sequence seq and wr_id), the
 * status text, and whether the peer has gone. Returns -1. */
int pt_wc_error(const struct pt_ctx *c, const struct ibv_wc *wc, const char *side, bool recv,
		int qp, uint64_t seq);
/* SIGINT: the line above a partial row, on stdout next to the table: how
 * far the run got (done of want, or in duration mode done in elapsed_ns of
 * the window); unit is "messages" or "iterations". */
void pt_say_partial(const struct pt_ctx *c, uint64_t done, uint64_t want, uint64_t elapsed_ns,
		    const char *unit);
/* The line every loop prints when the peer went away mid-run; fmt says how
 * far the run got. */
void pt_say_peer_gone(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
