/* SPDX-License-Identifier: BSD-2-Clause */
/* What the peer may send that upstream never reads (docs/wire-protocol.md
 * §8, §9.2) -- taken without a look, while the same bytes where they are
 * used are still refused -- and the client's source address and family
 * (--bind_source_ip, --ipv6-addr; §1). Loopback TCP, as test_oob.c. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>
#include "oob_harness.h"

/* The end of a non-duplex write/read/atomic run against 6.29: the server's
 * half of R is stack bytes it never filled (here all 0xff, a -nan in every
 * double, and a huge size). The client drops them (theirs NULL) and the
 * server still gets the client's real figures; the same bytes in a duplex
 * exchange, where they are summed and printed, are refused. */
static int srv_garbage_report(struct srv *s)
{
	uint8_t junk[8];
	int r = pt_oob_xchg_versions(&s->c, 0);

	memset(junk, 0xff, sizeof(junk));
	for (int f = 0; !r && f < PT_BW_NFIELDS; f++) {
		uint8_t in[8];
		size_t n = f == PT_BW_ITERS ? s->c.peer.iters_size : 8;

		r = pt_oob_exchange(&s->c, junk, in, n, "report field");
		if (!r)
			pt_bw_field_decode(&s->rep, f, s->c.peer.iters_size, in);
	}
	return r;
}

static void garbage_report(bool duplex)
{
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_garbage_report, NULL);
	const struct pt_bw_report mine = { .size = 65536, .iters = 5000,
		.bw_peak = 2.0, .bw_avg = 1.5, .msg_rate = 0.25 };
	struct pt_bw_report theirs;

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	if (duplex) {
		assert_int_equal(pt_oob_xchg_bw_report(&c, &mine, &theirs), -EPROTO);
		assert_non_null(strstr(pt_oob_strerror(&c), "invalid BW report"));
	} else {
		assert_int_equal(pt_oob_xchg_bw_report(&c, &mine, NULL), 0);
	}
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_true(s.rep.size == 65536 && s.rep.iters == 5000);
	assert_true(s.rep.bw_avg == 1.5 && s.rep.msg_rate == 0.25);
}

static void test_nondup_report_garbage_ignored(void **state)
{
	(void)state;
	garbage_report(false);
}

static void test_duplex_report_garbage_refused(void **state)
{
	(void)state;
	garbage_report(true);
}

/* --report-per-port (group "dual"): both sides add four doubles after the
 * five, port 1's BW and rate then port 2's, and each receives the other's. */
static int srv_per_port_report(struct srv *s)
{
	const struct pt_bw_report mine = { .size = 4096, .iters = 800, .bw_avg = 3.0, .msg_rate = 0.75,
					   .per_port = true, .bw_avg_port = { 1.0, 2.0 },
					   .msg_rate_port = { 0.25, 0.5 } };
	int r = pt_oob_xchg_versions(&s->c, 0);

	return r ? r : pt_oob_xchg_bw_report(&s->c, &mine, &s->rep);
}

static void test_per_port_report(void **state)
{
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_per_port_report, NULL);
	const struct pt_bw_report mine = { .size = 4096, .iters = 900, .bw_avg = 7.0, .msg_rate = 1.5,
					   .per_port = true, .bw_avg_port = { 3.0, 4.0 },
					   .msg_rate_port = { 0.625, 0.875 } };
	struct pt_bw_report theirs;

	(void)state;
	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_int_equal(pt_oob_xchg_bw_report(&c, &mine, &theirs), 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_true(theirs.per_port && theirs.iters == 800 && theirs.msg_rate == 0.75);
	assert_true(theirs.bw_avg_port[0] == 1.0 && theirs.bw_avg_port[1] == 2.0);
	assert_true(theirs.msg_rate_port[0] == 0.25 && theirs.msg_rate_port[1] == 0.5);
	assert_true(s.rep.bw_avg_port[0] == 3.0 && s.rep.bw_avg_port[1] == 4.0);
	assert_true(s.rep.msg_rate_port[0] == 0.625 && s.rep.msg_rate_port[1] == 0.875);
}

/* -z/-R carry raw keys over a message transport. A barrier's content is
 * never read upstream: one whose QPN and PSN are out of range passes, the
 * same bytes as a real key message are refused. */
static int fake_send(void *t, const void *buf, size_t n, uint64_t deadline, char *why, size_t len)
{
	(void)t, (void)buf, (void)n, (void)deadline, (void)why, (void)len;
	return 0;
}

static int fake_recv(void *t, void *buf, size_t n, uint64_t deadline, char *why, size_t len)
{
	(void)t, (void)deadline, (void)why, (void)len;
	memset(buf, 0xff, n);
	return 0;
}

static void fake_close(void *t)
{
	(void)t;
}

static int fake_peer_gone(void *t)
{
	(void)t;
	return 0;
}

static void test_raw_barrier_content_ignored(void **state)
{
	static const struct pt_oob_msg_ops ops = { fake_send, fake_recv, fake_close, fake_peer_gone };
	struct pt_oob c;
	struct pt_key k;

	(void)state;
	pt_oob_init(&c);
	pt_oob_use_msg(&c, &ops, NULL, 0, 1);
	assert_int_equal(pt_oob_barrier(&c, 1, &cli_key), 0);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &cli_key, &k), -EPROTO);
	assert_non_null(strstr(pt_oob_strerror(&c), "malformed"));
	pt_oob_close(&c);
}

