/* SPDX-License-Identifier: BSD-2-Clause */
/* The run parameters of every tool, filled by pt_parse_args() (options.h).
 * One struct for all eight tools, grouped by concern. Enum values that travel
 * on the wire (parameter negotiation, docs/wire-protocol.md §7) keep upstream's
 * numbering so they can be sent as they are. */
#ifndef PT_PARAMS_H
#define PT_PARAMS_H
#include <stdbool.h>
#include <stdint.h>

enum pt_verb {
	PT_VERB_SEND = 0,
	PT_VERB_WRITE = 2,
	PT_VERB_READ = 4,
	PT_VERB_ATOMIC = 5,
};

enum pt_kind {
	PT_KIND_LAT = 0,
	PT_KIND_BW = 1,
};

enum pt_conn_type {
	PT_CONN_RC = 0,
	PT_CONN_UC = 1,
	PT_CONN_UD = 2,
};
#define PT_CONN_BIT(t) (1u << (t))

enum pt_atomic_type {
	PT_ATOMIC_CMP_AND_SWAP = 0,
	PT_ATOMIC_FETCH_AND_ADD = 1,
};

/* How sizes are walked: one size, the -a sweep, or --run_infinitely. */
enum pt_test_method {
	PT_METHOD_REGULAR = 0,
	PT_METHOD_ALL = 1,
	PT_METHOD_INFINITELY = 2,
};

/* What ends a run: a number of iterations or a time (-D, --run_infinitely). */
enum pt_test_type {
	PT_TEST_ITERATIONS = 0,
	PT_TEST_DURATION = 1,
};

/* --output: full tables, or one bare number. */
enum pt_output {
	PT_OUTPUT_FULL = 0,
	PT_OUTPUT_BANDWIDTH,
	PT_OUTPUT_MESSAGE_RATE,
	PT_OUTPUT_LATENCY,
};

/* Option groups a tool may accept (struct pt_tool.option_groups). An option
 * outside the tool's groups is refused by the parser and left out of -h. */
enum pt_option_group {
	PT_OPTG_BW = 1u << 0,          /* -b -l -q -Q -N -t --run_infinitely --cpu_util ... */
	PT_OPTG_LAT = 1u << 1,         /* -C -H -U */
	PT_OPTG_ALL_SIZES = 1u << 2,   /* -a */
	PT_OPTG_EVENTS = 1u << 3,      /* -e */
	PT_OPTG_INLINE = 1u << 4,      /* -I */
	PT_OPTG_OUTS = 1u << 5,        /* -o */
	PT_OPTG_ATOMIC_TYPE = 1u << 6, /* -A */
	PT_OPTG_MCAST = 1u << 7,       /* -g -M */
	PT_OPTG_RX_DEPTH = 1u << 8,    /* -r */
	PT_OPTG_MCAST_RX = 1u << 9,    /* --connectionless (a BW receiver) */
	/* groups of options we refuse, so that the other tools refuse them as
	 * upstream does (docs/upstream-behaviour.md §2) */
	PT_OPTG_SEND_VERB = 1u << 10,  /* --use-srq --send_with_imm --recv_post_list */
	PT_OPTG_WRITE_VERB = 1u << 11, /* --write_with_imm */
	PT_OPTG_NULL_MR = 1u << 12,    /* --use-null-mr: write and read tools */
	PT_OPTG_DATA_VALIDATION = 1u << 13, /* --data_validation: write/read BW */
	PT_OPTG_WARM_UP = 1u << 14,    /* --perform_warm_up: RDMA BW tools */
};

/* One tool: what it measures and which options it takes. */
struct pt_tool {
	const char *name;          /* "ib_send_bw" */
	enum pt_verb verb;
	enum pt_kind kind;
	unsigned conn_types;       /* PT_CONN_BIT() of each allowed -c value */
	unsigned option_groups;    /* enum pt_option_group bits */
	uint64_t default_iters;    /* 1000; 5000 for ib_write_bw */
};

extern const struct pt_tool pt_tool_send_bw, pt_tool_send_lat;
extern const struct pt_tool pt_tool_write_bw, pt_tool_write_lat;
extern const struct pt_tool pt_tool_read_bw, pt_tool_read_lat;
extern const struct pt_tool pt_tool_atomic_bw, pt_tool_atomic_lat;

