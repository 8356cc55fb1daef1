/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "opts.h"

static const char *const backend_names[] = { "packet", "ud", "raw", "sniffer" };

const char *cap_backend_name(enum cap_backend b)
{
	return backend_names[b];
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static void usage(void)
{
	puts("usage: rdmacap packet|ud|raw|sniffer -o DIR [options]\n"
	     "  -d, --dev NAME          RDMA device (ud, raw, sniffer); repeat for more\n"
	     "  -i, --netdev NAME       network device (packet; the IGMP joins of ud and raw)\n"
	     "  -g, --group ADDR[:PORT] IPv4 multicast group (a port is needed by packet)\n"
	     "  -s, --source ADDR       capture only this source (default: every source)\n"
	     "  -o, --outdir DIR        one file per source and format in DIR\n"
	     "  -f, --format LIST       pcap,raw,hdr (default pcap)\n"
	     "      --app-header N      application header bytes: the split point\n"
	     "      --seq-offset N      sequence number offset in the application data\n"
	     "      --seq-width N       its width in bytes: 1, 2, 4 or 8\n"
	     "      --seq-le            the number is little endian\n"
	     "      --preset seed       --app-header 64 --seq-offset 0 --seq-width 8\n"
	     "      --roce              packet: the host's RoCE v2 frames (UDP 4791)\n"
	     "  -t, --duration S        stop after S seconds (default: SIGINT)\n"
	     "  -c, --count N           stop after N packets\n"
	     "      --json FILE         the final statistics as JSON\n"
	     "      --ring-mb N         packet: ring size in MiB (default 16)\n"
	     "      --slots N           ud: receive buffers; raw, sniffer: per QP (default 512)\n"
	     "      --snaplen N         bytes kept per packet in pcap (default 65535)\n"
	     "      --qkey N            ud: Q_Key (default 0x11111111)\n"
	     "      --max-sources N     sources tracked at most (default 256)\n"
	     "      --payload-mem KIND  ud, raw, sniffer: payload buffer in auto (huge pages if any),\n"
	     "                          host, huge (or stop) or gpu[:N] memory (refused: no GPU support)\n"
	     "      --buffered          write through the page cache (default: O_DIRECT where\n"
	     "                          the file system takes it)\n"
	     "  -q, --quiet             no line per second\n"
	     "See rdmacap(8).");
}

/* A number in [lo, hi]; decimal or 0x hex. */
static int num(const char *s, const char *what, unsigned long long lo, unsigned long long hi,
	       unsigned long long *out, char *err, size_t errlen)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);

	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return fail(err, errlen, "invalid %s '%s': a number from %llu to %llu", what, s, lo, hi);
	*out = v;
	return 0;
}

static int parse_group(const char *s, struct cap_group *g, char *err, size_t errlen)
{
	char buf[64];
	char *colon;
	unsigned long long port = 0;

	if (strlen(s) >= sizeof(buf))
		return fail(err, errlen, "invalid group '%s'", s);
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = 0;
		if (num(colon + 1, "group port", 1, 65535, &port, err, errlen))
			return -1;
	}
	if (inet_pton(AF_INET, buf, &g->addr) != 1)
		return fail(err, errlen, "invalid group '%s': not an IPv4 address", s);
	if (!IN_MULTICAST(ntohl(g->addr.s_addr)))
		return fail(err, errlen, "group %s is not multicast (224.0.0.0/4)", buf);
	g->port = (uint16_t)port;
	return 0;
}

static int parse_formats(const char *s, unsigned *out, char *err, size_t errlen)
{
	char buf[64], *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return fail(err, errlen, "invalid --format '%s'", s);
	strcpy(buf, s);
	*out = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "pcap"))
			*out |= CAP_FMT_PCAP;
		else if (!strcmp(t, "raw"))
			*out |= CAP_FMT_RAW;
		else if (!strcmp(t, "hdr"))
			*out |= CAP_FMT_HDR;
		else
			return fail(err, errlen, "unknown format '%s' in --format (pcap, raw, hdr)", t);
	}
	return *out ? 0 : fail(err, errlen, "--format names no format");
}

static int add_name(char (*list)[CAP_NAME_MAX], int *n, const char *s, const char *what,
		    char *err, size_t errlen)
{
	if (*n >= CAP_MAX_LIST)
		return fail(err, errlen, "more than %d %ss", CAP_MAX_LIST, what);
	if (!*s || strlen(s) >= CAP_NAME_MAX)
		return fail(err, errlen, "invalid %s name '%s'", what, s);
	strcpy(list[(*n)++], s);
	return 0;
}

