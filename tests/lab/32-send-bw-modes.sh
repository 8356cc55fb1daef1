#!/bin/bash
# ib_send_bw run modes beyond the interop matrix: -e (completion events),
# --run_infinitely stopped by SIGINT, --cpu_util, -b --report-both (ours and
# 6.06 as the peer), the -a JSON document, and SIGINT on a multicast
# receiver (exit 130, group left).
. "$(dirname "$0")/lib.sh"
lab_require 2
O=$OURS/ib_send_bw U=$UPSTREAM/ib_send_bw
A="-d rxe0 -x $GIDX"
SHARE=$("$LAB" share)

# polls CMD...: run CMD under strace and print how many poll() calls it made:
# a client that sleeps on the completion channel polls its fd once per wait;
# a spinning one polls only for its out-of-band socket.
polls() { echo "strace -f -qq -e trace=poll -o $SHARE/polls.\$\$ $*; rc=\$?; echo polls \$(grep -c 'poll(' $SHARE/polls.\$\$); rm -f $SHARE/polls.\$\$; exit \$rc"; }

# -e: same results as polling, and the receiver sleeps on the completion
# channel between messages instead of spinning. (On rxe a sender rarely
# waits: each post is a write() that does the work, so its CQ is rarely
# empty.)
args="$A -n 200"
"$LAB" exec 1 --timeout 120 -- bash -c "$(polls $O $args -e -p 18701)" > "$T/ev.srv" 2>&1 & sp=$!
wait_listen 1 18701
"$LAB" exec 2 --timeout 120 -- $O $args -e -p 18701 "$("$LAB" addr 1)" > "$T/ev.cli" 2>&1
erc=$?; wait $sp; esrv=$?
"$LAB" exec 1 --timeout 120 -- bash -c "$(polls $O $args -p 18702)" > "$T/po.srv" 2>&1 & sp=$!
wait_listen 1 18702
"$LAB" exec 2 --timeout 120 -- $O $args -p 18702 "$("$LAB" addr 1)" > "$T/po.cli" 2>&1
prc=$?; wait $sp
ve=$(awk '/^polls/ { print $2 }' "$T/ev.srv") vp=$(awk '/^polls/ { print $2 }' "$T/po.srv")
if ((erc == 0 && esrv == 0 && prc == 0)) && grep -q 'Test with events. Using rxe0_comp' "$T/ev.srv" &&
   same_rows "$T/ev.cli" "$T/ev.srv" && expect_row events "$T/ev.cli" 65536 200 &&
   awk -v e="${ve:-0}" -v p="${vp:-0}" 'BEGIN { exit !(e >= p + 10 && e >= 2 * p) }'; then
	result pass events; note "events: the receiver's poll() calls with -e $ve, polling $vp"
else
	result fail events "exit $erc/$esrv/$prc, receiver poll() calls -e '$ve' vs polling '$vp'"
	show "$T/ev.srv"; show "$T/ev.cli"; show "$T/po.srv"
fi

# --run_infinitely: a row every -D seconds until SIGINT; the client exits
# 130, the server sees the peer stop and exits 0.
args="$A -s 4096 --run_infinitely -D 2"
"$LAB" exec 1 --timeout 120 -- $O $args -p 18703 > "$T/inf.srv" 2>&1 & sp=$!
wait_listen 1 18703
"$LAB" exec 2 --timeout 120 -- timeout --preserve-status -s INT 12 $O $args -p 18703 "$("$LAB" addr 1)" > "$T/inf.cli" 2>&1
crc=$?; wait $sp; src=$?
nc=$(result_rows "$T/inf.cli" | awk '$1 == 4096 && $4 > 0' | wc -l)
ns=$(result_rows "$T/inf.srv" | awk '$1 == 4096 && $4 > 0' | wc -l)
if ((crc == 130 && src == 0 && nc >= 2 && ns >= 2)) && grep -q 'Interrupted by signal 2' "$T/inf.cli"; then
	result pass run-infinitely-sigint; note "run_infinitely: client exit 130 after $nc rows, server exit 0 after $ns rows"
else
	result fail run-infinitely-sigint "client exit $crc ($nc rows), server exit $src ($ns rows)"
	show "$T/inf.cli"; show "$T/inf.srv"
fi

# --cpu_util: the extra column in the table and "CPU_util" in the JSON.
args="$A -s 4096 -D 4 --cpu_util"
run_pair cpu 1 2 18704 "$O $args --out_json --out_json_file=$SHARE/cpu.json" "$O $args"
u=$(awk '/CPU_Util\[%\]/ { h = 1; next } h && $1 == 4096 { print $NF; exit }' "$T/cpu.cli")
if ((SRV_RC == 0 && CLI_RC == 0)) && awk -v u="$u" 'BEGIN { exit !(u > 0 && u <= 100) }' &&
   python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["results"]; sys.exit(not (0 < r["CPU_util"] <= 100))' "$SHARE/cpu.json"; then
	result pass cpu-util; note "cpu_util: client $u %, server JSON $(grep -m1 -o '"CPU_util": [0-9.]*' "$SHARE/cpu.json")"
