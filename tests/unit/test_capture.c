/* SPDX-License-Identifier: BSD-2-Clause */
/* capture/: the sequence loss accounting, the frame parser, rdmacap's
 * option parser and host checks (every bad input refused with its reason),
 * and the engine end to end on frames built here: per-source pcap files read
 * back with libpcap, loss counted exactly, and a full disk leaving whole
 * records (capture/rdmacap.8). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <pcap/pcap.h>
#include <unistd.h>
#include "capture/engine.h"
#include "capture/frame.h"
#include "capture/opts.h"
#include "capture/out.h"
#include "capture/seq.h"

/* --- sequence numbers --- */

static void test_seq_gaps_and_late(void **state)
{
	struct cap_seq s = { 0 };
	uint64_t in[] = { 5, 6, 7, 10, 11, 9, 12, 20 };

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		cap_seq_update(&s, 8, in[i]);
	assert_int_equal(s.first, 5);
	assert_int_equal(s.lost, 2 + 7);   /* 8, 9 then 13..19 */
	assert_int_equal(s.late, 1);       /* 9 after 11 */
	assert_int_equal(s.next, 21);
}

static void test_seq_wraps_at_width(void **state)
{
	struct cap_seq s = { 0 };

	(void)state;
	cap_seq_update(&s, 1, 254);
	cap_seq_update(&s, 1, 255);
	cap_seq_update(&s, 1, 0);    /* wrap: no loss */
	cap_seq_update(&s, 1, 2);    /* 1 lost */
	assert_int_equal(s.lost, 1);
	assert_int_equal(s.late, 0);
	cap_seq_update(&s, 1, 1);    /* behind: late */
	assert_int_equal(s.late, 1);
	struct cap_seq w = { 0 };

	cap_seq_update(&w, 2, 65535);
	cap_seq_update(&w, 2, 3);    /* 0, 1, 2 lost across the wrap */
	assert_int_equal(w.lost, 3);
}

