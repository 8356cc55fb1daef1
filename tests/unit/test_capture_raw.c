/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmacap's `raw` and `sniffer` receive path (capture/raw_steer.c) over a
 * fake device (fake_raw_verbs.h), since RAW_PACKET QPs and flow steering
 * exist only on mlx4/mlx5: the flows requested (MAC, IPv4, UDP port), one
 * QP per (group x source) on one shared CQ, split receives put back
 * together, per-source files and sequence loss, the CQE stamps in ns (and
 * the host clock when the device cannot stamp, said in capture.json),
 * receive-queue starvation counted, a SIGINT-style stop writing every
 * completion, and a refused flow stopping before anything is written. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <jansson.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "fake_raw_verbs.h"
#include "stderr_capture.h"
#include "capture/opts.h"

static char tmpdir[64];
static char sysfs[96];    /* the fake device's counters */
static volatile sig_atomic_t stop_flag;
static struct fake_raw fake;
static const char *const netdevs[] = { "fakenet0" };

/* argv from a string; "DIR" is the test's output directory. */
static void parse(const char *line, struct cap_opts *o)
{
	static char buf[512];
	char *argv[40], err[256];
	int argc = 0;

	snprintf(buf, sizeof(buf), "rdmacap %s", line);
	for (char *t = strtok(buf, " "); t && argc < 39; t = strtok(NULL, " "))
		argv[argc++] = strcmp(t, "DIR") ? t : tmpdir;
	argv[argc] = NULL;
	if (cap_opts_parse(argc, argv, o, err, sizeof(err)))
		fail_msg("%s: %s", line, err);
}

/* A frame as a sender puts it on the wire: Ethernet to the group's MAC,
 * IPv4, UDP, then the seed's header (64-bit big-endian sequence number). */
static void add_frame(const char *src, const char *group, uint16_t port, uint64_t seq, size_t len)
{
	struct fr_frame *f = &FR->frames[FR->nframes++];
	struct in_addr g, s;
	uint8_t *b = f->buf;

	assert_true(FR->nframes <= FR_FRAMES && len <= sizeof(f->buf) && len >= 106);
	inet_pton(AF_INET, group, &g);
	inet_pton(AF_INET, src, &s);
	memset(b, 0, len);
	cap_raw_group_mac(g, b);
	memcpy(b + 6, "\x02\x00\x00\x00\x00\x07", 6);
	b[12] = 0x08;
	b[14] = 0x45;
	b[16] = (uint8_t)((len - 14) >> 8);
	b[17] = (uint8_t)(len - 14);
	b[22] = 1;
	b[23] = 17;
	memcpy(b + 26, &s, 4);
	memcpy(b + 30, &g, 4);
	b[34] = 0x30;
	b[36] = (uint8_t)(port >> 8);
	b[37] = (uint8_t)port;
	b[38] = (uint8_t)((len - 34) >> 8);
	b[39] = (uint8_t)(len - 34);
	for (int i = 0; i < 8; i++)
		b[42 + i] = (uint8_t)(seq >> (56 - 8 * i));
	for (size_t i = 106; i < len; i++)
		b[i] = (uint8_t)(i * 7 + seq);  /* payload bytes that show a bad split */
	f->len = len;
}

static json_t *summary(void)
{
	char path[128];
	json_error_t je;
	json_t *j;

	snprintf(path, sizeof(path), "%s/capture.json", tmpdir);
	j = json_load_file(path, 0, &je);
	if (!j)
		fail_msg("%s: %s", path, je.text);
	return j;
}

static json_t *source_of(json_t *j, const char *src, const char *group)
{
	size_t i;
	json_t *s;

	json_array_foreach(json_object_get(j, "sources"), i, s)
		if (!strcmp(json_string_value(json_object_get(s, "source")), src) &&
		    !strcmp(json_string_value(json_object_get(s, "group")), group))
			return s;
	fail_msg("no source %s group %s in capture.json", src, group);
	return NULL;
}

static long long jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		fail_msg("capture.json: no integer '%s'", key);
	return json_integer_value(v);
}

static long long drop(json_t *j, const char *key)
{
	return jint(json_object_get(j, "drops"), key);
}

/* The records of one pcap: each compared with the script's frame it
 * came from (same bytes), its stamp returned in ts[]. */
