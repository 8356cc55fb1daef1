// SPDX-License-Identifier: BSD-2-Clause
/* The lifecycle view (one line per QP create, state change and destroy,
 * AH create/destroy, rdma_cm connection request) and the conns view (the
 * established QP pairs every interval, and at the end). Both load only the
 * life_* programs of rdmamon's BPF object (lifecycle.bpf.h), each on the
 * kernel function or tracepoint it names, when the running kernel has it. */
#include "life_run.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgpath.h"
#include "cli_common.h"
#include "conntable.h"
#include "env.h"
#include "lifecycle.h"
#include "names.h"
#include "rdmamon.h"
/* generated in the build tree (see rdmamon.c) */
#include <rdmamon.skel.h>

#define MAX_LIFE_PROGS 16

struct life_opts {
	int conns;             /* the conns view, else lifecycle */
	int json;
	double interval;       /* conns: seconds between tables */
	long count;            /* conns: tables to print, 0: until a signal */
	const char *cgroot;
	struct rm_life_filter f;
};

struct life_ctx {
	const struct life_opts *o;
	struct rdmamon_bpf *skel;
	struct rm_cgpaths *cg;
	int64_t real_off;
	uint64_t seen[LE_NKINDS], shown;
	uint64_t lost_shown;
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

int rm_life_is_view(const char *name)
{
	return name && (strcmp(name, "lifecycle") == 0 || strcmp(name, "conns") == 0);
}

static int is_life(const struct bpf_program *p)
{
	return strncmp(bpf_program__name(p), "life_", 5) == 0;
}

/* Maps a view does not use get the least room the kernel takes (a ring
 * buffer: one page), so that both views' maps do not cost kernel memory
 * twice (the guests of the lab have 640 MiB). */
static void shrink_maps(struct bpf_object *obj, int life)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj) {
		const char *n = bpf_map__name(m);

		if (strchr(n, '.') || (strncmp(n, "life_", 5) == 0) == life)
			continue;   /* .rodata and the like, or the view's own */
		if (strcmp(n, "devnames") == 0)
			continue;   /* both views name devices */
		bpf_map__set_max_entries(m, bpf_map__type(m) == BPF_MAP_TYPE_RINGBUF ?
					 (unsigned)sysconf(_SC_PAGESIZE) : 1);
	}
}

void rm_life_skip(struct bpf_object *obj)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		if (is_life(p))
			bpf_program__set_autoload(p, false);
	shrink_maps(obj, 0);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rdmamon lifecycle [--json] [FILTERS]\n"
		   "       rdmamon conns [-i SECONDS] [-c COUNT] [--json] [FILTERS]\n"
		   "FILTERS: --pid PID  --cgroup PATH  --dev DEVICE  --qpn QPN (0x.. or decimal)\n"
		   "lifecycle: one line per QP create, state change (the connection tuple at RTR) and\n"
		   "destroy, AH create/destroy and rdma_cm connection request; at the end, the table.\n"
		   "conns: the established QP pairs every interval and at the end.\n");
}

