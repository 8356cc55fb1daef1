#!/bin/bash
# Version exchange end to end: peers older than 5.70 are refused with a message
# naming both versions (exit 1, no crash), on our side and by upstream 6.06;
# odd strings never crash anything; 6.28 (which always negotiates) gets its
# parameter negotiation, and a mismatch is named.
. "$(dirname "$0")/lib.sh"
lab_require 2
O=$OURS/ib_send_bw U=$UPSTREAM/ib_send_bw
base="-d rxe0 -x $GIDX -F -n 50 --oob_timeout 20"
port=18800
crashed() { (($1 >= 128)); }

# fake VERSION SERVER-BIN: our client announces VERSION to SERVER-BIN.
fake() {
	port=$((port + 1))
	local sargs=$base
	[[ $2 == "$U" ]] && sargs="-d rxe0 -x $GIDX -F -n 50"
	run_pair "v$port" 1 2 $port "$2 $sargs" "$O $base --announce_version=$1"
	SO=$T/v$port.srv CO=$T/v$port.cli
}

# Our server refuses old peers and names both versions.
for v in 5.60 5.5 5.31 abc; do
	fake "$v" "$O"
	if ((SRV_RC == 1)) && grep -q "'$v'" "$SO" && grep -q 5.70 "$SO" && grep -q 6.06 "$SO" &&
	   ((CLI_RC != 0)) && ! crashed $CLI_RC; then
		result pass "ours-refuses-$v"; note "ours refuses $v: $(grep -m1 "'$v'" "$SO")"
	else
		result fail "ours-refuses-$v" "server $SRV_RC client $CLI_RC"; show "$SO"; show "$CO"
	fi
done
# Upstream 6.06 refuses our client announcing 5.60; our client fails cleanly.
fake 5.60 "$U"
if ((SRV_RC == 1)) && grep -q 'not compatible with versions older than 5.70' "$SO" &&
   ((CLI_RC != 0)) && ! crashed $CLI_RC; then
	result pass "upstream-refuses-5.60"; note "upstream: $(grep -m1 compatible "$SO"); ours: $(tail -n 1 "$CO")"
else
	result fail "upstream-refuses-5.60" "server $SRV_RC client $CLI_RC"; show "$SO"; show "$CO"
fi
# 6.28 always negotiates parameters (N): our client plays it. Same options:
# N passes and the run completes. A different -s: both sides name the field
# with both values and stop before any traffic.
fake 6.28 "$O"
if ((SRV_RC == 0 && CLI_RC == 0)) && same_rows "$SO" "$CO"; then
	result pass "6.28-negotiates"; note "6.28 client, ours server: negotiated, $(result_rows "$CO" | tail -n 1)"
else
	result fail "6.28-negotiates" "server $SRV_RC client $CLI_RC"; show "$SO"; show "$CO"
fi
port=$((port + 1))
run_pair "neg$port" 1 2 $port "$O $base" "$O $base -s 4096 --announce_version=6.28"
SO=$T/neg$port.srv CO=$T/neg$port.cli
if ((SRV_RC == 1 && CLI_RC == 1)) &&
   grep -q 'size mismatch: local=65536, remote=4096' "$SO" && grep -q 'Failed to negotiate parameters' "$SO" &&
   grep -q 'size mismatch: local=4096, remote=65536' "$CO" && [[ -z $(result_rows "$SO") ]]; then
	result pass "6.28-mismatch-named"; note "6.28 mismatch: $(grep -m1 mismatch "$SO")"
else
	result fail "6.28-mismatch-named" "server $SRV_RC client $CLI_RC"; show "$SO"; show "$CO"
fi
# 6.29 skips negotiation with a 6.06 peer: runs against ours and upstream.
for srv in "$O" "$U"; do
	fake 6.29 "$srv"
	n=$([[ $srv == "$O" ]] && echo ours || echo upstream)
	if ((SRV_RC == 0 && CLI_RC == 0)) && same_rows "$SO" "$CO"; then
		result pass "6.29-vs-$n"
	else
		result fail "6.29-vs-$n" "server $SRV_RC client $CLI_RC"; show "$SO"; show "$CO"
	fi
done