static int read_pcap(const char *name, uint64_t *ts, const struct fr_frame **want, int nwant)
{
	char path[160], eb[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	pcap_t *p;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, eb);
	if (!p)
		fail_msg("%s: %s", path, eb);
	while (pcap_next_ex(p, &h, &d) == 1) {
		assert_true(n < nwant);
		assert_int_equal(h->caplen, want[n]->len);
		assert_memory_equal(d, want[n]->buf, want[n]->len);
		ts[n++] = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
	}
	pcap_close(p);
	return n;
}

static int run(const struct cap_opts *o)
{
	struct ibv_context *ctx = &FR->vctx.context;

	return cap_raw_capture(&ctx, netdevs, 1, o, &stop_flag);
}

static void all_released(int nqp)
{
	assert_int_equal(FR->nqp, nqp);
	for (int q = 0; q < nqp; q++)
		assert_true(FR->qp[q].destroyed);
	assert_int_equal(FR->destroyed_flows, FR->nflow);
	assert_int_equal(FR->destroyed_cq, FR->ncq);
	assert_int_equal(FR->mr_freed, FR->nmr);
	assert_int_equal(FR->pd_freed, 1);
}

/* 2 groups x 2 sources: four QPs on one CQ, each with the rule of its pair. */
static void test_flow_specs(void **state)
{
	static const char *const grp[] = { "239.1.2.3", "239.200.1.130" };
	static const char *const src[] = { "10.0.0.1", "10.0.0.2" };
	static const uint16_t port[] = { 5000, 5001 };
	struct cap_opts o;

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	parse("raw -d mlx5_fake -g 239.1.2.3:5000 -g 239.200.1.130:5001 -s 10.0.0.1 -s 10.0.0.2 -o DIR "
	      "--slots 16 -q", &o);
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->nqp, 4);
	assert_int_equal(FR->ncq, 1);
	assert_int_equal(FR->nflow, 4);
	for (int q = 0; q < 4; q++) {
		const struct fr_qp *p = &FR->qp[q];
		const struct cap_raw_flow *f = &p->flow;
		struct in_addr g, s;

		inet_pton(AF_INET, grp[q / 2], &g);
		inet_pton(AF_INET, src[q % 2], &s);
		assert_int_equal(p->port, 1);
		assert_int_equal(p->tail - p->head, 16);   /* every slot posted */
		assert_int_equal(f->attr.type, IBV_FLOW_ATTR_NORMAL);
		assert_int_equal(f->attr.num_of_specs, 3);
		assert_int_equal(f->attr.size, sizeof(*f));
		assert_int_equal(f->attr.port, 1);
		assert_int_equal(f->eth.type, IBV_FLOW_SPEC_ETH);
		assert_int_equal(f->eth.val.ether_type, htons(0x0800));
		assert_int_equal(f->ip.type, IBV_FLOW_SPEC_IPV4);
		assert_int_equal(f->ip.val.dst_ip, g.s_addr);
		assert_int_equal(f->ip.mask.dst_ip, 0xffffffff);
		assert_int_equal(f->ip.val.src_ip, s.s_addr);
		assert_int_equal(f->ip.mask.src_ip, 0xffffffff);
		assert_int_equal(f->udp.type, IBV_FLOW_SPEC_UDP);
		assert_int_equal(f->udp.val.dst_port, htons(port[q / 2]));
		assert_int_equal(f->udp.mask.dst_port, 0xffff);
	}
	/* 239.1.2.3 -> 01:00:5e:01:02:03; 239.200.1.130 keeps its low 23 bits */
	assert_memory_equal(FR->qp[0].flow.eth.val.dst_mac, "\x01\x00\x5e\x01\x02\x03", 6);
	assert_memory_equal(FR->qp[2].flow.eth.val.dst_mac, "\x01\x00\x5e\x48\x01\x82", 6);
	assert_memory_equal(FR->qp[2].flow.eth.mask.dst_mac, "\xff\xff\xff\xff\xff\xff", 6);
	assert_string_equal(FR->igmp_netdev, "fakenet0");
	assert_int_equal(FR->igmp_joins, 2);
	all_released(4);
}

/* Any source: one QP per group, the source left unmatched. */
static void test_flow_any_source(void **state)
{
	struct cap_opts o;

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	parse("raw -d mlx5_fake -g 239.1.1.1 -o DIR --slots 16 -q", &o);
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->nqp, 1);
	assert_int_equal(FR->qp[0].flow.ip.mask.src_ip, 0);
	assert_int_equal(FR->qp[0].flow.udp.mask.dst_port, 0);  /* no port given: any */
	all_released(1);
}

/* Interleaved streams: each source's packets in its own files, whole
 * (headers and payload from two SGEs), in order, stamped by the CQE. */
