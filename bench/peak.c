/* SPDX-License-Identifier: BSD-2-Clause */
/* bench/peak [--cq-mod N] [--max WRS] [--old-pairs P]: what the BW peak
 * costs, pairwise (the old report phase, now tests/unit/bw_peak_oracle.c)
 * against the hull tracker (perftest/report/bw_peak.h), for 1e5, 1e6, 1e7
 * and 1e8 WRs (up to --max).
 *
 * The input is a modelled run of one QP (tx_depth 128, post_list 1): a post
 * every 15-25 ns, a NIC retiring a WR every 40-80 ns with a 5 us stall one
 * WR in 10^4, each signaled completion polled once the NIC is done with it.
 * It is generated in chunks of events (untimed), then:
 *   old  the arrays the loop used to fill, then the pairwise minimum: the
 *        report phase. Run only where its pairs (n^2 / 2 cq_mod) are at most
 *        --old-pairs (default 5e9, some seconds); beyond, extrapolated as
 *        n^2 from the largest size run, and marked so.
 *   new  the tracker fed event by event (its cost moves into the run: the
 *        "feed" column, total and per WR) and its report phase (the result).
 * Both values are compared bit for bit where the old one ran. Times are the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID). Memory: old 16 B per WR;
 * new the tracker's largest state over the run. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "perftest/report/bw_peak.h"

/* tests/unit/bw_peak_oracle.c, linked in (bench/Makemodule.am) */
int pt_bw_peak_oracle(const uint64_t *tp, const uint64_t *tc, uint64_t n,
		      unsigned post_list, unsigned cq_mod, double *min_ns);

#define DEPTH 128
#define CHUNK (1u << 20)

struct event {
	uint64_t t;
	uint32_t credit; /* 0: a post; else WRs retired */
};

/* The modelled run, resumable chunk by chunk. */
struct model {
	uint64_t n, cq_mod, seed;
	uint64_t t, nic_t, posted, done;
	uint64_t nic_done[DEPTH]; /* when the NIC finishes each WR in flight */
};

static uint64_t rnd(uint64_t *s) /* splitmix64 */
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Up to max events; 0 at the end of the run. */
static size_t model_events(struct model *m, struct event *ev, size_t max)
{
	size_t k = 0;

	while (m->done < m->n && k + 2 <= max) {
		uint64_t next_sig;

		if (m->posted < m->n && m->posted < m->done + DEPTH) {
			uint64_t service = 40 + rnd(&m->seed) % 41;

			m->t += 15 + rnd(&m->seed) % 11;
			if (rnd(&m->seed) % 10000 == 0)
				service += 5000;
			m->nic_t = (m->nic_t > m->t ? m->nic_t : m->t) + service;
			m->nic_done[m->posted % DEPTH] = m->nic_t;
			m->posted++;
			ev[k++] = (struct event){ m->t, 0 };
			continue;
		}
		/* the window is full: poll until the next signaled WR is done */
		next_sig = (m->done / m->cq_mod + 1) * m->cq_mod - 1;
		if (next_sig >= m->n)
			next_sig = m->n - 1;
		if (next_sig >= m->posted) /* cannot happen with cq_mod <= DEPTH */
			next_sig = m->posted - 1;
		if (m->nic_done[next_sig % DEPTH] > m->t)
			m->t = m->nic_done[next_sig % DEPTH];
		m->t += 30;
		ev[k++] = (struct event){ m->t, (uint32_t)(next_sig + 1 - m->done) };
		m->done = next_sig + 1;
	}
	return k;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct row {
	uint64_t n;
	double new_feed, new_report, new_ns;
	size_t new_bytes, hull, queue;
	int new_rc;
	bool old_ran;
	double old_report, old_ns;
	int old_rc;
};

static int run_new(uint64_t n, unsigned cq, struct event *ev, struct row *r)
{
	struct model m = { .n = n, .cq_mod = cq, .seed = 42 };
	struct pt_bw_peak pk;
	struct pt_bw_peak_stats st;
	size_t k;
	double t0;

	if (pt_bw_peak_init(&pk, n, 1, cq))
		return -1;
	r->new_feed = 0;
	while ((k = model_events(&m, ev, CHUNK))) {
		t0 = cpu_s();
		for (size_t e = 0; e < k; e++)
			if (ev[e].credit ? pt_bw_peak_complete(&pk, ev[e].credit, ev[e].t)
					 : pt_bw_peak_post(&pk, ev[e].t))
				return -1;
		r->new_feed += cpu_s() - t0;
	}
	t0 = cpu_s();
	r->new_rc = pt_bw_peak_result(&pk, &r->new_ns);
	r->new_report = cpu_s() - t0;
	pt_bw_peak_stats(&pk, &st);
	r->new_bytes = st.bytes_max;
	r->hull = st.hull_max;
	r->queue = st.pending_max;
	pt_bw_peak_free(&pk);
	return 0;
}

static int run_old(uint64_t n, unsigned cq, struct event *ev, struct row *r)
{
	struct model m = { .n = n, .cq_mod = cq, .seed = 42 };
	uint64_t *tp = malloc(n * sizeof(*tp)), *tc = malloc(n * sizeof(*tc)), p = 0, d = 0;
	size_t k;
	double t0;

	if (!tp || !tc) {
		free(tp);
		free(tc);
		return -1;
	}
	while ((k = model_events(&m, ev, CHUNK)))
		for (size_t e = 0; e < k; e++)
			if (!ev[e].credit)
				tp[p++] = ev[e].t;
			else
				for (uint32_t c = 0; c < ev[e].credit; c++)
					tc[d++] = ev[e].t;
	t0 = cpu_s();
	r->old_rc = pt_bw_peak_oracle(tp, tc, n, 1, cq, &r->old_ns);
	r->old_report = cpu_s() - t0;
	r->old_ran = true;
	free(tp);
	free(tc);
	return 0;
}

static int usage(const char *msg)
{
	fprintf(stderr, "bench/peak: %s\nusage: bench/peak [--cq-mod 1..%d] [--max WRS] [--old-pairs P]\n",
		msg, DEPTH);
	return 2;
}

static bool number(const char *s, uint64_t *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || d < 1 || d > 1e12 || d != (double)(uint64_t)d)
		return false;
	*v = (uint64_t)d;
	return true;
}

