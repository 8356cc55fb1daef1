/* SPDX-License-Identifier: BSD-2-Clause */
/* What rdmamon's top/events view (rdmamon.c) and its lifecycle/conns views
 * (life_run.c) share on the command line: the one way to stop on an error,
 * -i/-c, and no operands left over. One copy, so the views word their
 * errors alike (rdmamon.8). */
#ifndef MONITOR_CLI_COMMON_H
#define MONITOR_CLI_COMMON_H

/* "rdmamon: " and the message on stderr, then exit 1. Called die, as the
 * many callers in rdmamon.c and life_run.c already call it. */
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* The getopt option c, if it is -i SECONDS or -c COUNT: its value stored
 * (rm_interval_parse, rm_count_parse), 1 returned; a bad value stops the
 * program naming the option. 0 for any other option. */
int rm_opt_interval_count(int c, const char *arg, double *interval, long *count);

/* After getopt: an argument left over (argv[optind] on) stops the program. */
void rm_opt_no_operands(int argc, char **argv);

#endif
