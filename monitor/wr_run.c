// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon wr [-i SECONDS] [-c COUNT] [--json] [--pid PID] [BINARY...]
 * Attaches wr.bpf.c's programs to the perftest:* USDT probes of each
 * BINARY (every process running it, now or later; only PID's with --pid)
 * or of PID's executable, then prints, per interval, each process's runs
 * and per QP the WRs posted and completed (wr_report.c). libbpf's USDT
 * support reads the probes' notes and raises their semaphores, so the
 * tools compute the probes' arguments only while we are attached. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "names.h"
#include "wr_report.h"
#include "wr_run.h"
/* generated in the build tree by bpftool (see rdmamon.c) */
#include <rdmamon_wr.skel.h>

#define MAX_BINS 16
#define PROBES 6

struct wr_opts {
	int json;
	double interval;
	long count;
	long pid;              /* -1: every process */
	char *bins[MAX_BINS];
	unsigned nbins;
};

static volatile sig_atomic_t wr_stop;
static void wr_on_signal(int sig) { (void)sig; wr_stop = 1; }

static int fail(const char *fmt, const char *a, const char *b)
{
	fputs("rdmamon wr: ", stderr);
	fprintf(stderr, fmt, a, b);
	fputc('\n', stderr);
	return 1;
}

static void wr_usage(FILE *f)
{
	fprintf(f, "usage: rdmamon wr [-i SECONDS] [-c COUNT] [--json] [--pid PID] [BINARY...]\n"
		   "Counts the WRs our perftest tools post and complete, per process and QP, from\n"
		   "their USDT probes (perftest:*): of every process running BINARY, or of PID.\n");
}

static int wr_parse(int argc, char **argv, struct wr_opts *o)
{
	static const struct option lo[] = {
		{ "interval", required_argument, 0, 'i' }, { "count", required_argument, 0, 'c' },
		{ "json", no_argument, 0, 'j' }, { "pid", required_argument, 0, 'p' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	char *end;
	int c;

	*o = (struct wr_opts){ .interval = 1.0, .pid = -1 };
	while ((c = getopt_long(argc, argv, "i:c:jp:h", lo, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (rm_interval_parse(optarg, &o->interval))
				return fail("-i: '%s' is not a number of seconds in 0.1..3600%s", optarg, "");
			break;
		case 'c':
			if (rm_count_parse(optarg, &o->count))
				return fail("-c: '%s' is not a positive count%s", optarg, "");
			break;
		case 'j': o->json = 1; break;
		case 'p':
			errno = 0;
			o->pid = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || o->pid <= 0 || o->pid > INT_MAX)
				return fail("--pid: '%s' is not a process id%s", optarg, "");
			break;
		case 'h': wr_usage(stdout); exit(0);
		default: wr_usage(stderr); return 1;
		}
	}
	for (; optind < argc; optind++) {
		if (o->nbins == MAX_BINS)
			return fail("more than 16 binaries%s%s", "", "");
		o->bins[o->nbins] = realpath(argv[optind], NULL);
		if (!o->bins[o->nbins])
			return fail("%s: %s", argv[optind], strerror(errno));
		o->nbins++;
	}
	if (!o->nbins && o->pid > 0) {   /* the process's own executable */
		char exe[64];

		snprintf(exe, sizeof(exe), "/proc/%ld/exe", o->pid);
		o->bins[0] = realpath(exe, NULL);
		if (!o->bins[0])
			return fail("--pid: cannot read %s: %s (no such process?)", exe, strerror(errno));
		o->nbins = 1;
	}
	if (!o->nbins)
		return fail("name a tool binary (e.g. build/perftest/ib_send_bw) or --pid PID%s%s", "", "");
	return 0;
}

/* Every probe of every binary, or a clear error naming what is missing. */
static int wr_attach(struct rdmamon_wr_bpf *skel, const struct wr_opts *o, struct bpf_link **links,
		     unsigned *nlinks)
{
	const struct { struct bpf_program *p; const char *probe; } want[PROBES] = {
		{ skel->progs.wr_post, "post" }, { skel->progs.wr_post_recv, "post_recv" },
		{ skel->progs.wr_complete, "complete" }, { skel->progs.wr_complete_recv, "complete_recv" },
		{ skel->progs.wr_run_start, "run_start" }, { skel->progs.wr_run_end, "run_end" },
	};

	for (unsigned b = 0; b < o->nbins; b++)
		for (unsigned i = 0; i < PROBES; i++) {
			struct bpf_link *l = bpf_program__attach_usdt(want[i].p, (pid_t)o->pid, o->bins[b],
								      "perftest", want[i].probe, NULL);

			if (!l) {
				int e = errno;

				fprintf(stderr, "rdmamon wr: cannot attach to USDT probe perftest:%s of %s: %s\n",
					want[i].probe, o->bins[b], strerror(e));
				if (e == ENOENT)
					fprintf(stderr, "rdmamon wr: %s has no perftest USDT probes: not one of our "
						"tools, or built without <sys/sdt.h> or with --disable-usdt "
						"(docs/usdt.md; `readelf -n` lists its notes)\n", o->bins[b]);
				else if (o->pid > 0 && e == ESRCH)
					fprintf(stderr, "rdmamon wr: no process %ld\n", o->pid);
				return -1;
			}
			links[(*nlinks)++] = l;
		}
	return 0;
}

static void comm_of(uint32_t pid, char comm[16])
{
	char path[64];
	FILE *f;

	comm[0] = 0;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(comm, 16, f))
		comm[strcspn(comm, "\n")] = 0;
	fclose(f);
}

static int wr_read(struct rdmamon_wr_bpf *skel, struct rm_wr_snap *s)
{
	int ncpu = libbpf_num_possible_cpus();
	struct rm_wr_qp_key k, *kp = NULL;
	struct rm_wr_qp_val *vals;
	__u32 pid, *pp = NULL;
	__u64 *lost;
	int fd;
	struct timespec ts;

	if (ncpu <= 0)
		return -1;
	memset(s, 0, sizeof(*s));
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->mono_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	vals = calloc((size_t)ncpu, sizeof(*vals));   /* 8-byte multiple: no per-CPU padding */
	lost = calloc((size_t)ncpu, sizeof(*lost));
	if (!vals || !lost)
		goto nomem;
	fd = bpf_map__fd(skel->maps.wr_qps);
	while (bpf_map_get_next_key(fd, kp, &k) == 0) {
		if (bpf_map_lookup_elem(fd, &k, vals) == 0)
			for (int c = 0; c < ncpu; c++)
				if (rm_wr_snap_add_qp(s, &k, &vals[c]))
					goto nomem;
		kp = &k;
	}
	fd = bpf_map__fd(skel->maps.wr_runs);
	while (bpf_map_get_next_key(fd, pp, &pid) == 0) {
		struct rm_wr_run_val r;

		if (bpf_map_lookup_elem(fd, &pid, &r) == 0 && rm_wr_snap_add_proc(s, pid, &r, 1))
			goto nomem;
		pp = &pid;
	}
	for (size_t i = 0; i < s->nqps; i++)   /* posted before we saw a run: name them */
		if (!rm_wr_snap_proc(s, s->qps[i].k.pid)) {
			struct rm_wr_run_val r = { 0 };

			comm_of(s->qps[i].k.pid, r.comm);
			if (rm_wr_snap_add_proc(s, s->qps[i].k.pid, &r, 0))
				goto nomem;
		}
	fd = bpf_map__fd(skel->maps.wr_lost);
	for (__u32 slot = 0; slot < WR_LOST_NSLOTS; slot++)
		if (bpf_map_lookup_elem(fd, &slot, lost) == 0)
			for (int c = 0; c < ncpu; c++)
				s->lost[slot] += lost[c];
	free(vals);
	free(lost);
	return 0;
nomem:
	free(vals);
	free(lost);
	return -1;
}

static int wr_print(const struct wr_opts *o, const struct rm_wr_snap *now, const struct rm_wr_snap *prev,
		    int final)
{
	json_t *r = rm_wr_report_json(now, prev, o->interval, final);
	char *s;

	if (!r)
		return -1;
	if (o->json) {
		s = json_dumps(r, JSON_COMPACT);
		if (!s) {
			json_decref(r);
			return -1;
		}
		puts(s);
		fflush(stdout);
		free(s);
	} else {
		rm_wr_report_text(stdout, r);
	}
	json_decref(r);
	return 0;
}

int rm_wr_main(int argc, char **argv)
{
	struct bpf_link *links[MAX_BINS * PROBES];
	struct rm_wr_snap start = { 0 }, prev = { 0 }, now = { 0 };
	struct rdmamon_wr_bpf *skel;
	struct wr_opts o;
	unsigned nlinks = 0;
	long printed = 0;
	int rc = 1;

	if (wr_parse(argc, argv, &o))
		return 1;
	skel = rdmamon_wr_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "rdmamon wr: cannot load the BPF programs (%s); libbpf's messages above "
			"say why\n", strerror(errno));
		goto out;
	}
	if (wr_attach(skel, &o, links, &nlinks))
		goto out;
	signal(SIGINT, wr_on_signal);
	signal(SIGTERM, wr_on_signal);
	fprintf(stderr, "rdmamon wr: attached %u USDT probes (%u binaries, %s)\n", nlinks, o.nbins,
		o.pid > 0 ? "one process" : "every process");
	if (wr_read(skel, &start) || wr_read(skel, &prev))
		goto nomem;
	while (!wr_stop) {
		struct timespec ts = { (time_t)o.interval, (long)((o.interval - (time_t)o.interval) * 1e9) };

		/* a signal ends the sleep early: the summary comes at once */
		if (nanosleep(&ts, NULL) && wr_stop)
			break;
		if (wr_read(skel, &now) || wr_print(&o, &now, &prev, 0))
			goto nomem;
		rm_wr_snap_clear(&prev);
		prev = now;
		memset(&now, 0, sizeof(now));
		if (o.count && ++printed >= o.count)
			break;
	}
	if (wr_read(skel, &now) || wr_print(&o, &now, &start, 1))
		goto nomem;
	rc = 0;
	goto out;
nomem:
	fprintf(stderr, "rdmamon wr: no memory\n");
out:
	rm_wr_snap_clear(&start);
	rm_wr_snap_clear(&prev);
	rm_wr_snap_clear(&now);
	for (unsigned i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	rdmamon_wr_bpf__destroy(skel);
	for (unsigned i = 0; i < o.nbins; i++)
		free(o.bins[i]);
	return rc;
}
