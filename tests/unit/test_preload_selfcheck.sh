#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: the start-up and exit self-checks of libwrtrace.so's LD_PRELOAD
# mode, on a host without RDMA devices. Silent on a program without verbs;
# a message when a verbs program opens no device through the preload, when
# libibverbs shadows it, when WRTRACE_OUT is unset or cannot be written.
set -u
top=${top_builddir:-.}
lib=$(cd "$top" && pwd)/plugin/libwrtrace.so
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /' "$1"; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_preload_selfcheck.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

echo "1..5"
# a sanitizer build's library cannot be preloaded into programs built without it
if ldd "$lib" | grep -q -E 'libasan|libubsan'; then
	for i in 1 2 3 4 5; do ok "self-check $i # SKIP sanitizer build"; done
	exit 0
fi
verbs=$(command -v ibv_devices) || verbs=

# check NAME PATTERN|"" EXPECT_RC|any ENV... -- CMD: stderr matches (empty when "")
check() {
	local name=$1 pat=$2 want=$3; shift 3
	env "$@" > "$tmp/out" 2> "$tmp/err"
	local rc=$?
	if { [ "$want" = any ] || [ "$rc" = "$want" ]; } &&
	   { { [ -z "$pat" ] && [ ! -s "$tmp/err" ]; } || { [ -n "$pat" ] && grep -q -E "$pat" "$tmp/err"; }; }; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		diag "$tmp/err"
	fi
}

check "no verbs in the program: nothing said, exit 0" "" 0 \
	LD_PRELOAD="$lib" WRTRACE_OUT="$tmp/t.csv" /bin/true
if [ -n "$verbs" ]; then
	check "a verbs program that opens no device: reported at exit" \
		"wrtrace: LD_PRELOAD active but no verbs device was opened through it" any \
		LD_PRELOAD="$lib" WRTRACE_OUT="$tmp/t.csv" "$verbs"
	check "libibverbs ahead in LD_PRELOAD: reported at start" \
		"wrtrace: LD_PRELOAD active but ibv_open_device resolves to .*libibverbs" any \
		LD_PRELOAD="libibverbs.so.1 $lib" WRTRACE_OUT="$tmp/t.csv" "$verbs"
else
	ok "a verbs program that opens no device # SKIP no ibv_devices (ibverbs-utils)"
	ok "libibverbs ahead in LD_PRELOAD # SKIP no ibv_devices (ibverbs-utils)"
fi
check "WRTRACE_OUT unset: reported" "WRTRACE_OUT is not set" 0 \
	LD_PRELOAD="$lib" WRTRACE_OUT= /bin/true
check "WRTRACE_OUT not writable: reported" "cannot write $tmp/no/such/dir/t.csv" 0 \
	LD_PRELOAD="$lib" WRTRACE_OUT="$tmp/no/such/dir/t.csv" /bin/true
exit 0
