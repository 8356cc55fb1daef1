/* SPDX-License-Identifier: BSD-2-Clause */
/* capture/roce: frames built here byte by byte (Ethernet / IPv4 or IPv6 /
 * UDP 4791 / BTH ...), decoded; truncated and garbage frames refused; flows
 * with a retransmission and NAKs; a pcap file written with libpcap (ns) and
 * read back; a synthetic trace joined with it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "capture/roce/roce_join.h"
#include "capture/roce/roce_report.h"
#include "plugin/recorder/wrtrace_plot.h"

struct frame {
	uint8_t b[2048];
	size_t n;
};

static void put(struct frame *f, const void *p, size_t n)
{
	memcpy(f->b + f->n, p, n);
	f->n += n;
}

static void put8(struct frame *f, uint8_t v) { put(f, &v, 1); }
static void put16(struct frame *f, uint16_t v) { put8(f, (uint8_t)(v >> 8)); put8(f, (uint8_t)v); }
static void put24(struct frame *f, uint32_t v) { put8(f, (uint8_t)(v >> 16)); put16(f, (uint16_t)v); }
static void put32(struct frame *f, uint32_t v) { put16(f, (uint16_t)(v >> 16)); put16(f, (uint16_t)v); }

/* Extension headers to append after the BTH. */
struct ext {
	bool reth, aeth, imm;
	uint64_t va;
	uint32_t rkey, len;
	uint8_t syndrome;
	uint32_t msn;
};

/* IPv4 a.b.c.SRC -> a.b.c.DST, RoCE v2 with opcode op to dqp at psn. */
static struct frame roce4(uint8_t src, uint8_t dst, uint8_t op, uint32_t dqp, uint32_t psn,
			  const struct ext *x, uint32_t payload, bool ack_req)
{
	struct frame f = { .n = 0 };
	size_t ib = 12 + (x && x->reth ? 16 : 0) + (x && x->aeth ? 4 : 0) + (x && x->imm ? 4 : 0) +
		    payload + 4;
	uint8_t mac[12] = { 2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src };

	put(&f, mac, 12);
	put16(&f, 0x0800);
	put8(&f, 0x45); put8(&f, 0); put16(&f, (uint16_t)(20 + 8 + ib));
	put16(&f, 0); put16(&f, 0x4000); put8(&f, 64); put8(&f, 17); put16(&f, 0);
	put8(&f, 198); put8(&f, 18); put8(&f, 0); put8(&f, src);
	put8(&f, 198); put8(&f, 18); put8(&f, 0); put8(&f, dst);
	put16(&f, 49152); put16(&f, 4791); put16(&f, (uint16_t)(8 + ib)); put16(&f, 0);
	put8(&f, op); put8(&f, 0); put16(&f, 0xffff); put8(&f, 0); put24(&f, dqp);
	put8(&f, ack_req ? 0x80 : 0); put24(&f, psn);
	if (x && x->reth) {
		put32(&f, (uint32_t)(x->va >> 32)); put32(&f, (uint32_t)x->va);
		put32(&f, x->rkey); put32(&f, x->len);
	}
	if (x && x->aeth) {
		put8(&f, x->syndrome); put24(&f, x->msn);
	}
	if (x && x->imm)
		put32(&f, 0x12345678);
	for (uint32_t i = 0; i < payload; i++)
		put8(&f, (uint8_t)i);
	put32(&f, 0xdeadbeef);      /* ICRC: not checked */
	while (f.n < 60)
		put8(&f, 0);            /* Ethernet padding */
	return f;
}

static void test_decode_write_first(void **state)
{
	struct ext x = { .reth = true, .va = 0x1122334455667788ull, .rkey = 0xabcd, .len = 8192 };
	struct frame f = roce4(2, 1, 0x06, 0x11, 0x123456, &x, 1024, false);
	struct roce_pkt k;
	char name[32];

	(void)state;
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_OK);
	assert_int_equal(k.ip_version, 4);
	assert_int_equal(k.dest_qp, 0x11);
	assert_int_equal(k.psn, 0x123456);
	assert_true(k.has_reth);
	assert_true(k.va == 0x1122334455667788ull);
	assert_int_equal(k.rkey, 0xabcd);
	assert_int_equal(k.dma_len, 8192);
	assert_int_equal(k.payload, 1024);
	assert_int_equal(k.cls, ROCE_REQUEST);
	assert_string_equal(roce_opcode_name(k.opcode, name, sizeof(name)), "RC_WRITE_FIRST");
	assert_true(roce_op_first(k.opcode));
	assert_false(roce_op_last(k.opcode));
}

