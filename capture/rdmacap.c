/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmacap: capture multicast streams and RoCE v2 frames (capture/rdmacap.8).
 * Exit: 0 done, 1 a run-time failure (device, socket, a write: the files
 * then hold every whole packet before it), 2 bad input, 3 the backend
 * cannot run on this device or without CAP_NET_RAW (nothing written). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "backend.h"
#include "opts.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	struct cap_opts o;
	char err[512];
	int rc;
	/* no SA_RESTART: a wait returns at once and the loop sees the flag */
	struct sigaction sa = { .sa_handler = on_signal };

	rc = cap_opts_parse(argc, argv, &o, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc || cap_opts_check(&o, err, sizeof(err))) {
		fprintf(stderr, "rdmacap: %s\n", err);
		return 2;
	}
	if (o.payload_mem == CAP_MEM_GPU) {
		cap_gpu_refusal(&o, "/dev", err, sizeof(err));
		fprintf(stderr, "rdmacap: %s\n", err);
		return 3;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	switch (o.backend) {
	case CAP_PACKET: return cap_run_packet(&o, &stop_flag);
	case CAP_UD: return cap_run_ud(&o, &stop_flag);
	default: return cap_run_raw(&o, &stop_flag);
	}
}
