/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmacap's command line (capture/rdmacap.8): parsed and checked before any
 * device, socket or file is opened, so every bad input ends with a message
 * and exit 2 and nothing written. */
#ifndef CAP_OPTS_H
#define CAP_OPTS_H
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "seq.h"

#define CAP_MAX_LIST 64
#define CAP_NAME_MAX 64

enum cap_backend { CAP_PACKET, CAP_UD, CAP_RAW, CAP_SNIFFER };

enum cap_format { CAP_FMT_PCAP = 1, CAP_FMT_RAW = 2, CAP_FMT_HDR = 4 };

/* Where split receives put the payload (--payload-mem). */
enum cap_mem {
	CAP_MEM_AUTO,   /* huge pages when the host has them, else host memory */
	CAP_MEM_HOST,
	CAP_MEM_HUGE,   /* huge pages or stop */
	CAP_MEM_GPU,    /* GPU memory (dmabuf): refused by this build, with why */
};

struct cap_group {
	struct in_addr addr;
	uint16_t port;      /* 0: any (the `ud` backend has no ports) */
};

struct cap_opts {
	enum cap_backend backend;
	char devs[CAP_MAX_LIST][CAP_NAME_MAX];
	int ndevs;
	char netdevs[CAP_MAX_LIST][CAP_NAME_MAX];
	int nnetdevs;
	struct cap_group groups[CAP_MAX_LIST];
	int ngroups;
	struct in_addr sources[CAP_MAX_LIST];
	int nsources;       /* 0: every source, each found on the fly */
	const char *outdir;
	unsigned formats;   /* enum cap_format bits */
	unsigned app_header;/* split point: application header bytes */
	struct cap_seq_fmt seq;
	bool roce;
	double duration;    /* s; 0: until SIGINT */
	uint64_t count;     /* stop after this many packets; 0: no limit */
	const char *json;
	unsigned ring_mb;   /* packet: TPACKET_V3 ring */
	unsigned slots;     /* ud: receive WRs */
	unsigned snaplen;
	uint32_t qkey;
	unsigned max_sources;
	bool quiet;
	bool buffered;      /* no O_DIRECT for the files */
	enum cap_mem payload_mem;
	unsigned gpu;       /* --payload-mem gpu:N */
};

/* Parse argv (argv[1] is the backend). Returns 0, 1 after --help (printed
 * to stdout), or -1 with the reason in err. */
int cap_opts_parse(int argc, char **argv, struct cap_opts *o, char *err, size_t errlen);

/* The checks against this host: devices and netdevs exist, the header fits
 * the netdev's MTU, the output directory takes a file. 0 or -1 with err. */
int cap_opts_check(const struct cap_opts *o, char *err, size_t errlen);

const char *cap_backend_name(enum cap_backend b);
const char *cap_mem_name(enum cap_mem m);

/* --payload-mem gpu: why this build cannot, with what the host has (GPU
 * device nodes under dev_root, "/dev" but for tests). Always -1 with err. */
int cap_gpu_refusal(const struct cap_opts *o, const char *dev_root, char *err, size_t errlen);

/* The netdev's receive drops so far (sysfs rx_dropped + rx_missed_errors +
 * rx_fifo_errors): packets the host lost before any socket or QP saw them. */
uint64_t cap_netdev_rx_drops(const char *netdev);

/* MTU of a netdev from sysfs, or -1. */
int cap_netdev_mtu(const char *netdev);

#endif
