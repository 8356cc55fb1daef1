/* SPDX-License-Identifier: BSD-2-Clause */
/* The waker of -e's sleeps (chan_wait.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "chan_wait.h"

static int wake_sig, wake_err;   /* the signal; 0 and errno when it could not be caught */
static pthread_once_t wake_once = PTHREAD_ONCE_INIT;

static void on_wake(int sig)
{
	(void)sig;   /* the read it ended returns EINTR: nothing else to do */
}

/* Once per process: the first real-time signal glibc leaves to programs,
 * caught with no SA_RESTART (a restarted read would sleep on). */
static void wake_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake;
	sigemptyset(&sa.sa_mask);
	wake_sig = SIGRTMIN;
	if (sigaction(wake_sig, &sa, NULL)) {
		wake_err = errno;
		wake_sig = 0;
	}
}

static void *waker(void *arg)
{
	struct pt_chan_waker *w = arg;
	struct timespec t;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += PT_CHAN_WAKE_MS * 1000000L;
		if (t.tv_nsec >= 1000000000L) {
			t.tv_sec++;
			t.tv_nsec -= 1000000000L;
		}
		while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu, &t) == 0)
			;
		/* counted first: the sleeper, once woken, finds its wake counted */
		if (!w->stop && atomic_load_explicit(&w->sleeping, memory_order_relaxed)) {
			atomic_fetch_add_explicit(&w->wakes, 1, memory_order_relaxed);
			pthread_kill(w->sleeper, wake_sig);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int pt_chan_waker_start(struct pt_chan_waker *w)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int rc;

	memset(w, 0, sizeof(*w));
	pthread_once(&wake_once, wake_install);
	if (!wake_sig) {
		fprintf(stderr, " Couldn't catch the signal that wakes a sleep on the completion channel: %s\n",
			strerror(wake_err));
		return -1;
	}
	w->sleeper = pthread_self();
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* the waker takes no signal: SIGINT and SIGTERM stay the loop's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, waker, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		fprintf(stderr, " Couldn't start the thread that wakes a sleep on the completion channel: %s\n",
			strerror(rc));
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		return -1;
	}
	w->running = true;
	return 0;
}

void pt_chan_waker_stop(struct pt_chan_waker *w)
{
	if (!w->running)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	w->running = false;
}
