/* SPDX-License-Identifier: BSD-2-Clause */
/* The option table (names as upstream spells them, docs/upstream-behaviour.md §1, §2)
 * and the -h listing generated from it. Upstream options we do not implement
 * stay in the table so they are refused with "not supported by this build"
 * instead of "unrecognized". */
#include <stdio.h>
#include "options.h"
#include "options_int.h"

#define OPT(id, s, l, arg, groups, argname, help) \
	{ PT_OPT_##id, s, l, NULL, arg, groups, 0, argname, help }
/* Refused options: help holds the reason. has_arg is upstream's (the
 * parity script reads it); a refused option never takes the next word. */
#define HW(s, l, arg, groups, why) \
	{ PT_OPT_UNSUPPORTED, s, l, NULL, arg, groups, PT_OPTF_UNSUPPORTED, NULL, why }
#define LATER(s, l, arg, groups, what) \
	{ PT_OPT_UNSUPPORTED, s, l, NULL, arg, groups, PT_OPTF_NOT_YET, NULL, what }

static const struct pt_optdef optdefs[] = {
	OPT(ALL, 'a', "all", false, PT_OPTG_ALL_SIZES, NULL,
	    "Run sizes from 2 till 2^23"),
	OPT(ATOMIC_TYPE, 'A', "atomic_type", true, PT_OPTG_ATOMIC_TYPE, "type",
	    "Type of atomic operation: CMP_AND_SWAP or FETCH_AND_ADD (default FETCH_AND_ADD)"),
	OPT(BIDIR, 'b', "bidirectional", false, PT_OPTG_BW, NULL,
	    "Measure bidirectional bandwidth (default unidirectional)"),
	OPT(CONNECTION, 'c', "connection", true, 0, "type",
	    "Connection type"),
	OPT(REPORT_CYCLES, 'C', "report-cycles", false, PT_OPTG_LAT, NULL,
	    "Report times in cpu cycle units (default microseconds)"),
	OPT(IB_DEV, 'd', "ib-dev", true, 0, "dev",
	    "Use IB device <dev> (default first device found)"),
	OPT(DURATION, 'D', "duration", true, 0, "sec",
	    "Run the test for <sec> seconds instead of a number of iterations"),
	OPT(EVENTS, 'e', "events", false, PT_OPTG_EVENTS, NULL,
	    "Sleep on CQ events (default poll)"),
	OPT(MARGIN, 'f', "margin", true, 0, "sec",
	    "With -D: do not measure the first and last <sec> seconds (default duration/4)"),
	OPT(CPU_FREQ, 'F', "CPU-freq", false, 0, NULL,
	    "Do not warn about CPU frequency scaling"),
	/* -g is in every tool's table so that non-SEND tools say why not. */
	OPT(MCG, 'g', "mcg", false, 0, NULL,
	    "Send messages to a multicast group (UD, one QP)"),
	OPT(HELP, 'h', "help", false, 0, NULL,
	    "Show this help screen"),
	/* upstream's table says "histogrm"; the documented spelling works too */
	{ PT_OPT_HISTOGRAM, 'H', "report-histogrm", "report-histogram", false, PT_OPTG_LAT, 0,
	  NULL, "Print out all results, sorted (default summary only)" },
	OPT(IB_PORT, 'i', "ib-port", true, 0, "port",
	    "Use port <port> of the IB device (default 1)"),
	OPT(INLINE, 'I', "inline_size", true, PT_OPTG_INLINE, "size",
	    "Max size of message to be sent inline (default: device dependent, 0 on rxe/siw)"),
	OPT(POST_LIST, 'l', "post_list", true, PT_OPTG_BW, "size",
	    "Post a list of <size> WQEs at once (instead of single posts)"),
	OPT(MTU, 'm', "mtu", true, 0, "mtu",
	    "MTU: 256, 512, 1024, 2048 or 4096 (default port MTU)"),
	OPT(MGID, 'M', "MGID", true, PT_OPTG_MCAST, "mgid",
	    "With -g: multicast group, as a.b.c.d, 16 colon-separated bytes or IPv6 text"),
	OPT(ITERS, 'n', "iters", true, 0, "iters",
	    "Number of exchanges, at least 5"),
	OPT(NO_PEAK, 'N', "noPeak", false, PT_OPTG_BW, NULL,
	    "Don't measure peak bandwidth"),
	OPT(OUTS, 'o', "outs", true, PT_OPTG_OUTS, "num",
	    "Number of outstanding read/atomic requests (default device max)"),
	OPT(PORT, 'p', "port", true, 0, "port",
	    "Listen on/connect to TCP port <port> (default 18515)"),
	OPT(QP, 'q', "qp", true, PT_OPTG_BW, "num",
	    "Number of QPs (default 1)"),
	OPT(CQ_MOD, 'Q', "cq-mod", true, PT_OPTG_BW, "num",
	    "Generate a completion every <num> sends (default 100)"),
	OPT(RX_DEPTH, 'r', "rx-depth", true, PT_OPTG_RX_DEPTH, "dep",
	    "Size of the receive queue (default 512)"),
	OPT(RDMA_CM, 'R', "rdma_cm", false, 0, NULL,
	    "Connect the QPs with rdma_cm and run the test on them"),
	OPT(SIZE, 's', "size", true, 0, "size",
	    "Size of message to exchange, K/M suffixes allowed"),
	OPT(SL, 'S', "sl", true, 0, "sl",
	    "Service level (default 0)"),
	OPT(TX_DEPTH, 't', "tx-depth", true, PT_OPTG_BW, "dep",
	    "Size of the send queue (default 128)"),
	OPT(TOS, 'T', "tos", true, 0, "tos",
	    "Type of service 0..255 (rdma_cm only)"),
	OPT(QP_TIMEOUT, 'u', "qp-timeout", true, 0, "timeout",
	    "QP timeout 0..31: 4.096 usec * 2^timeout (default 14)"),
	OPT(UNSORTED, 'U', "report-unsorted", false, PT_OPTG_LAT, NULL,
	    "Print out all results, unsorted"),
	OPT(VERSION, 'V', "version", false, 0, NULL,
	    "Display version number"),
	OPT(GID_INDEX, 'x', "gid-index", true, 0, "index",
	    "GID index to use (default: none on IB, automatic on RoCE)"),
	OPT(COMM_RDMA_CM, 'z', "comm_rdma_cm", false, 0, NULL,
	    "Exchange connection data over rdma_cm (data QPs are still regular QPs)"),
	/* latency tools have no CPU column: refused there, not ignored */
	OPT(CPU_UTIL, 0, "cpu_util", false, PT_OPTG_BW, NULL,
	    "Show CPU utilization in the report (duration mode only)"),
	OPT(DONT_XCHG, 0, "dont_xchg_versions", false, 0, NULL,
	    "Do not exchange versions and MTU with the other side"),
	OPT(OOB_TIMEOUT, 0, "oob_timeout", true, 0, "sec",
	    "Give up on the out-of-band exchange after <sec> seconds (default 60, 0 = never)"),
	OPT(OUTPUT, 0, "output", true, 0, "what",
	    "Print only one number: bandwidth or message_rate (BW), latency (LAT)"),
	OPT(OUT_JSON, 0, "out_json", false, 0, NULL,
	    "Also write the results to a JSON file"),
	OPT(OUT_JSON_FILE, 0, "out_json_file", true, 0, "file",
	    "JSON file name (default perftest_out.json); implies --out_json"),
	OPT(PLUGIN, 0, "plugin", true, 0, "path[:args]",
	    "Load a hook plugin built against perftest_plugin.h (also: PERFTEST_PLUGIN)"),
	OPT(REPORT_GBITS, 0, "report_gbits", false, PT_OPTG_BW, NULL,
	    "Report bandwidth in Gb/s instead of MiB/s"),
	OPT(REPORT_BOTH, 0, "report-both", false, PT_OPTG_BW, NULL,
	    "With -b: report local and remote results separately"),
	OPT(RUN_INFINITELY, 0, "run_infinitely", false, PT_OPTG_BW, NULL,
	    "Run forever, printing results every 5 seconds (or -D seconds)"),
	OPT(TCLASS, 0, "tclass", true, 0, "tclass",
	    "Traffic class in the GRH 0..255 (default 0)"),
	OPT(TRACE, 0, "trace", true, 0, "file[:opt]",
	    "Record every WR to <file> (.csv or .jsonl); options :max=N :fifo=N :nodefer :quiet"),
	OPT(OLD_POST_SEND, 0, "use_old_post_send", false, 0, NULL,
	    "Post with ibv_post_send"),
	OPT(NEW_POST_SEND, 0, "use_new_post_send", false, 0, NULL,
	    "Post with the ibv_wr_* API (default)"),
	OPT(LIMIT_BW, 'w', "limit_bw", true, PT_OPTG_BW, "bw",
	    "Fail (exit 1) if the BW average is below <bw>, in the report's unit"),
	OPT(LIMIT_MSGRATE, 'y', "limit_msgrate", true, PT_OPTG_BW, "mpps",
	    "Fail (exit 1) if the message rate is below <mpps> Mpps"),
	OPT(IPV6_ADDR, 0, "ipv6-addr", false, 0, NULL,
	    "Out-of-band TCP channel over IPv6 only (not with -z/-R yet)"),
	OPT(BIND_SOURCE_IP, 0, "bind_source_ip", true, 0, "ip",
	    "Client: bind the out-of-band TCP channel to this local address (not with -z/-R yet)"),
	OPT(WAIT_DESTROY, 0, "wait_destroy", true, PT_OPTG_BW, "sec",
	    "Wait <sec> seconds after the run before destroying the resources"),
	OPT(CONNECTIONLESS, 0, "connectionless", false, PT_OPTG_MCAST_RX, NULL,
	    "Multicast receiver (-g) with no peer and no OOB exchange: an extra receiver"),
	OPT(USE_SRQ, 0, "use-srq", false, PT_OPTG_SEND_VERB, NULL,
	    "Receive through one shared receive queue of -r entries (RC, UC, UD)"),
	OPT(SEND_IMM, 0, "send_with_imm", false, PT_OPTG_SEND_VERB, NULL,
	    "Send with immediate data (0); the receiver checks every completion carries it"),
	OPT(WRITE_IMM, 0, "write_with_imm", false, PT_OPTG_WRITE_VERB, NULL,
	    "RDMA WRITE with immediate data (0): the server receives a completion per write"),
	OPT(CQE_POLL, 0, "cqe_poll", true, PT_OPTG_BW, "n",
	    "Poll the CQs <n> completions at a time, 1..65535 (default: dynamic, 16..1024)"),
	OPT(NO_DYN_POLL, 0, "disable_dynamic_polling", false, PT_OPTG_BW, NULL,
	    "Poll the CQs 16 completions at a time instead of a batch that follows the load"),
	OPT(WARM_UP, 0, "perform_warm_up", false, PT_OPTG_WARM_UP, NULL,
	    "Before each measured run, an uncounted pass of -t WRs per QP (warms the caches)"),
	OPT(RECV_POST_LIST, 0, "recv_post_list", true, PT_OPTG_SEND_VERB, "n",
	    "Post receives in lists of <n> WRs per call, reposting once <n> are consumed (<= -r)"),
	OPT(VECTOR, 'X', "vector", true, PT_OPTG_EVENTS, "n",
	    "Completion vector of the CQs with -e (0..the device's num_comp_vectors-1)"),
	OPT(NO_LOCK, 0, "no_lock", false, 0, NULL,
	    "QPs and CQs in a thread domain (ibv_alloc_td, a parent domain): no provider locks"),
	OPT(NUMA_NODE, 0, "numa_node", true, 0, "node",
	    "Run on the CPUs of NUMA node <node> and allocate memory there (default: the NIC's node)"),
	OPT(PIN_CORES, 0, "pin_cores", true, 0, "list",
	    "Run on the CPUs of <list> (e.g. 0-3,8) instead of the whole node's"),
	OPT(DISABLE_NUMA, 0, "disable_numa", false, 0, NULL,
	    "Do not bind to the NIC's NUMA node (CPUs and memory as the system places them)"),
	/* Test only: announce STR as our version (lab tests of old/new peers). */
	{ PT_OPT_ANNOUNCE_VERSION, 0, "announce_version", NULL, true, 0, PT_OPTF_HIDDEN,
	  "ver", NULL },

	/* Upstream options this build refuses (docs/option-parity.md lists them
	 * all per tool). HW: hardware or a vendor feature this build cannot
	 * drive; LATER: plain verbs, not implemented yet. */
#define GPU " needs that vendor's accelerator and its driver stack, which this build does not link"
	HW(0, "use_cuda", true, 0, "GPU memory (CUDA)" GPU),
	HW(0, "use_cuda_bus_id", true, 0, "GPU memory (CUDA)" GPU),
	HW(0, "use_cuda_dmabuf", false, 0, "GPU memory (CUDA dma-buf)" GPU),
	HW(0, "use_cuda_pcie_mapping", false, 0, "GPU memory (CUDA PCIe mapping)" GPU),
	HW(0, "cuda_mem_type", true, 0, "GPU memory (CUDA)" GPU),
	HW(0, "gpu_touch", true, 0, "GPU memory (touching GPU buffers)" GPU),
	HW(0, "use_rocm", true, 0, "GPU memory (AMD ROCm)" GPU),
	HW(0, "use_rocm_dmabuf", false, 0, "GPU memory (AMD ROCm dma-buf)" GPU),
	HW(0, "use_musa", true, 0, "GPU memory (Moore Threads MUSA)" GPU),
	HW(0, "use_musa_bus_id", true, 0, "GPU memory (Moore Threads MUSA)" GPU),
	HW(0, "use_musa_dmabuf", false, 0, "GPU memory (MUSA dma-buf)" GPU),
	HW(0, "use_musa_pcie_mapping", false, 0, "GPU memory (MUSA PCIe mapping)" GPU),
	HW(0, "use_neuron", true, 0, "accelerator memory (AWS Neuron)" GPU),
	HW(0, "use_neuron_dmabuf", false, 0, "accelerator memory (AWS Neuron dma-buf)" GPU),
	HW(0, "use_hl", true, 0, "accelerator memory (Habana Gaudi)" GPU),
	HW(0, "use_mlu", true, 0, "accelerator memory (Cambricon MLU)" GPU),
	HW(0, "use_mlu_dmabuf", false, 0, "accelerator memory (Cambricon MLU dma-buf)" GPU),
	HW(0, "use_opencl", true, 0, "GPU memory (OpenCL)" GPU),
	HW(0, "opencl_platform_id", true, 0, "GPU memory (OpenCL)" GPU),
	HW(0, "use_ib_dm_dmabuf", true, 0,
	   "NIC device memory exported as dma-buf (mlx5 direct verbs) is not used by this build"),
	HW(0, "use_data_direct", false, 0,
	   "data-direct (mlx5 DMA through a separate PCIe function) needs mlx5 direct verbs"),
#define DC "the DC transport (mlx5 direct verbs) is not in this build"
	HW(0, "log_dci_streams", true, 0, DC),
	HW(0, "log_active_dci_streams", true, 0, DC),
#define AES "AES-XTS memory encryption needs mlx5 crypto offload, not in this build"
	HW(0, "aes_xts", false, 0, AES),
	HW(0, "encrypt_on_tx", false, 0, AES),
	HW(0, "sig_before", false, 0, AES),
	HW(0, "aes_block_size", true, 0, AES),
	HW(0, "kek_path", true, 0, AES),
	HW(0, "credentials_path", true, 0, AES),
	HW(0, "data_enc_keys_number", true, 0, AES),
	HW(0, "data_enc_key_app_path", true, 0, AES),
	HW(0, "sig_offload", false, 0,
	   "signature (T10-DIF) offload needs mlx5 direct verbs, not in this build"),
#define TPH "PCIe TLP processing hints (TPH) need device and kernel support this build does not drive"
	HW(0, "tph_mem", true, 0, TPH),
	HW(0, "cpu_id", true, 0, TPH),
	HW(0, "ph", true, 0, TPH),
#define OOO "out-of-order receive and enhanced reorder are mlx5 direct-verbs features, not in this build"
	HW(0, "use_ooo", false, 0, OOO),
	HW(0, "no_enhanced_reorder", false, 0, OOO),
	HW(0, "unsolicited_write", false, 0,
	   "unsolicited RDMA write needs mlx5 direct verbs, not in this build"),
	HW(0, "congest_type", true, 0,
	   "vendor congestion-control selection needs mlx5 direct verbs, not in this build"),
#define RAW "raw Ethernet (the raw_ethernet_* tools and their flow steering) is not in this build"
	HW('B', "source_mac", true, 0, RAW), HW('E', "dest_mac", true, 0, RAW),
	HW('J', "dest_ip", true, 0, RAW), HW('j', "source_ip", true, 0, RAW),
	HW('K', "dest_port", true, 0, RAW), HW('k', "source_port", true, 0, RAW),
	HW(0, "ethertype", true, 0, RAW),
	HW('Z', "server", false, 0, RAW), HW('P', "client", false, 0, RAW),
	HW('v', "mac_fwd", false, 0, RAW), HW(0, "use_rss", false, 0, RAW),
	HW(0, "remote_mac", true, 0, RAW), HW(0, "local_mac", true, 0, RAW),
	HW(0, "remote_ip", true, 0, RAW), HW(0, "local_ip", true, 0, RAW),
	HW(0, "remote_port", true, 0, RAW), HW(0, "local_port", true, 0, RAW),
	HW(0, "tcp", false, 0, RAW), HW(0, "promiscuous", false, 0, RAW),
	HW(0, "sniffer", false, 0, RAW), HW(0, "raw_mcast", false, 0, RAW),
	HW(0, "raw_ipv6", false, 0, RAW), HW(0, "vlan_en", false, 0, RAW),
	HW(0, "vlan_pcp", true, 0, RAW), HW(0, "flows", true, 0, RAW),
	HW(0, "flows_burst", true, 0, RAW),
	/* upstream takes -L on RawEth connections only and refuses it otherwise */
	HW('L', "hop_limit", true, 0, RAW),
	/* 6.06 only (accepted, unused); 6.2x dropped it */
	HW(0, "inline_recv", true, 0, "upstream 6.06 accepted and ignored it; 6.2x removed it"),

	/* Issue 18: the options added in the layer folders (memory, pacing, placement, addressing). */
	OPT(DUALPORT, 'O', "dualport", false, PT_OPTG_BW, NULL,
	    "Run on two ports of the device (refused on a one-port device)"),
	OPT(REPORT_PER_PORT, 0, "report-per-port", false, PT_OPTG_BW, NULL,
	    "With -O and -D: results of each port"),
	OPT(NULL_MR, 0, "use-null-mr", false, PT_OPTG_NULL_MR, NULL,
	    "Local SGEs on a null MR (ibv_alloc_null_mr): nothing read or written locally"),
	OPT(DATA_VALIDATION, 0, "data_validation", false, PT_OPTG_DATA_VALIDATION, NULL,
	    "Fill a known pattern, check what arrived at the end; mismatches fail the run"),
	OPT(DATA_VALIDATION_DEBUG, 0, "data_validation_debug", false, PT_OPTG_DATA_VALIDATION, NULL,
	    "--data_validation, printing the first mismatching offsets"),
	OPT(MMAP, 0, "mmap", true, 0, "file",
	    "Map the buffers from <file> (MAP_SHARED, read and write)"),
	OPT(MMAP_OFFSET, 0, "mmap-offset", true, 0, "offset",
	    "With --mmap: map from <offset> bytes into the file (page aligned)"),
	OPT(HUGEPAGES, 0, "use_hugepages", false, 0, NULL,
	    "Allocate the buffers from huge pages (vm.nr_hugepages)"),
	OPT(MR_PER_QP, 0, "mr_per_qp", false, 0, NULL,
	    "Register one memory region per QP"),
	OPT(ODP, 0, "odp", false, 0, NULL,
	    "Register the buffers as On-Demand Paging MRs (device ODP caps)"),
	OPT(PAYLOAD_FILE, 0, "payload_file_path", true, 0, "path",
	    "Payload pattern from a text file: '0xaaaaaaaa, 0xbbbbbbbb, ...' (little endian)"),
	/* pace: the rate limiter, the latency gap, the reversed direction */
	OPT(LATENCY_GAP, 0, "latency_gap", true, PT_OPTG_LAT, "usec",
	    "Pause <usec> microseconds before each post (inside the reported latency)"),
	/* upstream reads it only in the raw_ethernet latency-by-bandwidth loop */
	HW(0, "reply_every", true, 0, RAW),
	OPT(REVERSED, 0, "reversed", false, PT_OPTG_BW, NULL,
	    "Reverse traffic direction: the server sends to the client (both sides)"),
	OPT(BURST_SIZE, 0, "burst_size", true, PT_OPTG_BW, "size",
	    "Messages per burst of the rate limiter (SW default: tx depth)"),
	OPT(TYPICAL_PKT_SIZE, 0, "typical_pkt_size", true, PT_OPTG_BW, "bytes",
	    "Typical packet size for the HW rate limiter"),
	OPT(RATE_LIMIT, 0, "rate_limit", true, PT_OPTG_BW, "rate",
	    "Maximum send rate, in --rate_units (default Gb/s)"),
	OPT(RATE_UNITS, 0, "rate_units", true, PT_OPTG_BW, "units",
	    "Units of --rate_limit: M (MiB/s), g (Gb/s, default) or p (messages/s; not with HW)"),
	OPT(RATE_LIMIT_TYPE, 0, "rate_limit_type", true, PT_OPTG_BW, "type",
	    "Rate limiter: SW (the sender's loop), HW (device packet pacing, default) or PP"),
	OPT(REPORT_COUNTERS, 'W', "report-counters", true, 0, "list",
	    "Print deltas of port counters, e.g. counters/port_xmit_data,hw_counters/rcvd_pkts"),
	OPT(FORCE_LINK, 0, "force-link", true, 0, "type",
	    "Expect link layer IB or Ethernet; refuse a port with the other one"),
	OPT(DLID, 0, "dlid", true, 0, "lid",
	    "Remote LID to use instead of the peer's (IB; no effect on RoCE)"),
	OPT(IPV6, 0, "ipv6", false, 0, NULL,
	    "Prefer an IPv6 GID when choosing the GID index automatically"),
	OPT(FLOW_LABEL, 0, "flow_label", true, 0, "label[,label...]",
	    "GRH flow label of each QP (0..1048575; the list is cycled over the QPs)"),
	OPT(PKEY_INDEX, 0, "pkey_index", true, 0, "index",
	    "P_Key index of the port's table (default 0)"),
	OPT(RETRY_COUNT, 0, "retry_count", true, 0, "n",
	    "Retry count of rdma_cm connections, 0..7 (default 7)"),
	OPT(NO_RELAXED, 0, "disable_pcie_relaxed", false, 0, NULL,
	    "Register memory without PCIe relaxed ordering"),
};

_Static_assert(sizeof(optdefs) / sizeof(optdefs[0]) * 2 <= PT_MAX_LONGOPTS,
	       "raise PT_MAX_LONGOPTS");

const struct pt_optdef *pt_optdefs(size_t *count)
{
	*count = sizeof(optdefs) / sizeof(optdefs[0]);
	return optdefs;
}

static const char *conn_list(unsigned types)
{
	switch (types) {
	case PT_CONN_BIT(PT_CONN_RC):
		return "RC";
	case PT_CONN_BIT(PT_CONN_RC) | PT_CONN_BIT(PT_CONN_UC):
		return "RC/UC";
	default:
		return "RC/UC/UD";
	}
}

/* Tool-dependent defaults appended to a few help lines. */
static void print_default(const struct pt_tool *tool, enum pt_opt_id id, FILE *f)
{
	switch (id) {
	case PT_OPT_CONNECTION:
		fprintf(f, " %s (default RC)", conn_list(tool->conn_types));
		break;
	case PT_OPT_ITERS:
		fprintf(f, " (default %llu)", (unsigned long long)tool->default_iters);
		break;
	case PT_OPT_SIZE:
		if (tool->verb == PT_VERB_ATOMIC)
			fprintf(f, " (fixed at %u)", PT_ATOMIC_SIZE);
		else
			fprintf(f, " (default %u)", tool->kind == PT_KIND_BW ?
				PT_DEFAULT_SIZE_BW : PT_DEFAULT_SIZE_LAT);
		break;
	default:
		break;
	}
}

void pt_print_usage(const struct pt_tool *tool, FILE *f)
{
	size_t n;
	const struct pt_optdef *defs = pt_optdefs(&n);

	fprintf(f, "Usage:\n");
	fprintf(f, "  %s            start a server and wait for connection\n", tool->name);
	fprintf(f, "  %s <host>     connect to server at <host>\n\n", tool->name);
	fprintf(f, "Options:\n");
	for (size_t i = 0; i < n; i++) {
		const struct pt_optdef *d = &defs[i];
		char left[64];
		int len;

		if (d->flags & (PT_OPTF_UNSUPPORTED | PT_OPTF_NOT_YET | PT_OPTF_HIDDEN))
			continue;
		if (d->groups && !(tool->option_groups & d->groups))
			continue;
		if (d->id == PT_OPT_MCG && !(tool->option_groups & PT_OPTG_MCAST))
			continue;
		if (d->short_name)
			len = snprintf(left, sizeof(left), "  -%c, --%s", d->short_name,
				       d->long_name);
		else
			len = snprintf(left, sizeof(left), "      --%s", d->long_name);
		if (d->has_arg && len > 0 && (size_t)len < sizeof(left))
			snprintf(left + len, sizeof(left) - (size_t)len, "%s<%s>",
				 d->short_name ? " " : "=", d->arg_name);
		fprintf(f, "%-32s %s", left, d->help);
		print_default(tool, d->id, f);
		fputc('\n', f);
	}
}
