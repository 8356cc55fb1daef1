/* SPDX-License-Identifier: BSD-2-Clause */
/* The stop flag every loop and wait of the engine reads. It lives here, not
 * in the tool that installs the signal handler, so the engine depends on no
 * layer above it. */
#include "loop.h"

volatile sig_atomic_t pt_interrupted;