/* Look a tool up by name ("ib_read_lat"); a leading directory is ignored,
 * so argv[0] can be passed. NULL when unknown. */
const struct pt_tool *pt_tool_find(const char *name);

/* Limits and defaults shared with the rest of the engine. */
#define PT_DEFAULT_OOB_PORT 18515
#define PT_DEFAULT_OOB_TIMEOUT_SEC 60
#define PT_DEFAULT_SIZE_BW 65536u
#define PT_DEFAULT_SIZE_LAT 2u
#define PT_ATOMIC_SIZE 8u
#define PT_MAX_SIZE 8388608u          /* -a sweeps 2 .. 2^23 */
#define PT_NO_PEAK_ITERS 20000u       /* more iterations: no BW peak */
#define PT_UD_UC_MAX_RX_DEPTH 16000
#define PT_BIG_MSG_SIZE 8192u         /* above: cq_mod 1 unless told */
#define PT_DEFAULT_OUT_JSON_FILE "perftest_out.json"

#define PT_DEVNAME_MAX 64      /* IBV_SYSFS_NAME_MAX */
#define PT_HOST_MAX 256        /* a DNS name is at most 253 characters */
#define PT_PATH_MAX 1024
#define PT_VERSION_MAX 16      /* the version message is 16 bytes with NUL */
#define PT_IP_MAX 64           /* numeric IPv6 with a scope, and the NUL */

struct pt_dev_params {
	char ib_devname[PT_DEVNAME_MAX]; /* -d; "" = first device */
	int ib_port;                     /* -i, 1 */
	int gid_index;                   /* -x; -1 = none (IB) / automatic (RoCE) */
	bool gid_index_given;            /* -x given: no automatic GID scan */
	int mtu;                         /* -m in bytes; 0 = port active MTU */
	int sl;                          /* -S, 0 */
	int tclass;                      /* --tclass, 0 */
	int tos;                         /* -T; -1 = not set (rdma_cm only) */
	int qp_timeout;                  /* -u, 14 (4.096 us * 2^n) */
};

struct pt_conn_params {
	enum pt_conn_type type;          /* -c, RC */
	bool type_given;
	int num_qps;                     /* -q, 1 */
	bool rdma_cm_qps;                /* -R: data QPs connected by rdma_cm */
	bool rdma_cm_oob;                /* -z (or -R): OOB exchange over rdma_cm */
};

struct pt_traffic_params {
	uint64_t size;                   /* -s; PT_MAX_SIZE with -a (allocation) */
	bool size_given;
	uint64_t iters;                  /* -n; 0 in duration mode */
	bool iters_given;
	enum pt_test_type test_type;
	enum pt_test_method test_method;
	bool all_sizes;                  /* -a (test_method ALL) */
	bool run_infinitely;             /* --run_infinitely (test_method INFINITELY) */
	int duration;                    /* -D seconds; also the report period of
	                                  * --run_infinitely (5) */
	bool duration_given;             /* -D given (not just the default period) */
	int margin;                      /* -f seconds, duration/4 */
	int wait_destroy;                /* --wait_destroy: seconds before clean-up */
	int tx_depth;                    /* -t; BW 128, LAT 1; <= iters */
	bool tx_depth_given;
	int rx_depth;                    /* -r; SEND 512, RDMA 1; see options_check.c */
	bool rx_depth_given;
	int cq_mod;                      /* -Q; 100, <= tx_depth */
	bool cq_mod_given;
	int post_list;                   /* -l, 1 */
	int inline_size;                 /* -I; -1 = device default (pt_inline_default) */
	int out_reads;                   /* -o; 0 = device max_qp_rd_atom */
	enum pt_atomic_type atomic_type; /* -A, FETCH_AND_ADD */
	bool bidirectional;              /* -b */
	bool use_event;                  /* -e */
	bool use_old_post_send;          /* --use_old_post_send (default: ibv_wr_*) */
	bool with_imm;                   /* --send_with_imm / --write_with_imm: imm data 0 */
	bool use_srq;                    /* --use-srq: one SRQ of rx_depth for all QPs */
	int cqe_poll;                    /* --cqe_poll: a fixed CQ poll batch; 0 = not given */
	int recv_post_list;              /* --recv_post_list: receive WRs per post, 1 */
	bool warm_up;                    /* --perform_warm_up: RDMA BW senders */
	bool no_dynamic_poll;            /* --disable_dynamic_polling: fixed batch of 16 */
};