static void parse(int argc, char **argv, struct life_opts *o)
{
	static const struct option lo[] = {
		{ "interval", required_argument, 0, 'i' }, { "count", required_argument, 0, 'c' },
		{ "json", no_argument, 0, 'j' }, { "cgroup-root", required_argument, 0, 'r' },
		{ "pid", required_argument, 0, 'p' }, { "cgroup", required_argument, 0, 'g' },
		{ "dev", required_argument, 0, 'd' }, { "qpn", required_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' }, { 0, 0, 0, 0 }
	};
	char *end;
	int c;

	*o = (struct life_opts){ .interval = 1.0, .cgroot = "/sys/fs/cgroup" };
	rm_life_filter_init(&o->f);
	o->conns = strcmp(argv[0], "conns") == 0;
	while ((c = getopt_long(argc, argv, "i:c:jh", lo, NULL)) != -1) {
		if (rm_opt_interval_count(c, optarg, &o->interval, &o->count))
			continue;
		switch (c) {
		case 'p':
			errno = 0;
			o->f.pid = strtol(optarg, &end, 10);
			if (errno || *end || o->f.pid < 1 || o->f.pid > 0x7fffffff)
				die("--pid: '%s' is not a process id", optarg);
			break;
		case 'q':
			o->f.qpn = rm_qpn_parse(optarg);
			if (o->f.qpn < 0)
				die("--qpn: '%s' is not a QPN (0x0011 or 17, 24 bits)", optarg);
			break;
		case 'g': o->f.cgroup = optarg; break;
		case 'd': o->f.dev = optarg; break;
		case 'j': o->json = 1; break;
		case 'r': o->cgroot = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(1);
		}
	}
	rm_opt_no_operands(argc, argv);
	if ((!o->conns) && o->count)
		die("-c is for the conns view");
}

/* A filter that can select nothing is a mistake: say so now. */
static void check_filter(const struct life_opts *o)
{
	char path[4096];
	struct stat st;

	if (o->f.dev) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s", o->f.dev);
		if (stat(path, &st) != 0)
			die("--dev: no RDMA device '%s' (%s missing; see 'rdma link')", o->f.dev, path);
	}
	if (o->f.cgroup) {
		snprintf(path, sizeof(path), "%s/%s", o->cgroot, o->f.cgroup);
		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			die("--cgroup: no cgroup '%s' (%s is not a directory)", o->f.cgroup, path);
	}
}

/* --- hooks ---------------------------------------------------------------------------- */

/* Which kernel symbol a life_* program needs: fentry/fexit name a function,
 * tp_btf a tracepoint (its BTF typedef btf_trace_<name>). */
static int target_exists(const struct rm_btf_probe *btf, const char *sec, char *what, size_t len)
{
	const char *slash = strchr(sec, '/');

	if (!slash)
		return 0;
	if (strncmp(sec, "tp_btf/", 7) == 0) {
		snprintf(what, len, "btf_trace_%s", slash + 1);
		if (rm_btf_has_typedef(btf, what))
			return 1;
		snprintf(what, len, "tracepoint rdma_cma:%s", slash + 1);
		return 0;
	}
	snprintf(what, len, "%s", slash + 1);
	return rm_btf_has_func(btf, slash + 1);
}

static unsigned setup_hooks(struct rdmamon_bpf *skel, struct bpf_link **links)
{
	struct rm_btf_probe *btf;
	struct bpf_program *p;
	unsigned n = 0, qp_hooks = 0;
	char msg[512], what[128];
	int err;

	btf = rm_btf_open(msg, sizeof(msg));
	if (!btf)
		die("%s", msg);
	bpf_object__for_each_program(p, skel->obj) {
		if (!is_life(p)) {
			bpf_program__set_autoload(p, false);
			continue;
		}
		if (!target_exists(btf, bpf_program__section_name(p), what, sizeof(what))) {
			fprintf(stderr, "rdmamon: hook missing: %s (%s; working with the rest)\n", what,
				bpf_program__name(p));
			bpf_program__set_autoload(p, false);
		}
	}
	rm_btf_close(btf);
	shrink_maps(skel->obj, 1);
	err = rdmamon_bpf__load(skel);
	if (err)
		die("cannot load the BPF programs (%s); libbpf's messages above say which", strerror(-err));
	bpf_object__for_each_program(p, skel->obj) {
		struct bpf_link *l;

		if (!bpf_program__autoload(p))
			continue;
		l = bpf_program__attach(p);
		if (!l) {
			fprintf(stderr, "rdmamon: cannot attach %s: %s (working without it)\n",
				bpf_program__name(p), strerror(errno));
			continue;
		}
		if (n < MAX_LIFE_PROGS)
			links[n++] = l;
		if (strncmp(bpf_program__name(p), "life_qp_", 8) == 0)
			qp_hooks++;
	}
	if (!qp_hooks)
		die("no QP hook attached (ib_create_qp_user, ib_modify_qp_with_udata, ib_destroy_qp_user): "
		    "nothing to show");
	return n;
}

/* --- output ---------------------------------------------------------------------------- */

