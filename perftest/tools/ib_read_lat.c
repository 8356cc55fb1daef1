/* SPDX-License-Identifier: BSD-2-Clause */
#include "tool.h"

int main(int argc, char **argv)
{
	return pt_tool_main(&pt_tool_read_lat, pt_read_lat_flow, argc, argv);
}
