/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmamon's wr view (rdmamon.8): the WRs our tools post and reap, from
 * their USDT probes (docs/usdt.md). rdmamon.c hands it the command line
 * when argv[1] is "wr". */
#ifndef MONITOR_WR_RUN_H
#define MONITOR_WR_RUN_H

/* Runs `rdmamon wr ...` (argv[0] = "wr"); the exit status. */
int rm_wr_main(int argc, char **argv);

#endif
