/* SPDX-License-Identifier: BSD-2-Clause */
/* The probes' semaphores (probes.h): one counter per probe in .probes, where
 * <sys/sdt.h>'s notes point and tracers (the kernel's uprobe reference
 * counter, bpftrace) raise them while attached. */
#include <stdint.h>
#include "probes.h"

#if PT_PROBES
#define PT_SEMAPHORE(name) \
	volatile unsigned short PT_PROBE_SEMAPHORE(name) __attribute__((section(".probes"))) = 0

uint64_t pt_probes_fired;

PT_SEMAPHORE(run_start);
PT_SEMAPHORE(run_end);

/* The per-WR ones: one word, each semaphore's symbol (the name its note
 * gives) at its half (probes.h), so that the kernel raises that half. */
union pt_probe_wr_semaphores pt_probe_wr_semaphores
	__attribute__((section(".probes"), aligned(8))) = { 0 };
#define PT_SEMAPHORE_IN_WORD(name, half)                                              \
	__asm__(".globl perftest_" #name "_semaphore\n\t"                               \
		".set perftest_" #name "_semaphore, pt_probe_wr_semaphores + 2 * " #half)
PT_SEMAPHORE_IN_WORD(post, 0);
PT_SEMAPHORE_IN_WORD(post_recv, 1);
PT_SEMAPHORE_IN_WORD(complete, 2);
PT_SEMAPHORE_IN_WORD(complete_recv, 3);
#else
/* ISO C wants a translation unit to declare something */
extern int pt_probes_none;
#endif
