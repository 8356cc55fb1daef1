/* SPDX-License-Identifier: BSD-2-Clause */
/* What wr.bpf.c (the USDT side of `rdmamon wr`) and wr_run.c share: the
 * maps' keys and values. The probes and their arguments: docs/usdt.md. */
#ifndef MONITOR_WR_H
#define MONITOR_WR_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/* One QP of one process: the tool's QPN (post's arg1, complete's
 * wc.qp_num), so the send and receive sides of a QP meet in one entry. */
struct rm_wr_qp_key {
	__u32 pid;             /* tgid */
	__u32 qpn;
};

/* Per-CPU (no atomics in the probes): user space sums the CPUs' copies,
 * except qp_index and last_seq, where it takes the largest. */
struct rm_wr_qp_val {
	__u64 qp_index;        /* the tool's QP index (0 .. -q - 1) */
	__u64 post_calls;      /* post probe hits (one per post call) */
	__u64 posted;          /* send WRs posted: the sum of post's count */
	__u64 completed;       /* send CQEs reaped */
	__u64 complete_errors; /* of which with a status other than success */
	__u64 recv_posted;     /* receive WRs posted */
	__u64 recv_completed;  /* receive CQEs reaped */
	__u64 recv_errors;
	__u64 last_seq1;       /* 1 + the highest sequence a send CQE retired, 0: none */
};

/* A process's runs (run_start / run_end), one writer: the process. */
struct rm_wr_run_val {
	__u64 started;
	__u64 ended;
	__u64 failed;          /* run_end with status -1 */
	__u64 run;             /* the last run's number */
	__u64 qps, msg_size, iters;  /* the last run_start's arguments */
	__u64 elapsed_ns;      /* the last run_end's */
	char comm[16];
};

/* Counters of what could not be recorded (per-CPU array "wr_lost"). */
enum rm_wr_lost { WR_LOST_QP_MAP, WR_LOST_RUN_MAP, WR_LOST_NSLOTS };

#define RM_WR_MAX_QPS 8192
#define RM_WR_MAX_PROCS 1024

#endif
