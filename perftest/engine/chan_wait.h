/* SPDX-License-Identifier: BSD-2-Clause */
/* -e's sleep on the completion channel: one read() per event (the one in
 * ibv_get_cq_event), as 6.06 makes, and no poll() before it.
 * A loop that sleeps must still wake for its stop rules (the duration,
 * SIGINT, the peer gone, a stall) when no event comes. A waker thread sends
 * the sleeping thread a real-time signal (SIGRTMIN) every PT_CHAN_WAKE_MS
 * while it sleeps. The handler has no SA_RESTART, so the read returns
 * EINTR. The waker sends nothing while the loop is not in the read, so no
 * other call of the loop's thread sees the signal, but for a send that
 * raced with the end of a read: it lands on what the loop does next
 * (arming, polling, posting), none of which blocks, and ends nothing. */
#ifndef PT_CHAN_WAIT_H
#define PT_CHAN_WAIT_H
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define PT_CHAN_WAKE_MS 100   /* the longest sleep before the stop rules run */

struct pt_chan_waker {
	_Atomic bool sleeping;      /* the loop's thread is in the channel's read */
	bool running;               /* the waker thread was started */
	bool stop;                  /* under mu: the waker must end */
	pthread_t sleeper;          /* the thread that started it: the loop's */
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic uint64_t wakes;     /* signals sent */
};

/* Starts the waker for the calling thread (which must be the one whose
 * loops sleep on the channel): 0, or -1 (said on stderr). */
int pt_chan_waker_start(struct pt_chan_waker *w);
/* Ends and joins it; nothing when it was not started. */
void pt_chan_waker_stop(struct pt_chan_waker *w);

/* One sleep on ch: 1 with an event (*cq, *ctx), 0 when the waker ended it
 * (no event), -1 when ibv_get_cq_event failed otherwise (errno). */
static inline __attribute__((always_inline)) int pt_chan_sleep(struct pt_chan_waker *w,
							       struct ibv_comp_channel *ch,
							       struct ibv_cq **cq, void **ctx)
{
	int rc;

	atomic_store_explicit(&w->sleeping, true, memory_order_relaxed);
	rc = ibv_get_cq_event(ch, cq, ctx);
	atomic_store_explicit(&w->sleeping, false, memory_order_relaxed);
	if (__builtin_expect(rc == 0, 1))
		return 1;
	if (errno != EINTR)
		return -1;
	/* a short read sets no errno: this EINTR must not outlive its wake */
	errno = 0;
	return 0;
}

#endif
