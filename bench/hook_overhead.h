/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/hook-overhead's parts: main and the BW rows (hook_overhead.c), the
 * latency loops' rows (hook_overhead_lat.c), the callgrind runner both use
 * (hook_overhead_cg.c). */
#ifndef PT_BENCH_HOOK_OVERHEAD_H
#define PT_BENCH_HOOK_OVERHEAD_H
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/* Instructions of fn (inclusive), counted by callgrind running this
 * program (self) with args; -1 when valgrind cannot be run (said). */
double callgrind_ir_of(const char *self, const char *fn, const char *args);
/* The same less the inclusive instructions of the functions whose
 * callgrind_annotate name holds minus (*apart gets them, may be NULL). */
double callgrind_ir_less(const char *self, const char *fn, const char *args, const char *minus,
			 double *apart);

/* --lat-loop KIND off|on N: one run of run_lat.c's loop KIND (send, write,
 * read, atomic) over fake verbs, N iterations, hooks off or with the
 * recorder; the exit status of the program. */
int lat_loop_main(const char *kind, const char *mode, const char *iters);
/* The latency loops' rows: instructions per WR, hooks off and with the
 * recorder, by callgrind at iters and 2 x iters iterations. */
void lat_loop_ir_rows(const char *self, uint64_t iters);
/* --lat-report N: the latency tools' report phase once over N samples;
 * lat_report_ir_row: its instructions per sample by callgrind, at n and
 * 2 x n samples (the lab's bench/instructions runs take 1000 and 2000). */
int lat_report_main(const char *n);
void lat_report_ir_row(const char *self, size_t n);

/* --lat-own KIND new|old spin|events N: run_lat.c's loop KIND (send, write, read, atomic)
 * once, hooks off, on either post API, spinning or with -e; --lat-floor
 * spin|spin-old|write|send|events|watched N: the floor loops (lat_floor.c) once. lat_own_rows: the own
 * code per WR of both, by callgrind at iters and 2 x iters iterations, the
 * fake device, libibverbs and libc apart. */
int lat_own_main(const char *kind, const char *api, const char *wait, const char *iters);
int lat_floor_main(const char *wait, const char *iters);
void lat_own_rows(const char *self, uint64_t iters);

/* fake_channel.c: the fake device's completion channel learns of each
 * event taken and of each ack through these (NULL: nobody listens). */
extern void (*fake_event_taken)(struct ibv_cq *cq);
extern void (*fake_events_acked)(struct ibv_cq *cq, unsigned int n);

/* The floor loops (lat_floor.c): a READ latency loop with nothing but its
 * verbs calls, spinning or sleeping on ch (watched: with a poll() of ch
 * before each event); 0, or -1 on a failed call or CQE. */
struct floor_wr {
	uint32_t rkey, lkey, len;
	uint64_t raddr, addr;
};
int floor_read_spin(struct ibv_qp_ex *qx, struct ibv_cq *cq, uint64_t *stamps, uint64_t iters,
		    const struct floor_wr *w);
int floor_write_spin(struct ibv_qp_ex *qx, struct ibv_cq *cq, uint64_t *stamps, uint64_t iters,
		     const struct floor_wr *w, uint8_t *payload_last, const volatile uint8_t *peer_last);
int floor_read_spin_old(struct ibv_qp *qp, struct ibv_cq *cq, uint64_t *stamps, uint64_t iters,
			const struct floor_wr *w);
int floor_send_spin(struct ibv_qp_ex *qx, struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq,
		    uint64_t *stamps, uint64_t iters, const struct floor_wr *w,
		    struct ibv_recv_wr *recv);
int floor_read_events(struct ibv_qp_ex *qx, struct ibv_cq *cq, struct ibv_comp_channel *ch,
		      uint64_t *stamps, uint64_t iters, const struct floor_wr *w);
int floor_read_events_watched(struct ibv_qp_ex *qx, struct ibv_cq *cq, struct ibv_comp_channel *ch,
			      uint64_t *stamps, uint64_t iters, const struct floor_wr *w);
int floor_send_events(struct ibv_qp_ex *qx, struct ibv_qp *qp, struct ibv_cq *scq, struct ibv_cq *rcq,
		      struct ibv_comp_channel *ch, uint64_t *stamps, uint64_t iters,
		      const struct floor_wr *w, struct ibv_recv_wr *recv);
int floor_send_events_watched(struct ibv_qp_ex *qx, struct ibv_qp *qp, struct ibv_cq *scq,
			      struct ibv_cq *rcq, struct ibv_comp_channel *ch, uint64_t *stamps,
			      uint64_t iters, const struct floor_wr *w, struct ibv_recv_wr *recv);

#endif
