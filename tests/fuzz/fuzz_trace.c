/* SPDX-License-Identifier: BSD-2-Clause */
/* The trace reader behind `wrtrace report` and `wrtrace plot`
 * (plugin/recorder/wrtrace_read.c) on whole files, and what is done with what it
 * accepts: the summary, and writing it back (plugin/recorder/wrtrace_write.c). And
 * the other way round: files the recorder (plugin/recorder/wrtrace.c) writes from
 * any sequence of plugin events read back as recorded.
 * fuzz-sources: plugin/recorder/wrtrace_read.c plugin/recorder/wrtrace_write.c plugin/recorder/wrtrace_stats.c plugin/recorder/wrtrace_hist.c plugin/recorder/wrtrace.c plugin/recorder/wrtrace_defer.c plugin/recorder/wrtrace_pairs.c
 * fuzz-libs: -ljansson -lm
 * fuzz-flags: -max_len=8192 -dict=tests/fuzz/trace.dict -rss_limit_mb=512 -malloc_limit_mb=64
 *
 * Input starting with '#' or '{': a whole trace file, CSV or JSON Lines
 * (the reader decides by the first byte). Properties:
 * - refused: nothing is left allocated, and the error names this file and a
 *   line that exists ("trace:LINE: why");
 * - accepted: the file is text ending in a newline, and every line is
 *   accounted for (format lines + one per run + one per row: nothing is
 *   skipped); each run has the rows its metadata counts; memory is bounded
 *   by the rows (at most twice them, or the first 1024); every row is
 *   self-consistent (QP in range, own CQE only when completed, RECV flag
 *   from the opcode, a status only when completed);
 * - its summary counts agree with the rows, counted here independently,
 *   and the percentiles are ordered; the printed summary says so;
 * - written back in the same format it reads back equal, and that text is a
 *   fixed point (write(read(text)) == text); written in the other format
 *   it reads back equal too (strings as the CSV writer spells them).
 * At exit it prints how many files were accepted and refused, so a long run
 * shows it gets past the format lines.
 *
 * Any other input drives the recorder (see record()): byte 0 sets up the run,
 * then 8 bytes per event (posts, send and receive CQEs, clock fits; QPs out
 * of range, sequence jumps, full FIFOs, a cap of 8 rows). Properties: no WR
 * is lost silently (rows + dropped + untracked <= WRs <= the same +
 * unmatched); the file (either format) reads back with the recorder's
 * metadata and rows, and passes the row and summary checks above; with
 * nothing dropped, the summary `wrtrace report` prints from it is the
 * capture summary. With bit 6 of byte 0, one token of that file is replaced
 * by input bytes and the result gets the file checks above.
 * FUZZ_VERBOSE=1 prints why a file was refused, or the recorder's summary. */
#include <inttypes.h>
#include "fuzz.h"
#include "plugin/recorder/wrtrace_int.h"

static uint64_t n_accepted, n_refused, n_recorded;

__attribute__((destructor)) static void tally(void)
{
	fprintf(stderr, "fuzz trace: %" PRIu64 " files accepted, %" PRIu64 " refused; %" PRIu64
		" recorder runs\n", n_accepted, n_refused, n_recorded);
}

static int read_buf(const char *buf, size_t len, struct wrt_trace *t, char *err, size_t err_len)
{
	/* fmemopen of 0 bytes is refused: an empty file is any empty stream */
	FILE *f = len ? fmemopen((void *)buf, len, "r") : fopen("/dev/null", "r");
	int rc;

	FUZZ_ASSERT(f);
	rc = wrt_read_stream(f, "trace", t, err, err_len);
	fclose(f);
	return rc;
}

/* The whole trace, written again in one format; NULL on an encoding error. */
static char *write_all(const struct wrt_trace *t, bool jsonl, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	int rc = 0;

	FUZZ_ASSERT(f);
	for (size_t i = 0; !rc && i < t->nruns; i++)
		rc = wrt_write_stream(f, jsonl, i == 0, &t->runs[i].meta, t->runs[i].recs,
				      t->runs[i].n);
	FUZZ_ASSERT(!ferror(f));
	FUZZ_ASSERT(fclose(f) == 0);
	if (rc) {
		free(text);
		return NULL;
	}
	return text;
}

