// SPDX-License-Identifier: BSD-2-Clause
/* rdmamon: an eBPF view of the RDMA control path (see rdmamon.8).
 *   rdmamon [top] [-i SECONDS] [-c COUNT] [--json]   counts and rates per interval
 *   rdmamon events [--json]                            one line per object add/delete, call
 *   rdmamon lifecycle|conns ...                        QP lifecycle, connections (life_run.c)
 *   rdmamon wr [BINARY...] [--pid P]                   our tools' WRs, USDT (wr_run.c)
 *   --listen [ADDR:]PORT                               also GET /metrics (metrics.c)
 * Loads rdmamon.bpf.c (skeleton), hooks what the running kernel has, seeds
 * the objects that existed before start from `rdma resource`, then reads the
 * maps each interval. SIGINT/SIGTERM: a final summary, then everything is
 * detached. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgpath.h"
#include "cli_common.h"
#include "env.h"
#include "life_run.h"
#include "metrics.h"
#include "metrics_http.h"
#include "names.h"
#include "rdmamon.h"
/* generated in the build tree by bpftool (not a source file: ci/check-layers
 * checks quoted includes against the source tree) */
#include <rdmamon.skel.h>
#include "report.h"
#include "seed.h"
#include "snapshot.h"
#include "wr_run.h"

#define CALL_SLOTS 24
#define MAX_MISSING 64

struct opts {
	int events;            /* the event stream instead of intervals */
	int json;
	double interval;
	long count;            /* intervals to print, 0: until a signal */
	const char *cgroot;
	const char *listen;    /* --listen [ADDR:]PORT, NULL: no endpoint */
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }
/* SIGUSR1 detaches the hooks, SIGUSR2 attaches them again: the on/off
 * switch of bench/monitor-overhead (what happens meanwhile is not seen). */
static volatile sig_atomic_t want_hooks = 1;
static void on_toggle(int sig) { want_hooks = sig == SIGUSR2; }

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmamon [top] [-i SECONDS] [-c COUNT] [--json] [--cgroup-root DIR]\n"
		   "       rdmamon events [--json]\n"
		   "       rdmamon lifecycle|conns [--json] [--pid P] [--cgroup PATH] [--dev D] [--qpn N]\n"
		   "       rdmamon wr [-i SECONDS] [-c COUNT] [--json] [--pid PID] [BINARY...]\n"
		   "       top or events with --listen [ADDR:]PORT: GET /metrics (Prometheus), on 127.0.0.1\n"
		   "       unless ADDR says otherwise\n"
		   "Counts RDMA objects (QP, CQ, PD, MR, SRQ, AH, CM id) per device and cgroup, the\n"
		   "create/modify/destroy calls and their failures, from ib_core/ib_uverbs hooks.\n");
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "interval", required_argument, 0, 'i' }, { "count", required_argument, 0, 'c' },
		{ "json", no_argument, 0, 'j' }, { "cgroup-root", required_argument, 0, 'r' },
		{ "listen", required_argument, 0, 'l' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	int c;

	*o = (struct opts){ .interval = 1.0, .cgroot = "/sys/fs/cgroup" };
	if (argc > 1 && argv[1][0] != '-') {
		if (strcmp(argv[1], "events") == 0)
			o->events = 1;
		else if (strcmp(argv[1], "top") != 0)
			die("unknown view '%s' (top, events, lifecycle, conns or wr)", argv[1]);
		argv++;
		argc--;
	}
	while ((c = getopt_long(argc, argv, "i:c:jh", lo, NULL)) != -1) {
		if (rm_opt_interval_count(c, optarg, &o->interval, &o->count))
			continue;
		switch (c) {
		case 'j': o->json = 1; break;
		case 'r': o->cgroot = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(1);
		}
	}
	rm_opt_no_operands(argc, argv);
}

/* --- hooks ---------------------------------------------------------------------------- */

struct hooks {
	const char *missing[MAX_MISSING + 1];
	unsigned nmissing, attached;
	struct bpf_link *links[64];
	unsigned nlinks;
};

static void missing(struct hooks *h, const char *what)
{
	if (h->nmissing < MAX_MISSING)
		h->missing[h->nmissing++] = what;
}

