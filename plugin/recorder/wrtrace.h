/* SPDX-License-Identifier: BSD-2-Clause */
/* wrtrace: the per-WR recorder.
 *
 * Driven by the plugin events of perftest_plugin.h, from our tools' hooks
 * (built in: --trace=FILE) or from libwrtrace.so (--plugin, later LD_PRELOAD).
 * It depends on nothing of the engine but pt_now_ns() (clock.h), so an
 * interposer can drive it the same way.
 *
 * Hot path (wrt_post, wrt_complete): writes into storage preallocated by
 * wrt_run_start; no malloc, syscall, lock or formatting. Every WR goes into
 * a small per-QP FIFO of WRs in flight (stays in cache); a send CQE retires
 * its WR and every older one of that QP (unsignaled WRs, cq_mod > 1, post
 * lists), stamping them with the CQE's times; receives complete one CQE
 * each, in order. A retired WR becomes a record, written once, so rows come
 * in completion order (per QP: post order); what is still in flight at run
 * end follows. The first max_records WRs retired keep a full record; the
 * rest only feed log-linear histograms (<= 0.78% relative error) and are
 * counted as dropped.
 *
 * After the run (wrt_run_end): rows go to FILE (CSV, or JSON Lines when FILE
 * ends in .jsonl) and a summary is printed. */
#ifndef PT_WRTRACE_H
#define PT_WRTRACE_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "plugin/perftest_plugin.h"
#include "wrtrace_hist.h"

#define WRT_DEFAULT_MAX 1000000ull      /* records per run */
#define WRT_MAX_ENV "WRTRACE_MAX"
#define WRT_FORMAT_VERSION 1
#define WRT_NONE UINT64_MAX             /* "no value" in a record */

/* wrt_rec.flags */
enum {
	WRT_SIGNALED = 1 << 0,  /* the WR asked for a CQE */
	WRT_RECV = 1 << 1,      /* receive WR */
	WRT_DONE = 1 << 2,      /* retired by a CQE: t_comp valid */
	WRT_HW = 1 << 3,        /* hw_ns valid */
	WRT_CQE = 1 << 4,       /* the CQE that retired it is this WR's own */
	WRT_POSTED = 1 << 6,    /* t_post valid (a receive posted before the run has none) */
};

/* One WR (a row). Kept small: every retired WR writes one. The gaps between
 * CQEs are not stored: rows come in poll order, so they are derived. */
struct wrt_rec {
	uint64_t wr_id, seq;
	uint64_t t_post, t_comp;    /* software ns */
	uint64_t hw_ns;             /* NIC ns of the retiring CQE */
	uint32_t qp, bytes;
	uint8_t opcode, status, flags;
};

/* What a run was, and what happened to its WRs (written with the rows). */
struct wrt_meta {
	uint32_t run;
	char tool[64], device[64], hw_domain[64], sw_clock[32], qpns[256];
	uint32_t role, conn, num_qps, tx_depth, rx_depth, cq_mod, post_list, hw_ts;
	uint64_t msg_size, iterations, hw_hz;
	bool has_fit;
	struct pt_plugin_clock_fit fit;
	uint64_t cap;               /* records allocated for the run */
	uint64_t wrs;               /* WRs seen: posted, plus receives posted before the run */
	uint64_t recorded;          /* rows */
	uint64_t dropped;           /* over the cap: in the histograms only */
	uint64_t untracked;         /* not followed at all: in-flight FIFO full, QP out of range */
	uint64_t incomplete;        /* send WRs no CQE retired by run end */
	uint64_t recv_pending;      /* receives still posted at run end (normal) */
	uint64_t unmatched;         /* CQEs that matched no outstanding WR */
	uint64_t errors;            /* CQEs with status != 0 */
	/* post->completion of send WRs over ALL WRs, including dropped ones
	 * (histogram); all_count 0 when nothing was dropped. */
	uint64_t all_count, all_p50, all_p90, all_p99, all_p99_9, all_p99_99, all_max;
};

/* ------------------------------------------------------------- recorder -- */

struct wrt_config {
	char path[4096];            /* "" = summary only */
	bool jsonl;
	uint64_t max_records;
	uint32_t fifo_min;          /* in-flight FIFO entries per QP and direction, at least */
	bool nodefer;               /* build each row when its CQE comes (the FIFO path) */
	uint64_t pairs_max;         /* pair slots lent at a time at most; 0: the run's
	                               (wrtrace_pairs.c; no option sets it: tests do) */
	FILE *summary;              /* NULL: stdout */
	bool quiet;                 /* no summary (the file is still written) */
};

/* "FILE[:max=N][:fifo=N][:nodefer][:quiet]"; max defaults to $WRTRACE_MAX, else WRT_DEFAULT_MAX. */
int wrt_config_parse(const char *args, struct wrt_config *cfg, char *err, size_t err_len);

struct wrt;
struct wrt *wrt_new(const struct wrt_config *cfg);
void wrt_free(struct wrt *w);
/* Allocates and touches every buffer of the run (outside the timed loop). */
int wrt_run_start(struct wrt *w, const struct pt_plugin_run_info *info, char *err, size_t err_len);
void wrt_post(struct wrt *w, const struct pt_plugin_post *ev);
/* The same for one WR of the run's kind (pt_plugin_ops.post_one). */
void wrt_post_one(struct wrt *w, uint32_t qp, uint64_t seq, uint64_t wr_id, uint64_t t_ns);
void wrt_complete(struct wrt *w, const struct pt_plugin_completion *ev);
/* The tool's post slots for this run (pt_plugin_ops.bind_post_slots): the
 * deferred rows lend each send queue its pool's next slots (wrtrace_rec.h). */