enum { O_APPHDR = 256, O_SEQOFF, O_SEQW, O_SEQLE, O_PRESET, O_ROCE, O_JSON, O_RING, O_SLOTS,
       O_SNAP, O_QKEY, O_MAXSRC, O_PAYMEM, O_BUFFERED };

static const char *const mem_names[] = { "auto", "host", "huge", "gpu" };

const char *cap_mem_name(enum cap_mem m)
{
	return m <= CAP_MEM_GPU ? mem_names[m] : "?";
}

static int parse_mem(const char *s, struct cap_opts *o, char *err, size_t errlen)
{
	unsigned long long v;

	for (int m = CAP_MEM_AUTO; m <= CAP_MEM_HUGE; m++)
		if (!strcmp(s, mem_names[m])) {
			o->payload_mem = (enum cap_mem)m;
			return 0;
		}
	if (strcmp(s, "gpu") && strncmp(s, "gpu:", 4))
		return fail(err, errlen, "invalid --payload-mem '%s': auto, host, huge or gpu[:N]", s);
	o->payload_mem = CAP_MEM_GPU;
	if (s[3] == ':' && num(s + 4, "--payload-mem gpu:N", 0, 255, &v, err, errlen))
		return -1;
	o->gpu = s[3] == ':' ? (unsigned)v : 0;
	return 0;
}