static void test_sources_loss_and_stamps(void **state)
{
	static const char *const src[] = { "10.0.0.1", "10.0.0.2" };
	const struct fr_frame *want[4][16];
	uint64_t ts[16];
	int nwant[4] = { 0 };
	struct cap_opts o;
	json_t *j;

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	FR->stamps = true;
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -g 239.1.1.2:5000 -s 10.0.0.1 -s 10.0.0.2 -o DIR "
	      "--preset seed --slots 32 -f pcap,raw,hdr -q", &o);
	for (uint64_t seq = 0; seq < 10; seq++)
		for (int k = 0; k < 4; k++) {
			/* 10.0.0.2 -> 239.1.1.2 skips 4 and 7: two lost */
			if (k == 3 && (seq == 4 || seq == 7))
				continue;
			add_frame(src[k % 2], k < 2 ? "239.1.1.1" : "239.1.1.2", 5000, seq, 600 + 100 * (size_t)k);
		}
	add_frame("10.0.0.9", "239.1.1.1", 5000, 0, 300);  /* no rule: the NIC drops it */
	add_frame("10.0.0.1", "239.1.1.1", 6000, 0, 300);  /* another port: same */
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->missed, 2);
	assert_int_equal(FR->no_recv, 0);
	assert_true(FR->cq_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	for (unsigned i = 0; i < FR->nframes; i++)
		if (FR->frames[i].qp >= 0)
			want[FR->frames[i].qp][nwant[FR->frames[i].qp]++] = &FR->frames[i];
	assert_int_equal(nwant[0] + nwant[1] + nwant[2] + nwant[3], 38);
	j = summary();
	assert_string_equal(json_string_value(json_object_get(j, "timestamps")), "hardware");
	assert_int_equal(jint(j, "packets"), 38);
	assert_int_equal(jint(j, "lost"), 2);
	assert_int_equal(jint(source_of(j, "10.0.0.2", "239.1.1.2"), "lost"), 2);
	assert_int_equal(jint(source_of(j, "10.0.0.2", "239.1.1.2"), "packets"), 8);
	assert_int_equal(jint(source_of(j, "10.0.0.1", "239.1.1.1"), "lost"), 0);
	assert_int_equal(drop(j, "starved"), 0);
	json_decref(j);
	/* QP q holds (group q / 2, source q % 2): its file has its frames, in order */
	static const char *const file[4] = { "10.0.0.1-239.1.1.1-5000", "10.0.0.2-239.1.1.1-5000",
					     "10.0.0.1-239.1.1.2-5000", "10.0.0.2-239.1.1.2-5000" };
	for (int q = 0; q < 4; q++) {
		char name[64], path[160];
		struct stat st;

		snprintf(name, sizeof(name), "%s.pcap", file[q]);
		assert_int_equal(read_pcap(name, ts, want[q], nwant[q]), nwant[q]);
		/* 1 GHz: the stamps are the NIC's ticks, one ns each, from the anchor */
		for (int i = 1; i < nwant[q]; i++)
			assert_int_equal(ts[i] - ts[0], want[q][i]->ticks - want[q][0]->ticks);
		snprintf(path, sizeof(path), "%s/%s.raw", tmpdir, file[q]);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, (off_t)nwant[q] * (off_t)(want[q][0]->len - 106));
		snprintf(path, sizeof(path), "%s/%s.hdr", tmpdir, file[q]);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_size, (off_t)nwant[q] * 106);
	}
	all_released(4);
}

