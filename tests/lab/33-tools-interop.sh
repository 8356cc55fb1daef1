#!/bin/bash
# The other seven tools: ours <-> ours and ours <-> Debian's 6.06 in both
# roles, RC (UC/UD where the tool allows them), default size and -a.
# The -a cells (23 sizes up to 8 MiB, most of this test's time) run only
# across binaries: our server and our client each meet 6.06 at every size,
# and ours against ours runs every other cell of the tool (and send_bw -a in
# lab 32).
# A cell passes when both sides exit 0 and the client's rows have the
# expected sizes and iteration counts, with BW or message rate > 0 (BW
# tools) or 0 < t_min <= t_typical <= t_max (latency tools). Servers that
# print rows must agree with the client: send_lat and write_lat print their
# own, write/read/atomic_bw the client's final row; read_lat and atomic_lat
# servers print none.
. "$(dirname "$0")/lib.sh"
lab_require 2
ALL=$(for i in $(seq 1 23); do printf '%s ' $((1 << i)); done)
# tool | mode | arguments | sizes expected | iterations
CELLS=(
	"send_lat|rc|-n 30|2|30"
	"send_lat|ud|-c UD -n 30|2|30"
	"send_lat|uc|-c UC -n 30|2|30"
	"send_lat|rc-all|-a -n 5|$ALL|5"
	"write_lat|rc|-n 30|2|30"
	"write_lat|uc|-c UC -n 30|2|30"
	"write_lat|rc-all|-a -n 5|$ALL|5"
	"read_lat|rc|-n 30|2|30"
	"read_lat|rc-all|-a -n 5|$ALL|5"
	"atomic_lat|rc|-n 30|8|30"
	"write_bw|rc|-n 100|65536|100"
	"write_bw|uc|-c UC -n 100|65536|100"
	"write_bw|rc-all|-a -n 5|$ALL|5"
	"read_bw|rc|-n 100|65536|100"
	"read_bw|rc-all|-a -n 5|$ALL|5"
	"atomic_bw|rc|-n 100|8|100"
)
PAIRS=(ours:ours ours:up up:ours)   # server:client
bin() { [[ $1 == ours ]] && echo "$OURS/ib_$2" || echo "$UPSTREAM/ib_$2"; }

# lat_ok FILE: every row has 0 < t_min <= t_typical <= t_max.
lat_ok() {
	result_rows "$1" | awk '{ n++; if (!($3 > 0 && $3 <= $5 + 0.005 && $5 <= $4 + 0.005)) bad++ }
		END { exit !(n > 0 && !bad) }'
}
# rows_ok FILE SIZES ITERS KIND: the (size, iterations) rows are exactly these.
rows_ok() {
	local want got
	want=$(for s in $2; do echo "$s $3"; done)
	got=$(result_rows "$1" | awk '{ print $1, $2 }')
	[[ $got == "$want" ]] || return 1
	if [[ $4 == lat ]]; then lat_ok "$1"; else result_rows "$1" | awk '!($4 > 0 || $5 > 0) { bad++ } END { exit bad > 0 }'; fi
}

port=18300
for cell in "${CELLS[@]}"; do
	IFS='|' read -r tool mode margs msizes miters <<<"$cell"
	[[ -n ${LABTEST_MODES:-} && ! "$tool/$mode" =~ $LABTEST_MODES ]] && continue
	kind=bw; [[ $tool == *_lat ]] && kind=lat
	for pair in "${PAIRS[@]}"; do
		[[ $mode == *-all && $pair == ours:ours ]] && continue
		s=${pair%:*} c=${pair#*:} name=$tool/$mode/$s-$c f=${tool}-${mode}-$s-$c
		port=$((port + 1))
		run_pair "$f" 1 2 "$port" "$(bin "$s" "$tool") -d rxe0 -x $GIDX -F $margs" \
			"$(bin "$c" "$tool") -d rxe0 -x $GIDX -F $margs"
		why=
		((SRV_RC == 0 && CLI_RC == 0)) || why="exit server $SRV_RC, client $CLI_RC"
		[[ -z $why ]] && ! rows_ok "$T/$f.cli" "$msizes" "$miters" "$kind" && why="client rows"
		if [[ -z $why ]]; then
			case $tool in
			send_lat|write_lat) rows_ok "$T/$f.srv" "$msizes" "$miters" lat || why="server rows" ;;
			*_bw) # the server prints the client's final row
				last=$(result_rows "$T/$f.cli" | tail -n 1 | awk '{ print $1, $2 }')
				[[ $(result_rows "$T/$f.srv" | awk '{ print $1, $2 }') == "$last" ]] || why="server row" ;;
			*) [[ -z $(result_rows "$T/$f.srv") ]] || why="the server printed rows" ;;
			esac
		fi
		verdict "$name" "$f" "$why"
	done
done