struct pt_mcast_params {
	bool enabled;                    /* -g (forces UD, one QP) */
	uint8_t mgid[16];                /* -M, default PT_MGID_DEFAULT_INIT */
	bool mgid_given;
	bool connectionless;             /* --connectionless: receive only, no peer */
};

struct pt_oob_params {
	char servername[PT_HOST_MAX];    /* positional; "" on the server */
	bool is_client;                  /* servername given */
	int port;                        /* -p, 18515 */
	int timeout_sec;                 /* --oob_timeout, 60; 0 = wait forever */
	bool dont_xchg_versions;         /* --dont_xchg_versions */
	bool ipv6_addr;                  /* --ipv6-addr: the TCP channel over IPv6 only */
	char source_ip[PT_IP_MAX];       /* --bind_source_ip: client binds to it; "" none */
	/* --announce_version=STR: test-only, hidden from -h. Announces STR in the
	 * 16-byte version message instead of WIRE_VERSION, so lab tests can play
	 * an older or newer peer. "" = announce WIRE_VERSION. */
	char fake_version[PT_VERSION_MAX];
};

struct pt_report_params {
	bool gbits;                      /* --report_gbits: Gb/s instead of MiB/s */
	bool no_peak;                    /* -N, or forced (see options_check.c) */
	bool out_json;                   /* --out_json */
	char out_json_file[PT_PATH_MAX]; /* --out_json_file, "perftest_out.json" */
	enum pt_output output;           /* --output */
	bool cpu_util;                   /* --cpu_util (duration mode) */
	bool report_both;                /* --report-both (-b tables) */
	bool report_cycles;              /* -C: latency in cycles */
	bool histogram;                  /* -H: sorted samples */
	bool unsorted;                   /* -U: unsorted samples */
	bool cpu_freq_warn_off;          /* -F: no CPU frequency warnings */
	double limit_bw;                 /* -w: fail below this BW average; < 0 off */
	double limit_msgrate;            /* -y: fail below this Mpps; < 0 off */
};

/* Reserved for the tracing plugin layer; the parser only stores them. */
struct pt_plugin_params {
	char trace_file[PT_PATH_MAX];    /* --trace=FILE */
	char plugin_path[PT_PATH_MAX];   /* --plugin=PATH[:ARGS] */
	char plugin_args[PT_PATH_MAX];
};

/* Issue 18, memory group: where the buffers live and what they hold. */
struct pt_mem_params {
	bool use_hugepages;              /* --use_hugepages: MAP_HUGETLB buffers */
	bool mr_per_qp;                  /* --mr_per_qp: one MR over each QP's regions */
	char mmap_file[PT_PATH_MAX];     /* --mmap FILE: buffers mapped from it; "" none */
	uint64_t mmap_offset;            /* --mmap-offset: where in FILE, page aligned */
	bool null_mr;                    /* --use-null-mr: local SGEs on ibv_alloc_null_mr */
	char payload_file[PT_PATH_MAX];  /* --payload_file_path: hex dword pattern */
	bool data_validation;            /* --data_validation: fill, then check arrivals */
	bool data_validation_debug;      /* --data_validation_debug: and print offsets */
	bool odp;                        /* --odp: IBV_ACCESS_ON_DEMAND MRs */
};