static void test_decode_aeth_kinds(void **state)
{
	static const struct { uint8_t syn; enum roce_aeth_kind k; } cases[] = {
		{ 0x1f, ROCE_ACK }, { 0x20 | 14, ROCE_NAK_RNR }, { 0x60, ROCE_NAK_PSN_SEQ },
		{ 0x61, ROCE_NAK_INVALID }, { 0x62, ROCE_NAK_ACCESS }, { 0x63, ROCE_NAK_OPERATION },
		{ 0x64, ROCE_NAK_OTHER },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ext x = { .aeth = true, .syndrome = cases[i].syn, .msn = 7 };
		struct frame f = roce4(1, 2, 0x11, 0x22, 100, &x, 0, false);
		struct roce_pkt k;

		assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_OK);
		assert_int_equal(k.cls, ROCE_RESPONSE);
		assert_true(k.has_aeth);
		assert_int_equal(k.msn, 7);
		assert_int_equal(roce_aeth_kind(k.syndrome), cases[i].k);
	}
	assert_int_equal(roce_rnr_wait_us(0x20 | 14), 1280);
	assert_int_equal(roce_rnr_wait_us(0x20), 655360);
}

static void test_decode_cnp_and_refusals(void **state)
{
	struct frame f = roce4(1, 2, 0x81, 0x22, 0, NULL, 16, false);   /* CNP: 16 reserved bytes */
	struct frame w = roce4(1, 2, 0x06, 0x22, 0, NULL, 0, false);    /* WRITE_FIRST without its RETH */
	struct roce_pkt k;

	(void)state;
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_OK);
	assert_int_equal(k.cls, ROCE_CNP);
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, w.b, w.n, (uint32_t)w.n, &k), ROCE_MALFORMED);
	/* cut inside the BTH / inside the headers: truncated, not malformed */
	f = roce4(2, 1, 0x04, 0x11, 5, NULL, 100, false);
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, 14 + 20 + 8 + 6, (uint32_t)f.n, &k), ROCE_TRUNCATED);
	/* a frame cut in its payload (a snap length) still decodes, with the
	 * payload length the UDP header gives */
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, 14 + 20 + 8 + 12 + 40, (uint32_t)f.n, &k), ROCE_OK);
	assert_int_equal(k.payload, 100);
	/* other UDP port, ARP, a too-short frame, an unknown link type */
	f.b[14 + 20 + 3] = 0x50;
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_NOT_ROCE);
	f.b[12] = 0x08; f.b[13] = 0x06;
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_NOT_ROCE);
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, 10, 10, &k), ROCE_NOT_ROCE);
	assert_int_equal(roce_decode(247, f.b, f.n, (uint32_t)f.n, &k), ROCE_MALFORMED);
	/* a UDP length beyond the IP packet */
	f = roce4(2, 1, 0x04, 0x11, 5, NULL, 100, false);
	f.b[14 + 20 + 4] = 0xff;
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_MALFORMED);
	/* an unknown RC opcode (0x15 is reserved) */
	f = roce4(2, 1, 0x15, 0x11, 5, NULL, 0, false);
	assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_MALFORMED);
}

