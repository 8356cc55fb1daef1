/* SPDX-License-Identifier: BSD-2-Clause */
/* The eight tools, their defaults (docs/upstream-behaviour.md §2, §3) and the inline
 * default. */
#include <string.h>
#include "mgid.h"
#include "params.h"

#define RDMA_GROUPS_BW (PT_OPTG_BW | PT_OPTG_ALL_SIZES)
#define RDMA_GROUPS_LAT (PT_OPTG_LAT | PT_OPTG_ALL_SIZES)

const struct pt_tool pt_tool_send_bw = {
	.name = "ib_send_bw", .verb = PT_VERB_SEND, .kind = PT_KIND_BW,
	.conn_types = PT_CONN_BIT(PT_CONN_RC) | PT_CONN_BIT(PT_CONN_UC) | PT_CONN_BIT(PT_CONN_UD),
	.option_groups = RDMA_GROUPS_BW | PT_OPTG_EVENTS | PT_OPTG_INLINE | PT_OPTG_MCAST |
			 PT_OPTG_MCAST_RX | PT_OPTG_RX_DEPTH | PT_OPTG_SEND_VERB,
	.default_iters = 1000,
};

/* -g: both sides send and receive; no --connectionless (a ping needs a peer). */
const struct pt_tool pt_tool_send_lat = {
	.name = "ib_send_lat", .verb = PT_VERB_SEND, .kind = PT_KIND_LAT,
	.conn_types = PT_CONN_BIT(PT_CONN_RC) | PT_CONN_BIT(PT_CONN_UC) | PT_CONN_BIT(PT_CONN_UD),
	.option_groups = RDMA_GROUPS_LAT | PT_OPTG_EVENTS | PT_OPTG_INLINE | PT_OPTG_MCAST |
			 PT_OPTG_RX_DEPTH | PT_OPTG_SEND_VERB,
	.default_iters = 1000,
};

/* -e is not offered by the write tools (docs/upstream-behaviour.md §2). */
const struct pt_tool pt_tool_write_bw = {
	.name = "ib_write_bw", .verb = PT_VERB_WRITE, .kind = PT_KIND_BW,
	.conn_types = PT_CONN_BIT(PT_CONN_RC) | PT_CONN_BIT(PT_CONN_UC),
	.option_groups = RDMA_GROUPS_BW | PT_OPTG_INLINE | PT_OPTG_WRITE_VERB | PT_OPTG_NULL_MR |
			 PT_OPTG_DATA_VALIDATION | PT_OPTG_WARM_UP,
	.default_iters = 5000,
};

const struct pt_tool pt_tool_write_lat = {
	.name = "ib_write_lat", .verb = PT_VERB_WRITE, .kind = PT_KIND_LAT,
	.conn_types = PT_CONN_BIT(PT_CONN_RC) | PT_CONN_BIT(PT_CONN_UC),
	.option_groups = RDMA_GROUPS_LAT | PT_OPTG_INLINE | PT_OPTG_WRITE_VERB | PT_OPTG_NULL_MR,
	.default_iters = 1000,
};

const struct pt_tool pt_tool_read_bw = {
	.name = "ib_read_bw", .verb = PT_VERB_READ, .kind = PT_KIND_BW,
	.conn_types = PT_CONN_BIT(PT_CONN_RC),
	.option_groups = RDMA_GROUPS_BW | PT_OPTG_EVENTS | PT_OPTG_OUTS | PT_OPTG_NULL_MR |
			 PT_OPTG_DATA_VALIDATION | PT_OPTG_WARM_UP,
	.default_iters = 1000,
};

const struct pt_tool pt_tool_read_lat = {
	.name = "ib_read_lat", .verb = PT_VERB_READ, .kind = PT_KIND_LAT,
	.conn_types = PT_CONN_BIT(PT_CONN_RC),
	.option_groups = RDMA_GROUPS_LAT | PT_OPTG_EVENTS | PT_OPTG_OUTS | PT_OPTG_NULL_MR,
	.default_iters = 1000,
};