int cap_opts_parse(int argc, char **argv, struct cap_opts *o, char *err, size_t errlen)
{
	static const struct option lo[] = {
		{ "dev", required_argument, NULL, 'd' }, { "netdev", required_argument, NULL, 'i' },
		{ "group", required_argument, NULL, 'g' }, { "source", required_argument, NULL, 's' },
		{ "outdir", required_argument, NULL, 'o' }, { "format", required_argument, NULL, 'f' },
		{ "app-header", required_argument, NULL, O_APPHDR },
		{ "seq-offset", required_argument, NULL, O_SEQOFF },
		{ "seq-width", required_argument, NULL, O_SEQW }, { "seq-le", no_argument, NULL, O_SEQLE },
		{ "preset", required_argument, NULL, O_PRESET }, { "roce", no_argument, NULL, O_ROCE },
		{ "duration", required_argument, NULL, 't' }, { "count", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, O_JSON }, { "ring-mb", required_argument, NULL, O_RING },
		{ "slots", required_argument, NULL, O_SLOTS }, { "snaplen", required_argument, NULL, O_SNAP },
		{ "qkey", required_argument, NULL, O_QKEY },
		{ "max-sources", required_argument, NULL, O_MAXSRC },
		{ "payload-mem", required_argument, NULL, O_PAYMEM },
		{ "buffered", no_argument, NULL, O_BUFFERED },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	unsigned long long v;
	bool seq_given = false;
	int c, b;

	memset(o, 0, sizeof(*o));
	o->formats = CAP_FMT_PCAP;
	o->ring_mb = 16;
	o->slots = 512;
	o->snaplen = 65535;
	o->qkey = 0x11111111;
	o->max_sources = 256;
	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage();
		return 1;
	}
	if (argc < 2 || argv[1][0] == '-')
		return fail(err, errlen, "no backend: rdmacap packet|ud|raw|sniffer [options] (--help)");
	for (b = 0; b < 4 && strcmp(argv[1], backend_names[b]); b++)
		;
	if (b == 4)
		return fail(err, errlen, "unknown backend '%s' (packet, ud, raw, sniffer)", argv[1]);
	o->backend = (enum cap_backend)b;
	/* the options after the backend: getopt sees argv + 1, and optind 0
	 * resets all of glibc's getopt state (a second parse in one process,
	 * as in the unit tests, must not see the first one's) */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, ":d:i:g:s:o:f:t:c:qh", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (add_name(o->devs, &o->ndevs, optarg, "device", err, errlen))
				return -1;
			break;
		case 'i':
			if (add_name(o->netdevs, &o->nnetdevs, optarg, "netdev", err, errlen))
				return -1;
			break;
		case 'g':
			if (o->ngroups >= CAP_MAX_LIST)
				return fail(err, errlen, "more than %d groups", CAP_MAX_LIST);
			if (parse_group(optarg, &o->groups[o->ngroups++], err, errlen))
				return -1;
			break;
		case 's':
			if (o->nsources >= CAP_MAX_LIST)
				return fail(err, errlen, "more than %d sources", CAP_MAX_LIST);
			if (inet_pton(AF_INET, optarg, &o->sources[o->nsources++]) != 1)
				return fail(err, errlen, "invalid source '%s': not an IPv4 address", optarg);
			break;
		case 'o': o->outdir = optarg; break;
		case 'f':
			if (parse_formats(optarg, &o->formats, err, errlen))
				return -1;
			break;
		case O_APPHDR:
			if (num(optarg, "--app-header", 0, 65535, &v, err, errlen))
				return -1;
			o->app_header = (unsigned)v;
			break;
		case O_SEQOFF:
			if (num(optarg, "--seq-offset", 0, 65535, &v, err, errlen))
				return -1;
			o->seq.offset = v;
			seq_given = true;
			break;
		case O_SEQW:
			if (num(optarg, "--seq-width", 1, 8, &v, err, errlen) || (v & (v - 1)))
				return fail(err, errlen, "invalid --seq-width '%s': 1, 2, 4 or 8", optarg);
			o->seq.width = (unsigned)v;
			break;
		case O_SEQLE: o->seq.little_endian = true; break;
		case O_PRESET:
			if (strcmp(optarg, "seed"))
				return fail(err, errlen, "unknown --preset '%s' (seed)", optarg);
			o->app_header = CAP_SEED_APP_HEADER;
			o->seq.offset = CAP_SEED_SEQ_OFFSET;
			o->seq.width = CAP_SEED_SEQ_WIDTH;
			o->seq.little_endian = false;
			break;
		case O_ROCE: o->roce = true; break;
		case 't': {
			char *end;

			o->duration = strtod(optarg, &end);
			if (end == optarg || *end || !(o->duration > 0 && o->duration < 1e7))
				return fail(err, errlen, "invalid --duration '%s': seconds > 0", optarg);
			break;
		}
		case 'c':
			if (num(optarg, "--count", 1, UINT64_MAX, &v, err, errlen))
				return -1;
			o->count = v;
			break;
		case O_JSON: o->json = optarg; break;
		case O_RING:
			if (num(optarg, "--ring-mb", 1, 1024, &v, err, errlen))
				return -1;
			o->ring_mb = (unsigned)v;
			break;
		case O_SLOTS:
			if (num(optarg, "--slots", 16, 65536, &v, err, errlen))
				return -1;
			o->slots = (unsigned)v;
			break;
		case O_SNAP:
			if (num(optarg, "--snaplen", 64, 262144, &v, err, errlen))
				return -1;
			o->snaplen = (unsigned)v;
			break;
		case O_QKEY:
			if (num(optarg, "--qkey", 0, UINT32_MAX, &v, err, errlen))
				return -1;
			o->qkey = (uint32_t)v;
			break;
		case O_MAXSRC:
			if (num(optarg, "--max-sources", 1, 65536, &v, err, errlen))
				return -1;
			o->max_sources = (unsigned)v;
			break;
		case O_PAYMEM:
			if (parse_mem(optarg, o, err, errlen))
				return -1;
			break;
		case 'q': o->quiet = true; break;
		case O_BUFFERED: o->buffered = true; break;
		case 'h': usage(); return 1;
		case ':': return fail(err, errlen, "option '%s' needs a value", argv[optind]);
		default: return fail(err, errlen, "unknown option '%s' (--help)", argv[optind]);
		}
	}
	if (optind + 1 < argc)
		return fail(err, errlen, "unexpected argument '%s'", argv[optind + 1]);
	if (seq_given && !o->seq.width)
		return fail(err, errlen, "--seq-offset needs --seq-width");
	if (!o->outdir)
		return fail(err, errlen, "no output directory: -o DIR");
	if (o->backend == CAP_PACKET) {
		if (!o->nnetdevs)
			return fail(err, errlen, "packet needs a netdev: -i NAME");
		if (!o->roce && !o->ngroups)
			return fail(err, errlen, "packet needs a group (-g ADDR:PORT) or --roce");
		for (int i = 0; i < o->ngroups; i++)
			if (!o->groups[i].port)
				return fail(err, errlen, "packet: group %s needs a UDP port (ADDR:PORT)",
					    inet_ntoa(o->groups[i].addr));
		if (o->payload_mem > CAP_MEM_HOST)
			return fail(err, errlen, "packet: payloads land in the kernel's ring, in host memory: "
				    "--payload-mem %s is for ud, raw and sniffer", cap_mem_name(o->payload_mem));
	} else {
		if (!o->ndevs)
			return fail(err, errlen, "%s needs an RDMA device: -d NAME", argv[1]);
		if (o->backend == CAP_UD && !o->ngroups)
			return fail(err, errlen, "ud needs a group: -g ADDR");
		if (o->roce)
			return fail(err, errlen, "--roce belongs to the packet backend");
	}
	return 0;
}

