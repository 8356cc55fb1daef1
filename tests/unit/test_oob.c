/* SPDX-License-Identifier: BSD-2-Clause */
/* OOB transport over real loopback TCP: a server thread and a client in
 * the test thread. cmocka asserts only run in the test thread; the server
 * records what it saw and the test checks it after joining. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <cmocka.h>
#include "util/clock.h"
#include "perftest/wire/oob.h"

#include "oob_harness.h"

/* The common preamble and a bw run, server side. */
static int srv_full(struct srv *s)
{
	struct pt_bw_report mine = { .size = 1, .iters = 2, .bw_peak = 3 };
	int r;

	s->page = 4096;
	s->line = 64;
	s->mtu = 5;
	if ((r = pt_oob_xchg_versions(&s->c, 0)) ||
	    (r = pt_oob_xchg_sysdata(&s->c, &s->page, &s->line)) ||
	    (r = pt_oob_xchg_mtu(&s->c, &s->mtu)) ||
	    (r = pt_oob_xchg_key(&s->c, 1, &srv_key, &s->k1)) ||
	    (r = pt_oob_barrier(&s->c, 1, &srv_key)) ||
	    (r = pt_oob_xchg_key(&s->c, 1, &srv_key, &s->k2)) ||
	    (r = pt_oob_xchg_key(&s->c, 0, &srv_key, &s->k3)) ||
	    (r = pt_oob_barrier(&s->c, 1, NULL)) ||
	    (r = pt_oob_xchg_bw_report(&s->c, &mine, &s->rep)) ||
	    (r = pt_oob_barrier(&s->c, 1, &srv_key)))
		return r;
	return 0;
}

static void assert_keys_eq(const struct pt_key *a, const struct pt_key *b)
{
	assert_int_equal(a->lid, b->lid);
	assert_int_equal(a->out_reads, b->out_reads);
	assert_int_equal(a->qpn, b->qpn);
	assert_int_equal(a->psn, b->psn);
	assert_int_equal(a->rkey, b->rkey);
	assert_true(a->vaddr == b->vaddr);
	assert_int_equal(a->srqn, b->srqn);
}

static void test_full_sequence(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_full, NULL);
	int32_t page = 16384, line = 128;
	int mtu = 3;
	struct pt_key k1, k2, k3;
	struct pt_bw_report mine = {
		.size = 65536, .iters = 5000, .bw_peak = 11.5,
		.bw_avg = 10.25, .msg_rate = 0.019561,
	}, theirs;

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_string_equal(c.peer.version, WIRE_VERSION);
	assert_int_equal(c.peer.iters_size, 8);
	assert_int_equal(pt_oob_xchg_sysdata(&c, &page, &line), 0);
	assert_int_equal(pt_oob_xchg_mtu(&c, &mtu), 0);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &cli_key, &k1), 0);
	assert_int_equal(pt_oob_barrier(&c, 1, &cli_key), 0);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &cli_key, &k2), 0);
	assert_int_equal(pt_oob_xchg_key(&c, 0, &cli_key, &k3), 0);
	assert_int_equal(pt_oob_barrier(&c, 1, &cli_key), 0);
	assert_int_equal(pt_oob_xchg_bw_report(&c, &mine, &theirs), 0);
	assert_int_equal(pt_oob_barrier(&c, 1, NULL), 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);

	assert_int_equal(s.rc, 0);
	/* max() of sys data, min() of MTU, on both sides */
	assert_int_equal(page, 16384);
	assert_int_equal(line, 128);
	assert_int_equal(s.page, 16384);
	assert_int_equal(s.line, 128);
	assert_int_equal(mtu, 3);
	assert_int_equal(s.mtu, 3);
	assert_keys_eq(&k1, &srv_key);
	assert_memory_equal(k1.gid, srv_key.gid, 16);
	assert_keys_eq(&k2, &srv_key);
	assert_keys_eq(&k3, &srv_key);
	assert_keys_eq(&s.k1, &cli_key);
	assert_memory_equal(s.k1.gid, cli_key.gid, 16);
	assert_keys_eq(&s.k3, &cli_key);
	assert_memory_equal(s.k3.gid, (uint8_t[16]){ 0 }, 16); /* 59-byte form */
	assert_true(s.rep.size == 65536 && s.rep.iters == 5000);
	assert_true(s.rep.bw_peak == 11.5 && s.rep.bw_avg == 10.25);
	assert_true(s.rep.msg_rate == 0.019561);
	assert_true(theirs.size == 1 && theirs.iters == 2);
	assert_true(theirs.bw_peak == 3.0);
}

