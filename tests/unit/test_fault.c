/* SPDX-License-Identifier: BSD-2-Clause */
/* fault.c: the PT_TEST_STOP_AT stages, the idle rule of the run loops and
 * the "peer has gone" probe on a socket. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "util/clock.h"
#include "perftest/engine/engine.h"
#include "perftest/engine/fault.h"

static const uint64_t S = 1000000000ull;

static void test_stage_names(void **state)
{
	(void)state;
	assert_int_equal(pt_stage_parse("version"), PT_STAGE_VERSION);
	assert_int_equal(pt_stage_parse("keys"), PT_STAGE_KEYS);
	assert_int_equal(pt_stage_parse("run"), PT_STAGE_RUN);
	assert_int_equal(pt_stage_parse("report"), PT_STAGE_REPORT);
	assert_int_equal(pt_stage_parse(NULL), PT_STAGE_NONE);
	assert_int_equal(pt_stage_parse(""), PT_STAGE_NONE);
	/* a typo must not silently disable a test's stop */
	assert_int_equal(pt_stage_parse("Run"), -1);
	assert_int_equal(pt_stage_parse("key"), -1);
	assert_int_equal(pt_stage_parse("reports"), -1);
	assert_int_equal(pt_stage_parse("none"), -1);
}

static void test_stop_init_from_env(void **state)
{
	(void)state;
	unsetenv("PT_TEST_STOP_AT");
	assert_int_equal(pt_test_stop_init(), 0);
	assert_int_equal(pt_test_stop_stage, PT_STAGE_NONE);
	setenv("PT_TEST_STOP_AT", "keys", 1);
	assert_int_equal(pt_test_stop_init(), 0);
	assert_int_equal(pt_test_stop_stage, PT_STAGE_KEYS);
	setenv("PT_TEST_STOP_AT", "bogus", 1);
	assert_int_equal(pt_test_stop_init(), -1);
	unsetenv("PT_TEST_STOP_AT");
	pt_test_stop_stage = PT_STAGE_NONE;
}

/* The hook stops the process once: a child stops at its stage, is
 * continued, and the same stage no longer stops it. */
static void test_stop_fires_once(void **state)
{
	int st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pt_test_stop_stage = PT_STAGE_RUN;
		PT_TEST_STOP(PT_STAGE_KEYS);   /* another stage: no stop */
		PT_TEST_STOP(PT_STAGE_RUN);    /* stops here */
		PT_TEST_STOP(PT_STAGE_RUN);    /* fired already */
		_exit(pt_test_stop_stage == PT_STAGE_NONE ? 7 : 1);
	}
	assert_int_equal(waitpid(pid, &st, WUNTRACED), pid);
	assert_true(WIFSTOPPED(st));
	assert_int_equal(WSTOPSIG(st), SIGSTOP);
	kill(pid, SIGCONT);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
}

static void test_idle_rule(void **state)
{
	(void)state;
	assert_int_equal(pt_idle_state(0, 5 * S), PT_IDLE_WAIT);
	assert_int_equal(pt_idle_state(PT_PEER_PROBE_NS - 1, 5 * S), PT_IDLE_WAIT);
	assert_int_equal(pt_idle_state(PT_PEER_PROBE_NS, 5 * S), PT_IDLE_PROBE);
	assert_int_equal(pt_idle_state(5 * S - 1, 5 * S), PT_IDLE_PROBE);
	assert_int_equal(pt_idle_state(5 * S, 5 * S), PT_IDLE_STALLED);
	/* --oob_timeout 0: never stalls, still probes */
	assert_int_equal(pt_idle_state(3600 * S, UINT64_MAX), PT_IDLE_PROBE);
	/* a timeout shorter than the probe delay wins */
	assert_int_equal(pt_idle_state(PT_PEER_PROBE_NS / 2, PT_PEER_PROBE_NS / 4), PT_IDLE_STALLED);
}

static void test_peer_closed_probe(void **state)
{
	int sv[2];
	char b;

	(void)state;
	assert_int_equal(pt_fd_peer_closed(-1), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pt_fd_peer_closed(sv[0]), 0);
	/* data waiting: the peer is alive and ahead; nothing is consumed */
	assert_int_equal(write(sv[1], "k", 1), 1);
	assert_int_equal(pt_fd_peer_closed(sv[0]), 0);
	assert_int_equal(pt_fd_peer_closed(sv[0]), 0);
	/* closed behind unread data: gone, and the data is still there */
	close(sv[1]);
	assert_int_equal(pt_fd_peer_closed(sv[0]), 1);
	assert_int_equal(read(sv[0], &b, 1), 1);
	assert_int_equal(b, 'k');
	assert_int_equal(pt_fd_peer_closed(sv[0]), 1);
	close(sv[0]);
}

/* A TCP peer that resets the connection (SO_LINGER 0) is gone too. */
static void test_peer_reset_probe(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int l, c, s;

	(void)state;
	l = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &len), 0);
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), 0);
	s = accept(l, NULL, NULL);
	assert_true(s >= 0);
	assert_int_equal(pt_fd_peer_closed(s), 0);
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
	close(c);
	usleep(20000);
	assert_int_equal(pt_fd_peer_closed(s), 1);
	close(s);
	close(l);
}

/* pt_run_idle: nothing before the probe delay, the peer's state after it,
 * a stall at the timeout whatever the peer does. */
static void test_run_idle(void **state)
{
	static struct pt_ctx c;
	struct pt_peer_watch w;
	int sv[2];
	uint64_t t = 100 * S;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	c.peer.oob.fd = sv[0];
	pt_peer_watch_oob(&w, &c.peer.oob);
	assert_int_equal(pt_run_idle(&w, t, t + 1, 5 * S), PT_RUN_OK); /* clock read before the poll */
	assert_int_equal(pt_run_idle(&w, t + 1000, t, 5 * S), PT_RUN_OK);
	assert_int_equal(pt_run_idle(&w, t + S, t, 5 * S), PT_RUN_OK);
	assert_int_equal(pt_run_idle(&w, t + 5 * S, t, 5 * S), PT_RUN_STALLED);
	close(sv[1]);
	assert_int_equal(pt_run_idle(&w, t + 1000, t, 5 * S), PT_RUN_OK);
	assert_int_equal(pt_run_idle(&w, t + S, t, 5 * S), PT_RUN_PEER_GONE);
	assert_int_equal(pt_run_idle(&w, t + 5 * S, t, 5 * S), PT_RUN_STALLED);
	close(sv[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_names),
		cmocka_unit_test(test_stop_init_from_env),
		cmocka_unit_test(test_stop_fires_once),
		cmocka_unit_test(test_idle_rule),
		cmocka_unit_test(test_peer_closed_probe),
		cmocka_unit_test(test_peer_reset_probe),
		cmocka_unit_test(test_run_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