/* A metadata string as the CSV writer spells it, and the CSV reader reads it. */
static void csv_spelling(const char *s, char *out)
{
	if (!strcmp(s, "-")) {
		out[0] = '\0';
		return;
	}
	for (; *s; s++)
		*out++ = (*s > ' ' && *s < 127 && *s != '"' && *s != '#') ? *s : '_';
	*out = '\0';
}

/* a and b are the same run; strings compared as CSV spells them if csv. */
static void same_meta(const struct wrt_meta *a, const struct wrt_meta *b, bool csv)
{
	for (size_t i = 0; i < wrt_meta_nfields; i++) {
		const struct wrt_field *k = &wrt_meta_fields[i];
		const char *pa = (const char *)a + k->off, *pb = (const char *)b + k->off;

		if (k->type == WRT_F_STR) {
			char want[256];

			FUZZ_ASSERT(k->size <= sizeof(want));
			if (csv)
				csv_spelling(pa, want);
			else
				strcpy(want, pa);
			if (strcmp(want, pb)) {
				fprintf(stderr, "meta %s: '%s' vs '%s'\n", k->key, want, pb);
				FUZZ_ASSERT(!"metadata string survives the round trip");
			}
		} else if (k->type == WRT_F_BOOL) {
			FUZZ_ASSERT(*(const bool *)pa == *(const bool *)pb);
		} else if (memcmp(pa, pb, k->type == WRT_F_U32 || k->type == WRT_F_ENUM ? 4 : 8)) {
			fprintf(stderr, "meta %s differs\n", k->key);
			FUZZ_ASSERT(!"metadata value survives the round trip");
		}
	}
}

static void same_trace(const struct wrt_trace *a, const struct wrt_trace *b, bool csv)
{
	FUZZ_ASSERT(a->nruns == b->nruns);
	for (size_t i = 0; i < a->nruns; i++) {
		const struct wrt_run *x = &a->runs[i], *y = &b->runs[i];

		same_meta(&x->meta, &y->meta, csv);
		FUZZ_ASSERT(x->n == y->n);
		for (uint64_t j = 0; j < x->n; j++) {
			const struct wrt_rec *r = &x->recs[j], *s = &y->recs[j];

			FUZZ_ASSERT(r->wr_id == s->wr_id && r->seq == s->seq && r->qp == s->qp &&
				    r->bytes == s->bytes && r->opcode == s->opcode &&
				    r->status == s->status && r->flags == s->flags);
			FUZZ_ASSERT(!(r->flags & WRT_POSTED) || r->t_post == s->t_post);
			FUZZ_ASSERT(!(r->flags & WRT_DONE) || r->t_comp == s->t_comp);
			FUZZ_ASSERT(!(r->flags & WRT_HW) || r->hw_ns == s->hw_ns);
		}
	}
}

/* t written in one format reads back equal (strings as CSV spells them if
 * csv_strings) into *back; the text stays in *text, *len. */
static void reads_back(const struct wrt_trace *t, bool jsonl, bool csv_strings,
		       struct wrt_trace *back, char **text, size_t *len)
{
	char err[512];

	*text = write_all(t, jsonl, len);
	FUZZ_ASSERT(*text);
	if (read_buf(*text, *len, back, err, sizeof(err))) {
		fprintf(stderr, "reading back as %s: %s\n", jsonl ? "JSON Lines" : "CSV", err);
		FUZZ_ASSERT(!"what was written reads back");
	}
	same_trace(t, back, csv_strings);
}

static void check_dist(const struct wrt_dist *d, uint64_t count)
{
	FUZZ_ASSERT(d->count == count && !d->approx);
	if (count)
		FUZZ_ASSERT(d->min <= d->p50 && d->p50 <= d->p90 && d->p90 <= d->p99 &&
			    d->p99 <= d->p99_9 && d->p99_9 <= d->p99_99 && d->p99_99 <= d->max);
}

/* A summary as printed. */
static char *summary_text(const struct wrt_run *r)
{
	struct wrt_summary s;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_ASSERT(f && wrt_summarize(&r->meta, r->recs, r->n, NULL, &s) == 0);
	wrt_summary_print(f, &r->meta, &s);
	FUZZ_ASSERT(fclose(f) == 0);
	return text;
}

