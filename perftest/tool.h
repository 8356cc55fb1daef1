/* SPDX-License-Identifier: BSD-2-Clause */
/* What every tool's main shares: parse, open the device (before any network
 * traffic, so bad input fails early), run the tool's flow, clean up. */
#ifndef PT_TOOL_H
#define PT_TOOL_H
#include <signal.h>
#include "engine.h"

#define PT_EXIT_FAIL 1
#define PT_EXIT_INTERRUPTED 130

typedef int (*pt_flow_fn)(struct pt_ctx *c);

/* main() of a tool: returns the process exit code. */
int pt_tool_main(const struct pt_tool *tool, pt_flow_fn flow, int argc, char **argv);
/* Session preamble, message size rules for the peer's MTU, resources. */
int pt_tool_prepare(struct pt_ctx *c);

int pt_send_bw_flow(struct pt_ctx *c);

#endif
