#!/bin/bash
# ib_send_bw interop: ours <-> ours and ours <-> Debian's 6.06 in both roles,
# across transports and modes. Each cell: both sides exit 0, agree on message
# sizes and iteration counts, and report BW > 0.
. "$(dirname "$0")/lib.sh"
lab_require 2
UD=$(ud_mtu)   # UD messages default to the RoCE MTU, and -a stops there
declare -A BIN=([ours]=$OURS/ib_send_bw [up]=$UPSTREAM/ib_send_bw)
[[ -x ${BIN[ours]} ]] || fail "${BIN[ours]} not built"
[[ -x ${BIN[up]} ]] || fail "${BIN[up]} missing (Debian package perftest)"

# mode | arguments | rows expected (sizes) | iterations expected ("" = any)
# (#iterations counts all QPs, as upstream prints it: 400 for -q 4 -n 100.)
# RC -q 4 runs at 4 KiB: at 64 KiB rxe on this TCG link fails it
# intermittently whatever the binaries. Debian's 6.06 against itself failed
# 1 run in 3 ("Completion with error at server, Failed status 9", remote
# invalid request), ours against itself 3 in 3 with the same status 9
# (2026-11-22); at 1 and 4 KiB all 15 runs of the three pairs passed
# (2026-11-23). By hand: LABTEST_MODES=rc-q4 with "-s 65536".
# LABTEST_MODES=REGEX runs only the matching modes.
MODES=(
	"rc|-n 100|65536|100"
	"uc|-c UC -n 100|65536|100"
	"ud|-c UD -n 100|$UD|100"
	"rc-all|-a -n 5|$(for i in $(seq 1 23); do printf '%s ' $((1 << i)); done)|5"
	"ud-all-new|-c UD -a -n 20 --use_new_post_send|$(for ((i = 2; i <= UD; i *= 2)); do printf '%s ' $i; done)|20"
	"rc-q4|-q 4 -n 100 -s 4096|4096|400"
	"ud-q4-new|-c UD -q 4 -n 100 --use_new_post_send|$UD|400"
	"old-post|--use_old_post_send -n 100|65536|100"
	"ud-old-post|-c UD --use_old_post_send -n 100|$UD|100"
	"duration|-D 4|65536|"
	"gbits|--report_gbits -n 100|65536|100"
)
PAIRS=(ours:ours ours:up up:ours)   # server:client
port=18600
for mode in "${MODES[@]}"; do
	IFS='|' read -r mname margs msizes miters <<<"$mode"
	[[ -n ${LABTEST_MODES:-} && ! $mname =~ $LABTEST_MODES ]] && continue
	for pair in "${PAIRS[@]}"; do
		s=${pair%:*} c=${pair#*:} name=$mname/$s-$c
		sargs="-d rxe0 -x $GIDX -F $margs" cargs="-d rxe0 -x $GIDX -F $margs"
		# --use_new_post_send is our name for upstream's default path
		[[ $s == up ]] && sargs=${sargs//--use_new_post_send/}
		[[ $c == up ]] && cargs=${cargs//--use_new_post_send/}
		port=$((port + 1))
		run_pair "$mname-$s-$c" 1 2 $port "${BIN[$s]} $sargs" "${BIN[$c]} $cargs"
		so=$T/$mname-$s-$c.srv co=$T/$mname-$s-$c.cli
		why=
		if ((SRV_RC != 0 || CLI_RC != 0)); then
			why="exit codes server $SRV_RC client $CLI_RC"
		elif got=$(result_rows "$co" | awk '{ printf "%s ", $1 }'); [[ $got != "$(echo $msizes) " ]]; then
			why="client sizes '$got', expected '$msizes'"
		elif [[ -n $miters ]] && ! same_rows "$so" "$co"; then
			why="server and client rows differ"
		elif [[ -n $miters ]] && result_rows "$co" | awk -v n="$miters" '$2 != n { bad = 1 } END { exit !bad }'; then
			why="iterations differ from $miters"
		elif result_rows "$co" | awk '$4 <= 0 && $5 <= 0 { bad = 1 } END { exit !bad }' ||
		     result_rows "$so" | awk '$4 <= 0 && $5 <= 0 { bad = 1 } END { exit !bad }'; then
			why="a row with BW average and message rate 0"
		fi
		if [[ -z $why ]]; then
			result pass "$name"
			note "$name: $(result_rows "$co" | tail -n 1)"
		else
			result fail "$name" "$why"
			echo "--- server ($s):"; tail -n 12 "$so"; echo "--- client ($c):"; tail -n 12 "$co"
		fi
	done
done