/* One run: rows, summary and printed summary agree. */
static void check_run(const struct wrt_run *r)
{
	uint64_t lat[2] = { 0 }, dirs[2] = { 0 }, own = 0, hw_own = 0, split = 0;
	struct wrt_summary s;
	char *text, want[160];

	FUZZ_ASSERT(r->n == r->meta.recorded);
	FUZZ_ASSERT(r->n <= r->cap && r->cap <= (r->n > 512 ? 2 * r->n : 1024));
	FUZZ_ASSERT(!r->n == !r->recs);
	for (uint64_t j = 0; j < r->n; j++) {
		const struct wrt_rec *w = &r->recs[j];
		bool recv = w->flags & WRT_RECV, done = w->flags & WRT_DONE;

		FUZZ_ASSERT(w->qp < r->meta.num_qps);
		FUZZ_ASSERT(recv == (w->opcode == PT_PLUGIN_OP_RECV));
		FUZZ_ASSERT(done || (!(w->flags & WRT_CQE) && w->status == 0));
		dirs[recv]++;
		if (done && (w->flags & WRT_POSTED) && w->status == 0) {
			lat[recv]++;
			if ((w->flags & WRT_HW) && r->meta.has_fit)
				split++;
		}
		if (w->flags & WRT_CQE) {
			own++;
			hw_own += !!(w->flags & WRT_HW);
		}
	}
	FUZZ_ASSERT(wrt_summarize(&r->meta, r->recs, r->n, NULL, &s) == 0);
	FUZZ_ASSERT(s.sends == dirs[0] && s.recvs == dirs[1]);
	check_dist(&s.send_lat, lat[0]);
	check_dist(&s.recv_lat, lat[1]);
	check_dist(&s.gap_sw, own ? own - 1 : 0);
	check_dist(&s.gap_hw, hw_own ? hw_own - 1 : 0);
	FUZZ_ASSERT(s.post_to_cqe.count == s.cqe_to_poll.count && s.post_to_cqe.count <= split);

	text = summary_text(r);
	snprintf(want, sizeof(want), "%" PRIu64 " rows (%" PRIu64 " send, %" PRIu64 " recv)\n",
		 r->n, dirs[0], dirs[1]);
	FUZZ_ASSERT(strstr(text, want));
	free(text);
}

/* Refused: "trace:LINE: why", LINE a line of the input, nothing kept. */
static void check_refusal(const struct wrt_trace *t, const char *err, uint64_t lines)
{
	char *end;
	unsigned long line;

	FUZZ_ASSERT(!t->runs && t->nruns == 0);
	FUZZ_ASSERT(!strncmp(err, "trace:", 6));
	line = strtoul(err + 6, &end, 10);
	FUZZ_ASSERT(end > err + 6 && line <= lines && (line > 0 || lines == 0));
	FUZZ_ASSERT(end[0] == ':' && end[1] == ' ' && end[2] != '\0');
}

/* ------------------------------------------------------ recorder mode -- */

static void check_file(const char *in, size_t size);

/* text with token tok of line line (both modulo what there is) replaced by
 * rep; tokens are what lies between the delimiters " ,:{}", empty ones too:
 * a CSV field, a metadata key=value, a JSON key or value. */
static char *edit_token(const char *text, size_t len, unsigned line, unsigned tok,
			const uint8_t *rep, size_t rep_len, size_t *out_len)
{
	static const char delim[] = " ,:{}";
	size_t nlines = 0, ls = 0, le, ts, te, ntok = 1;
	char *out;

	for (size_t i = 0; i < len; i++)
		nlines += text[i] == '\n';
	FUZZ_ASSERT(nlines > 0 && text[len - 1] == '\n');
	line %= nlines;
	for (unsigned l = 0; l < line; l++)
		ls = (size_t)((const char *)memchr(text + ls, '\n', len - ls) - text) + 1;
	le = (size_t)((const char *)memchr(text + ls, '\n', len - ls) - text);
	for (size_t i = ls; i < le; i++)
		ntok += memchr(delim, text[i], sizeof(delim) - 1) != NULL;
	tok %= ntok;
	for (ts = ls; tok; ts++)
		tok -= memchr(delim, text[ts], sizeof(delim) - 1) != NULL;
	for (te = ts; te < le && !memchr(delim, text[te], sizeof(delim) - 1); te++)
		;
	*out_len = ts + rep_len + (len - te);
	out = malloc(*out_len ? *out_len : 1);
	FUZZ_ASSERT(out);
	memcpy(out, text, ts);
	memcpy(out + ts, rep, rep_len);
	memcpy(out + ts + rep_len, text + te, len - te);
	return out;
}