static void test_seq_read_widths(void **state)
{
	const uint8_t d[] = { 0xaa, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	struct cap_seq_fmt f = { .offset = 1, .width = 4 };
	uint64_t v;

	(void)state;
	assert_true(cap_seq_read(&f, d, sizeof(d), &v));
	assert_int_equal(v, 0x01020304);
	f.little_endian = true;
	assert_true(cap_seq_read(&f, d, sizeof(d), &v));
	assert_int_equal(v, 0x04030201);
	f = (struct cap_seq_fmt){ .offset = 1, .width = 8 };
	assert_true(cap_seq_read(&f, d, sizeof(d), &v));
	assert_int_equal(v, 0x0102030405060708ull);
	f.offset = 2;                 /* one byte short */
	assert_false(cap_seq_read(&f, d, sizeof(d), &v));
	f = (struct cap_seq_fmt){ .offset = 100, .width = 1 };
	assert_false(cap_seq_read(&f, d, sizeof(d), &v));
	f = (struct cap_seq_fmt){ 0 };
	assert_false(cap_seq_read(&f, d, sizeof(d), &v));
}

/* --- frames --- */

/* An Ethernet/IPv4/UDP frame with the seed's header carrying seq. */
static size_t build(uint8_t *b, const char *src, const char *dst, uint16_t port, uint64_t seq,
		    size_t payload)
{
	size_t udp = 8 + payload, n = 14 + 20 + udp;

	memset(b, 0, n);
	b[12] = 0x08;
	b[14] = 0x45;
	b[16] = (uint8_t)((20 + udp) >> 8);
	b[17] = (uint8_t)(20 + udp);
	b[23] = 17;
	inet_pton(AF_INET, src, b + 26);
	inet_pton(AF_INET, dst, b + 30);
	b[36] = (uint8_t)(port >> 8);
	b[37] = (uint8_t)port;
	b[38] = (uint8_t)(udp >> 8);
	b[39] = (uint8_t)udp;
	for (int i = 7; i >= 0; i--, seq >>= 8)
		b[42 + i] = (uint8_t)seq;
	return n;
}

static void test_frame_parse(void **state)
{
	uint8_t b[2048];
	struct cap_frame f;
	size_t n = build(b, "10.1.0.1", "239.1.1.1", 5000, 7, 100);
	char a[16];

	(void)state;
	assert_int_equal(cap_frame_parse(b, n, &f), 0);
	assert_string_equal(inet_ntop(AF_INET, &f.src, a, sizeof(a)), "10.1.0.1");
	assert_string_equal(inet_ntop(AF_INET, &f.dst, a, sizeof(a)), "239.1.1.1");
	assert_int_equal(f.dport, 5000);
	assert_int_equal(f.app_off, 42);
	assert_int_equal(f.app_len, 100);
	/* Ethernet padding beyond the IP length is not payload */
	assert_int_equal(cap_frame_parse(b, n + 6, &f), 0);
	assert_int_equal(f.app_len, 100);
	/* cut short, not IPv4, not UDP, a later fragment */
	assert_int_equal(cap_frame_parse(b, 40, &f), -1);
	b[12] = 0x86;
	assert_int_equal(cap_frame_parse(b, n, &f), -1);
	b[12] = 0x08;
	b[23] = 6;
	assert_int_equal(cap_frame_parse(b, n, &f), -1);
	b[23] = 17;
	b[21] = 5;
	assert_int_equal(cap_frame_parse(b, n, &f), -1);
}

static void test_frame_from_grh(void **state)
{
	uint8_t grh[40] = { 0 }, out[CAP_UD_WIRE_HDR];
	struct cap_frame f;

	(void)state;
	grh[20] = 0x45;
	inet_pton(AF_INET, "192.168.50.2", grh + 32);
	inet_pton(AF_INET, "225.1.1.20", grh + 36);
	assert_int_equal(cap_frame_from_grh(out, grh, 0x12, 0x11111111, 1024), 0);
	assert_int_equal(cap_frame_parse(out, sizeof(out), &f), 0);
	assert_int_equal(f.dport, CAP_ROCE_PORT);
	assert_int_equal(out[0], 0x01);
	assert_int_equal(out[5], 20);          /* 01:00:5e:01:01:14 */
	assert_int_equal(out[42], 0x64);       /* BTH: UD SEND Only */
	grh[20] = 0x60;                        /* an IPv6 GRH: not ours to rebuild */
	assert_int_equal(cap_frame_from_grh(out, grh, 0x12, 0x11111111, 1024), -1);
}

/* --- options --- */

static char tmpdir[64];

static int parse(const char *line, struct cap_opts *o, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;

	snprintf(buf, sizeof(buf), "rdmacap %s", line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = strcmp(t, "DIR") ? t : tmpdir;
	argv[argc] = NULL;
	return cap_opts_parse(argc, argv, o, err, errlen);
}

/* line must be refused by the parser (or, with check, by the host check)
 * with a message containing want. */
static void refused(const char *line, const char *want, int check)
{
	struct cap_opts o;
	char err[512] = "";
	int rc = parse(line, &o, err, sizeof(err));

	if (check) {
		if (rc)
			fail_msg("'%s' refused by the parser: %s", line, err);
		rc = cap_opts_check(&o, err, sizeof(err));
	}
	if (rc != -1)
		fail_msg("'%s' accepted", line);
	if (!strstr(err, want))
		fail_msg("'%s': message '%s' lacks '%s'", line, err, want);
}

static void test_opts_good(void **state)
{
	struct cap_opts o;
	char err[512] = "";

	(void)state;
	assert_int_equal(parse("packet -i lo -g 239.1.1.1:5000 -g 239.1.1.2:5001 -s 10.0.0.1 -o DIR "
			       "-f pcap,raw,hdr --preset seed --json x.json -t 2.5 -c 10", &o, err, sizeof(err)), 0);
	assert_int_equal(o.backend, CAP_PACKET);
	assert_int_equal(o.ngroups, 2);
	assert_int_equal(o.groups[1].port, 5001);
	assert_int_equal(o.nsources, 1);
	assert_int_equal(o.formats, CAP_FMT_PCAP | CAP_FMT_RAW | CAP_FMT_HDR);
	assert_int_equal(o.app_header, 64);
	assert_int_equal(o.seq.width, 8);
	assert_int_equal(o.count, 10);
	assert_int_equal(cap_opts_check(&o, err, sizeof(err)), 0);
	assert_false(o.buffered);
	assert_int_equal(parse("packet -i lo --roce -o DIR --buffered", &o, err, sizeof(err)), 0);
	assert_true(o.roce);
	assert_true(o.buffered);
	assert_int_equal(parse("ud -d rxe0 -g 225.1.1.20 -o DIR --seq-offset 4 --seq-width 2 --seq-le",
			       &o, err, sizeof(err)), 0);
	assert_int_equal(o.seq.offset, 4);
	assert_true(o.seq.little_endian);
	assert_int_equal(o.payload_mem, CAP_MEM_AUTO);
	assert_int_equal(parse("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem huge", &o, err, sizeof(err)), 0);
	assert_int_equal(o.payload_mem, CAP_MEM_HUGE);
	assert_int_equal(parse("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem gpu:3", &o, err, sizeof(err)), 0);
	assert_int_equal(o.payload_mem, CAP_MEM_GPU);
	assert_int_equal(o.gpu, 3);
	assert_int_equal(parse("packet -i lo --roce -o DIR --payload-mem host", &o, err, sizeof(err)), 0);
	assert_int_equal(o.payload_mem, CAP_MEM_HOST);
	assert_int_equal(parse("--help", &o, err, sizeof(err)), 1);
}

/* --payload-mem gpu: refused with why, naming the GPU nodes the host has */
static void test_gpu_refusal(void **state)
{
	struct cap_opts o;
	char err[512] = "", dir[] = "/tmp/capgpuXXXXXX", path[600];

	(void)state;
	assert_int_equal(parse("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem gpu:1", &o, err, sizeof(err)), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(cap_gpu_refusal(&o, dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "ud: --payload-mem gpu:1: not supported by this build"));
	assert_non_null(strstr(err, "no GPU device node on this host"));
	assert_non_null(strstr(err, "use --payload-mem host or huge"));
	snprintf(path, sizeof(path), "%s/kfd", dir);
	fclose(fopen(path, "w"));
	assert_int_equal(cap_gpu_refusal(&o, dir, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "the host has GPU device nodes ("));
	assert_non_null(strstr(err, "/kfd) but nothing here can map their memory"));
	unlink(path);
	rmdir(dir);
}

static void test_opts_bad(void **state)
{
	(void)state;
	refused("", "no backend", 0);
	refused("tcpdump -o DIR", "unknown backend 'tcpdump'", 0);
	refused("packet -i lo -g 10.1.1.1:5000 -o DIR", "not multicast", 0);
	refused("packet -i lo -g 239.1.1.1 -o DIR", "needs a UDP port", 0);
	refused("packet -i lo -g 239.1.1.1:0 -o DIR", "invalid group port", 0);
	refused("packet -i lo -g 239.1.1.1:70000 -o DIR", "invalid group port", 0);
	refused("packet -i lo -g 239.1.1:5000 -o DIR", "not an IPv4 address", 0);
	refused("packet -i lo -g 239.1.1.1:5000", "no output directory", 0);
	refused("packet -g 239.1.1.1:5000 -o DIR", "needs a netdev", 0);
	refused("packet -i lo -o DIR", "needs a group", 0);
	refused("ud -g 225.1.1.20 -o DIR", "needs an RDMA device", 0);
	refused("ud -d rxe0 -o DIR", "ud needs a group", 0);
	refused("ud -d rxe0 -g 225.1.1.20 --roce -o DIR", "--roce belongs", 0);
	refused("packet -i lo --roce -o DIR -f pcap,mp4", "unknown format 'mp4'", 0);
	refused("packet -i lo --roce -o DIR --seq-width 3", "invalid --seq-width", 0);
	refused("packet -i lo --roce -o DIR --seq-offset 2", "needs --seq-width", 0);
	refused("packet -i lo --roce -o DIR --preset other", "unknown --preset", 0);
	refused("packet -i lo --roce -o DIR -t 0", "invalid --duration", 0);
	refused("packet -i lo --roce -o DIR -c -5", "invalid --count", 0);
	refused("packet -i lo --roce -o DIR --app-header 70000", "invalid --app-header", 0);
	refused("packet -i lo --roce -o DIR --bogus", "unknown option '--bogus'", 0);
	refused("packet -i lo --roce -o DIR -s 1.2.3", "invalid source", 0);
	refused("packet -i lo --roce -o DIR extra", "unexpected argument", 0);
	refused("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem vram", "invalid --payload-mem 'vram'", 0);
	refused("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem gpu:x", "invalid --payload-mem gpu:N 'x'", 0);
	refused("ud -d rxe0 -g 225.1.1.20 -o DIR --payload-mem gpu:256", "invalid --payload-mem gpu:N", 0);
	refused("packet -i lo --roce -o DIR --payload-mem huge", "--payload-mem huge is for ud", 0);
	refused("packet -i lo --roce -o DIR --payload-mem gpu", "in the kernel's ring, in host memory", 0);
	refused("packet -i lo --roce -o", "needs a value", 0);
	/* the host checks */
	refused("packet -i nosuchnetdev0 --roce -o DIR", "unknown netdev 'nosuchnetdev0'", 1);
	refused("ud -d nosuchdev0 -g 225.1.1.20 -o DIR", "unknown RDMA device 'nosuchdev0'", 1);
	refused("packet -i lo --roce -o DIR --app-header 65510", "larger than the MTU of lo", 1);
	refused("packet -i lo --roce -o /nonexistent/capture", "No such file or directory", 1);
	refused("packet -i lo --roce -o /etc/hostname", "Not a directory", 1);
	/* /proc takes no new file, even from root */
	refused("packet -i lo --roce -o /proc", "not writable", 1);
}

/* --- the engine --- */

static volatile sig_atomic_t no_stop;

static int count_pcap(const char *path, uint64_t *first_seq)
{
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
	struct pcap_pkthdr *h;
	const u_char *d;
	int n = 0;

	if (!p)
		fail_msg("%s: %s", path, eb);
	while (pcap_next_ex(p, &h, &d) == 1) {
		if (n == 0 && first_seq) {
			*first_seq = 0;
			for (int i = 0; i < 8; i++)
				*first_seq = *first_seq << 8 | d[42 + i];
		}
		assert_int_equal(h->ts.tv_usec, 123456789);   /* nanoseconds kept */
		n++;
	}
	pcap_close(p);
	return n;
}

static void test_engine_sources_and_loss(void **state)
{
	struct cap_opts o;
	struct cap_engine e;
	char err[512], path[600];
	uint8_t b[2048];

	(void)state;
	assert_int_equal(parse("packet -i lo -g 239.1.1.1:5000 -g 239.1.1.2:5000 -o DIR -f pcap,raw,hdr "
			       "--preset seed -q", &o, err, sizeof(err)), 0);
	assert_int_equal(cap_engine_init(&e, &o, "host", &no_stop), 0);
	/* two sources x two groups, seq 0..99, source 2 skips 10 and 50..52 */
	for (uint64_t s = 0; s < 100; s++)
		for (int src = 1; src <= 2; src++)
			for (int g = 1; g <= 2; g++) {
				char sa[16], ga[16];

				if (src == 2 && (s == 10 || (s >= 50 && s <= 52)))
					continue;
				snprintf(sa, sizeof(sa), "10.0.0.%d", src);
				snprintf(ga, sizeof(ga), "239.1.1.%d", g);
				size_t n = build(b, sa, ga, 5000, s, 200);
				struct cap_pkt p = { .hdr = b, .hdr_len = n, .wire_len = n,
						     .ts_ns = 1700000000ull * 1000000000ull + 123456789 };

				assert_int_equal(cap_engine_packet(&e, &p), 0);
			}
	/* a group not asked for, and a port not asked for: misses */
	size_t n = build(b, "10.0.0.1", "239.9.9.9", 5000, 0, 200);
	struct cap_pkt p = { .hdr = b, .hdr_len = n, .wire_len = n };

	cap_engine_packet(&e, &p);
	n = build(b, "10.0.0.1", "239.1.1.1", 5001, 0, 200);
	p.hdr_len = p.wire_len = n;
	cap_engine_packet(&e, &p);
	assert_int_equal(e.drops.miss, 2);
	assert_int_equal(e.nsrc, 4);
	for (unsigned i = 0; i < e.nsrc; i++) {
		bool two = e.src[i].src.s_addr == inet_addr("10.0.0.2");

		assert_int_equal(e.src[i].packets, two ? 96 : 100);
		assert_int_equal(e.src[i].seq.lost, two ? 4 : 0);
	}
	assert_int_equal(cap_engine_finish(&e), 0);
	uint64_t first = 99;

	snprintf(path, sizeof(path), "%s/10.0.0.2-239.1.1.2-5000.pcap", tmpdir);
	assert_int_equal(count_pcap(path, &first), 96);
	assert_int_equal(first, 0);
	struct stat st;

	/* raw: the payload after the 64-byte header; hdr: 42 + 64 bytes each */
	snprintf(path, sizeof(path), "%s/10.0.0.1-239.1.1.1-5000.raw", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 100 * (200 - 64));
	snprintf(path, sizeof(path), "%s/10.0.0.1-239.1.1.1-5000.hdr", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 100 * 106);
	snprintf(path, sizeof(path), "%s/capture.json", tmpdir);
	assert_int_equal(stat(path, &st), 0);
}

/* Split receive (as `ud` hands it): headers and payload in two buffers. */
static void test_engine_split(void **state)
{
	struct cap_opts o;
	struct cap_engine e;
	char err[512], path[600];
	uint8_t b[2048];

	(void)state;
	assert_int_equal(parse("packet -i lo -g 239.2.2.2:6000 -o DIR --preset seed -q", &o, err, sizeof(err)), 0);
	assert_int_equal(cap_engine_init(&e, &o, "host", &no_stop), 0);
	for (uint64_t s = 0; s < 20; s++) {
		size_t n = build(b, "10.0.0.9", "239.2.2.2", 6000, s * 2, 500);
		struct cap_pkt p = { .hdr = b, .hdr_len = 106, .pay = b + 106, .pay_len = n - 106, .wire_len = n,
				     .ts_ns = 123456789 };

		assert_int_equal(cap_engine_packet(&e, &p), 0);
	}
	assert_int_equal(e.src[0].seq.lost, 19);   /* every odd number */
	assert_int_equal(cap_engine_finish(&e), 0);
	snprintf(path, sizeof(path), "%s/10.0.0.9-239.2.2.2-6000.pcap", tmpdir);
	assert_int_equal(count_pcap(path, NULL), 20);
}

/* A file that cannot grow: the write fails with its errno, the capture
 * stops, and the file keeps whole records only. */
static void test_out_disk_full(void **state)
{
	struct cap_out out;
	uint8_t frame[1000] = { 0 };

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	assert_int_equal(cap_out_open(&out, "/dev/full", DLT_EN10MB, 65535, 2000, 1), -1);
	assert_int_equal(errno, ENOSPC);
	/* a plain file: records commit; a pcap keeps counting */
	char path[600];

	snprintf(path, sizeof(path), "%s/full.pcap", tmpdir);
	assert_int_equal(cap_out_open(&out, path, DLT_EN10MB, 65535, 2000, 1), 0);
	for (int i = 0; i < 200; i++) {
		cap_out_pcap(&out, 123456789, frame, sizeof(frame), sizeof(frame));
		assert_int_equal(cap_out_commit(&out, 0), 0);
	}
	assert_int_equal(cap_out_close(&out), 0);
	assert_int_equal(count_pcap(path, NULL), 200);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* O_DIRECT and buffered files hold the same bytes: records of every size
 * across block edges, forced flushes between (the tail written buffered,
 * then rewritten by the next block), pcap and byte files alike. */
static void test_out_direct_same_bytes(void **state)
{
	struct cap_out d, b, dr, br;
	uint8_t frame[3000];
	char pd[600], pb[600], rd[600], rb[600];
	unsigned seed = 12345;
	uint64_t want_bytes = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(frame); i++)
		frame[i] = (uint8_t)(i * 7 + 3);
	snprintf(pd, sizeof(pd), "%s/direct.pcap", tmpdir);
	snprintf(pb, sizeof(pb), "%s/buffered.pcap", tmpdir);
	snprintf(rd, sizeof(rd), "%s/direct.raw", tmpdir);
	snprintf(rb, sizeof(rb), "%s/buffered.raw", tmpdir);
	assert_int_equal(cap_out_open(&d, pd, DLT_EN10MB, 65535, 4000, 1), 0);
	assert_int_equal(cap_out_open(&b, pb, DLT_EN10MB, 65535, 4000, 0), 0);
	assert_int_equal(cap_out_open(&dr, rd, -1, 65535, 4000, 1), 0);
	assert_int_equal(cap_out_open(&br, rb, -1, 65535, 4000, 0), 0);
	assert_false(cap_out_direct(&b));
	if (!cap_out_direct(&d))
		print_message("# O_DIRECT refused under %s: both files buffered\n", tmpdir);
	for (int i = 0; i < 3000; i++) {
		size_t n = 60 + rand_r(&seed) % 2900;
		int force = rand_r(&seed) % 97 == 0;

		cap_out_pcap(&d, 123456789, frame, n, n + 4);
		cap_out_pcap(&b, 123456789, frame, n, n + 4);
		cap_out_bytes(&dr, frame + 1, n - 1);
		cap_out_bytes(&br, frame + 1, n - 1);
		want_bytes += n - 1;
		assert_int_equal(cap_out_commit(&d, force), 0);
		assert_int_equal(cap_out_commit(&b, force), 0);
		assert_int_equal(cap_out_commit(&dr, force), 0);
		assert_int_equal(cap_out_commit(&br, force), 0);
	}
	int direct = cap_out_direct(&d);

	assert_int_equal(cap_out_close(&d), 0);
	assert_int_equal(cap_out_close(&b), 0);
	assert_int_equal(cap_out_close(&dr), 0);
	assert_int_equal(cap_out_close(&br), 0);
	assert_int_equal(d.direct_io, direct);
	assert_int_equal(count_pcap(pd, NULL), 3000);
	for (int k = 0; k < 2; k++) {
		size_t la, lb;
		char *a = slurp(k ? rd : pd, &la), *c = slurp(k ? rb : pb, &lb);

		assert_int_equal(la, lb);
		assert_memory_equal(a, c, la);
		if (k)
			assert_int_equal(la, want_bytes);
		free(a);
		free(c);
	}
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_capture.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_gaps_and_late),
		cmocka_unit_test(test_seq_wraps_at_width),
		cmocka_unit_test(test_seq_read_widths),
		cmocka_unit_test(test_frame_parse),
		cmocka_unit_test(test_frame_from_grh),
		cmocka_unit_test(test_opts_good),
		cmocka_unit_test(test_opts_bad),
		cmocka_unit_test(test_gpu_refusal),
		cmocka_unit_test(test_engine_sources_and_loss),
		cmocka_unit_test(test_engine_split),
		cmocka_unit_test(test_out_disk_full),
		cmocka_unit_test(test_out_direct_same_bytes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
