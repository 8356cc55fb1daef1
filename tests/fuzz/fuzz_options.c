/* SPDX-License-Identifier: BSD-2-Clause */
/* The command line parser (options*.c) of all eight tools.
 * fuzz-sources: perftest/cli/options.c perftest/cli/options_table.c perftest/cli/options_check.c perftest/cli/tools.c perftest/cli/mgid.c
 * fuzz-flags: -max_len=512 -dict=tests/fuzz/options.dict
 *
 * Input: byte 0 picks the tool, the rest is argv[1..], words separated by
 * NUL bytes. Properties: the parser returns 0 or 1 and never exits; what
 * it accepts satisfies the rules options_check.c promises the engine; a
 * second call on the same words gives the same result. */
#include <unistd.h>
#include "fuzz.h"
#include "perftest/cli/options.h"

#define MAX_ARGS 64

static const struct pt_tool *const tools[] = {
	&pt_tool_send_bw, &pt_tool_send_lat, &pt_tool_write_bw, &pt_tool_write_lat,
	&pt_tool_read_bw, &pt_tool_read_lat, &pt_tool_atomic_bw, &pt_tool_atomic_lat,
};

/* The parser's messages: thrown away, or on stderr with FUZZ_VERBOSE=1. */
static FILE *messages(void)
{
	static FILE *f;

	if (!f)
		f = getenv("FUZZ_VERBOSE") ? stderr : fopen("/dev/null", "w");
	FUZZ_ASSERT(f);
	return f;
}

#define TERMINATED(a) FUZZ_ASSERT(memchr((a), '\0', sizeof(a)))

static void check_accepted(const struct pt_params *p, const struct pt_tool *tool)
{
	const struct pt_traffic_params *t = &p->traffic;

	FUZZ_ASSERT(p->tool == tool);
	TERMINATED(p->dev.ib_devname);
	TERMINATED(p->oob.servername);
	TERMINATED(p->oob.fake_version);
	TERMINATED(p->report.out_json_file);
	TERMINATED(p->plugin.trace_file);
	TERMINATED(p->plugin.plugin_path);
	TERMINATED(p->plugin.plugin_args);
	FUZZ_ASSERT(p->oob.is_client == (p->oob.servername[0] != '\0'));
	FUZZ_ASSERT(p->oob.port >= 1 && p->oob.port <= 65535);
	FUZZ_ASSERT(tool->conn_types & PT_CONN_BIT(p->conn.type));
	FUZZ_ASSERT(p->conn.num_qps >= 1);
	FUZZ_ASSERT(t->size >= 1 && t->size <= INT32_MAX);
	if (tool->verb == PT_VERB_ATOMIC)
		FUZZ_ASSERT(t->size == PT_ATOMIC_SIZE);
	FUZZ_ASSERT(t->tx_depth >= 1 && t->rx_depth >= 1);
	FUZZ_ASSERT(t->post_list >= 1 && t->post_list <= t->tx_depth);
	FUZZ_ASSERT(t->cq_mod >= 1 && t->cq_mod <= t->tx_depth);
	if (t->test_type == PT_TEST_ITERATIONS) {
		FUZZ_ASSERT(t->iters >= 5 && t->iters <= 100000000);
		FUZZ_ASSERT(t->iters % (uint64_t)t->post_list == 0);
		FUZZ_ASSERT((uint64_t)t->tx_depth <= t->iters);
	} else {
		FUZZ_ASSERT(t->iters == 0);
		FUZZ_ASSERT(t->run_infinitely || t->duration > 2 * t->margin);
	}
	FUZZ_ASSERT(!(t->all_sizes && t->run_infinitely));
	if (p->mcast.enabled) {
		FUZZ_ASSERT(tool->verb == PT_VERB_SEND);
		FUZZ_ASSERT(p->conn.type == PT_CONN_UD && p->conn.num_qps == 1);
		FUZZ_ASSERT(!t->bidirectional && !p->conn.rdma_cm_qps);
		FUZZ_ASSERT(p->dev.gid_index >= 0);
	} else {
		FUZZ_ASSERT(!p->mcast.mgid_given && !p->mcast.connectionless);
	}
	if (p->dev.tos >= 0)
		FUZZ_ASSERT(p->conn.rdma_cm_oob);
	if (p->report.cpu_util)
		FUZZ_ASSERT(t->test_type == PT_TEST_DURATION);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct pt_tool *tool;
	char *words, *argv[MAX_ARGS + 2], *again[MAX_ARGS + 2];
	struct pt_params p, q;
	int argc = 0, rc;

	if (size < 1)
		return 0;
	tool = tools[data[0] % (sizeof(tools) / sizeof(tools[0]))];
	words = fuzz_str(data + 1, size - 1);
	argv[argc++] = (char *)tool->name;
	for (size_t i = 0; i < size - 1 && argc <= MAX_ARGS; ) {
		argv[argc++] = words + i;
		i += strlen(words + i) + 1;
	}
	argv[argc] = NULL;
	memcpy(again, argv, sizeof(argv));
	rc = pt_parse_args_io(tool, argc, argv, &p, messages(), messages());
	FUZZ_ASSERT(rc == 0 || rc == 1);
	if (rc == 0)
		check_accepted(&p, tool);
	/* no state survives a call: the same words give the same result */
	FUZZ_ASSERT(pt_parse_args_io(tool, argc, again, &q, messages(), messages()) == rc);
	FUZZ_ASSERT(memcmp(&p, &q, sizeof(p)) == 0);
	free(words);
	return 0;
}