/* Deferred rows and the FIFO path: the same rows in the same order, and
 * the same counts. */
static void same_as_fifo(struct wrt *w, struct wrt *fifo)
{
	const struct wrt_meta *a = wrt_meta(w), *b = wrt_meta(fifo);
	const struct wrt_rec *x, *y;
	uint64_t nx, ny;

	x = wrt_records(w, &nx);
	y = wrt_records(fifo, &ny);
	FUZZ_ASSERT(nx == ny);
	for (uint64_t i = 0; i < nx; i++)
		FUZZ_ASSERT(x[i].qp == y[i].qp && x[i].seq == y[i].seq && x[i].wr_id == y[i].wr_id &&
			    x[i].t_post == y[i].t_post && x[i].t_comp == y[i].t_comp &&
			    x[i].hw_ns == y[i].hw_ns && x[i].bytes == y[i].bytes &&
			    x[i].opcode == y[i].opcode && x[i].status == y[i].status &&
			    x[i].flags == y[i].flags);
	FUZZ_ASSERT(a->wrs == b->wrs && a->recorded == b->recorded && a->dropped == b->dropped &&
		    a->untracked == b->untracked && a->unmatched == b->unmatched &&
		    a->incomplete == b->incomplete && a->recv_pending == b->recv_pending &&
		    a->errors == b->errors);
}

/* Byte 0: bit 0 JSON Lines, bit 1 NIC timestamps, bits 2-3 QPs - 1, bit 4
 * max=8, bit 5 the side also receives, bit 6 edit the file. With bit 6,
 * bytes 1-3 are the line, the token and (% 32) the length of the text put
 * in its place, which follows; then the events. The edited file gets the
 * file-mode checks: the reader must refuse it or accept it with every
 * property (one wrong field in an otherwise valid file is what random
 * mutation of whole files rarely makes). Up to 32 events, 8 bytes each,
 * e[0..7]: e[0] % 8 the kind (0-1 post send, 0 with e[7] odd through
 * post_one, 2 post receive, 3-4 send CQE, 5 receive CQE, 6 clock fit, 7
 * post of another opcode); e[1] the QP (one past the last: out of range);
 * e[2] count / seq choice; e[3] signal period, flags, status; e[4..5] time step (ns); e[6]
 * size or status; e[7] NIC time offset. As from our tools: times only
 * move forward (NIC times jitter around them), sequence numbers are those
 * posted (or unknown), fits are finite (as pt_hwclock makes them). */
