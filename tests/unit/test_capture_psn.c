/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmacap --roce's live PSN accounting (capture/psn.h): in order, wrap,
 * go-back-N after a loss, loss never repaired, a jump past 2^23, READ spans with and without
 * a known path MTU, the window's edge, flows apart, the table's bound, and
 * whole frames through the decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "capture/psn.h"

enum { SEND_ONLY = 0x04, WRITE_FIRST = 0x06, WRITE_MIDDLE = 0x07, WRITE_LAST = 0x08,
       READ_REQ = 0x0c, ACK = 0x11 };

static struct roce_pkt pkt(uint8_t op, uint32_t qp, uint32_t psn)
{
	struct roce_pkt k;

	memset(&k, 0, sizeof(k));
	k.ip_version = 4;
	k.src[0] = 10, k.src[3] = 2;
	k.dst[0] = 10, k.dst[3] = 1;
	k.opcode = op;
	k.dest_qp = qp;
	k.psn = psn & ROCE_PSN_MASK;
	k.cls = (op & 0x1f) == ACK ? ROCE_RESPONSE : ROCE_REQUEST;
	return k;
}

static void feed(struct cap_psn *t, uint8_t op, uint32_t qp, uint32_t psn)
{
	struct roce_pkt k = pkt(op, qp, psn);

	cap_psn_packet(t, &k);
}

static void test_in_order_and_wrap(void **state)
{
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	for (uint32_t i = 0; i < 100; i++)
		feed(&t, SEND_ONLY, 0x11, 0xfffff0 + i);   /* wraps at 2^24 */
	assert_int_equal(t.nflows, 1);
	assert_int_equal(t.flows[0].packets, 100);
	assert_int_equal(t.flows[0].gaps + t.flows[0].late + t.flows[0].retransmits, 0);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 0);
	assert_int_equal(t.flows[0].next_psn, (0xfffff0 + 100) & ROCE_PSN_MASK);
	cap_psn_free(&t);
}

/* go-back-N: PSN 5 lost before the capture point; 6 and 7 arrive, the
 * responder NAKs, the requester sends 5.. again */
static void test_go_back_n(void **state)
{
	static const uint32_t order[] = { 0, 1, 2, 3, 4, 6, 7, 5, 6, 7, 8, 9 };
	struct cap_psn t;
	struct cap_psn_totals sum;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		feed(&t, SEND_ONLY, 0x11, 1000 + order[i]);
	cap_psn_totals(&t, &sum);
	assert_int_equal(sum.gaps, 1);
	assert_int_equal(sum.gap_psns, 1);
	assert_int_equal(sum.late, 1);          /* 5: first seen behind the next expected */
	assert_int_equal(sum.retransmits, 2);   /* 6 and 7 again */
	assert_int_equal(sum.missing, 0);
	assert_int_equal(t.flows[0].next_psn, 1010);
	cap_psn_free(&t);
}

/* UC: a loss is never repaired, the PSNs stay missing */
static void test_loss_stays_missing(void **state)
{
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	for (uint32_t i = 0; i < 10; i++)
		if (i != 5 && i != 6)
			feed(&t, 0x20 | SEND_ONLY, 0x12, i);
	assert_int_equal(t.flows[0].transport, ROCE_TR_UC);
	assert_int_equal(t.flows[0].gaps, 1);
	assert_int_equal(t.flows[0].gap_psns, 2);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 2);
	cap_psn_free(&t);
}

/* A late packet below the first one seen: the span starts there (as
 * rdmawire's does), the PSNs between are missing */
static void test_late_below_first(void **state)
{
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	feed(&t, SEND_ONLY, 0x16, 10);
	feed(&t, SEND_ONLY, 0x16, 5);
	assert_int_equal(t.flows[0].late, 1);
	assert_int_equal(t.flows[0].start_psn, 5);
	assert_int_equal(t.flows[0].first_psn, 10);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 4);   /* 6..9 */
	cap_psn_free(&t);
}