/* --bind_source_ip and --ipv6-addr on the TCP channel: the server sees the
 * client come from the source address; a source this host does not have
 * fails at once, naming it. */
static char srv_peer_addr[64];

static int srv_note_peer(struct srv *s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	const void *a;

	if (getpeername(s->c.fd, (struct sockaddr *)&ss, &len))
		return -1;
	a = ss.ss_family == AF_INET6 ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
				     : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
	inet_ntop(ss.ss_family, a, srv_peer_addr, sizeof(srv_peer_addr));
	return pt_oob_xchg_versions(&s->c, 0);
}

static void bound_client(const char *listen_on, int family, const char *source)
{
	struct srv s;
	struct pt_oob c;
	pthread_t t;

	srv_init(&s, srv_note_peer);
	assert_int_equal(pt_oob_listen(&s.c, listen_on, 0, family), 0);
	s.port = pt_oob_listen_port(&s.c);
	assert_int_equal(pthread_create(&t, NULL, srv_main, &s), 0);
	pt_oob_init(&c);
	pt_oob_set_timeout(&c, 5000);
	pt_oob_set_source(&c, source);
	assert_int_equal(pt_oob_connect(&c, listen_on, s.port, family), 0);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_string_equal(srv_peer_addr, source);
}

static void test_bind_source_and_ipv6(void **state)
{
	struct pt_oob c;
	uint64_t t0;

	(void)state;
	bound_client("127.0.0.1", AF_INET, "127.0.0.2");
	bound_client("::1", AF_INET6, "::1");
	/* an address of no local interface: EADDRNOTAVAIL, not retried */
	pt_oob_init(&c);
	pt_oob_set_timeout(&c, 5000);
	pt_oob_set_source(&c, "192.0.2.99");
	t0 = pt_now_ns();
	assert_true(pt_oob_connect(&c, "127.0.0.1", 1, AF_UNSPEC) < 0);
	assert_true(pt_now_ns() - t0 < 1000000000ull);
	assert_non_null(strstr(pt_oob_strerror(&c), "from 192.0.2.99"));
	pt_oob_close(&c);
	/* not numeric */
	pt_oob_init(&c);
	pt_oob_set_source(&c, "localhost");
	assert_int_equal(pt_oob_connect(&c, "127.0.0.1", 1, AF_UNSPEC), -EINVAL);
	assert_non_null(strstr(pt_oob_strerror(&c), "invalid source address 'localhost'"));
	pt_oob_close(&c);
}

/* A 6.29 peer with --data_validation (docs/wire-protocol.md §5.2): its GID
 * key is 125 bytes with the tail-markers address after vaddr. The server
 * plays it byte for byte; our client, with the option, must send the same
 * form (tail address 0) and read the peer's. */
static const char dv629_key[] =
	"0000:0001:00abcd:00beef:00c0ffee:00007f0000002000:00007f0000ff0000:"
	"00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:07:00000000:";
static char dv_seen[PT_KEY_MSG_MAX + 1];
static size_t dv_len;

static int srv_dv629(struct srv *s)
{
	int r = pt_oob_xchg_versions(&s->c, 0);

	memset(dv_seen, 0, sizeof(dv_seen));
	if (!r)
		r = pt_oob_exchange(&s->c, dv629_key, dv_seen, dv_len, "key");
	return r;
}

static void test_data_validation_keys_629(void **state)
{
	static const char ours[] =
		"0012:0001:000abc:123456:cafef00d:00007f9988776655:0000000000000000:"
		"fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:99:00000042:";
	struct pt_key k, mine = cli_key;
	struct srv s;
	struct pt_oob c;
	pthread_t t;
	(void)state;

	assert_int_equal(sizeof(dv629_key), 125);
	dv_len = 125;
	t = srv_start(&s, srv_dv629, "6.29");
	cli_connect(&c, s.port, 5000);
	c.data_validation = 1;
	mine.tail_vaddr = 0;   /* ours has no tail markers */
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_true(c.peer.key_dv_629);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &mine, &k), 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_memory_equal(dv_seen, ours, 125);
	assert_int_equal(k.qpn, 0xabcd);
	assert_int_equal(k.psn, 0xbeef);
	assert_true(k.vaddr == 0x7f0000002000ull && k.tail_vaddr == 0x7f0000ff0000ull);
	assert_int_equal(k.gid[15], 7);

	/* the same option with a 6.06 peer: 108 bytes, as before; the 125-byte
	 * message from a "6.29" peer read by a client without the option: refused */
	dv_len = 108;
	t = srv_start(&s, srv_dv629, "6.06");
	cli_connect(&c, s.port, 5000);
	c.data_validation = 1;
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_false(c.peer.key_dv_629);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &mine, &k), -EPROTO);
	assert_non_null(strstr(pt_oob_strerror(&c), "--data_validation is given on one side"));
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_int_equal(strlen(dv_seen), 107);   /* our 108-byte GID form */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nondup_report_garbage_ignored),
		cmocka_unit_test(test_duplex_report_garbage_refused),
		cmocka_unit_test(test_per_port_report),
		cmocka_unit_test(test_raw_barrier_content_ignored),
		cmocka_unit_test(test_bind_source_and_ipv6),
		cmocka_unit_test(test_data_validation_keys_629),
	};
	return cmocka_run_group_tests_name("oob_peer", tests, NULL, NULL);
}