static void record(const uint8_t *data, size_t size)
{
	static const uint32_t qpns[4] = { 0x11, 0x12, 0x13, 0x14 };
	const uint8_t cfg0 = data[0];
	const uint32_t nqp = 1 + ((cfg0 >> 2) & 3);
	struct pt_plugin_run_info in = {
		.struct_size = sizeof(in), .tool = "ib_send_bw", .device = "rxe0",
		.role = (cfg0 & 32) ? PT_PLUGIN_ROLE_SERVER : PT_PLUGIN_ROLE_CLIENT,
		.conn = PT_PLUGIN_CONN_RC, .num_qps = nqp, .qp_nums = qpns, .msg_size = 4096,
		.iterations = 16, .tx_depth = 4, .rx_depth = 2, .cq_mod = 2, .post_list = 1,
		.directions = PT_PLUGIN_DIR_SEND | ((cfg0 & 32) ? PT_PLUGIN_DIR_RECV : 0),
		.hw_ts = (cfg0 & 2) ? PT_PLUGIN_HW_TS_ON : PT_PLUGIN_HW_TS_NONE,
		.hw_clock_hz = (cfg0 & 2) ? 156250000 : 0, .hw_clock_domain = "hca",
		.sw_clock = "CLOCK_MONOTONIC_RAW", .send_opcode = PT_PLUGIN_OP_SEND,
	};
	struct wrt_config cfg = { .jsonl = cfg0 & 1, .max_records = (cfg0 & 16) ? 8 : 1000000,
				  .fifo_min = 1 };
	struct pt_plugin_run_end end = { .struct_size = sizeof(end) };
	uint64_t next_seq[5] = { 0 }, next_rseq[5] = { 2, 2, 2, 2, 2 }, t = 1000000;
	struct wrt_trace mine = { .nruns = 1, .jsonl = cfg0 & 1 }, back;
	struct wrt_run run = { 0 };
	const uint8_t *ev = data + 1, *rep = NULL;
	size_t rep_len = 0;
	const struct wrt_meta *m;
	char *live = NULL, *text, *file, err[512];
	size_t live_len = 0, len;
	struct wrt_config cfg_fifo;
	struct wrt *w, *fifo;

	cfg.summary = open_memstream(&live, &live_len);
	FUZZ_ASSERT(cfg.summary);
	w = wrt_new(&cfg);
	FUZZ_ASSERT(w && wrt_run_start(w, &in, err, sizeof(err)) == 0);
	/* the same events on the FIFO path: the deferred rows must equal its rows */
	cfg_fifo = cfg;
	cfg_fifo.nodefer = true;
	cfg_fifo.quiet = true;
	cfg_fifo.summary = NULL;
	fifo = wrt_new(&cfg_fifo);
	FUZZ_ASSERT(fifo && wrt_run_start(fifo, &in, err, sizeof(err)) == 0);
	if ((cfg0 & 64) && size >= 4) {
		rep = data + 4;
		rep_len = data[3] % 32 < size - 4 ? data[3] % 32 : size - 4;
		ev = rep + rep_len;
	}
	/* 32 events (up to 128 WRs) reach every path; more only slow it down */
	for (const uint8_t *e = ev; e + 8 <= data + size && e < ev + 32 * 8; e += 8) {
		const uint32_t qp = e[1] % (nqp + 1), kind = e[0] % 8;
		const uint64_t hw = 7000000000ull + (t += (uint64_t)e[4] | (uint64_t)e[5] << 8) +
				    (uint64_t)e[7] * 13 - 1000;

		if (kind == 6) {
			struct pt_plugin_clock_fit fit = {
				.struct_size = sizeof(fit), .samples = e[2] % 4,
				.hw_ref_ns = 7000000000ull + t, .sw_ref_ns = t,
				.intercept_ns = (int16_t)(e[4] | e[5] << 8) / 4.0,
				.slope = 1 + (int8_t)e[6] * 1e-6, .residual_rms_ns = e[7] / 8.0,
				.residual_max_ns = e[7] / 2.0,
			};

			wrt_clock_fit(w, &fit);
			wrt_clock_fit(fifo, &fit);
		} else if (kind <= 2 || kind == 7) {
			bool recv = kind == 2;
			uint64_t *seq = recv ? &next_rseq[qp] : &next_seq[qp];
			struct pt_plugin_post p = {
				.struct_size = sizeof(p), .qp = qp, .count = 1 + e[2] % 4,
				.opcode = recv ? PT_PLUGIN_OP_RECV :
					  kind == 7 ? PT_PLUGIN_OP_WRITE + e[6] % 5 : PT_PLUGIN_OP_SEND,
				.bytes = 1u << (e[6] % 17), .wr_id_step = 1,
				.signal_period = e[3] % 5,
				.flags = (e[3] & 0x80) ? PT_PLUGIN_POST_LAST_SIGNALED : 0, .t_ns = t,
			};

			p.first_seq = *seq + ((e[2] & 0x40) ? (e[2] >> 4) % 4 : 0); /* a jump */
			p.first_wr_id = (uint64_t)qp << 48 | p.first_seq;
			*seq = p.first_seq + p.count;
			if (kind == 0 && (e[7] & 1)) {
				/* post_one: one WR of the run's kind */
				*seq = p.first_seq + 1;
				wrt_post_one(w, qp, p.first_seq, p.first_wr_id, t);
				wrt_post_one(fifo, qp, p.first_seq, p.first_wr_id, t);
			} else {
				wrt_post(w, &p);
				wrt_post(fifo, &p);
			}
		} else {
			bool recv = kind == 5;
			uint64_t last = recv ? next_rseq[qp] : next_seq[qp];
			struct pt_plugin_completion c = {
				.struct_size = sizeof(c), .qp = qp,
				.seq = (e[2] & 0x80) || last <= e[2] % 8 ? PT_PLUGIN_SEQ_UNKNOWN :
				       last - 1 - e[2] % 8,
				.status = (e[3] & 0x40) ? e[6] : 0,
				.opcode = recv ? PT_PLUGIN_OP_RECV : PT_PLUGIN_OP_SEND,
				.bytes = recv ? e[6] * 33u : 4096,
				.flags = (recv ? PT_PLUGIN_COMP_RECV : 0) |
					 ((in.hw_ts == PT_PLUGIN_HW_TS_ON && (e[3] & 0x20)) ? PT_PLUGIN_COMP_HW_TS : 0),
				.t_poll_ns = t, .hw_ns = hw,
			};

			c.wr_id = (uint64_t)qp << 48 | c.seq;
			wrt_complete(w, &c);
			wrt_complete(fifo, &c);
		}
	}
	FUZZ_ASSERT(wrt_run_end(w, &end, err, sizeof(err)) == 0);
	FUZZ_ASSERT(wrt_run_end(fifo, &end, err, sizeof(err)) == 0);
	same_as_fifo(w, fifo);
	wrt_free(fifo);
	FUZZ_ASSERT(fclose(cfg.summary) == 0);
	m = wrt_meta(w);
	run.meta = *m;
	run.recs = (struct wrt_rec *)wrt_records(w, &run.n);
	run.cap = run.n;
	mine.runs = &run;

	if (getenv("FUZZ_VERBOSE"))
		fprintf(stderr, "%s", live);
	/* nothing lost silently */
	FUZZ_ASSERT(run.n == m->recorded && m->recorded <= m->cap);
	FUZZ_ASSERT(m->recorded + m->dropped + m->untracked <= m->wrs);
	FUZZ_ASSERT(m->wrs <= m->recorded + m->dropped + m->untracked + m->unmatched);

	/* the file reads back as recorded */
	reads_back(&mine, mine.jsonl, false, &back, &file, &len);
	check_run(&back.runs[0]);
	text = summary_text(&back.runs[0]);
	/* a trace that dropped rows prints histogram percentiles live */
	FUZZ_ASSERT(m->dropped || !strcmp(text, live));
	free(text);
	wrt_trace_free(&back);
	if (rep) {
		size_t n;
		char *edited = edit_token(file, len, data[1], data[2], rep, rep_len, &n);

		check_file(edited, n);
		free(edited);
	}
	free(file);
	free(live);
	wrt_free(w);
}