/* No stamps, or no way to anchor them: the host clock, and the files say so. */
static void host_clock_case(bool stamps, int rt_err, int cq_ts_err)
{
	struct cap_opts o;
	json_t *j;

	char oob[256];

	fake_raw_new(&fake, &stop_flag, NULL);  /* and no out_of_buffer counter */
	snprintf(oob, sizeof(oob), "%s/class/infiniband/mlx5_fake/ports/1/hw_counters/out_of_buffer", sysfs);
	unlink(oob);
	FR->stamps = stamps;
	FR->rt_err = rt_err;
	FR->cq_ts_err = cq_ts_err;
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -o DIR --preset seed --slots 16 -q", &o);
	for (uint64_t s = 0; s < 5; s++)
		add_frame("10.0.0.1", "239.1.1.1", 5000, s, 200);
	uint64_t before = cap_wall_ns();

	assert_int_equal(run(&o), 0);
	assert_false(FR->cq_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	j = summary();
	assert_string_equal(json_string_value(json_object_get(j, "timestamps")), "host");
	assert_int_equal(jint(j, "packets"), 5);
	assert_int_equal(drop(j, "device_out_of_buffer"), 0);
	json_decref(j);
	const struct fr_frame *want[5];
	uint64_t ts[5];

	for (int i = 0; i < 5; i++)
		want[i] = &FR->frames[i];
	assert_int_equal(read_pcap("10.0.0.1-239.1.1.1-5000.pcap", ts, want, 5), 5);
	assert_true(ts[0] >= before && ts[4] <= cap_wall_ns());
	all_released(1);
}

static void test_host_clock(void **state)
{
	(void)state;
	host_clock_case(false, 0, 0);            /* rxe-like: no mask, no clock */
	host_clock_case(true, EOPNOTSUPP, 0);    /* stamps, clock unreadable */
	host_clock_case(true, 0, EOPNOTSUPP);    /* stamps, CQ with them refused */
}

/* A burst that leaves a QP below its low water mark (16 / 8 = 2 receives)
 * is starvation; a larger one overflows it: the NIC drops what found no
 * receive, and the sequence numbers show exactly that many lost. */
static void starvation_case(unsigned burst, unsigned nframes, long long starved, unsigned nic_drops,
			    long long lost)
{
	struct cap_opts o;
	json_t *j;

	fake_raw_new(&fake, &stop_flag, sysfs);
	FR->burst = burst;
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -o DIR --preset seed --slots 16 -q", &o);
	for (uint64_t s = 0; s < nframes; s++)
		add_frame("10.0.0.1", "239.1.1.1", 5000, s, 200);
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->no_recv, nic_drops);
	j = summary();
	assert_int_equal(drop(j, "starved"), starved);
	/* the device's own count of what found no receive, from its counter */
	assert_int_equal(drop(j, "device_out_of_buffer"), nic_drops);
	assert_int_equal(jint(j, "packets"), nframes - nic_drops);
	/* a drop at the end of the stream leaves no gap behind it */
	assert_int_equal(jint(j, "lost"), lost);
	json_decref(j);
	all_released(1);
}

static void test_starvation(void **state)
{
	(void)state;
	starvation_case(4, 40, 0, 0, 0);     /* 4 of 16 per poll: never low */
	starvation_case(15, 30, 2, 0, 0);    /* two bursts of 15: 1 left each time */
	starvation_case(14, 28, 0, 0, 0);    /* 2 left: at the mark, not below */
	/* 4 of each 20 find no receive: 16..19 a gap, 36..39 at the end unseen */
	starvation_case(20, 40, 2, 8, 4);
}

/* SIGINT while completions wait in the CQ (more than one poll takes):
 * every one is written, the files are whole, nothing after the stop is
 * received. */
static void test_sigint_flushes(void **state)
{
	static const char *const grp[] = { "239.1.1.1", "239.1.1.2" };
	const struct fr_frame *want[2][200];
	uint64_t ts[200];
	struct cap_opts o;
	json_t *j;

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	FR->burst = 300;
	FR->stop_after = 300;
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -g 239.1.1.2:5000 -o DIR --preset seed --slots 200 -q", &o);
	for (uint64_t s = 0; s < 400; s++)
		add_frame("10.0.0.1", grp[s % 2], 5000, s / 2, 300);
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->completed, 300);
	assert_int_equal(FR->ch, FR->ct);  /* the CQ was drained */
	j = summary();
	assert_int_equal(jint(j, "packets"), 300);
	assert_int_equal(jint(j, "lost"), 0);
	json_decref(j);
	for (int g = 0; g < 2; g++) {
		char name[64];

		for (int i = 0; i < 150; i++)
			want[g][i] = &FR->frames[2 * i + g];
		snprintf(name, sizeof(name), "10.0.0.1-%s-5000.pcap", grp[g]);
		assert_int_equal(read_pcap(name, ts, want[g], 150), 150);
	}
	all_released(2);
}

/* A RoCE v2 RC SEND frame from 10.0.0.1 to 10.0.0.2, dest QP 0x11, psn. */
static void add_roce(uint32_t psn)
{
	add_frame("10.0.0.1", "10.0.0.2", 4791, 0, 120);
	uint8_t *b = FR->frames[FR->nframes - 1].buf;

	memcpy(b, "\x02\x00\x00\x00\x00\x08", 6);  /* unicast */
	memset(b + 42, 0, 12);
	b[42] = 0x04;                      /* RC SEND only */
	b[44] = 0xff;
	b[45] = 0xff;                      /* P_Key */
	b[49] = 0x11;                      /* dest QP */
	b[51] = (uint8_t)(psn >> 16);
	b[52] = (uint8_t)(psn >> 8);
	b[53] = (uint8_t)psn;
}

