#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: perftest_plugin.h is all a plugin author needs. The example
# plugin builds as strict C99 against a copy of the header alone (no config.h,
# no engine include path), the header parses as C++, and the libraries we
# ship export the plugin entry point and nothing else.
set -u
src=${srcdir:-.}
top=${top_builddir:-.}
CC=${CC:-cc}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

echo "1..4"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_plugin_header.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cp "$src/plugin/perftest_plugin.h" "$src/plugin/examples/count_plugin.c" "$tmp/"

if (cd "$tmp" && $CC -std=c99 -pedantic -Wall -Wextra -Werror -shared -fPIC \
	-I . -o count.so count_plugin.c) 2>"$tmp/err"; then
	ok "the example plugin builds as C99 from perftest_plugin.h alone"
else
	not_ok "the example plugin builds as C99 from perftest_plugin.h alone"
	diag <"$tmp/err"
fi

if ! command -v c++ >/dev/null; then
	ok "perftest_plugin.h parses as C++ # SKIP no C++ compiler"
elif printf '#include "perftest_plugin.h"\nint main() { return PT_PLUGIN_ABI_VERSION != 1; }\n' |
	c++ -Wall -Wextra -Werror -fsyntax-only -I "$tmp" -x c++ - 2>"$tmp/err"; then
	ok "perftest_plugin.h parses as C++"
else
	not_ok "perftest_plugin.h parses as C++"
	diag <"$tmp/err"
fi

# exported dynamic symbols that are defined (type T/D/B...), minus the usual
# _init/_fini and the version nodes; libwrtrace.so also carries the LD_PRELOAD
# interposer: the libibverbs symbols it hooks, each under libibverbs' node.
preload="ibv_close_device@@IBVERBS_1.1 ibv_create_cq@@IBVERBS_1.1 ibv_create_qp@@IBVERBS_1.1 \
ibv_destroy_cq@@IBVERBS_1.1 ibv_destroy_qp@@IBVERBS_1.1 ibv_modify_qp@@IBVERBS_1.1 \
ibv_open_device@@IBVERBS_1.1 ibv_qp_to_qp_ex@@IBVERBS_1.6 "
for so in plugin/libwrtrace.so plugin/examples/count_plugin.so; do
	syms=$(nm -D --defined-only "$top/$so" 2>"$tmp/err" | awk '$2 != "A" { print $3 }' |
		grep -v -E '^(_init|_fini|_edata|_end|__bss_start)(@.*)?$' | sed 's/@@WRTRACE_1.0$//' |
		sort | tr '\n' ' ')
	want="perftest_plugin_ops "
	[ "$so" = plugin/libwrtrace.so ] && want="$preload$want"
	if [ "$syms" = "$want" ]; then
		ok "$so exports perftest_plugin_ops only (and the interposed verbs)"
	else
		not_ok "$so exports perftest_plugin_ops only (and the interposed verbs)"
		echo "exports: ${syms:-nothing}" | diag
		diag <"$tmp/err"
	fi
done
exit 0