/* File mode: in holds exactly size bytes (heap, so ASan sees any overrun). */
static void check_file(const char *in, size_t size)
{
	const uint8_t *data = (const uint8_t *)in;
	char *again, *third, err[512] = "";
	struct wrt_trace t, t2, t3;
	uint64_t lines = 0, rows = 0;
	size_t len, len3;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	if (size && data[size - 1] != '\n')
		lines++;
	if (read_buf(in, size, &t, err, sizeof(err))) {
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "refused: %s\n", err);
		n_refused++;
		check_refusal(&t, err, lines);
		return;
	}
	n_accepted++;
	FUZZ_ASSERT(size && data[size - 1] == '\n' && !memchr(data, '\0', size));
	FUZZ_ASSERT(t.nruns > 0 && t.jsonl == (data[0] == '{'));
	for (size_t i = 0; i < t.nruns; i++) {
		check_run(&t.runs[i]);
		rows += t.runs[i].n;
	}
	FUZZ_ASSERT(lines == (t.jsonl ? 1 : 2) + t.nruns + rows);

	/* the same format: equal, and the written text is a fixed point */
	reads_back(&t, t.jsonl, false, &t2, &again, &len);
	third = write_all(&t2, t.jsonl, &len3);
	FUZZ_ASSERT(third && len3 == len && !memcmp(again, third, len));
	free(third);
	wrt_trace_free(&t2);
	free(again);

	/* the other format */
	reads_back(&t, !t.jsonl, t.jsonl, &t3, &again, &len);
	wrt_trace_free(&t3);
	free(again);

	wrt_trace_free(&t);
	FUZZ_ASSERT(!t.runs && t.nruns == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = fuzz_dup(data, size);

	if (size && data[0] != '#' && data[0] != '{') {
		n_recorded++;
		record(data, size);
	} else {
		check_file(in, size);
	}
	free(in);
	return 0;
}
