/* SPDX-License-Identifier: BSD-2-Clause */
#include "tool.h"

int main(int argc, char **argv)
{
	return pt_tool_main(&pt_tool_write_bw, pt_rdma_bw_flow, argc, argv);
}