void wrt_bind_post_slots(struct wrt *w, struct pt_plugin_post_slots *slots, uint32_t n);
/* The tool's pair slots (pt_plugin_ops.bind_pair_slots): a run of one QP
 * and one WR in flight (a latency tool) is lent a buffer of pairs, played
 * as their events at the next call (wrtrace_pairs.c). */
void wrt_bind_pair_slots(struct wrt *w, struct pt_plugin_pair_slots *slots, uint32_t n);
void wrt_clock_fit(struct wrt *w, const struct pt_plugin_clock_fit *fit);
/* Closes the run: counts what never completed, writes the file, prints. */
int wrt_run_end(struct wrt *w, const struct pt_plugin_run_end *end, char *err, size_t err_len);
/* Inspection, for tests and the interposer; the rows are complete after
 * wrt_run_end. */
const struct wrt_rec *wrt_records(const struct wrt *w, uint64_t *n);
/* True while the run defers its rows: it keeps only post times, segments
 * of alike WRs and a CQE log, and builds the rows at run end (or at the
 * first event the deferral cannot take; wrtrace_rec.h). */
bool wrt_rows_deferred(const struct wrt *w);
/* Why this run's deferral ended before its end, or NULL. */
const char *wrt_handover(const struct wrt *w);
const struct wrt_meta *wrt_meta(const struct wrt *w);
/* For a driver that learns what the run was only while it runs (the
 * LD_PRELOAD interposer: role, message size, QPs used): fix the metadata up
 * before wrt_run_end. */
struct wrt_meta *wrt_meta_edit(struct wrt *w);

/* The plugin table over the recorder (wrtrace_plugin.c). */
const struct pt_plugin_ops *wrt_plugin_get_ops(void);

/* ----------------------------------------------------- derived columns -- */

struct wrt_derived {
	bool has_lat, has_tput, has_split, has_gap_sw, has_gap_hw;
	int64_t lat_ns;             /* t_comp - t_post */
	double tput_mb_s;           /* bytes / latency, 1e6 bytes/s */
	int64_t post_to_cqe_ns;     /* NIC time mapped onto software time - t_post */
	int64_t cqe_to_poll_ns;     /* t_comp - the same */
	int64_t gap_sw_ns;          /* own CQE: poll time since the previous CQE's */
	int64_t gap_hw_ns;          /* own CQE: NIC time since the previous stamped CQE's */
};

/* The previous CQE, walking the rows of one run in order. */
struct wrt_gaps {
	bool have_sw, have_hw;
	uint64_t last_sw, last_hw;
};

/* Derived columns of row r; gaps (zeroed at the start of each run) carries
 * the previous CQE from row to row, or is NULL (no gap columns). */
void wrt_derive(const struct wrt_rec *r, const struct wrt_meta *m, struct wrt_gaps *gaps,
		struct wrt_derived *d);

/* -------------------------------------------------------------- summary -- */

struct wrt_dist {
	uint64_t count;
	int64_t min, p50, p90, p99, p99_9, p99_99, max;
	bool approx;                /* from the histogram */
};

struct wrt_summary {
	uint64_t sends, recvs;
	struct wrt_dist send_lat, recv_lat, gap_sw, gap_hw, post_to_cqe, cqe_to_poll;
};

/* Histograms of what was dropped over the cap (recorder only). */
struct wrt_overflow {
	struct wrt_hist *send_lat, *recv_lat, *gap_sw, *gap_hw;
	uint64_t gap_hw_negative;   /* NIC gaps < 0 (CQEs of two CQs), not in gap_hw */
};

/* From the rows plus, when given, the overflow histograms. */
int wrt_summarize(const struct wrt_meta *m, const struct wrt_rec *recs, uint64_t n,
		  const struct wrt_overflow *ov, struct wrt_summary *s);
void wrt_summary_print(FILE *out, const struct wrt_meta *m, const struct wrt_summary *s);
/* "hardware CQE timestamps: ..." (no newline). */
void wrt_hw_line(char *buf, size_t len, const struct wrt_meta *m);

/* ------------------------------------------------------------ file I/O -- */

/* Append one run (append = false: truncate and write the file header). */
int wrt_write_run(const char *path, bool jsonl, bool append, const struct wrt_meta *m,
		  const struct wrt_rec *recs, uint64_t n, char *err, size_t err_len);
/* The same into an open stream (header: write the format lines first);
 * -1 on a JSON encoding error, and the stream's error flag on a write error. */
int wrt_write_stream(FILE *f, bool jsonl, bool header, const struct wrt_meta *m,
		     const struct wrt_rec *recs, uint64_t n);

struct wrt_run {
	struct wrt_meta meta;
	struct wrt_rec *recs;
	uint64_t n, cap;
};

struct wrt_trace {
	struct wrt_run *runs;
	size_t nruns;
	bool jsonl;
};

/* Strict: any malformed line is an error naming FILE:LINE. */
int wrt_read(const char *path, struct wrt_trace *t, char *err, size_t err_len);
/* The same from an open stream; name is what errors call it. */
int wrt_read_stream(FILE *f, const char *name, struct wrt_trace *t, char *err, size_t err_len);
void wrt_trace_free(struct wrt_trace *t);

/* Names used in files and summaries. */
const char *wrt_opcode_name(uint32_t op);
int wrt_opcode_parse(const char *s, uint32_t *op);
const char *wrt_role_name(uint32_t role);
const char *wrt_conn_name(uint32_t conn);

#endif
