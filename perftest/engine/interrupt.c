/* SPDX-License-Identifier: BSD-2-Clause */
/* The stop flag every loop and wait of the engine reads. It lives here, not
 * in the tool that installs the signal handler, so the engine depends on no
 * layer above it. */
#include "loop.h"

volatile sig_atomic_t pt_interrupted;
uint64_t pt_lat_until = UINT64_MAX;
_Static_assert(__atomic_always_lock_free(sizeof(pt_lat_until), &pt_lat_until),
	       "pt_lat_until is stored by a signal handler: it must be lock-free");

void pt_interrupt(int sig)
{
	pt_interrupted = sig;
	__atomic_store_n(&pt_lat_until, 0, __ATOMIC_RELAXED);
}