int main(int argc, char **argv)
{
	uint64_t cq = 100, max = 100000000ull, old_pairs = 5000000000ull;
	struct row rows[4];
	int nrows = 0, last_old = -1;
	struct event *ev;

	for (int a = 1; a < argc; a++) {
		uint64_t *dst = !strcmp(argv[a], "--cq-mod") ? &cq : !strcmp(argv[a], "--max") ? &max :
				!strcmp(argv[a], "--old-pairs") ? &old_pairs : NULL;

		if (!dst)
			return usage("unknown argument");
		if (a + 1 >= argc || !number(argv[++a], dst))
			return usage("a positive whole number expected after the option");
	}
	if (cq > DEPTH)
		return usage("--cq-mod above the modelled tx_depth");
	ev = malloc(CHUNK * sizeof(*ev));
	if (!ev)
		return 1;
	for (uint64_t n = 100000; n <= max && nrows < 4; n *= 10) {
		struct row *r = &rows[nrows++];

		memset(r, 0, sizeof(*r));
		r->n = n;
		if (run_new(n, (unsigned)cq, ev, r))
			return fprintf(stderr, "bench/peak: the tracker failed at %" PRIu64 " WRs\n", n), 1;
		if ((double)n * (double)n / 2 / (double)cq <= (double)old_pairs) {
			if (run_old(n, (unsigned)cq, ev, r))
				return fprintf(stderr, "bench/peak: no memory for %" PRIu64 " WRs\n", n), 1;
			last_old = nrows - 1;
		}
	}
	free(ev);
	printf("BW peak, report phase: pairwise (old) vs hull tracker (new)\n"
	       "1 QP, tx_depth %d, post_list 1, cq_mod %" PRIu64 "; CPU seconds of this thread\n\n",
	       DEPTH, cq);
	printf("%5s %11s %10s %7s %10s %9s %12s %5s %10s %18s\n", "WRs", "old report", "new feed",
	       "ns/WR", "new report", "old/new", "peak ns", "same", "old mem", "new mem (hull pts)");
	for (int i = 0; i < nrows; i++) {
		struct row *r = &rows[i];
		double old = r->old_report;
		bool have_old = r->old_ran || last_old >= 0, same;
		char oldtxt[24] = "-", ratio[24] = "-", mem[40];

		if (!r->old_ran && last_old >= 0) {
			double f = (double)r->n / (double)rows[last_old].n;

			old = rows[last_old].old_report * f * f;
		}
		if (have_old) {
			snprintf(oldtxt, sizeof(oldtxt), "%s%.3g s", r->old_ran ? "" : "~", old);
			snprintf(ratio, sizeof(ratio), "%s%.3gx", r->old_ran ? "" : "~",
				 old / (r->new_feed + r->new_report));
		}
		same = r->old_ran && r->old_rc == r->new_rc &&
		       (r->new_rc || !memcmp(&r->old_ns, &r->new_ns, sizeof(double)));
		snprintf(mem, sizeof(mem), "%zu B (%zu)", r->new_bytes, r->hull);
		printf("%5.0e %11s %8.3g s %7.2f %8.2g s %9s %12.6g %5s %7.0f MB %18s\n", (double)r->n,
		       oldtxt, r->new_feed, r->new_feed * 1e9 / (double)r->n, r->new_report, ratio,
		       r->new_rc ? -1.0 : r->new_ns, r->old_ran ? (same ? "yes" : "NO") : "-",
		       16.0 * (double)r->n / 1e6, mem);
		if (r->old_ran && !same) {
			fprintf(stderr, "bench/peak: old and new differ at %" PRIu64 " WRs\n", r->n);
			return 1;
		}
	}
	printf("\n~: extrapolated as n^2 from the largest size run pairwise. old/new: old report"
	       " over new feed + report.\nold memory: two 8-byte times per WR; new: the"
	       " tracker's largest state (hull points), whatever n.\n");
	return 0;
}