static void test_psn_arith(void **state)
{
	(void)state;
	assert_int_equal(roce_psn_diff(0x000002, 0xfffffe), 4);
	assert_int_equal(roce_psn_diff(0xfffffe, 0x000002), -4);
	assert_int_equal(roce_psn_add(0xffffff, 2), 1);
	assert_int_equal(roce_psn_dist(0x000002, 0xfffffe), 4);
	assert_int_equal(roce_psn_dist(9013641, 88), 9013553);   /* past 2^23: diff turns negative */
	assert_int_equal(roce_psn_diff(9013641, 88), 9013553 - 0x1000000);
	assert_int_equal(roce_psn_dist(88, 9013641), 0x1000000 - 9013553);
	assert_int_equal(roce_wr_packets(65536, 4096), 16);
	assert_int_equal(roce_wr_packets(65537, 4096), 17);
	assert_int_equal(roce_wr_packets(0, 4096), 1);
	assert_int_equal(roce_wr_packets(100, 0), 1);
}

/* A sender (198.18.0.2, to QP 0x11) writes 3 messages of 2 packets from
 * PSN 0xfffffe (wrapping); PSN 0x000000 is lost once (gap seen by the
 * receiver's NAK, then resent); node 1 ACKs to QP 0x22. */
static const uint64_t T0 = 1700000000000000000ull;

struct pkt_in {
	struct frame f;
	uint64_t t;
};

static size_t scenario(struct pkt_in *in)
{
	struct ext reth = { .reth = true, .len = 2048, .rkey = 1 };
	struct ext ack = { .aeth = true, .syndrome = 0x1f };
	struct ext nak = { .aeth = true, .syndrome = 0x60 };
	size_t n = 0;

	in[n++] = (struct pkt_in){ roce4(2, 1, 0x06, 0x11, 0xfffffe, &reth, 1024, false), T0 + 1000 };
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x08, 0x11, 0xffffff, NULL, 1024, true), T0 + 2000 };
	in[n++] = (struct pkt_in){ roce4(1, 2, 0x11, 0x22, 0xffffff, &ack, 0, false), T0 + 3000 };
	/* PSN 0 (WRITE_FIRST of message 2) lost before the capture point */
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x08, 0x11, 0x000001, NULL, 1024, true), T0 + 5000 };
	in[n++] = (struct pkt_in){ roce4(1, 2, 0x11, 0x22, 0x000000, &nak, 0, false), T0 + 6000 };
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x06, 0x11, 0x000000, &reth, 1024, false), T0 + 7000 };
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x08, 0x11, 0x000001, NULL, 1024, true), T0 + 8000 };
	in[n++] = (struct pkt_in){ roce4(1, 2, 0x11, 0x22, 0x000001, &ack, 0, false), T0 + 9000 };
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x06, 0x11, 0x000002, &reth, 1024, false), T0 + 10000 };
	in[n++] = (struct pkt_in){ roce4(2, 1, 0x08, 0x11, 0x000003, NULL, 1024, true), T0 + 11000 };
	in[n++] = (struct pkt_in){ roce4(1, 2, 0x11, 0x22, 0x000003, &ack, 0, false), T0 + 12000 };
	return n;
}

static char pcap_path[64];

static void write_pcap(const struct pkt_in *in, size_t n)
{
	pcap_t *p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, 65535, PCAP_TSTAMP_PRECISION_NANO);
	pcap_dumper_t *d;
	int fd;

	snprintf(pcap_path, sizeof(pcap_path), "/tmp/test_roce.XXXXXX");
	fd = mkstemp(pcap_path);

	assert_non_null(p);
	assert_true(fd >= 0);
	close(fd);
	d = pcap_dump_open(p, pcap_path);
	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		struct pcap_pkthdr h = { .caplen = (bpf_u_int32)in[i].f.n, .len = (bpf_u_int32)in[i].f.n };

		h.ts.tv_sec = (time_t)(in[i].t / 1000000000ull);
		h.ts.tv_usec = (suseconds_t)(in[i].t % 1000000000ull);   /* ns in a ns file */
		pcap_dump((u_char *)d, &h, in[i].f.b);
	}
	pcap_dump_close(d);
	pcap_close(p);
}

