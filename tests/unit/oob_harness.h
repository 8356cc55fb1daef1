/* SPDX-License-Identifier: BSD-2-Clause */
/* The loopback harness of the out-of-band tests (test_oob.c, test_oob_peer.c):
 * a server thread running one scripted exchange, a client in the test thread.
 * cmocka asserts only run in the test thread; the server records what it
 * saw and the test checks it after joining. Include after <cmocka.h>. */
#ifndef PT_OOB_HARNESS_H
#define PT_OOB_HARNESS_H
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include "util/clock.h"
#include "perftest/wire/oob.h"

struct srv {
	struct pt_oob c;
	int port;
	int delay_ms;            /* sleep before listening (retry test) */
	int (*fn)(struct srv *);
	int rc;
	char err[256];
	/* results */
	int32_t page, line;
	int mtu;
	struct pt_key k1, k2, k3;
	struct pt_bw_report rep;
};

static const struct pt_key srv_key __attribute__((unused)) = {
	.lid = 0, .out_reads = 16, .qpn = 0x1a2b3c, .psn = 0x777777,
	.rkey = 0x11223344, .vaddr = 0x7f0000001000ull, .srqn = 0,
	.gid = { [10] = 0xff, [11] = 0xff, [12] = 10, [13] = 0, [14] = 0,
		 [15] = 1 },
};
static const struct pt_key cli_key __attribute__((unused)) = {
	.lid = 0x12, .out_reads = 1, .qpn = 0x000abc, .psn = 0x123456,
	.rkey = 0xcafef00d, .vaddr = 0x7f9988776655ull, .srqn = 0x42,
	.gid = { 0xfe, 0x80, [15] = 0x99 },
};

static inline int64_t elapsed_ms(uint64_t t0)
{
	return (int64_t)((pt_now_ns() - t0) / 1000000);
}

static inline void *srv_main(void *arg)
{
	struct srv *s = arg;

	if (s->delay_ms) {
		usleep((useconds_t)s->delay_ms * 1000);
		if (pt_oob_listen(&s->c, "127.0.0.1", s->port, AF_INET)) {
			s->rc = -1000;
			goto out;
		}
	}
	s->rc = pt_oob_accept(&s->c);
	if (!s->rc)
		s->rc = s->fn(s);
out:
	snprintf(s->err, sizeof(s->err), "%s", pt_oob_strerror(&s->c));
	pt_oob_close(&s->c);
	return NULL;
}

static inline void srv_init(struct srv *s, int (*fn)(struct srv *))
{
	memset(s, 0, sizeof(*s));
	pt_oob_init(&s->c);
	pt_oob_set_timeout(&s->c, 5000);
	s->fn = fn;
}

static inline pthread_t srv_start(struct srv *s, int (*fn)(struct srv *),
			   const char *version)
{
	pthread_t t;

	srv_init(s, fn);
	pt_oob_set_version(&s->c, version);
	assert_int_equal(pt_oob_listen(&s->c, "127.0.0.1", 0, AF_INET), 0);
	s->port = pt_oob_listen_port(&s->c);
	assert_true(s->port > 0);
	assert_int_equal(pthread_create(&t, NULL, srv_main, s), 0);
	return t;
}

static inline void cli_connect(struct pt_oob *c, int port, int timeout_ms)
{
	pt_oob_init(c);
	pt_oob_set_timeout(c, timeout_ms);
	assert_int_equal(pt_oob_connect(c, "127.0.0.1", port, AF_INET), 0);
	assert_int_equal(c->is_server, 0);
}

#endif