static const char *dev_name(struct rdmamon_bpf *skel, uint32_t idx, char *buf)
{
	if (idx == (uint32_t)-1 || bpf_map_lookup_elem(bpf_map__fd(skel->maps.devnames), &idx, buf))
		return NULL;
	buf[RM_DEVNAME_LEN - 1] = 0;
	return buf;
}

static void print_json(json_t *j)
{
	char *s;

	if (!j)
		die("no memory");
	s = json_dumps(j, JSON_COMPACT);
	if (!s)
		die("no memory");
	puts(s);
	free(s);
	json_decref(j);
	fflush(stdout);
}

static int on_event(void *ctx, void *data, size_t len)
{
	struct life_ctx *c = ctx;
	const struct rm_life_event *e = data;
	char dbuf[RM_DEVNAME_LEN];
	const char *dev, *cgp;

	if (len < sizeof(*e) || e->kind >= LE_NKINDS)
		return 0;
	c->seen[e->kind]++;
	if (c->o->conns)
		return 0;
	dev = dev_name(c->skel, e->dev, dbuf);
	cgp = rm_cgpath(c->cg, e->cgid);
	if (!rm_life_match(&c->o->f, e, dev, cgp))
		return 0;
	c->shown++;
	if (c->o->json)
		print_json(rm_life_json(e, dev, cgp, c->real_off));
	else {
		rm_life_text(stdout, e, dev, cgp);
		fflush(stdout);
	}
	return 0;
}

static void read_lost(struct rdmamon_bpf *skel, uint64_t lost[LE_NKINDS])
{
	int fd = bpf_map__fd(skel->maps.life_lost);

	for (__u32 k = 0; k < LE_NKINDS; k++)
		if (bpf_map_lookup_elem(fd, &k, &lost[k]))
			lost[k] = 0;
}

/* Nothing lost silently: a line whenever the ring buffer dropped more. */
static void report_lost(struct life_ctx *c)
{
	uint64_t lost[LE_NKINDS], sum = 0;

	read_lost(c->skel, lost);
	for (unsigned k = 0; k < LE_NKINDS; k++)
		sum += lost[k];
	if (sum == c->lost_shown)
		return;
	c->lost_shown = sum;
	if (c->o->json) {
		json_t *j = json_pack("{s:s, s:I, s:{}}", "event", "lost", "total", (json_int_t)sum, "lost");

		for (unsigned k = 0; j && k < LE_NKINDS; k++)
			json_object_set_new(json_object_get(j, "lost"), rm_life_kind_name(k),
					    json_integer((json_int_t)lost[k]));
		print_json(j);
	} else {
		printf("LOST %llu events so far (ring buffer full):", (unsigned long long)sum);
		for (unsigned k = 0; k < LE_NKINDS; k++)
			if (lost[k])
				printf(" %s %llu", rm_life_kind_name(k), (unsigned long long)lost[k]);
		putchar('\n');
		fflush(stdout);
	}
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void print_conns(struct life_ctx *c, int final)
{
	int fd = bpf_map__fd(c->skel->maps.life_qps);
	struct rm_qp_key k, *kp = NULL;
	struct rm_conn_row *rows = NULL;
	size_t n = 0, cap = 0;
	char (*names)[RM_DEVNAME_LEN] = NULL;
	uint64_t lost[LE_NKINDS];
	json_t *t;

	while (bpf_map_get_next_key(fd, kp, &k) == 0) {
		struct rm_conn_row r = { .k = k };

		kp = &k;
		if (bpf_map_lookup_elem(fd, &k, &r.v) || !rm_conn_established(&r.v))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			rows = realloc(rows, cap * sizeof(*rows));
			names = realloc(names, cap * sizeof(*names));
			if (!rows || !names)
				die("no memory");
		}
		rows[n] = r;
		rows[n].dev = dev_name(c->skel, k.dev, names[n]);
		rows[n].cgroup = rm_cgpath(c->cg, r.v.cgid);
		if (rm_life_select(&c->o->f, r.v.pid, rows[n].cgroup, rows[n].dev, k.qpn))
			n++;
	}
	for (size_t i = 0; i < n; i++)   /* names moved when the array grew */
		rows[i].dev = dev_name(c->skel, rows[i].k.dev, names[i]);
	read_lost(c->skel, lost);
	t = rm_conns_json(rows, n, now_ns(CLOCK_MONOTONIC), c->real_off, final, lost);
	if (!t)
		die("no memory");
	if (c->o->json)
		print_json(t);
	else {
		rm_conns_text(stdout, t);
		json_decref(t);
		fflush(stdout);
	}
	free(rows);
	free(names);
}