static void test_flows_from_pcap(void **state)
{
	struct pkt_in in[16];
	size_t n = scenario(in);
	struct roce_capture c;
	const struct roce_flow *q = NULL, *r = NULL;
	char err[256];

	(void)state;
	write_pcap(in, n);
	assert_int_equal(roce_capture_read(pcap_path, &c, err, sizeof(err)), 0);
	assert_true(c.nanosecond);
	assert_int_equal(c.frames, n);
	assert_int_equal(c.roce, n);
	assert_int_equal(c.pmtu, 1024);
	assert_int_equal(c.nflows, 2);
	for (size_t i = 0; i < c.nflows; i++)
		*(c.flows[i].cls == ROCE_REQUEST ? &q : &r) = &c.flows[i];
	assert_non_null(q);
	assert_non_null(r);
	assert_true(c.first_ns == T0 + 1000);   /* ns kept, not rounded to µs */
	assert_int_equal(q->n, 7);
	assert_int_equal(q->start_psn, 0xfffffe);
	assert_int_equal(q->next_psn, 0x000004);
	assert_int_equal(q->gaps, 1);           /* 0xffffff -> 0x000001 jumped over 0 */
	assert_int_equal(q->gap_psns, 1);
	assert_int_equal(q->retransmits, 1);    /* 0x000001 seen again (0x000000 came late, once) */
	assert_int_equal(q->late, 1);
	assert_int_equal(q->missing, 0);
	assert_int_equal(q->retrans_psns.n, 1);
	assert_int_equal(q->retrans_psns.r[0][0], 1);
	assert_int_equal(q->messages, 3);
	assert_int_equal(r->acks, 3);
	assert_int_equal(r->naks[ROCE_NAK_PSN_SEQ], 1);
	assert_true(q->peer == r - c.flows && r->peer == q - c.flows);

	/* the NAK names PSN 0: the packet with that PSN came only after it */
	struct roce_nak_cause cz;

	roce_nak_cause(&c, r, &r->p[1], &cz);
	assert_null(cz.named);
	assert_non_null(cz.latest);
	assert_int_equal(cz.latest->psn, 1);
	roce_capture_free(&c);
}

/* A client trace: 3 WRITEs of 2048 B on QP index 0 (QPN 0x22). */
static void make_trace(struct wrt_trace *t, uint8_t last_status)
{
	struct wrt_run *run = calloc(1, sizeof(*run));

	assert_non_null(run);
	run->meta.num_qps = 1;
	snprintf(run->meta.tool, sizeof(run->meta.tool), "ib_write_bw");
	snprintf(run->meta.qpns, sizeof(run->meta.qpns), "0x22");
	run->meta.msg_size = 2048;
	run->recs = calloc(3, sizeof(*run->recs));
	assert_non_null(run->recs);
	run->n = run->cap = 3;
	for (int i = 0; i < 3; i++) {
		struct wrt_rec *r = &run->recs[i];

		r->qp = 0;
		r->seq = (uint64_t)i;
		r->opcode = PT_PLUGIN_OP_WRITE;
		r->bytes = 2048;
		r->flags = WRT_POSTED | WRT_DONE | WRT_SIGNALED | WRT_CQE;
		/* trace clock: the capture's minus 1 s, posted 500 ns before its packet */
		r->t_post = T0 - 1000000000ull + 500 + (uint64_t)i * 4500;
		r->t_comp = T0 - 1000000000ull + 4000 + (uint64_t)i * 4500;
		r->status = i == 2 ? last_status : 0;
	}
	run->recs[1].t_comp = T0 - 1000000000ull + 9500;
	run->recs[2].t_comp = T0 - 1000000000ull + 12500;
	t->runs = run;
	t->nruns = 1;
}

static const struct roce_join_opts no_opts;