static int srv_versions_then_more(struct srv *s)
{
	int r = pt_oob_xchg_versions(&s->c, 0);

	if (r)
		return r;
	s->page = 4096;
	s->line = 64;
	return pt_oob_xchg_sysdata(&s->c, &s->page, &s->line);
}

/* An old (5.60) peer is refused after V. */
static void refused_peer(const char *peer_ver, const char *needle)
{
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_versions_then_more, peer_ver);

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), -EPROTO);
	print_message("client: %s\n", pt_oob_strerror(&c));
	assert_non_null(strstr(pt_oob_strerror(&c), needle));
	assert_non_null(strstr(pt_oob_strerror(&c), "we are " WIRE_VERSION));
	assert_int_equal(c.peer.compatible, 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	/* The server accepted our 6.06, then saw us hang up in S1. */
	print_message("server: %s\n", s.err);
	assert_int_equal(s.rc, -ECONNRESET);
	assert_non_null(strstr(s.err, "page size"));
}

static void test_old_peer_refused(void **state)
{
	(void)state;
	refused_peer("5.60", "'5.60' is older than 5.70");
}

/* 6.28 negotiates (docs/wire-protocol.md §7). The server speaks N after V; the client is
 * a raw socket playing a 6.28 build with or without mlx5dv (320 or 312
 * bytes), and must get an answer of its own size, nothing more. */
static struct pt_negotiate neg_block(int64_t size)
{
	struct pt_negotiate n;

	memset(&n, 0, sizeof(n));
	n.v[PT_NEG_TST] = PT_NEG_BW;
	n.v[PT_NEG_ATOMIC_TYPE] = PT_NEG_FETCH_AND_ADD;
	n.v[PT_NEG_REPORT_FMT] = PT_NEG_MBS;
	n.v[PT_NEG_SIZE_F] = size;
	n.v[PT_NEG_ITERS] = 1000;
	n.v[PT_NEG_NUM_QPS] = 1;
	n.v[PT_NEG_DURATION_S] = 5;
	n.dev_attr[0] = 0x5a;
	return n;
}

static struct pt_negotiate srv_neg_theirs;

static int srv_negotiate(struct srv *s)
{
	struct pt_negotiate mine = neg_block(65536);
	int r = pt_oob_xchg_versions(&s->c, 0);

	return r ? r : pt_oob_xchg_negotiate(&s->c, &mine, &srv_neg_theirs);
}

static void negotiation_of_size(size_t size)
{
	struct srv s;
	struct pt_negotiate cli = neg_block(4096), back;
	uint8_t ver[16] = "6.28", in[PT_NEG_SIZE_MLX5DV + 8], out[PT_NEG_SIZE_MLX5DV];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	pthread_t t = srv_start(&s, srv_negotiate, NULL);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };

	a.sin_port = htons((uint16_t)s.port);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(write(fd, ver, 16), 16);
	assert_int_equal(recv(fd, in, 16, MSG_WAITALL), 16);
	assert_int_equal(pt_neg_encode(&cli, size, out), (int)size);
	/* 6.28 has padding where 6.29 put data_validation: not ours to judge */
	memcpy(out + 76, "\xde\xad\xbe\xef", 4);
	assert_int_equal(write(fd, out, size), (ssize_t)size);
	assert_int_equal(recv(fd, in, size, MSG_WAITALL), (ssize_t)size);
	assert_int_equal(pt_neg_parse(in, size, &back), 0);
	assert_true(back.v[PT_NEG_SIZE_F] == 65536);
	/* nothing beyond the block (the server answered in our size), then EOF */
	assert_int_equal(poll(&p, 1, 5000), 1);
	assert_int_equal(recv(fd, in, sizeof(in), 0), 0);
	close(fd);
	pthread_join(t, NULL);
	print_message("server: rc %d %s\n", s.rc, s.err);
	assert_int_equal(s.rc, 0);
	assert_true(srv_neg_theirs.v[PT_NEG_SIZE_F] == 4096);
	assert_true(srv_neg_theirs.v[PT_NEG_DATA_VALIDATION] == 0);
	assert_int_equal(srv_neg_theirs.dev_attr[0], 0x5a);
	assert_int_equal(s.c.peer.negotiate, 1);
}