/* helper "pace": the rate limiter, --latency_gap, --reversed (perftest/tools/ib_send_bw.1) */
enum pt_rate_units {
	PT_RATE_GBPS = 0,                /* g: 10^9 bits per second (upstream's default) */
	PT_RATE_MIBPS,                   /* M: 2^20 bytes per second */
	PT_RATE_PPS,                     /* p: messages per second */
};
enum pt_rate_limit_type {
	PT_RATE_LIMIT_OFF = 0,
	PT_RATE_LIMIT_SW,                /* bursts paced by the sender's loop */
	PT_RATE_LIMIT_HW,                /* the device's packet pacing, per QP */
	PT_RATE_LIMIT_PP,                /* mlx5 packet pacing indexes: not in this build */
};
struct pt_pace_params {
	double rate_limit;               /* --rate_limit in rate_units; 0 = off */
	enum pt_rate_units rate_units;   /* --rate_units M|g|p, g */
	bool rate_units_given;
	enum pt_rate_limit_type limit_type; /* --rate_limit_type; HW when only --rate_limit */
	int burst_size;                  /* --burst_size; 0 = tx_depth (SW) / device's (HW) */
	int typical_pkt_size;            /* --typical_pkt_size (HW); 0 = not given */
	int latency_gap_us;              /* --latency_gap: pause before each latency post */
	bool reversed;                   /* --reversed: the BW server sends to the client */
};

/* Addressing, port and counter options (issue 18, group "addr"). */
#define PT_FLOW_LABEL_MAX 16           /* --flow_label entries: one per QP, cycled */
#define PT_COUNTERS_MAX 16             /* --report-counters entries */
enum pt_force_link {
	PT_LINK_ANY = 0,
	PT_LINK_IB,
	PT_LINK_ETHERNET,
};
struct pt_addr_params {
	bool ipv6_gid;                   /* --ipv6: prefer IPv6 GIDs in the automatic choice */
	int flow_labels[PT_FLOW_LABEL_MAX]; /* --flow_label a[,b...]: GRH flow label of QP i */
	int num_flow_labels;             /* 0 = not given (label 0) */
	int pkey_index;                  /* --pkey_index, 0 */
	int retry_count;                 /* --retry_count: rdma_cm's, 7 */
	int dlid;                        /* --dlid: remote LID override; 0 = the peer's */
	enum pt_force_link force_link;   /* --force-link IB|Ethernet */
	bool no_relaxed;                 /* --disable_pcie_relaxed */
	char counters[PT_COUNTERS_MAX][PT_PATH_MAX / 8]; /* -W: sysfs paths under ports/N/ */
	int num_counters;
	bool dualport;                   /* -O */
	bool report_per_port;            /* --report-per-port */
};

struct pt_params {
	const struct pt_tool *tool;
	struct pt_dev_params dev;
	struct pt_conn_params conn;
	struct pt_traffic_params traffic;
	struct pt_mcast_params mcast;
	struct pt_oob_params oob;
	struct pt_report_params report;
	struct pt_plugin_params plugin;
	struct pt_mem_params mem;        /* issue 18, memory group */
	struct pt_pace_params pace;      /* helper "pace" */
	/* group "addr": --ipv6 --flow_label --pkey_index --retry_count --dlid
	 * --force-link --disable_pcie_relaxed -W -O --report-per-port */
	struct pt_addr_params addr;
	/* placement and queues (helper numa; docs/upstream-behaviour.md "Placement") */
	int numa_node;                   /* --numa_node: -1 = the NIC's node */
	char pin_cores[256];             /* --pin_cores: a CPU list; "" = the node's CPUs */
	bool disable_numa;               /* --disable_numa: no automatic node */
	int comp_vector;                 /* -X/--vector: the CQs' completion vector (-e) */
	bool vector_given;
	bool no_lock;                    /* --no_lock: QPs and CQs in a thread domain */
};

/* The BW side that sends: the client, or the server with --reversed (the
 * out-of-band roles stay: the client still connects and writes first). */
static inline bool pt_bw_sender_side(const struct pt_params *p)
{
	return p->oob.is_client != p->pace.reversed;
}

/* The receiver consumes receive WRs: SEND, and WRITE with immediate data. */
static inline bool pt_recv_verb(const struct pt_params *p)
{
	return p->tool->verb == PT_VERB_SEND ||
	       (p->tool->verb == PT_VERB_WRITE && p->traffic.with_imm);
}

/* Fill *p with the tool's defaults, before options and derived rules. */
void pt_params_defaults(const struct pt_tool *tool, struct pt_params *p);

/* Inline size to request: -I if given, else the upstream default for a
 * device perftest knows (LAT: write 220, send UD 188, send RC/UC 236), and
 * 0 for BW tests and for unknown devices such as rxe and siw. */
int pt_inline_default(const struct pt_params *p, bool known_device);

#endif