/* Atomic tools have no -a: the size is fixed at 8. */
const struct pt_tool pt_tool_atomic_bw = {
	.name = "ib_atomic_bw", .verb = PT_VERB_ATOMIC, .kind = PT_KIND_BW,
	.conn_types = PT_CONN_BIT(PT_CONN_RC),
	.option_groups = PT_OPTG_BW | PT_OPTG_EVENTS | PT_OPTG_OUTS | PT_OPTG_ATOMIC_TYPE |
			 PT_OPTG_WARM_UP,
	.default_iters = 1000,
};

const struct pt_tool pt_tool_atomic_lat = {
	.name = "ib_atomic_lat", .verb = PT_VERB_ATOMIC, .kind = PT_KIND_LAT,
	.conn_types = PT_CONN_BIT(PT_CONN_RC),
	.option_groups = PT_OPTG_LAT | PT_OPTG_EVENTS | PT_OPTG_OUTS | PT_OPTG_ATOMIC_TYPE,
	.default_iters = 1000,
};

static const struct pt_tool *const all_tools[] = {
	&pt_tool_send_bw, &pt_tool_send_lat, &pt_tool_write_bw, &pt_tool_write_lat,
	&pt_tool_read_bw, &pt_tool_read_lat, &pt_tool_atomic_bw, &pt_tool_atomic_lat,
};

const struct pt_tool *pt_tool_find(const char *name)
{
	const char *base;

	if (!name)
		return NULL;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < sizeof(all_tools) / sizeof(all_tools[0]); i++)
		if (strcmp(all_tools[i]->name, base) == 0)
			return all_tools[i];
	return NULL;
}

void pt_params_defaults(const struct pt_tool *tool, struct pt_params *p)
{
	static const uint8_t default_mgid[16] = PT_MGID_DEFAULT_INIT;
	bool bw = tool->kind == PT_KIND_BW;

	memset(p, 0, sizeof(*p));
	p->tool = tool;

	p->dev.ib_port = 1;
	p->dev.gid_index = -1;
	p->dev.tos = -1;
	p->dev.qp_timeout = 14;

	p->conn.type = PT_CONN_RC;
	p->conn.num_qps = 1;

	if (tool->verb == PT_VERB_ATOMIC)
		p->traffic.size = PT_ATOMIC_SIZE;
	else
		p->traffic.size = bw ? PT_DEFAULT_SIZE_BW : PT_DEFAULT_SIZE_LAT;
	p->traffic.iters = tool->default_iters;
	p->traffic.test_type = PT_TEST_ITERATIONS;
	p->traffic.test_method = PT_METHOD_REGULAR;
	p->traffic.duration = 5;
	p->traffic.tx_depth = bw ? 128 : 1;
	p->traffic.rx_depth = tool->verb == PT_VERB_SEND ? 512 : 1;
	p->traffic.cq_mod = 100;
	p->traffic.post_list = 1;
	p->traffic.recv_post_list = 1;
	p->numa_node = -1;
	p->traffic.inline_size = -1;
	p->traffic.atomic_type = PT_ATOMIC_FETCH_AND_ADD;

	memcpy(p->mcast.mgid, default_mgid, sizeof(default_mgid));

	p->oob.port = PT_DEFAULT_OOB_PORT;
	p->oob.timeout_sec = PT_DEFAULT_OOB_TIMEOUT_SEC;

	strcpy(p->report.out_json_file, PT_DEFAULT_OUT_JSON_FILE);
	p->report.output = PT_OUTPUT_FULL;
	p->report.limit_bw = -1;
	p->report.limit_msgrate = -1;

	p->addr.retry_count = 7;
}

int pt_inline_default(const struct pt_params *p, bool known_device)
{
	if (p->traffic.inline_size >= 0)
		return p->traffic.inline_size;
	if (!known_device || p->tool->kind == PT_KIND_BW)
		return 0;
	switch (p->tool->verb) {
	case PT_VERB_WRITE:
		return 220;
	case PT_VERB_SEND:
		return p->conn.type == PT_CONN_UD ? 188 : 236;
	default:
		return 0;
	}
}