static void test_negotiation_312_and_320(void **state)
{
	(void)state;
	negotiation_of_size(PT_NEG_SIZE_MLX5DV);
	negotiation_of_size(PT_NEG_SIZE);
}

/* The server sends 10 of the 16 version bytes and hangs up. */
static int srv_half_then_close(struct srv *s)
{
	char junk[16];

	/* accepted sockets are non-blocking: block for the raw calls here */
	fcntl(s->c.fd, F_SETFL, fcntl(s->c.fd, F_GETFL) & ~O_NONBLOCK);
	if (recv(s->c.fd, junk, sizeof(junk), MSG_WAITALL) != 16)
		return -1;
	return send(s->c.fd, "6.06\0\0\0\0\0\0", 10, MSG_NOSIGNAL) == 10 ?
		0 : -1;
}

static void test_peer_closes_mid_exchange(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_half_then_close, NULL);
	uint64_t t0;

	cli_connect(&c, s.port, 5000);
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_xchg_versions(&c, 0), -ECONNRESET);
	assert_true(elapsed_ms(t0) < 2000);
	print_message("%s\n", pt_oob_strerror(&c));
	assert_non_null(strstr(pt_oob_strerror(&c), "version"));
	assert_non_null(strstr(pt_oob_strerror(&c), "10 of 16"));
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
}

/* The server accepts and never answers; it leaves once we hang up. */
static int srv_silent(struct srv *s)
{
	char b[64];
	uint64_t t0 = pt_now_ns();

	while (elapsed_ms(t0) < 4000) {
		ssize_t r = recv(s->c.fd, b, sizeof(b), MSG_DONTWAIT);

		if (r == 0)
			return 0;
		usleep(10000);
	}
	return -1;
}

static void test_silent_peer_times_out(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_silent, NULL);
	uint64_t t0;
	int64_t ms;

	cli_connect(&c, s.port, 1000);
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_xchg_versions(&c, 0), -ETIMEDOUT);
	ms = elapsed_ms(t0);
	print_message("%s (%lld ms)\n", pt_oob_strerror(&c), (long long)ms);
	assert_in_range(ms, 900, 1600);
	assert_non_null(strstr(pt_oob_strerror(&c), "timed out"));
	assert_non_null(strstr(pt_oob_strerror(&c), "version"));
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
}

/* The server resets the connection: writes fail with an error, and
 * MSG_NOSIGNAL keeps SIGPIPE (default action: die) away. */
static int srv_reset(struct srv *s)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	int r = pt_oob_xchg_versions(&s->c, 0); /* client surely connected */

	if (r)
		return r;
	setsockopt(s->c.fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	return 0; /* srv_main closes: RST */
}

static void test_reset_no_sigpipe(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_reset, NULL);
	char big[65536] = { 0 }, in[65536];
	int r;

	cli_connect(&c, s.port, 2000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	pthread_join(t, NULL);
	usleep(100000);
	for (int i = 0; i < 3; i++) {
		r = pt_oob_exchange(&c, big, in, sizeof(big), "report");
		print_message("%d: %s\n", r, pt_oob_strerror(&c));
		assert_true(r == -ECONNRESET || r == -EPIPE);
		assert_non_null(strstr(pt_oob_strerror(&c), "report"));
	}
	pt_oob_close(&c);
	assert_int_equal(s.rc, 0);
}