int cap_netdev_mtu(const char *netdev)
{
	char path[128];
	FILE *f;
	int mtu = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", netdev);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &mtu) != 1)
		mtu = -1;
	fclose(f);
	return mtu;
}

uint64_t cap_netdev_rx_drops(const char *netdev)
{
	static const char *const names[] = { "rx_dropped", "rx_missed_errors", "rx_fifo_errors" };
	uint64_t sum = 0;

	for (int i = 0; i < 3; i++) {
		char path[160];
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", netdev, names[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			sum += v;
		fclose(f);
	}
	return sum;
}

static int check_outdir(const char *dir, char *err, size_t errlen)
{
	char probe[PATH_MAX];
	struct stat st;
	int fd;

	if (stat(dir, &st))
		return fail(err, errlen, "output directory %s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return fail(err, errlen, "output directory %s: %s", dir, strerror(ENOTDIR));
	/* a file made and removed: root passes access(W_OK) on a read-only mount */
	if (snprintf(probe, sizeof(probe), "%s/.rdmacap-probe-XXXXXX", dir) >= (int)sizeof(probe))
		return fail(err, errlen, "output directory %s: path too long", dir);
	fd = mkstemp(probe);
	if (fd < 0)
		return fail(err, errlen, "output directory %s is not writable: %s", dir, strerror(errno));
	close(fd);
	unlink(probe);
	return 0;
}

int cap_opts_check(const struct cap_opts *o, char *err, size_t errlen)
{
	char path[128];
	struct stat st;

	for (int i = 0; i < o->ndevs; i++) {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s", o->devs[i]);
		if (stat(path, &st))
			return fail(err, errlen, "unknown RDMA device '%s' (none in /sys/class/infiniband)",
				    o->devs[i]);
	}
	for (int i = 0; i < o->nnetdevs; i++) {
		int mtu;

		if (!if_nametoindex(o->netdevs[i]))
			return fail(err, errlen, "unknown netdev '%s': %s", o->netdevs[i], strerror(errno));
		mtu = cap_netdev_mtu(o->netdevs[i]);
		/* IPv4 + UDP + application header must fit one frame's payload */
		if (mtu > 0 && o->app_header + 28u > (unsigned)mtu)
			return fail(err, errlen, "header length %u larger than the MTU of %s (%d: at most %d "
				    "bytes of application header after IPv4 and UDP)", o->app_header,
				    o->netdevs[i], mtu, mtu - 28);
	}
	return check_outdir(o->outdir, err, errlen);
}

int cap_gpu_refusal(const struct cap_opts *o, const char *dev_root, char *err, size_t errlen)
{
	static const char *const nodes[] = { "nvidia0", "nvidiactl", "kfd", "dri/renderD128" };
	char path[PATH_MAX], found[256] = "";
	size_t n = 0;
	struct stat st;

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev_root, nodes[i]);
		if (!stat(path, &st) && n < sizeof(found))
			n += (size_t)snprintf(found + n, sizeof(found) - n, "%s%s", n ? ", " : "", path);
	}
	return fail(err, errlen, "%s: --payload-mem gpu:%u: not supported by this build: GPU payload "
		    "buffers need a GPU memory exporter (CUDA or ROCm dmabuf) registered with "
		    "ibv_reg_dmabuf_mr, and this build has none; %s%s%s; use --payload-mem host or huge",
		    cap_backend_name(o->backend), o->gpu, n ? "the host has GPU device nodes (" : "",
		    n ? found : "no GPU device node on this host (/dev/nvidia*, /dev/kfd, /dev/dri/renderD*)",
		    n ? ") but nothing here can map their memory" : "");
}