static void print_summary(struct life_ctx *c)
{
	uint64_t lost[LE_NKINDS];

	read_lost(c->skel, lost);
	if (c->o->json) {
		json_t *j = json_pack("{s:s, s:I, s:{}, s:{}}", "event", "summary", "shown",
				      (json_int_t)c->shown, "seen", "lost");

		for (unsigned k = 0; j && k < LE_NKINDS; k++) {
			json_object_set_new(json_object_get(j, "seen"), rm_life_kind_name(k),
					    json_integer((json_int_t)c->seen[k]));
			json_object_set_new(json_object_get(j, "lost"), rm_life_kind_name(k),
					    json_integer((json_int_t)lost[k]));
		}
		print_json(j);
		return;
	}
	printf("rdmamon lifecycle: %llu events shown;", (unsigned long long)c->shown);
	for (unsigned k = 0; k < LE_NKINDS; k++)
		printf(" %s %llu (lost %llu)", rm_life_kind_name(k), (unsigned long long)c->seen[k],
		       (unsigned long long)lost[k]);
	putchar('\n');
}

int rm_life_main(int argc, char **argv)
{
	struct bpf_link *links[MAX_LIFE_PROGS];
	struct life_opts o;
	struct life_ctx c = { 0 };
	struct rdmamon_bpf *skel;
	struct ring_buffer *rb;
	uint64_t next, next_lost;
	unsigned nlinks;
	long printed = 0;
	char msg[512];
	int err;

	parse(argc, argv, &o);
	if (rm_env_check(msg, sizeof(msg)))
		die("%s", msg);
	check_filter(&o);   /* after the mounts: the cgroup2 tree is there now */
	c.o = &o;
	c.cg = rm_cgpaths_new(o.cgroot);
	if (!c.cg || rm_cgpaths_scan(c.cg) < 0)
		die("cannot read the cgroup2 tree at %s", o.cgroot);
	skel = rdmamon_bpf__open();
	if (!skel)
		die("cannot open the BPF object: %s", strerror(errno));
	c.skel = skel;
	nlinks = setup_hooks(skel, links);
	rb = ring_buffer__new(bpf_map__fd(skel->maps.life_events), on_event, &c, NULL);
	if (!rb)
		die("cannot open the ring buffer: %s", strerror(errno));
	c.real_off = (int64_t)(now_ns(CLOCK_REALTIME) - now_ns(CLOCK_MONOTONIC));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "rdmamon: %s view, %u hooks attached\n", o.conns ? "conns" : "lifecycle", nlinks);
	next = now_ns(CLOCK_MONOTONIC) + (uint64_t)(o.interval * 1e9);
	next_lost = now_ns(CLOCK_MONOTONIC) + 1000000000u;
	while (!stop) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);

		err = ring_buffer__poll(rb, 200);
		if (err < 0 && err != -EINTR)
			die("ring buffer: %s", strerror(-err));
		t = now_ns(CLOCK_MONOTONIC);
		if (t >= next_lost) {
			report_lost(&c);
			next_lost = t + 1000000000u;
		}
		if (!o.conns || t < next)
			continue;
		print_conns(&c, 0);
		next += (uint64_t)(o.interval * 1e9);
		if (o.count && ++printed >= o.count)
			break;
	}
	ring_buffer__consume(rb);
	report_lost(&c);
	if (!o.conns)
		print_summary(&c);
	print_conns(&c, 1);
	ring_buffer__free(rb);
	for (unsigned i = 0; i < nlinks; i++)
		bpf_link__destroy(links[i]);
	rdmamon_bpf__destroy(skel);
	rm_cgpaths_free(c.cg);
	fprintf(stderr, "rdmamon: detached\n");
	return 0;
}