/* Client starts first; the server listens 400 ms later. */
static int srv_versions(struct srv *s)
{
	return pt_oob_xchg_versions(&s->c, 0);
}

static int free_port(void)
{
	struct pt_oob l;
	int port;

	pt_oob_init(&l);
	assert_int_equal(pt_oob_listen(&l, "127.0.0.1", 0, AF_INET), 0);
	port = pt_oob_listen_port(&l);
	pt_oob_close(&l);
	return port;
}

static void test_connect_retries(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t;
	uint64_t t0;

	srv_init(&s, srv_versions);
	s.port = free_port();
	s.delay_ms = 400;
	assert_int_equal(pthread_create(&t, NULL, srv_main, &s), 0);
	t0 = pt_now_ns();
	cli_connect(&c, s.port, 5000);
	assert_true(elapsed_ms(t0) >= 300);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_string_equal(s.c.peer.version, WIRE_VERSION);
}

static void test_connect_gives_up(void **state)
{
	(void)state;
	struct pt_oob c;
	int port = free_port();
	uint64_t t0 = pt_now_ns();
	int64_t ms;

	pt_oob_init(&c);
	pt_oob_set_timeout(&c, 500);
	assert_int_equal(pt_oob_connect(&c, "127.0.0.1", port, AF_INET),
			 -ETIMEDOUT);
	ms = elapsed_ms(t0);
	assert_in_range(ms, 400, 1500);
	assert_non_null(strstr(pt_oob_strerror(&c), "could not connect"));
	assert_int_equal(c.fd, -1);
	assert_int_equal(pt_oob_connect(&c, "127.0.0.1", 70000, AF_INET),
			 -EINVAL);
}

static void test_accept_times_out(void **state)
{
	(void)state;
	struct pt_oob c;
	uint64_t t0;

	pt_oob_init(&c);
	pt_oob_set_timeout(&c, 300);
	assert_int_equal(pt_oob_listen(&c, "127.0.0.1", 0, AF_INET), 0);
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_accept(&c), -ETIMEDOUT);
	assert_in_range(elapsed_ms(t0), 250, 1500);
	assert_non_null(strstr(pt_oob_strerror(&c), "no client"));
	pt_oob_close(&c);
	assert_int_equal(pt_oob_exchange(&c, "x", (char[1]){ 0 }, 1, "x"),
			 -ENOTCONN);
}

/* Versions, then garbage where MTU and key messages are expected. */
static int srv_garbage(struct srv *s)
{
	char in[PT_KEY_MSG_MAX], ff[PT_KEY_MSG_MAX];
	int r = pt_oob_xchg_versions(&s->c, 0);

	memset(ff, 0xff, sizeof(ff));
	if (!r)
		r = pt_oob_exchange(&s->c, "9", in, 2, "MTU");
	if (!r)
		r = pt_oob_exchange(&s->c, ff, in, PT_KEY_MSG_SIZE, "key");
	return r;
}

static void test_garbage_rejected(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_garbage, NULL);
	int mtu = 4;
	struct pt_key k;

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_int_equal(pt_oob_xchg_mtu(&c, &mtu), -EPROTO);
	assert_int_equal(mtu, 4);
	assert_non_null(strstr(pt_oob_strerror(&c), "MTU"));
	assert_int_equal(pt_oob_xchg_key(&c, 0, &cli_key, &k), -EPROTO);
	print_message("%s\n", pt_oob_strerror(&c));
	assert_non_null(strstr(pt_oob_strerror(&c), "malformed 59-byte"));
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
}

/* --dont_xchg_versions on both sides: V, S and M put nothing on the wire,
 * so the first bytes exchanged are the key messages. */
static int srv_dont_xchg(struct srv *s)
{
	int r;

	s->page = 4096;
	s->line = 64;
	s->mtu = 5;
	if ((r = pt_oob_xchg_versions(&s->c, 1)) ||
	    (r = pt_oob_xchg_sysdata(&s->c, &s->page, &s->line)) ||
	    (r = pt_oob_xchg_mtu(&s->c, &s->mtu)))
		return r;
	return pt_oob_xchg_key(&s->c, 1, &srv_key, &s->k1);
}

