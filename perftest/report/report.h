/* SPDX-License-Identifier: BSD-2-Clause */
/* Human-readable report in the layout of the Debian perftest 6.06 binary
 * (docs/upstream-behaviour.md §7, docs/wire-protocol.md §5.5). Everything is
 * written to a caller's FILE*, so tests can capture it with open_memstream().
 * Functions return 0, or -EIO when the stream reports an error.
 *
 * JSON lives in json.h; this file prints text only.
 */
#ifndef PT_REPORT_H
#define PT_REPORT_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "results.h" /* pt_bw_result, pt_lat_result, pt_lat_dur_result */

/* 87 dashes and a newline. */
#define PT_RESULT_LINE \
	"---------------------------------------------------------------------------------------\n"

/* --output=...: FULL prints tables, the others one bare number. */
enum pt_output_mode {
	PT_REPORT_FULL = 0,
	PT_REPORT_BANDWIDTH,
	PT_REPORT_MSG_RATE,
	PT_REPORT_LATENCY,
};

/* Everything the header block prints. Optional lines are skipped when the
 * value is -1 (or <= 1 for the post lists). Strings must not be NULL except
 * where noted. */
struct pt_test_info {
	const char *test_name;     /* "Send BW Test", "RDMA_Write Latency Test" */
	bool events;               /* -e: " Test with events. Using %s_comp%d" */
	const char *events_name;   /* the %s of that line (NULL: "") */
	int events_vector;         /* the %d of that line */
	bool mcast_ud;             /* -g: " MultiCast runs on UD!" */
	bool dual_port;            /* ON/OFF */
	const char *device;        /* "mlx5_0" */
	int num_qps;
	const char *transport;     /* "IB" | "IW" | "Unknown" */
	const char *connection;    /* "RC" | "UC" | "UD" | ... */
	bool use_srq;              /* ON/OFF */
	const char *pcie_relax;    /* "ON" | "OFF" | "Unsupported" ... */
	bool wr_api;               /* ibv_wr* API: ON/OFF */
	int tx_depth;              /* -1: not printed (server without -b) */
	int post_list;             /* printed when > 1 */
	int recv_post_list;        /* printed when > 1 */
	int rx_depth;              /* -1: not printed */
	int cq_mod;                /* -1: not printed (LAT tests) */
	unsigned long mtu;         /* bytes */
	const char *link_type;     /* "IB" | "Ethernet" */
	int gid_index;             /* -1: not printed */
	bool outstanding_reads;    /* READ/ATOMIC: " Outstand reads" line */
	int max_inline;            /* " Max inline data : %d[B]" otherwise */
	int out_reads;
	bool rdma_cm_qps;          /* " rdma_cm QPs\t : ON|OFF" */
	const char *data_ex_method; /* "Ethernet" | "rdma_cm" */
	int tos;                   /* -1: not printed */
	/* placement (helper numa): the header line only when numa_shown */
	bool numa_shown;           /* " NUMA node : %s\t\tCPU affinity : %s" */
	const char *numa_node;     /* "1 (NIC)", "OFF (--disable_numa)", "unknown" (NULL: "") */
	const char *cpu_affinity;  /* "0-3,8" (NULL: "") */
	int numa_node_id;          /* JSON NUMA_node: -1 none */
	int nic_numa_node;         /* JSON NIC_NUMA_node: -1 unknown */
	const char *numa_source;   /* JSON NUMA_source: "NIC" | "numa_node" | "disable_numa" | "none" */
};

/* One address line (docs/wire-protocol.md §5.5); the flags choose the optional parts the
 * way perftest does for each verb: OUT (READ), RKey+VAddr (READ, WRITE),
 * SRQn (XRC, DC), and the GID line (gid_index > -1, or the MGID side). */
struct pt_addr_print {
	bool remote;       /* "remote" instead of "local" */
	uint32_t lid;
	uint32_t out_reads;
	uint32_t qpn, psn, rkey;
	uint64_t vaddr;
	uint32_t srqn;
	bool show_out, show_rkey_vaddr, show_srqn;
	bool show_gid;
	bool gid_is_mgid;  /* label "MGID" instead of "GID" */
	uint8_t gid[16];
};

int pt_report_result_line(FILE *f);
/* RESULT_LINE, the test name line, the parameter lines, RESULT_LINE. */
int pt_report_header(FILE *f, const struct pt_test_info *info);
int pt_report_address(FILE *f, const struct pt_addr_print *a);

/* BW table: header (MB/sec as in 6.06, Gb/sec with --report_gbits, plus
 * CPU_Util[%] with --cpu_util), then one row per size. */
int pt_report_bw_header(FILE *f, bool gbits, bool cpu_util);
int pt_report_bw_row(FILE *f, const struct pt_bw_result *r);
int pt_report_lat_header(FILE *f);
int pt_report_lat_row(FILE *f, const struct pt_lat_result *r);
int pt_report_lat_dur_header(FILE *f);
int pt_report_lat_dur_row(FILE *f, const struct pt_lat_dur_result *r);
/* Our addition after a duration LAT table (which stays upstream's): a
 * labelled line, then a table of t_min, p50 ... p99.999 and t_max over the
 * round trips of the window. Prints nothing when !r->has_pct. */
int pt_report_lat_dur_pct(FILE *f, const struct pt_lat_dur_result *r);

/* --output=...: print just "%lf\n". BW: BANDWIDTH → bw_avg, MSG_RATE →
 * msg_rate; LAT and duration LAT: LATENCY → t_avg. Any other mode for that
 * kind of row gives -EINVAL and prints nothing. */
int pt_report_bw_number(FILE *f, enum pt_output_mode m,
			const struct pt_bw_result *r);
int pt_report_lat_number(FILE *f, enum pt_output_mode m,
			 const struct pt_lat_result *r);
int pt_report_lat_dur_number(FILE *f, enum pt_output_mode m,
			     const struct pt_lat_dur_result *r);

#endif
