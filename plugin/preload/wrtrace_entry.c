/* SPDX-License-Identifier: BSD-2-Clause */
/* libwrtrace.so: the recorder as a loadable plugin
 * (--plugin=libwrtrace.so:FILE[:max=N]). Only this symbol is exported
 * (libwrtrace.map), so the copy of the recorder inside the .so never binds
 * to the one built into the tool. */
#include "plugin/recorder/wrtrace.h"

const struct pt_plugin_ops *perftest_plugin_ops(void)
{
	return wrt_plugin_get_ops();
}
