/* SPDX-License-Identifier: BSD-2-Clause */
/* The probes' semaphores (probes.h): one counter per probe in .probes, where
 * <sys/sdt.h>'s notes point and tracers (the kernel's uprobe reference
 * counter, bpftrace) raise them while attached. */
#include <stdint.h>
#include "probes.h"

#if PT_PROBES
#define PT_SEMAPHORE(name) \
	volatile unsigned short PT_PROBE_SEMAPHORE(name) __attribute__((section(".probes"))) = 0

PT_SEMAPHORE(run_start);
PT_SEMAPHORE(run_end);
PT_SEMAPHORE(post);
PT_SEMAPHORE(post_recv);
PT_SEMAPHORE(complete);
PT_SEMAPHORE(complete_recv);
#else
/* ISO C wants a translation unit to declare something */
extern int pt_probes_none;
#endif
