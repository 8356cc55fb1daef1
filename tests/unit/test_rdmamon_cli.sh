#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test of rdmamon's command line (rdmamon.8): the views' shared -i/-c
# checks and leftover arguments (monitor/cli_common.c), in the top/events
# views (rdmamon.c) and the lifecycle/conns views (life_run.c). Each bad
# input must stop with its one-line message and exit 1 while parsing,
# before rdmamon looks at the host (no root, BPF or RDMA device needed).
set -u
top=${top_builddir:-.}
BIN=${RDMAMON:-$top/monitor/rdmamon}
[ -x "$BIN" ] || { echo "1..0 # SKIP $BIN is not built"; exit 0; }

n=0
fails=0
# t RC LINE ARGS...: the run exits RC and its first output line is LINE
# (stdout and stderr together; for errors the only line).
t() {
	local want_rc=$1 want=$2 out rc first
	shift 2
	n=$((n + 1))
	out=$(timeout -k 2 10 "$BIN" "$@" 2>&1)
	rc=$?
	first=${out%%$'\n'*}
	if [ "$rc" = "$want_rc" ] && [ "$first" = "$want" ] &&
	   { [ "$want_rc" = 0 ] || [ "$out" = "$first" ]; }; then
		echo "ok $n - rdmamon $*"
	else
		echo "not ok $n - rdmamon $*: exit $rc, want $want_rc and '$want'"
		printf '%s\n' "$out" | sed 's/^/# /'
		fails=$((fails + 1))
	fi
}

secs() { echo "rdmamon: -i: '$1' is not a number of seconds in 0.1..3600"; }
count() { echo "rdmamon: -c: '$1' is not a positive count"; }
extra() { echo "rdmamon: unexpected argument '$1'"; }

echo "1..16"
t 1 "$(secs 0)" -i 0
t 1 "$(secs x)" --interval x
t 1 "$(secs 3601)" top -i 3601
t 1 "$(count 0)" -c 0
t 1 "$(count 1.5)" --count 1.5
t 1 "$(extra more)" -i 1 more
t 1 "$(extra more)" events more
t 1 "$(secs 4000)" conns -i 4000
t 1 "$(count -2)" conns -c -2
t 1 "$(count '')" conns --count=
t 1 "$(extra more)" conns -i 2 -c 3 more
t 1 "$(secs 0.05)" lifecycle -i 0.05
t 1 "$(extra zz)" lifecycle -i 2 zz
t 1 "rdmamon: -c is for the conns view" lifecycle -c 3
t 0 "usage: rdmamon [top] [-i SECONDS] [-c COUNT] [--json] [--cgroup-root DIR]" --help
t 0 "usage: rdmamon lifecycle [--json] [FILTERS]" conns --help
exit $((fails > 0))