static void test_dont_xchg_versions(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_dont_xchg, NULL);
	int32_t page = 8192, line = 128;
	int mtu = 3;
	struct pt_key k;

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 1), 0);
	assert_int_equal(c.peer.known, 0);
	assert_int_equal(c.peer.iters_size, 8);
	assert_int_equal(pt_oob_xchg_sysdata(&c, &page, &line), 0);
	assert_int_equal(pt_oob_xchg_mtu(&c, &mtu), 0);
	assert_int_equal(page, 8192); /* untouched: nothing exchanged */
	assert_int_equal(mtu, 3);
	assert_int_equal(pt_oob_xchg_key(&c, 1, &cli_key, &k), 0);
	assert_keys_eq(&k, &srv_key);
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_keys_eq(&s.k1, &cli_key);
	assert_int_equal(s.mtu, 5);
}

/* Role order on the wire: the server reads before it writes... */
static void test_server_reads_first(void **state)
{
	(void)state;
	struct srv s;
	pthread_t t = srv_start(&s, srv_versions, NULL);
	struct pt_oob raw;
	uint8_t in[16], out[16];

	cli_connect(&raw, s.port, 5000);
	usleep(200000);
	assert_int_equal(recv(raw.fd, in, sizeof(in), MSG_DONTWAIT), -1);
	assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
	pt_version_encode("6.10", out);
	assert_int_equal(send(raw.fd, out, 16, MSG_NOSIGNAL), 16);
	fcntl(raw.fd, F_SETFL, fcntl(raw.fd, F_GETFL) & ~O_NONBLOCK);
	assert_int_equal(recv(raw.fd, in, 16, MSG_WAITALL), 16);
	assert_memory_equal(in, "6.06", 5);
	pt_oob_close(&raw);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0);
	assert_string_equal(s.c.peer.version, "6.10");
}

/* ...and the client writes before it reads. */
static void *cli_versions(void *arg)
{
	struct srv *s = arg;

	pt_oob_set_timeout(&s->c, 5000);
	s->rc = pt_oob_connect(&s->c, "127.0.0.1", s->port, AF_INET);
	if (!s->rc)
		s->rc = pt_oob_xchg_versions(&s->c, 0);
	pt_oob_close(&s->c);
	return NULL;
}

static void test_client_writes_first(void **state)
{
	(void)state;
	struct srv cl;
	struct pt_oob raw;
	pthread_t t;
	uint8_t in[16], out[16];
	struct pollfd p;

	pt_oob_init(&raw);
	pt_oob_set_timeout(&raw, 5000);
	assert_int_equal(pt_oob_listen(&raw, "127.0.0.1", 0, AF_INET), 0);
	srv_init(&cl, NULL);
	cl.port = pt_oob_listen_port(&raw);
	assert_int_equal(pthread_create(&t, NULL, cli_versions, &cl), 0);
	assert_int_equal(pt_oob_accept(&raw), 0);
	/* We have sent nothing, yet the client's version arrives. */
	p = (struct pollfd){ .fd = raw.fd, .events = POLLIN };
	assert_int_equal(poll(&p, 1, 3000), 1);
	fcntl(raw.fd, F_SETFL, fcntl(raw.fd, F_GETFL) & ~O_NONBLOCK);
	assert_int_equal(recv(raw.fd, in, 16, MSG_WAITALL), 16);
	assert_memory_equal(in, WIRE_VERSION, sizeof(WIRE_VERSION));
	pt_version_encode("6.10", out);
	assert_int_equal(send(raw.fd, out, 16, MSG_NOSIGNAL), 16);
	pthread_join(t, NULL);
	pt_oob_close(&raw);
	assert_int_equal(cl.rc, 0);
	assert_string_equal(cl.c.peer.version, "6.10");
}

