/* SPDX-License-Identifier: BSD-2-Clause */
/* Deliberately broken plugins for the loader's error paths (test_hooks.c):
 * built once per defect with -DBAD_ABI, -DNO_ENTRY, -DSMALL_OPS or -DINIT_FAILS. */
#include <stdio.h>
#include "plugin/perftest_plugin.h"

static int init(const char *args, void **state, char *err, size_t len)
{
	(void)args;
	*state = NULL;
#ifdef INIT_FAILS
	snprintf(err, len, "the test plugin refuses to start");
	return -1;
#else
	(void)err, (void)len;
	return 0;
#endif
}

static const struct pt_plugin_ops ops = {
#ifdef BAD_ABI
	.abi_version = 99,
#else
	.abi_version = PT_PLUGIN_ABI_VERSION,
#endif
#ifdef SMALL_OPS
	.struct_size = 16,
#else
	.struct_size = sizeof(ops),
#endif
	.name = "bad",
	.init = init,
};

#ifdef NO_ENTRY
const struct pt_plugin_ops *not_the_entry(void)
#else
const struct pt_plugin_ops *perftest_plugin_ops(void)
#endif
{
	return &ops;
}