/* A READ request takes a PSN per response packet: 4 KiB at MTU 1024 is 4 */
/* PSNs that jump ahead by more than 2^23 in all: the span runs forward
 * from the first, and the PSNs jumped are missing (not the 32-bit wrap
 * of a negative 24-bit distance); a retransmission and a late PSN inside
 * the span leave its start, though each lies more than 2^23 past it. As
 * rdmawire counts them (test_roce.c's test_far_jump). */
static void test_far_jump(void **state)
{
	static const uint32_t psns[] = { 88, 2294514, 2294515, 9013641, 9013641, 9013640 };
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	for (size_t i = 0; i < sizeof(psns) / sizeof(psns[0]); i++)
		feed(&t, SEND_ONLY, 0x17, psns[i]);
	assert_int_equal(t.flows[0].gaps, 2);
	assert_int_equal(t.flows[0].gap_psns, 9013550);
	assert_int_equal(t.flows[0].retransmits, 1);
	assert_int_equal(t.flows[0].late, 1);
	assert_int_equal(t.flows[0].start_psn, 88);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 9013549);
	cap_psn_free(&t);
}

static void test_read_span(void **state)
{
	struct cap_psn t;
	struct roce_pkt k;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	k = pkt(WRITE_FIRST, 0x13, 0);
	k.payload = 1024;
	cap_psn_packet(&t, &k);
	assert_int_equal(t.pmtu, 1024);
	k = pkt(WRITE_MIDDLE, 0x13, 1), k.payload = 1024;
	cap_psn_packet(&t, &k);
	k = pkt(WRITE_LAST, 0x13, 2), k.payload = 100;
	cap_psn_packet(&t, &k);
	assert_int_equal(t.pmtu, 1024);         /* a LAST packet is not full */
	k = pkt(READ_REQ, 0x13, 3), k.dma_len = 4096, k.has_reth = true;
	cap_psn_packet(&t, &k);
	feed(&t, SEND_ONLY, 0x13, 7);           /* 3 + 4 */
	assert_int_equal(t.flows[0].gaps, 0);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 0);
	k = pkt(READ_REQ, 0x13, 8), k.dma_len = 4097;
	cap_psn_packet(&t, &k);
	feed(&t, SEND_ONLY, 0x13, 14);          /* 8 + 5 = 13 expected: one PSN jumped */
	assert_int_equal(t.flows[0].gaps, 1);
	assert_int_equal(t.flows[0].gap_psns, 1);
	assert_int_equal(t.flows[0].resyncs, 0);
	cap_psn_free(&t);
}

/* No MTU known yet: a long READ's span is unknown, the flow starts over
 * after it instead of guessing; a short one (<= 256 B) is one PSN */
static void test_read_unknown_mtu(void **state)
{
	struct cap_psn t;
	struct roce_pkt k;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	k = pkt(READ_REQ, 0x14, 50), k.dma_len = 200;
	cap_psn_packet(&t, &k);
	feed(&t, SEND_ONLY, 0x14, 51);
	k = pkt(READ_REQ, 0x14, 52), k.dma_len = 65536;
	cap_psn_packet(&t, &k);
	feed(&t, SEND_ONLY, 0x14, 52 + 77);     /* wherever the response ended */
	feed(&t, SEND_ONLY, 0x14, 52 + 78);
	assert_int_equal(t.flows[0].resyncs, 1);
	assert_int_equal(t.flows[0].gaps, 0);
	assert_int_equal(cap_psn_missing(&t.flows[0]), 0);
	assert_int_equal(t.flows[0].packets, 5);
	cap_psn_free(&t);
}

/* Far behind the window: not guessed as late or retransmitted */
static void test_window_edge(void **state)
{
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	for (uint32_t i = 0; i <= CAP_PSN_WINDOW + 10; i++)
		feed(&t, SEND_ONLY, 0x15, i);
	feed(&t, SEND_ONLY, 0x15, 2);           /* window + 9 behind */
	feed(&t, SEND_ONLY, 0x15, CAP_PSN_WINDOW); /* 11 behind, seen: a retransmission */
	assert_int_equal(t.flows[0].beyond_window, 1);
	assert_int_equal(t.flows[0].retransmits, 1);
	assert_int_equal(t.flows[0].late, 0);
	/* a big jump forward clears what the window held */
	feed(&t, SEND_ONLY, 0x15, 3 * CAP_PSN_WINDOW);
	feed(&t, SEND_ONLY, 0x15, 3 * CAP_PSN_WINDOW - 5);
	assert_int_equal(t.flows[0].late, 1);
	cap_psn_free(&t);
}