/* sniffer: one QP, one SNIFFER flow, every frame in, PSNs accounted. */
static void test_sniffer(void **state)
{
	struct cap_opts o;
	json_t *j, *psn;

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	FR->stamps = true;
	parse("sniffer -d mlx5_fake -o DIR --slots 16 -q", &o);
	for (uint32_t p = 100; p < 120; p++)
		if (p != 110)
			add_roce(p);
	assert_int_equal(run(&o), 0);
	assert_int_equal(FR->nqp, 1);
	assert_int_equal(FR->qp[0].flow.attr.type, IBV_FLOW_ATTR_SNIFFER);
	assert_int_equal(FR->qp[0].flow.attr.num_of_specs, 0);
	assert_int_equal(FR->qp[0].flow.attr.size, sizeof(struct ibv_flow_attr));
	assert_int_equal(FR->igmp_joins, 0);
	j = summary();
	assert_string_equal(json_string_value(json_object_get(j, "backend")), "sniffer");
	assert_string_equal(json_string_value(json_object_get(j, "timestamps")), "hardware");
	assert_int_equal(jint(j, "packets"), 19);
	psn = json_object_get(j, "psn");
	assert_non_null(psn);
	assert_int_equal(jint(psn, "gaps"), 1);
	assert_int_equal(jint(psn, "gap_psns"), 1);
	assert_int_equal(json_array_size(json_object_get(psn, "flows")), 1);
	json_decref(j);
	all_released(1);
}

/* The device refuses the flow or the QP: the errno named, exit 3, no file. */
static void refused_case(int flow_err, int qp_err, const char *want)
{
	struct stderr_capture cap;
	struct cap_opts o;
	char out[2048], path[128];

	fake_raw_new(&fake, &stop_flag, sysfs);
	FR->flow_err = flow_err;
	FR->qp_err = qp_err;
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -o DIR --slots 16 -q", &o);
	snprintf(path, sizeof(path), "%s/capture.json", tmpdir);
	unlink(path);
	stderr_capture_begin(&cap);
	int rc = run(&o);

	stderr_capture_end(&cap, out, sizeof(out));
	assert_int_equal(rc, 3);
	if (!strstr(out, want))
		fail_msg("'%s' not in: %s", want, out);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(FR->destroyed_cq, 1);
	assert_int_equal(FR->pd_freed, 1);
}

static void test_refusals(void **state)
{
	(void)state;
	refused_case(EOPNOTSUPP, 0, "cannot steer group 239.1.1.1 port 5000 source any to its QP: EOPNOTSUPP");
	refused_case(EPERM, 0, "EPERM");
	refused_case(0, EPERM, "cannot create a RAW_PACKET QP: EPERM");
}

/* A header that leaves no room in a frame: refused before any device call. */
static void test_header_too_long(void **state)
{
	struct stderr_capture cap;
	struct cap_opts o;
	char out[1024];

	(void)state;
	fake_raw_new(&fake, &stop_flag, sysfs);
	parse("raw -d mlx5_fake -g 239.1.1.1:5000 -o DIR --app-header 1500 -q", &o);
	stderr_capture_begin(&cap);
	int rc = run(&o);

	stderr_capture_end(&cap, out, sizeof(out));
	assert_int_equal(rc, 2);
	assert_non_null(strstr(out, "header length 1500 larger than the frames of fakenet0"));
	assert_int_equal(FR->nqp, 0);
}

static int reset(void **state)
{
	(void)state;
	stop_flag = 0;
	return 0;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_capture_raw.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(sysfs, sizeof(sysfs), "%s/sys", tmpdir);
	cap_raw_sysfs = sysfs;
	return 0;
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
		cmocka_unit_test_setup(test_flow_specs, reset),
		cmocka_unit_test_setup(test_flow_any_source, reset),
		cmocka_unit_test_setup(test_sources_loss_and_stamps, reset),
		cmocka_unit_test_setup(test_host_clock, reset),
		cmocka_unit_test_setup(test_starvation, reset),
		cmocka_unit_test_setup(test_sigint_flushes, reset),
		cmocka_unit_test_setup(test_sniffer, reset),
		cmocka_unit_test_setup(test_refusals, reset),
		cmocka_unit_test_setup(test_header_too_long, reset),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
