/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmamon's lifecycle and conns views (rdmamon.8): their options, hooks
 * and loop. rdmamon.c hands them the command line when argv[1] names one. */
#ifndef MONITOR_LIFE_RUN_H
#define MONITOR_LIFE_RUN_H

struct bpf_object;

/* Is this argv[1] one of these views ("lifecycle", "conns")? */
int rm_life_is_view(const char *name);
/* Runs the view argv[0] names; the exit status. */
int rm_life_main(int argc, char **argv);
/* The other views do not load the life_* programs. */
void rm_life_skip(struct bpf_object *obj);

#endif