/* A peer whose -b report holds NaN is refused, not summed into ours. */
static int srv_nan_report(struct srv *s)
{
	const struct pt_bw_report nan_avg = { .size = 65536, .iters = 5000,
		.bw_peak = 1.0, .bw_avg = NAN, .msg_rate = 0.5 };
	int r = pt_oob_xchg_versions(&s->c, 0);

	return r ? r : pt_oob_xchg_bw_report(&s->c, &nan_avg, &s->rep);
}

static void test_invalid_report_refused(void **state)
{
	(void)state;
	struct srv s;
	struct pt_oob c;
	pthread_t t = srv_start(&s, srv_nan_report, NULL);
	const struct pt_bw_report mine = { .size = 65536, .iters = 5000,
		.bw_peak = 2.0, .bw_avg = 1.5, .msg_rate = 0.25 };
	struct pt_bw_report theirs;

	cli_connect(&c, s.port, 5000);
	assert_int_equal(pt_oob_xchg_versions(&c, 0), 0);
	assert_int_equal(pt_oob_xchg_bw_report(&c, &mine, &theirs), -EPROTO);
	print_message("%s\n", pt_oob_strerror(&c));
	assert_non_null(strstr(pt_oob_strerror(&c), "invalid BW report"));
	assert_non_null(strstr(pt_oob_strerror(&c), "average bandwidth"));
	pt_oob_close(&c);
	pthread_join(t, NULL);
	assert_int_equal(s.rc, 0); /* our report was fine */
	assert_true(s.rep.bw_avg == 1.5);
}

/* SIGINT during an out-of-band wait: the flag set by the handler ends the
 * wait with -EINTR (at once if already set, else within a poll slice). */
static volatile sig_atomic_t flag;

static void *set_flag_later(void *arg)
{
	(void)arg;
	usleep(150000);
	flag = 2;
	return NULL;
}

static void test_oob_wait_stops(void **state)
{
	struct pt_oob o;
	pthread_t th;
	uint64_t t0;
	int64_t ms;

	(void)state;
	pt_oob_set_stop_flag(&flag);
	pt_oob_init(&o);
	pt_oob_set_timeout(&o, 20000);
	assert_int_equal(pt_oob_listen(&o, "127.0.0.1", 0, AF_INET), 0);
	flag = 2;
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_accept(&o), -EINTR);
	assert_true(pt_now_ns() - t0 < 500000000ull);
	flag = 0;
	assert_int_equal(pthread_create(&th, NULL, set_flag_later, NULL), 0);
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_accept(&o), -EINTR);
	ms = (int64_t)((pt_now_ns() - t0) / 1000000);
	pthread_join(th, NULL);
	assert_in_range(ms, 100, 1800);
	assert_non_null(strstr(pt_oob_strerror(&o), "waiting for a client"));
	pt_oob_close(&o);
	/* a client retrying a refused connect stops as well */
	pt_oob_init(&o);
	pt_oob_set_timeout(&o, 20000);
	t0 = pt_now_ns();
	assert_int_equal(pt_oob_connect(&o, "127.0.0.1", 1, AF_INET), -EINTR);
	assert_true(pt_now_ns() - t0 < 500000000ull);
	assert_non_null(strstr(pt_oob_strerror(&o), "interrupted while connecting"));
	flag = 0;
	pt_oob_set_stop_flag(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_sequence),
		cmocka_unit_test(test_old_peer_refused),
		cmocka_unit_test(test_negotiation_312_and_320),
		cmocka_unit_test(test_peer_closes_mid_exchange),
		cmocka_unit_test(test_silent_peer_times_out),
		cmocka_unit_test(test_reset_no_sigpipe),
		cmocka_unit_test(test_connect_retries),
		cmocka_unit_test(test_connect_gives_up),
		cmocka_unit_test(test_accept_times_out),
		cmocka_unit_test(test_garbage_rejected),
		cmocka_unit_test(test_dont_xchg_versions),
		cmocka_unit_test(test_server_reads_first),
		cmocka_unit_test(test_client_writes_first),
		cmocka_unit_test(test_invalid_report_refused),
		cmocka_unit_test(test_oob_wait_stops),
	};
	return cmocka_run_group_tests_name("oob", tests, NULL, NULL);
}