/* Before load: the fixed programs whose function is absent are not loaded;
 * each call slot gets one (operation, function) that exists. */
static void plan_hooks(struct rdmamon_bpf *skel, const struct rm_btf_probe *btf, struct hooks *h)
{
	struct { struct bpf_program *p; const char *fn; } fixed[] = {
		{ skel->progs.restrack_add, "rdma_restrack_add" },
		{ skel->progs.restrack_del, "rdma_restrack_del" },
		{ skel->progs.restrack_commit_del, "rdma_restrack_commit_del" },
		{ skel->progs.ah_create, "rdma_create_user_ah" },
		{ skel->progs.ah_destroy, "rdma_destroy_ah_user" },
	};
	struct bpf_program *slots[CALL_SLOTS];
	unsigned n = 0, s = 0;
	struct bpf_program *p;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!rm_btf_has_func(btf, fixed[i].fn)) {
			bpf_program__set_autoload(fixed[i].p, false);
			missing(h, fixed[i].fn);
		}
	bpf_object__for_each_program(p, skel->obj)
		if (strncmp(bpf_program__name(p), "call_", 5) == 0 && n < CALL_SLOTS)
			slots[n++] = p;
	for (unsigned op = 0; op < OP_NOPS; op++) {
		const struct rm_op_info *oi = rm_op(op);

		for (int f = 0; f < RM_OP_FUNCS && oi->funcs[f]; f++) {
			if (!rm_btf_has_func(btf, oi->funcs[f])) {
				missing(h, oi->funcs[f]);
				continue;
			}
			if (s == n)
				die("more hooks than call slots (%u)", n);
			skel->rodata->slot_op[s] = op;
			skel->rodata->slot_ptr[s] = (__u8)oi->returns_ptr;
			if (bpf_program__set_attach_target(slots[s], 0, oi->funcs[f]))
				die("cannot target %s", oi->funcs[f]);
			s++;
		}
	}
	for (; s < n; s++)
		bpf_program__set_autoload(slots[s], false);
}

static void attach_all(struct rdmamon_bpf *skel, struct hooks *h)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			fprintf(stderr, "rdmamon: cannot attach %s: %s (working without it)\n",
				bpf_program__name(p), strerror(errno));
			missing(h, bpf_program__name(p));
			continue;
		}
		if (h->nlinks < 64)
			h->links[h->nlinks++] = l;
		h->attached++;
	}
	if (!bpf_program__autoload(skel->progs.restrack_add))
		die("rdma_restrack_add is not in this kernel's BTF: live counts are impossible");
}

static void toggle_hooks(struct rdmamon_bpf *skel, struct hooks *h, int on)
{
	if (on) {
		h->attached = 0;
		attach_all(skel, h);
		fprintf(stderr, "rdmamon: attached %u hooks (SIGUSR2)\n", h->attached);
		return;
	}
	for (unsigned i = 0; i < h->nlinks; i++)
		bpf_link__destroy(h->links[i]);
	fprintf(stderr, "rdmamon: detached %u hooks (SIGUSR1)\n", h->nlinks);
	h->nlinks = 0;
}

/* --- objects that existed before start ----------------------------------------------- */