else
	result fail cpu-util "exit $SRV_RC/$CLI_RC, client column '$u'"; show "$T/cpu.cli"; cat "$SHARE/cpu.json" >&2
fi

# -b --report-both: local, remote and sum rows; the sum is local + remote,
# for the average and for the peak (each side measures the peak of its own
# sends, as 6.06 does: its -b rows have one too). Against 6.06 in both
# roles too (the five-part report exchange).
bidir_ok() { # FILE: three rows (local, remote, sum) with sum ~ local + remote
	result_rows "$1" | awk 'function near(s, a, b) { return (s - a - b)^2 < (0.01 * s)^2 + 0.0001 }
		$1 == 65536 { pk[++n] = $3; bw[n] = $4 } END {
		exit !(n == 3 && bw[1] > 0 && bw[2] > 0 && near(bw[3], bw[1], bw[2]) &&
		       pk[1] > 0 && pk[2] > 0 && near(pk[3], pk[1], pk[2])) }' &&
	grep -q 'Local results' "$1" && grep -q 'Remote results' "$1"
}
for pair in ours:ours ours:up up:ours; do
	s=${pair%:*} c=${pair#*:}
	declare -n sb=$([[ $s == ours ]] && echo O || echo U) cb=$([[ $c == ours ]] && echo O || echo U)
	run_pair "bi-$s-$c" 1 2 18710 "$sb $A -F -b --report-both -n 200" "$cb $A -F -b --report-both -n 200"
	unset -n sb cb
	ok=1
	((SRV_RC == 0 && CLI_RC == 0)) || ok=0
	for side in srv cli; do
		f=$T/bi-$s-$c.$side who=$([[ $side == srv ]] && echo "$s" || echo "$c")
		[[ $who == ours ]] && { bidir_ok "$f" || ok=0; }
		[[ $who == up ]] && { result_rows "$f" | awk '$1 == 65536 && $3 > 0 && $4 > 0 { f = 1 } END { exit !f }' || ok=0; }
	done
	if ((ok)); then
		result pass "bidir-report-both/$s-$c"; note "bidir $s-$c: $(result_rows "$T/bi-$s-$c.cli" | tail -1)"
	else
		result fail "bidir-report-both/$s-$c" "exit $SRV_RC/$CLI_RC"; show "$T/bi-$s-$c.srv"; show "$T/bi-$s-$c.cli"
	fi
done

# -a --out_json: one valid document keeping every size (2 B .. 8 MiB).
run_pair all-json 1 2 18705 "$O $A -a -n 5 --out_json --out_json_file=$SHARE/all.json" "$O $A -a -n 5"
if ((SRV_RC == 0 && CLI_RC == 0)) && python3 - "$SHARE/all.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
sizes = [r["MsgSize"] for r in d["all_results"]]
assert sizes == [1 << i for i in range(1, 24)], sizes
assert d["results"] == d["all_results"][-1]
assert all(r["n_iterations"] == 5 and r["BW_average"] > 0 for r in d["all_results"])
assert d["test_info"]["test"] == "Send_BW_Test"
EOF
then
	result pass all-sizes-json; note "-a JSON: 23 sizes kept in all_results"
else
	result fail all-sizes-json "exit $SRV_RC/$CLI_RC"; cat "$SHARE/all.json" >&2
fi

# SIGINT on a multicast receiver: it is in the group while it waits, exits
# 130 on SIGINT, says it measured nothing (the partial result of a run that
# got no message) and leaves the group.
"$LAB" exec 2 --timeout 60 -- timeout --preserve-status -s INT 8 $O $A -c UD -g -M 225.1.1.20 \
	--connectionless -n 100 > "$T/mc.out" 2>&1 & mp=$!
for _ in $(seq 40); do grep -q '#bytes' "$T/mc.out" && break; sleep 0.5; done
joined=$("$LAB" exec 2 -- ip maddr show dev eth0 | grep -c 225.1.1.20)
wait $mp; mrc=$?
left=$("$LAB" exec 2 -- ip maddr show dev eth0 | grep -c 225.1.1.20)
if ((mrc == 130 && joined >= 1 && left == 0)) &&
   grep -q '^ Partial results: interrupted by signal 2 after 0 of 100 messages' "$T/mc.out"; then
	result pass mcast-sigint; note "multicast receiver: joined, SIGINT -> exit 130, nothing measured, group left"
else
	result fail mcast-sigint "exit $mrc, in group while waiting: $joined, after exit: $left"; show "$T/mc.out"
fi
