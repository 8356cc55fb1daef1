/* SPDX-License-Identifier: BSD-2-Clause */
#include "tool.h"

int main(int argc, char **argv)
{
	return pt_tool_main(&pt_tool_atomic_lat, pt_read_lat_flow, argc, argv);
}