static void test_join(void **state)
{
	struct pkt_in in[16];
	size_t n = scenario(in);
	struct roce_capture c;
	struct wrt_trace t = { 0 };
	struct roce_join j;
	char err[256];

	(void)state;
	write_pcap(in, n);
	assert_int_equal(roce_capture_read(pcap_path, &c, err, sizeof(err)), 0);
	make_trace(&t, 9);
	assert_int_equal(roce_join(&c, &t, &no_opts, &j, err, sizeof(err)), 0);
	assert_int_equal(j.n, 3);
	assert_int_equal(j.found, 3);
	assert_int_equal(j.unfit, 0);
	assert_int_equal(j.missing, 0);
	assert_int_equal(j.failed, 1);
	assert_int_equal(j.w[0].psn_first, 0xfffffe);
	assert_int_equal(j.w[0].psn_last, 0xffffff);
	assert_int_equal(j.w[1].psn_first, 0);
	assert_int_equal(j.w[1].psn_last, 1);
	assert_int_equal(j.w[1].packets, 3);         /* 0x1 twice, 0x0 once */
	assert_int_equal(j.w[1].retransmits, 1);
	assert_int_equal(j.w[1].naks[ROCE_NAK_PSN_SEQ], 1);
	assert_int_equal(j.w[0].t_ack, T0 + 3000);
	assert_int_equal(j.w[1].t_ack, T0 + 9000);
	assert_int_equal(j.w[2].t_ack, T0 + 12000);
	/* the trace runs 1 s behind; WR 1's first packet (PSN 1, at 5000) left
	 * at its post, the others 500 ns after: the tightest offset is 1 s */
	assert_true(j.has_offset);
	assert_true(j.offset_ns == 1000000000ll);
	assert_true(j.offset_lo_ns <= j.offset_hi_ns);
	roce_join_free(&j);

	/* a starting PSN given by the user moves every range */
	struct roce_psn_hint h = { .qpn = 0x22, .psn = 0xffffff };
	struct roce_join_opts ho = { .hints = &h, .nhints = 1 };

	assert_int_equal(roce_join(&c, &t, &ho, &j, err, sizeof(err)), 0);
	assert_int_equal(j.w[0].psn_first, 0xffffff);
	assert_int_equal(j.unfit, 3);   /* ...and the wire says no WR starts on a FIRST */
	roce_join_free(&j);

	/* a QPN absent from the capture: no packets, and why */
	snprintf(t.runs[0].meta.qpns, sizeof(t.runs[0].meta.qpns), "0x99");
	assert_int_equal(roce_join(&c, &t, &no_opts, &j, err, sizeof(err)), 0);
	assert_int_equal(j.missing, 3);
	assert_non_null(strstr(j.why_missing, "0x99"));
	roce_join_free(&j);

	/* the report, text and JSON, names the NAK and the failed WR */
	FILE *f = tmpfile();
	char buf[8192];
	size_t len;
	struct roce_report_opts o = { .trace = &t, .trace_path = "t.csv" };

	snprintf(t.runs[0].meta.qpns, sizeof(t.runs[0].meta.qpns), "0x22");
	assert_int_equal(roce_join(&c, &t, &no_opts, &j, err, sizeof(err)), 0);
	roce_report_text(f, &c, &j, &o);
	assert_int_equal(roce_report_json(f, &c, &j, &o), 0);
	rewind(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "NAK psn_sequence_error"));
	assert_non_null(strstr(buf, "1 with retransmissions, 1 with NAKs, 1 failed"));
	assert_non_null(strstr(buf, "\"failed\": 1"));
	roce_join_free(&j);
	wrt_trace_free(&t);
	roce_capture_free(&c);
	unlink(pcap_path);
}

static void test_bad_files(void **state)
{
	struct roce_capture c;
	char err[256], path[] = "/tmp/test_roce_bad.XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_int_equal(roce_capture_read("/nonexistent/x.pcap", &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/x.pcap"));
	assert_true(write(fd, "not a pcap file at all\n", 23) == 23);
	close(fd);
	assert_int_equal(roce_capture_read(path, &c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, path));
	unlink(path);
}

/* Receive WRs take the incoming messages that consume a receive, in PSN
 * order: a two-packet SEND, then a WRITE (no receive), then a SEND_ONLY. */
