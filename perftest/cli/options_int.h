/* SPDX-License-Identifier: BSD-2-Clause */
/* Internal to the option parser: the option table and the dependency
 * checks, shared by options.c, options_table.c and options_check.c. */
#ifndef PT_OPTIONS_INT_H
#define PT_OPTIONS_INT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include "params.h"

/* What an option does; every upstream option we refuse is PT_OPT_UNSUPPORTED. */
enum pt_opt_id {
	PT_OPT_UNSUPPORTED = 0,
	PT_OPT_ALL, PT_OPT_ATOMIC_TYPE, PT_OPT_BIDIR, PT_OPT_CONNECTION,
	PT_OPT_REPORT_CYCLES, PT_OPT_IB_DEV, PT_OPT_DURATION, PT_OPT_EVENTS,
	PT_OPT_MARGIN, PT_OPT_CPU_FREQ, PT_OPT_MCG, PT_OPT_HELP, PT_OPT_HISTOGRAM,
	PT_OPT_IB_PORT, PT_OPT_INLINE, PT_OPT_POST_LIST, PT_OPT_MTU, PT_OPT_MGID,
	PT_OPT_ITERS, PT_OPT_NO_PEAK, PT_OPT_OUTS, PT_OPT_PORT, PT_OPT_QP,
	PT_OPT_CQ_MOD, PT_OPT_RX_DEPTH, PT_OPT_RDMA_CM, PT_OPT_SIZE, PT_OPT_SL,
	PT_OPT_TX_DEPTH, PT_OPT_TOS, PT_OPT_QP_TIMEOUT, PT_OPT_UNSORTED,
	PT_OPT_VERSION, PT_OPT_GID_INDEX, PT_OPT_COMM_RDMA_CM, PT_OPT_CPU_UTIL,
	PT_OPT_DONT_XCHG, PT_OPT_OOB_TIMEOUT, PT_OPT_OUTPUT, PT_OPT_OUT_JSON,
	PT_OPT_OUT_JSON_FILE, PT_OPT_PLUGIN, PT_OPT_REPORT_GBITS, PT_OPT_REPORT_BOTH,
	PT_OPT_RUN_INFINITELY, PT_OPT_TCLASS, PT_OPT_TRACE, PT_OPT_OLD_POST_SEND,
	PT_OPT_NEW_POST_SEND, PT_OPT_ANNOUNCE_VERSION, PT_OPT_CONNECTIONLESS,
	PT_OPT_LIMIT_BW, PT_OPT_LIMIT_MSGRATE, PT_OPT_IPV6_ADDR, PT_OPT_BIND_SOURCE_IP,
	PT_OPT_WAIT_DESTROY, PT_OPT_SEND_IMM, PT_OPT_WRITE_IMM,
	PT_OPT_USE_SRQ, PT_OPT_CQE_POLL, PT_OPT_NO_DYN_POLL,
	PT_OPT_WARM_UP, PT_OPT_RECV_POST_LIST,
	/* issue 18, memory group */ PT_OPT_HUGEPAGES, PT_OPT_MR_PER_QP, PT_OPT_MMAP, PT_OPT_MMAP_OFFSET, PT_OPT_NULL_MR, PT_OPT_PAYLOAD_FILE, PT_OPT_DATA_VALIDATION, PT_OPT_DATA_VALIDATION_DEBUG, PT_OPT_ODP,
	PT_OPT_RATE_LIMIT, PT_OPT_RATE_UNITS, PT_OPT_RATE_LIMIT_TYPE, PT_OPT_BURST_SIZE, PT_OPT_TYPICAL_PKT_SIZE, PT_OPT_LATENCY_GAP, PT_OPT_REVERSED, /* pace */
	/* group "addr" */ PT_OPT_IPV6, PT_OPT_FLOW_LABEL, PT_OPT_PKEY_INDEX, PT_OPT_RETRY_COUNT, PT_OPT_DLID, PT_OPT_FORCE_LINK, PT_OPT_NO_RELAXED, PT_OPT_REPORT_COUNTERS, PT_OPT_DUALPORT, PT_OPT_REPORT_PER_PORT,
	/* placement and queues (helper numa) */ PT_OPT_NUMA_NODE, PT_OPT_PIN_CORES, PT_OPT_DISABLE_NUMA, PT_OPT_VECTOR, PT_OPT_NO_LOCK,
};

enum pt_optdef_flags {
	PT_OPTF_UNSUPPORTED = 1u << 0, /* upstream has it, this build does not */
	PT_OPTF_HIDDEN = 1u << 1,      /* accepted, not listed by -h */
	PT_OPTF_NOT_YET = 1u << 2,     /* plain verbs, not implemented yet */
};

struct pt_optdef {
	enum pt_opt_id id;
	char short_name;        /* 0: long only */
	const char *long_name;  /* NULL: short only */
	const char *long_alias; /* a second accepted spelling, not listed */
	bool has_arg;
	unsigned groups;        /* enum pt_option_group; 0 = every tool */
	unsigned flags;         /* enum pt_optdef_flags */
	const char *arg_name;   /* for -h */
	const char *help;       /* refused options: why (HW) or what (LATER) */
};

/* The table, upstream's options in upstream's spelling. */
const struct pt_optdef *pt_optdefs(size_t *count);

/* Room for every long name and alias in getopt's table (checked at compile time). */
#define PT_MAX_LONGOPTS 400

/* Facts the checks need but the engine does not. */
struct pt_parse_state {
	bool duration_given;
	bool margin_given;
	bool rate_limit_type_given;  /* pace: which rate limiter options came */
	bool burst_size_given;
	bool typical_pkt_size_given;
};

/* Derived parameters and cross-option validation (docs/upstream-behaviour.md §3, §4.1). */
int pt_options_check(struct pt_params *p, const struct pt_parse_state *st, FILE *err);

/* Print a parse error; returns 1 (the parser's failure status). Inline so
 * that the parser and the checks share it without using each other. */
static inline int pt_perr(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int pt_perr(FILE *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(err, fmt, ap);
	va_end(ap);
	return 1;
}
#define perr pt_perr

#endif
