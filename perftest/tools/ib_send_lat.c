/* SPDX-License-Identifier: BSD-2-Clause */
#include "tool.h"

int main(int argc, char **argv)
{
	return pt_tool_main(&pt_tool_send_lat, pt_send_lat_flow, argc, argv);
}