static void test_join_recv(void **state)
{
	struct ext ack = { .aeth = true, .syndrome = 0x1f };
	struct ext reth = { .reth = true, .len = 100 };
	struct frame f[] = {
		roce4(2, 1, 0x00, 0x11, 10, NULL, 1024, false),
		roce4(2, 1, 0x02, 0x11, 11, NULL, 100, true),
		roce4(1, 2, 0x11, 0x22, 11, &ack, 0, false),
		roce4(2, 1, 0x0a, 0x11, 12, &reth, 100, true),
		roce4(2, 1, 0x04, 0x11, 13, NULL, 100, true),
		roce4(1, 2, 0x11, 0x22, 13, &ack, 0, false),
	};
	struct roce_capture c = { .path = "mem" };
	struct wrt_run run = { 0 };
	struct wrt_rec recs[2] = { 0 };
	struct wrt_trace t = { .runs = &run, .nruns = 1 };
	struct roce_join_opts local = { .has_local = true, .local_version = 4, .local = { 198, 18, 0, 1 } };
	struct roce_join j;
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct roce_pkt k;

		assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f[i].b, f[i].n, (uint32_t)f[i].n, &k), ROCE_OK);
		assert_int_equal(roce_capture_add(&c, &k, T0 + i * 1000, (uint32_t)i + 1), 0);
	}
	assert_int_equal(roce_capture_finish(&c), 0);
	snprintf(run.meta.qpns, sizeof(run.meta.qpns), "0x11");
	run.meta.num_qps = 1;
	for (int i = 0; i < 2; i++)
		recs[i] = (struct wrt_rec){ .seq = (uint64_t)i, .opcode = PT_PLUGIN_OP_RECV, .bytes = 1124,
					    .t_comp = 5000 + (uint64_t)i * 3000,
					    .flags = WRT_RECV | WRT_DONE | WRT_CQE };
	run.recs = recs;
	run.n = run.cap = 2;
	assert_int_equal(roce_join(&c, &t, &local, &j, err, sizeof(err)), 0);
	assert_int_equal(j.found, 2);
	assert_int_equal(j.w[0].psn_first, 10);
	assert_int_equal(j.w[0].psn_last, 11);
	assert_int_equal(j.w[0].packets, 2);
	assert_int_equal(j.w[0].t_ack, T0 + 2000);
	assert_int_equal(j.w[1].psn_first, 13);
	assert_int_equal(j.w[1].psn_last, 13);
	assert_int_equal(j.w[1].t_ack, T0 + 5000);
	roce_join_free(&j);
	/* the local address of the other end: nothing is incoming there */
	local.local[3] = 2;
	assert_int_equal(roce_join(&c, &t, &local, &j, err, sizeof(err)), 0);
	assert_int_equal(j.found, 0);
	roce_join_free(&j);
	roce_capture_free(&c);
}

/* A retransmission that is not the packet first sent (the lab's rxe resent
 * a 16-packet SEND as a zero-length SEND_ONLY): counted, its frame named. */
static void test_reframed(void **state)
{
	struct ext reth = { .reth = true, .len = 2048 };
	struct ext reth0 = { .reth = true, .len = 0 };
	struct frame f[] = {
		roce4(2, 1, 0x06, 0x11, 5, &reth, 1024, false),
		roce4(2, 1, 0x08, 0x11, 6, NULL, 1024, true),
		roce4(2, 1, 0x0a, 0x11, 5, &reth0, 0, true),     /* PSN 5 again, as WRITE_ONLY of 0 B */
		roce4(2, 1, 0x08, 0x11, 6, NULL, 1024, true),    /* PSN 6 again, the same packet */
	};
	struct roce_capture c = { .path = "mem" };

	(void)state;
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		struct roce_pkt k;

		assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f[i].b, f[i].n, (uint32_t)f[i].n, &k), ROCE_OK);
		assert_int_equal(roce_capture_add(&c, &k, T0 + i, (uint32_t)i + 1), 0);
	}
	assert_int_equal(roce_capture_finish(&c), 0);
	assert_int_equal(c.flows[0].retransmits, 2);
	assert_int_equal(c.flows[0].reframed, 1);
	assert_int_equal(c.flows[0].reframed_frame, 3);
	roce_capture_free(&c);
}

/* A flow whose PSNs jump ahead by more than 2^23 in all (the fuzzer's
 * cases): each jump is ahead of where the flow had come to, so the span
 * runs from the first PSN forward and the PSNs jumped are missing, as
 * rdmacap's live accounting counts them (test_capture_psn.c's
 * test_far_jump); a retransmission and a late PSN inside that span do not
 * move its start, though each lies more than 2^23 past it. The PSN index
 * runs forward from the start. */
