/* SPDX-License-Identifier: BSD-2-Clause */
/* Verbs opcodes as the plugin ABI's opcodes: one mapping for the hook
 * layer (our loops) and the LD_PRELOAD interposer (others' programs).
 * Inline: both call it once per WR or CQE. */
#ifndef PT_UTIL_OPCODES_H
#define PT_UTIL_OPCODES_H
#include <stdint.h>
#include <infiniband/verbs.h>
#include "plugin/perftest_plugin.h"

static inline uint32_t pt_plugin_op_of_wc(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return PT_PLUGIN_OP_SEND;
	case IBV_WC_RDMA_WRITE: return PT_PLUGIN_OP_WRITE;
	case IBV_WC_RDMA_READ: return PT_PLUGIN_OP_READ;
	case IBV_WC_FETCH_ADD: return PT_PLUGIN_OP_ATOMIC_FA;
	case IBV_WC_COMP_SWAP: return PT_PLUGIN_OP_ATOMIC_CS;
	case IBV_WC_RECV:
	case IBV_WC_RECV_RDMA_WITH_IMM: return PT_PLUGIN_OP_RECV;
	default: return PT_PLUGIN_OP_OTHER;
	}
}

static inline uint32_t pt_plugin_op_of_wr(enum ibv_wr_opcode op)
{
	switch (op) {
	case IBV_WR_SEND: return PT_PLUGIN_OP_SEND;
	case IBV_WR_SEND_WITH_IMM: return PT_PLUGIN_OP_SEND_IMM;
	case IBV_WR_RDMA_WRITE: return PT_PLUGIN_OP_WRITE;
	case IBV_WR_RDMA_WRITE_WITH_IMM: return PT_PLUGIN_OP_WRITE_IMM;
	case IBV_WR_RDMA_READ: return PT_PLUGIN_OP_READ;
	case IBV_WR_ATOMIC_FETCH_AND_ADD: return PT_PLUGIN_OP_ATOMIC_FA;
	case IBV_WR_ATOMIC_CMP_AND_SWP: return PT_PLUGIN_OP_ATOMIC_CS;
	default: return PT_PLUGIN_OP_OTHER;
	}
}
#endif