/* Flows apart by destination QP; responses not followed; the table's bound */
static void test_flows_and_bound(void **state)
{
	struct cap_psn t;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 2), 0);
	feed(&t, SEND_ONLY, 0x21, 10);
	feed(&t, SEND_ONLY, 0x22, 500);
	feed(&t, SEND_ONLY, 0x21, 11);
	feed(&t, SEND_ONLY, 0x22, 501);
	feed(&t, ACK, 0x23, 7);
	feed(&t, SEND_ONLY, 0x24, 1);
	assert_int_equal(t.nflows, 2);
	assert_int_equal(t.flows[0].packets, 2);
	assert_int_equal(t.flows[1].packets, 2);
	assert_int_equal(t.flows[0].gaps + t.flows[1].gaps, 0);
	assert_int_equal(t.table_full, 1);
	cap_psn_free(&t);
}

/* Whole Ethernet frames: a RoCE v2 SEND_ONLY is followed, a cut one is
 * counted as undecoded, other UDP is ignored */
static size_t frame(uint8_t *f, uint16_t dport, uint8_t op, uint32_t qp, uint32_t psn)
{
	const size_t udp_len = 8 + 12 + 4;      /* UDP, BTH, ICRC */

	memset(f, 0, 64);
	f[12] = 0x08;                           /* IPv4 */
	f[14] = 0x45;
	f[16] = (uint8_t)((20 + udp_len) >> 8), f[17] = (uint8_t)(20 + udp_len);
	f[22] = 64, f[23] = 17;                 /* TTL, UDP */
	f[26] = 10, f[29] = 2, f[30] = 10, f[33] = 1;
	f[34] = 0xc0, f[35] = 0x00;
	f[36] = (uint8_t)(dport >> 8), f[37] = (uint8_t)dport;
	f[38] = 0, f[39] = (uint8_t)udp_len;
	f[42] = op;
	f[44] = 0xff, f[45] = 0xff;             /* P_Key */
	f[47] = (uint8_t)(qp >> 16), f[48] = (uint8_t)(qp >> 8), f[49] = (uint8_t)qp;
	f[51] = (uint8_t)(psn >> 16), f[52] = (uint8_t)(psn >> 8), f[53] = (uint8_t)psn;
	return 14 + 20 + udp_len;
}

static void test_frames(void **state)
{
	struct cap_psn t;
	uint8_t f[64];
	size_t n;

	(void)state;
	assert_int_equal(cap_psn_init(&t, 4), 0);
	n = frame(f, ROCE_UDP_PORT, SEND_ONLY, 0x31, 7);
	cap_psn_frame(&t, f, n, (uint32_t)n);
	n = frame(f, ROCE_UDP_PORT, SEND_ONLY, 0x31, 9);
	cap_psn_frame(&t, f, n, (uint32_t)n);
	cap_psn_frame(&t, f, 14 + 20 + 8 + 4, (uint32_t)n);   /* cut inside the BTH */
	n = frame(f, 5000, SEND_ONLY, 0x31, 30);
	cap_psn_frame(&t, f, n, (uint32_t)n);
	assert_int_equal(t.nflows, 1);
	assert_int_equal(t.flows[0].dest_qp, 0x31);
	assert_int_equal(t.flows[0].packets, 2);
	assert_int_equal(t.flows[0].gap_psns, 1);
	assert_int_equal(t.undecoded, 1);
	cap_psn_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_in_order_and_wrap),
		cmocka_unit_test(test_go_back_n),
		cmocka_unit_test(test_loss_stays_missing),
		cmocka_unit_test(test_late_below_first),
		cmocka_unit_test(test_far_jump),
		cmocka_unit_test(test_read_span),
		cmocka_unit_test(test_read_unknown_mtu),
		cmocka_unit_test(test_window_edge),
		cmocka_unit_test(test_flows_and_bound),
		cmocka_unit_test(test_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
