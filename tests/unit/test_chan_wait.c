/* SPDX-License-Identifier: BSD-2-Clause */
/* -e's sleep on the completion channel (perftest/engine/chan_wait.h): an
 * event is one read; a sleep with no event ends within two wake periods
 * (EINTR, counted as a wake, not a failure); the waker sends nothing while
 * no one sleeps and takes neither SIGINT nor SIGTERM; stop joins it. The
 * channel is a pipe whose reads this file's ibv_get_cq_event makes, as
 * libibverbs' does (one read of the event). A hang is cut by alarm(). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "perftest/engine/chan_wait.h"

static unsigned reads;

/* The engine, linked statically, calls this one: the event is the CQ's
 * address, written into the pipe. */
int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct ibv_cq *ev;

	reads++;
	if (read(channel->fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
		return -1;
	*cq = ev;
	*cq_context = ev->cq_context;
	return 0;
}

struct chan {
	int fd[2];
	struct ibv_comp_channel ch;
	struct pt_chan_waker w;
};

static void chan_open(struct chan *c)
{
	memset(c, 0, sizeof(*c));
	assert_int_equal(pipe(c->fd), 0);
	c->ch.fd = c->fd[0];
	assert_int_equal(pt_chan_waker_start(&c->w), 0);
	assert_true(c->w.running);
	reads = 0;
	alarm(10);   /* a sleep nothing ends fails the test instead of hanging it */
}

static void chan_close(struct chan *c)
{
	alarm(0);
	pt_chan_waker_stop(&c->w);
	assert_false(c->w.running);
	close(c->fd[0]);
	close(c->fd[1]);
}

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* An event already there: one read, the CQ and its context back, no wake. */
static void test_event(void **state)
{
	struct ibv_cq cq = { .cq_context = &cq }, *got = NULL, *want = &cq;
	struct chan c;
	void *ctx = NULL;

	(void)state;
	chan_open(&c);
	assert_int_equal(write(c.fd[1], &want, sizeof(want)), (ssize_t)sizeof(want));
	assert_int_equal(pt_chan_sleep(&c.w, &c.ch, &got, &ctx), 1);
	assert_ptr_equal(got, &cq);
	assert_ptr_equal(ctx, &cq);
	assert_int_equal(reads, 1);
	assert_false(c.w.sleeping);
	chan_close(&c);
}

/* No event: each sleep ends with 0 (woken), by the waker's signal, within
 * two periods (the longest: a signal that landed just before the read);
 * then an event written meanwhile is still there for the next sleep. */
static void test_woken(void **state)
{
	struct ibv_cq cq = { .cq_context = NULL }, *got, *want = &cq;
	struct chan c;
	void *ctx;

	(void)state;
	chan_open(&c);
	for (int k = 0; k < 3; k++) {
		uint64_t t0 = now_ms(), took;

		assert_int_equal(pt_chan_sleep(&c.w, &c.ch, &got, &ctx), 0);
		took = now_ms() - t0;
		assert_true(took <= 10 * PT_CHAN_WAKE_MS);   /* two, with room for a loaded machine */
		assert_true(c.w.wakes >= (uint64_t)k + 1);
		assert_false(c.w.sleeping);
	}
	assert_int_equal(reads, 3);
	assert_int_equal(write(c.fd[1], &want, sizeof(want)), (ssize_t)sizeof(want));
	assert_int_equal(pt_chan_sleep(&c.w, &c.ch, &got, &ctx), 1);
	assert_ptr_equal(got, &cq);
	chan_close(&c);
}

/* A read that fails otherwise (the pipe's write end closed: 0 bytes) is a
 * failure (-1), not a wake. */
static void test_failed(void **state)
{
	struct ibv_cq *got;
	struct chan c;
	void *ctx;

	(void)state;
	chan_open(&c);
	close(c.fd[1]);
	assert_int_equal(pt_chan_sleep(&c.w, &c.ch, &got, &ctx), -1);
	c.fd[1] = open("/dev/null", O_WRONLY);   /* for chan_close */
	chan_close(&c);
}

/* Nobody sleeping: three periods of the caller's own nanosleep pass with
 * no signal (it is not cut short, EINTR) and no wake counted. */
static void test_quiet(void **state)
{
	struct timespec t = { .tv_sec = 0, .tv_nsec = 3 * PT_CHAN_WAKE_MS * 1000000L }, left;
	struct chan c;

	(void)state;
	chan_open(&c);
	assert_int_equal(nanosleep(&t, &left), 0);
	assert_int_equal(c.w.wakes, 0);
	chan_close(&c);
}

/* Signal numbers in a task's mask line of /proc (SigBlk: a hex mask). */
static bool blocks(const char *status_path, int sig)
{
	char line[256];
	unsigned long long mask = 0;
	bool found = false;
	FILE *f = fopen(status_path, "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			found = true;
	fclose(f);
	return found && (mask >> (sig - 1) & 1);
}

/* The waker blocks SIGINT and SIGTERM (they stay the loop's: its handler
 * lowers the run's bound), and the caller's mask is as it was. */
static void test_waker_mask(void **state)
{
	char path[300];
	struct dirent *e;
	struct chan c;
	DIR *d;
	int others = 0;
	sigset_t mine;

	(void)state;
	chan_open(&c);
	d = opendir("/proc/self/task");
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == (int)gettid())
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		assert_true(blocks(path, SIGINT));
		assert_true(blocks(path, SIGTERM));
		others++;
	}
	closedir(d);
	assert_int_equal(others, 1);
	assert_int_equal(pthread_sigmask(SIG_SETMASK, NULL, &mine), 0);
	assert_false(sigismember(&mine, SIGINT));
	assert_false(sigismember(&mine, SIGTERM));
	chan_close(&c);
	d = opendir("/proc/self/task");   /* joined: this thread alone */
	others = 0;
	while ((e = readdir(d)))
		others += e->d_name[0] != '.';
	closedir(d);
	assert_int_equal(others, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_event),
		cmocka_unit_test(test_woken),
		cmocka_unit_test(test_failed),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_waker_mask),
	};

	return cmocka_run_group_tests_name("sleep on the completion channel", tests, NULL, NULL);
}