static char *run_capture(const char *cmd)
{
	FILE *f = popen(cmd, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 8192);

			if (!nb) {
				free(buf);
				pclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, 4096, f);
		len += got;
	} while (got > 0);
	buf[len] = 0;
	if (pclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void seed(struct rdmamon_bpf *skel, struct rm_cgpaths *cg)
{
	int objs = bpf_map__fd(skel->maps.objects), dels = bpf_map__fd(skel->maps.unknown_dels);
	int names = bpf_map__fd(skel->maps.devnames);
	unsigned total = 0;

	for (unsigned t = 0; t < RM_RESTRACK_TYPES; t++) {
		const char *idf = rm_seed_id_field(t);
		char cmd[96], err[256], path[4096];
		struct rm_seed_row *rows;
		size_t n;
		char *out;
		__u8 one;

		if (!idf)
			continue;
		snprintf(cmd, sizeof(cmd), "rdma -j resource show %s 2>/dev/null", rm_type_name(t));
		out = run_capture(cmd);
		if (!out) {
			fprintf(stderr, "rdmamon: '%s' failed: %s objects that existed before start are "
				"not counted\n", cmd, rm_type_name(t));
			continue;
		}
		if (rm_seed_parse(out, t, &rows, &n, err, sizeof(err)) != 0) {
			fprintf(stderr, "rdmamon: %s\n", err);
			free(out);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			/* deleted since the listing: the BPF side saw it go */
			if (bpf_map_lookup_elem(dels, &rows[i].k, &one) == 0)
				continue;
			if (!rows[i].o.kern && rm_proc_cgroup("/proc", rows[i].o.pid, path, sizeof(path)) == 0)
				rows[i].o.cgid = rm_cgid_of(cg, path);
			if (rows[i].ifname[0])   /* BPF names devices only on a change */
				bpf_map_update_elem(names, &rows[i].k.dev, rows[i].ifname, BPF_NOEXIST);
			if (bpf_map_update_elem(objs, &rows[i].k, &rows[i].o, BPF_NOEXIST) == 0)
				total++;
		}
		free(rows);
		free(out);
	}
	if (!getenv("RDMAMON_QUIET"))
		fprintf(stderr, "rdmamon: %u objects existed at start\n", total);
}

/* --- reading the maps ------------------------------------------------------------------ */

/* Room for one per-CPU value of counts and calls (sized once). */
static struct {
	int ncpu;
	struct rm_count_val *counts;
	__u64 *calls;
} pc;

static void read_maps(struct rdmamon_bpf *skel, struct rm_snapshot *s, const uint64_t ev[EV_NKINDS])
{
	struct rm_obj_key ok, *okp = NULL;
	struct rm_count_key ck, *ckp = NULL;
	struct rm_op_key pk, *pkp = NULL;
	__u32 dk, *dkp = NULL;
	int fd;

	if (!pc.ncpu) {
		pc.ncpu = libbpf_num_possible_cpus();
		if (pc.ncpu <= 0)
			die("cannot count the possible CPUs: %s", strerror(-pc.ncpu));
		pc.counts = calloc((size_t)pc.ncpu, sizeof(*pc.counts));
		pc.calls = calloc((size_t)pc.ncpu, sizeof(*pc.calls));
		if (!pc.counts || !pc.calls)
			die("no memory");
	}
	memset(s, 0, sizeof(*s));
	s->mono_ns = now_ns(CLOCK_MONOTONIC);
	s->real_ns = now_ns(CLOCK_REALTIME);
	fd = bpf_map__fd(skel->maps.objects);
	while (bpf_map_get_next_key(fd, okp, &ok) == 0) {
		struct rm_obj o;

		if (bpf_map_lookup_elem(fd, &ok, &o) == 0 && rm_snap_add_obj(s, &ok, &o))
			die("no memory");
		okp = &ok;
	}
	/* per-CPU maps (rdmamon.bpf.c): one value per possible CPU, summed */
	fd = bpf_map__fd(skel->maps.counts);
	while (bpf_map_get_next_key(fd, ckp, &ck) == 0) {
		struct rm_count_val v = { 0 };

		if (bpf_map_lookup_elem(fd, &ck, pc.counts) == 0) {
			for (int c = 0; c < pc.ncpu; c++) {
				v.creates += pc.counts[c].creates;
				v.destroys += pc.counts[c].destroys;
			}
			if (rm_snap_add_count(s, &ck, &v))
				die("no memory");
		}
		ckp = &ck;
	}
	fd = bpf_map__fd(skel->maps.calls);
	while (bpf_map_get_next_key(fd, pkp, &pk) == 0) {
		__u64 v = 0;

		if (bpf_map_lookup_elem(fd, &pk, pc.calls) == 0) {
			for (int c = 0; c < pc.ncpu; c++)
				v += pc.calls[c];
			if (rm_snap_add_call(s, &pk, v))
				die("no memory");
		}
		pkp = &pk;
	}
	fd = bpf_map__fd(skel->maps.devnames);
	while (bpf_map_get_next_key(fd, dkp, &dk) == 0) {
		char name[RM_DEVNAME_LEN];

		if (bpf_map_lookup_elem(fd, &dk, name) == 0) {
			name[RM_DEVNAME_LEN - 1] = 0;
			if (rm_snap_add_dev(s, dk, name))
				die("no memory");
		}
		dkp = &dk;
	}
	fd = bpf_map__fd(skel->maps.lost);
	for (__u32 i = 0; i < LOST_NSLOTS; i++)
		bpf_map_lookup_elem(fd, &i, &s->lost[i]);
	memcpy(s->events, ev, sizeof(s->events));
}

/* --- events ---------------------------------------------------------------------------- */

struct ev_ctx {
	const struct opts *o;
	uint64_t counts[EV_NKINDS];
	struct rm_cgpaths *cg;
};

static int on_event(void *ctx, void *data, size_t len)
{
	struct ev_ctx *c = ctx;
	const struct rm_event *e = data;
	static const char *const kinds[EV_NKINDS] = { "add", "del", "call" };
	char ebuf[16];
	const char *what, *cgp;

	if (len < sizeof(*e) || e->kind >= EV_NKINDS)
		return 0;
	c->counts[e->kind]++;
	if (!c->o->events)
		return 0;
	what = e->kind == EV_CALL ? rm_op_name(e->what) : rm_type_name(e->what);
	cgp = e->kern ? NULL : rm_cgpath(c->cg, e->cgid);
	if (c->o->json) {
		json_t *j = json_pack("{s:s, s:I, s:s, s:s, s:I, s:I, s:s%, s:I, s:s?, s:b}",
				      "type", "event", "mono_ns", (json_int_t)e->ts_ns, "event",
				      kinds[e->kind], "what", what, "pid", (json_int_t)e->pid, "tid",
				      (json_int_t)e->tid, "comm", e->comm, strnlen(e->comm, 16),
				      "cgroup_id", (json_int_t)e->cgid, "cgroup", cgp, "kernel", e->kern);

		if (e->kind == EV_CALL)
			json_object_set_new(j, "errno", json_string(rm_errno_name(e->err, ebuf, sizeof(ebuf))));
		else {
			json_object_set_new(j, "dev_index", json_integer(e->dev));
			json_object_set_new(j, "id", json_integer((json_int_t)e->id));
		}
		char *s = json_dumps(j, JSON_COMPACT);

		if (s)
			puts(s);
		free(s);
		json_decref(j);
	} else {
		printf("%llu.%09llu %-4s %-12s pid %u (%.16s) %s", (unsigned long long)(e->ts_ns / 1000000000u),
		       (unsigned long long)(e->ts_ns % 1000000000u), kinds[e->kind], what, e->pid, e->comm,
		       e->kern ? "kernel" : cgp ? cgp : "?");
		if (e->kind == EV_CALL)
			printf(" %s\n", rm_errno_name(e->err, ebuf, sizeof(ebuf)));
		else
			printf(" dev %u id %llu\n", e->dev, (unsigned long long)e->id);
	}
	fflush(stdout);
	return 0;
}

static void publish(struct rm_http *http, const struct rm_snapshot *now,
		    const struct rm_snapshot *prev, const struct rm_report_ctx *rc)
{
	char *prom = rm_metrics_text(now, prev, rc, RM_FMT_PROMETHEUS);
	char *om = rm_metrics_text(now, prev, rc, RM_FMT_OPENMETRICS);

	if (!prom || !om)
		die("no memory");
	rm_http_publish(http, prom, om);
}

static void print_interval(const struct opts *o, const struct rm_snapshot *now,
			   const struct rm_snapshot *prev, const struct rm_report_ctx *rc)
{
	json_t *r = rm_report_json(now, prev, rc);
	char *s;

	if (!r)
		die("no memory");
	if (o->json) {
		s = json_dumps(r, JSON_COMPACT);
		if (!s)
			die("no memory");
		puts(s);
		free(s);
		fflush(stdout);
	} else {
		rm_report_text(stdout, r);
	}
	json_decref(r);
}

int main(int argc, char **argv)
{
	struct opts o;
	char msg[512];
	struct rm_btf_probe *btf;
	struct rdmamon_bpf *skel;
	struct hooks h = { 0 };
	struct rm_cgpaths *cg;
	struct ring_buffer *rb;
	struct rm_http *http = NULL;
	struct ev_ctx ec = { 0 };
	struct rm_snapshot start, prev, now;
	long printed = 0;
	int err;

	if (argc > 1 && rm_life_is_view(argv[1]))
		return rm_life_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "wr") == 0)
		return rm_wr_main(argc - 1, argv + 1);
	parse(argc, argv, &o);
	/* the endpoint first: a bad address or busy port stops us before any attach */
	if (o.listen && !(http = rm_http_start(o.listen, msg, sizeof(msg))))
		die("%s", msg);
	if (rm_env_check(msg, sizeof(msg)))
		die("%s", msg);
	btf = rm_btf_open(msg, sizeof(msg));
	if (!btf)
		die("%s", msg);
	cg = rm_cgpaths_new(o.cgroot);
	if (!cg || rm_cgpaths_scan(cg) < 0)
		die("cannot read the cgroup2 tree at %s", o.cgroot);
	skel = rdmamon_bpf__open();
	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	plan_hooks(skel, btf, &h);
	rm_life_skip(skel->obj);
	/* the ring buffer carries the events view only: the top view counts */
	skel->rodata->emit_events = (__u8)o.events;
	skel->rodata->bare_hooks = getenv("RDMAMON_BARE_HOOKS") != NULL;
	if (!o.events)
		bpf_map__set_max_entries(skel->maps.events, (unsigned)sysconf(_SC_PAGESIZE));
	rm_btf_close(btf);
	err = rdmamon_bpf__load(skel);
	if (err)
		die("cannot load the BPF programs (%s); libbpf's messages above say which", strerror(-err));
	attach_all(skel, &h);
	for (unsigned i = 0; i < h.nmissing; i++)
		fprintf(stderr, "rdmamon: hook missing: %s (working with the rest)\n", h.missing[i]);
	seed(skel, cg);
	ec.o = &o;
	ec.cg = cg;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &ec, NULL);
	if (!rb)
		die("cannot open the ring buffer: %s", strerror(errno));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_toggle);
	signal(SIGUSR2, on_toggle);
	read_maps(skel, &start, ec.counts);
	prev = start;
	prev.objs = NULL; prev.counts = NULL; prev.calls = NULL; prev.devs = NULL;
	read_maps(skel, &prev, ec.counts);

	struct rm_report_ctx rc = { .cg = cg, .missing_hooks = h.missing, .hooks_attached = h.attached,
				    .top = 3 };
	uint64_t next = prev.mono_ns + (uint64_t)(o.interval * 1e9);

	if (http)
		publish(http, &prev, NULL, &rc);

	for (int hooked = 1; !stop;) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);

		if (hooked != want_hooks)
			toggle_hooks(skel, &h, hooked = want_hooks);
		int ms = t >= next ? 0 : (int)((next - t) / 1000000u) + 1;

		err = ring_buffer__poll(rb, ms > 200 ? 200 : ms);
		if (err < 0 && err != -EINTR)
			die("ring buffer: %s", strerror(-err));
		/* events come with no wake-up until the ring is a quarter full
		 * (rdmamon.bpf.c): read what waits on every turn */
		ring_buffer__consume(rb);
		if (now_ns(CLOCK_MONOTONIC) < next)
			continue;
		next += (uint64_t)(o.interval * 1e9);   /* also in the event view: no busy poll */
		if (o.events && !http)
			continue;
		read_maps(skel, &now, ec.counts);
		if (!o.events)
			print_interval(&o, &now, &prev, &rc);
		if (http)       /* after the line: a scrape before the next line has this reading */
			publish(http, &now, &prev, &rc);
		rm_snap_clear(&prev);
		prev = now;
		if (!o.events && o.count && ++printed >= o.count)
			break;
	}
	ring_buffer__consume(rb);
	read_maps(skel, &now, ec.counts);
	if (!o.events || !o.json) {
		rc.final = 1;
		print_interval(&o, &now, &start, &rc);
	}
	rm_snap_clear(&now);
	rm_snap_clear(&prev);
	rm_snap_clear(&start);
	rm_http_stop(http);
	ring_buffer__free(rb);
	for (unsigned i = 0; i < h.nlinks; i++)
		bpf_link__destroy(h.links[i]);
	rdmamon_bpf__destroy(skel);
	rm_cgpaths_free(cg);
	free(pc.counts);
	free(pc.calls);
	if (!o.json || !o.events)
		fprintf(stderr, "rdmamon: detached\n");
	return 0;
}