static void test_far_jump(void **state)
{
	static const uint32_t psns[] = { 88, 2294514, 2294515, 9013641, 9013641, 9013640 };
	static const uint32_t by_psn[] = { 88, 2294514, 2294515, 9013640, 9013641, 9013641 };
	struct roce_capture c = { .path = "mem" };
	const struct roce_flow *q;

	(void)state;
	for (size_t i = 0; i < sizeof(psns) / sizeof(psns[0]); i++) {
		struct frame f = roce4(2, 1, 0x04, 0x11, psns[i], NULL, 64, false);
		struct roce_pkt k;

		assert_int_equal(roce_decode(ROCE_LINK_ETHERNET, f.b, f.n, (uint32_t)f.n, &k), ROCE_OK);
		assert_int_equal(roce_capture_add(&c, &k, T0 + i, (uint32_t)i + 1), 0);
	}
	assert_int_equal(roce_capture_finish(&c), 0);
	q = &c.flows[0];
	assert_int_equal(q->start_psn, 88);
	assert_int_equal(q->next_psn, 9013642);
	assert_int_equal(q->gaps, 2);
	assert_int_equal(q->gap_psns, 9013550);
	assert_int_equal(q->late, 1);
	assert_int_equal(q->retransmits, 1);
	assert_int_equal(q->missing, 9013549);   /* 9013554 PSNs in the span, 5 seen */
	for (size_t i = 0; i < sizeof(by_psn) / sizeof(by_psn[0]); i++) {
		size_t at;

		assert_int_equal(q->p[q->by_psn[i]].psn, by_psn[i]);   /* forward from 88 */
		assert_int_equal(roce_flow_find_psn(q, by_psn[i], &at), by_psn[i] == 9013641 ? 2 : 1);
		assert_int_equal(at, by_psn[i] == 9013641 ? 4 : i);
	}
	roce_capture_free(&c);
}

/* The plotting shared with wrtrace plot: units that fit, a legend entry
 * only for a drawn series, a title from the run. */
static void test_plot_helpers(void **state)
{
	struct wrt_gp_series s[2] = { { "f", "using 1:2", "send", 3 }, { "f", "using 1:3", "recv", 0 } };
	struct wrt_trace t = { 0 };
	char buf[4096], title[256];
	FILE *f = tmpfile();
	size_t len;

	(void)state;
	assert_string_equal(wrt_time_unit(600e6).name, "ms");
	assert_string_equal(wrt_time_unit(999).name, "ns");
	assert_string_equal(wrt_time_unit(2500).name, "us");
	assert_string_equal(wrt_time_unit(7.1e9).name, "s");
	assert_int_equal(wrt_gp_plot(f, s, 2), 1);
	s[0].count = 0;
	assert_int_equal(wrt_gp_plot(f, s, 2), 0);
	rewind(f);
	len = fread(buf, 1, sizeof(buf) - 1, f);
	buf[len] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "title 'send'"));
	assert_null(strstr(buf, "recv"));
	assert_non_null(strstr(buf, "nothing to draw"));
	make_trace(&t, 0);
	t.runs[0].meta.conn = PT_PLUGIN_CONN_RC;
	t.runs[0].meta.role = PT_PLUGIN_ROLE_CLIENT;
	wrt_run_title(&t, 3, title, sizeof(title));
	assert_string_equal(title, "ib_write_bw RC client, 2048 B, 3 WRs");
	wrt_trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_write_first),
		cmocka_unit_test(test_decode_aeth_kinds),
		cmocka_unit_test(test_decode_cnp_and_refusals),
		cmocka_unit_test(test_psn_arith),
		cmocka_unit_test(test_flows_from_pcap),
		cmocka_unit_test(test_join),
		cmocka_unit_test(test_join_recv),
		cmocka_unit_test(test_reframed),
		cmocka_unit_test(test_far_jump),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_plot_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
