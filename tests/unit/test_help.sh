#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: each tool's -h tells the truth. Every option it lists gets past
# that tool's parser: no "not available in", "not supported by this build"
# or "only available" refusal, for the option alone or with what it needs
# (-M and --connectionless with -g). A refused option is therefore never
# listed. Each run names a device that does not exist, so nothing touches
# the network; every run is bounded by timeout.
set -u
top=${top_builddir:-.}
TOOLS="ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat"
REFUSED='not available in|not supported by this build|only available'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '# %s\n' "$@"; }

# args TOOL OPTION: the option with an argument it accepts, and the options it needs
args() {
	local t=$1 o=$2 v=1
	case $o in
	--help|--version) return 1 ;;
	--connection) v=RC ;;
	--output) [[ $t == *_lat ]] && v=latency || v=bandwidth ;;
	--atomic_type) v=FETCH_AND_ADD ;;
	--MGID) echo "-g"; v=225.1.1.20 ;;
	--connectionless) echo "-g" ;;
	--ib-dev) v=nosuchdev_help_test ;;
	--mtu) v=1024 ;;
	--size) v=8 ;;
	--duration) v=3 ;;
	--iters) v=5 ;;
	--out_json_file) v=$tmp/out.json ;;
	--trace) v=$tmp/trace.csv ;;
	--plugin) v=$tmp/none.so ;;
	esac
	if [[ $3 == yes ]]; then echo "$o=$v"; else echo "$o"; fi
}

for t in $TOOLS; do
	refused=()
	listed=0
	while read -r o arg; do
		a=$(args "$t" "$o" "$([[ -n $arg ]] && echo yes || echo no)") || continue
		listed=$((listed + 1))
		# shellcheck disable=SC2086 # a holds separate words
		out=$(timeout -k 2 10 "$top/perftest/$t" -d nosuchdev_help_test $a 2>&1)
		grep -qE "$REFUSED" <<<"$out" && refused+=("$a: $(grep -m1 -E "$REFUSED" <<<"$out")")
	done < <("$top/perftest/$t" -h | sed -nE 's/^ +(-[A-Za-z], )?(--[A-Za-z_-]+)( <[^>]*>|=<[^>]*>)?.*/\2 \3/p')
	if ((listed < 20)); then not_ok "$t: -h lists its options" "only $listed options parsed from -h"
	elif ((${#refused[@]})); then not_ok "$t: every option in -h is accepted" "${refused[@]}"
	else ok "$t: every option in -h is accepted ($listed options)"; fi
done
echo "1..$n"
