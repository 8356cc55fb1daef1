/* SPDX-License-Identifier: BSD-2-Clause */
/* USDT probes (provider "perftest") beside the hook calls of the measurement
 * loops, so bpftrace, perf or an eBPF monitor can follow every WR of a run
 * without --plugin. docs/usdt.md lists the probes and their arguments.
 *
 * Each probe is the `nop` of <sys/sdt.h> plus a note in .note.stapsdt,
 * guarded by its semaphore (a counter the kernel raises while a tracer is
 * attached): with nothing attached a probe costs one load and one untaken
 * branch, as pt_hooks_on does, and its arguments (a clock read, a QPN load)
 * are computed only while someone listens. bench/hook-overhead prices it.
 *
 * Built without <sys/sdt.h> (configure says so), with --disable-usdt, or
 * in a file compiled with -DPT_PROBES_OFF, every PT_PROBE_* is nothing at
 * all and its arguments are not evaluated. */
#ifndef PT_PROBES_H
#define PT_PROBES_H

#if defined(HAVE_USDT) && !defined(PT_PROBES_OFF)
#define PT_PROBES 1
/* sys/sdt.h then names each probe's semaphore in its note */
#define _SDT_HAS_SEMAPHORES 1
#include <stdint.h>
#include <sys/sdt.h>

/* One per probe, named as <sys/sdt.h> expects (provider_name_semaphore),
 * in the section tracers look for; defined in probes.c. */
#define PT_PROBE_SEMAPHORE(name) perftest_##name##_semaphore
extern volatile unsigned short perftest_run_start_semaphore, perftest_run_end_semaphore,
	perftest_post_semaphore, perftest_post_recv_semaphore, perftest_complete_semaphore,
	perftest_complete_recv_semaphore;

#define PT_PROBE_ON(name) __builtin_expect(PT_PROBE_SEMAPHORE(name) != 0, 0)

/* The four per-WR probes' semaphores (post, post_recv, complete,
 * complete_recv) are the halves of one aligned word (probes.c), so a loop
 * tests them all with one compare per iteration, then each only while one
 * is raised. The word is not volatile:
 * the loops that test it call the provider between two tests, so the
 * compiler reads it again each time, and a plain read is one compare with
 * memory where a volatile one is a load and a test. */
union pt_probe_wr_semaphores {
	uint64_t any;
	unsigned short one[4];
};
extern union pt_probe_wr_semaphores pt_probe_wr_semaphores;
#define PT_PROBES_WR_ON() __builtin_expect(pt_probe_wr_semaphores.any != 0, 0)

/* Probes fired (their semaphore up), in this executable: what the unit
 * tests see of a probe with no tracer; only a raised probe counts it. */
extern uint64_t pt_probes_fired;

/* The six-argument form every probe uses (unused slots are 0), so the
 * argument list reads the same in the code and in docs/usdt.md. */
#define PT_PROBE6(name, a0, a1, a2, a3, a4, a5)                                          \
	do {                                                                             \
		if (PT_PROBE_ON(name)) {                                                 \
			pt_probes_fired++;                                               \
			DTRACE_PROBE6(perftest, name, (uint64_t)(a0), (uint64_t)(a1),     \
				      (uint64_t)(a2), (uint64_t)(a3), (uint64_t)(a4),     \
				      (uint64_t)(a5));                                    \
		}                                                                        \
	} while (0)
#else
#define PT_PROBES 0
#define PT_PROBE_ON(name) 0
#define PT_PROBES_WR_ON() 0
#define PT_PROBE6(name, a0, a1, a2, a3, a4, a5) do { } while (0)
#endif

/* A run (one message size) starts: directions as PT_PLUGIN_DIR_* bits. */
#define PT_PROBE_RUN_START(run, num_qps, msg_size, iters, directions, t_ns) \
	PT_PROBE6(run_start, run, num_qps, msg_size, iters, directions, t_ns)
/* A run ends: status 0 ok, -1 failed or interrupted. */
#define PT_PROBE_RUN_END(run, status, elapsed_ns, t_ns) \
	PT_PROBE6(run_end, run, (int64_t)(status), elapsed_ns, t_ns, 0, 0)
/* count send WRs posted by one call on QP index qp (QPN qpn), sequences
 * seq.., wr_ids wr_id.. (step 1). */
#define PT_PROBE_POST(qp, qpn, seq, count, wr_id, t_ns) \
	PT_PROBE6(post, qp, qpn, seq, count, wr_id, t_ns)
/* The same for receive WRs. */
#define PT_PROBE_POST_RECV(qp, qpn, seq, count, wr_id, t_ns) \
	PT_PROBE6(post_recv, qp, qpn, seq, count, wr_id, t_ns)
/* One send-queue CQE reaped (status: enum ibv_wc_status). */
#define PT_PROBE_COMPLETE(qp, qpn, seq, wr_id, status, t_ns) \
	PT_PROBE6(complete, qp, qpn, seq, wr_id, status, t_ns)
/* One receive CQE reaped. */
#define PT_PROBE_COMPLETE_RECV(qp, qpn, seq, wr_id, status, t_ns) \
	PT_PROBE6(complete_recv, qp, qpn, seq, wr_id, status, t_ns)

#endif
