#!/bin/bash
# Modes of the other seven tools beyond the interop matrix: -b for write and
# read BW (ours and 6.06), -A CMP_AND_SWAP, -o, -D for latency and RDMA BW
# tools, -H/-U sample lists and -C.
. "$(dirname "$0")/lib.sh"
lab_require 2
A="-d rxe0 -x $GIDX -F"
bin() { [[ $1 == ours ]] && echo "$OURS/ib_$2" || echo "$UPSTREAM/ib_$2"; }
port=18400

# cell NAME TOOL SERVER CLIENT "ARGS" CHECK: run a pair; CHECK is a command
# run with the client's output file as its argument.
cell() {
	local name=$1 tool=$2 s=$3 c=$4 args=$5 check=$6 f=${1//\//-}
	port=$((port + 1))
	run_pair "$f" 1 2 "$port" "$(bin "$s" "$tool") $A $args" "$(bin "$c" "$tool") $A $args"
	if ((SRV_RC == 0 && CLI_RC == 0)) && $check "$T/$f.cli" "$T/$f.srv"; then
		result pass "$name"; note "$name: $(result_rows "$T/$f.cli" | tail -n 1)"
	else
		result fail "$name" "exit $SRV_RC/$CLI_RC or check '$check'"; show "$T/$f.srv"; show "$T/$f.cli"
	fi
}
bw_pos() { result_rows "$1" | awk '$4 > 0 || $5 > 0 { ok = 1 } END { exit !ok }'; }
lat_pos() { result_rows "$1" | awk '$3 > 0 && $3 <= $5 && $5 <= $4 { ok = 1 } END { exit !ok }'; }
# duration latency row: "#bytes #iterations t_avg tps" with iterations, t_avg and tps > 0
dur_lat() { grep -q 'tps average' "$1" && awk '$1 ~ /^[0-9]+$/ && NF == 4 && $2 > 0 && $3 > 0 && $4 > 0 { ok = 1 } END { exit !ok }' "$1"; }
outs4() { grep -q 'Outstand reads  : 4' "$1" && grep -q 'OUT 0x04' "$1" && bw_pos "$1"; }
cas() { grep -q 'CMP_AND_SWAP' "$1" && bw_pos "$1"; }
cas_lat() { grep -q 'CMP_AND_SWAP' "$1" && lat_pos "$1"; }
# -U then -H: 99 unsorted samples, then the 97 kept after dropping the 2 largest
samples() { [[ $(grep -c '^#, usec' "$1") == 2 ]] && [[ $(grep -cE '^[0-9]+, [0-9.]+$' "$1") == $((99 + 97)) ]] && lat_pos "$1"; }
clock_units() { grep -q 'nanoseconds of CLOCK_MONOTONIC_RAW' "$1" && lat_pos "$1"; }

cell write_bw/bidir/ours-ours write_bw ours ours "-b -n 200" bw_pos
cell write_bw/bidir/ours-up write_bw ours up "-b -n 200" bw_pos
cell write_bw/bidir/up-ours write_bw up ours "-b -n 200" bw_pos
cell read_bw/bidir/ours-ours read_bw ours ours "-b -n 200" bw_pos
cell read_bw/bidir/up-ours read_bw up ours "-b -n 200" bw_pos
cell read_bw/outs-4/ours-up read_bw ours up "-o 4 -n 200" outs4
cell atomic_bw/cas/ours-up atomic_bw ours up "-A CMP_AND_SWAP -n 200" cas
cell atomic_lat/cas/up-ours atomic_lat up ours "-A CMP_AND_SWAP -n 100" cas_lat
cell send_lat/duration/ours-ours send_lat ours ours "-D 3" dur_lat
cell write_lat/duration/ours-ours write_lat ours ours "-D 3" dur_lat
cell read_lat/duration/ours-ours read_lat ours ours "-D 3" dur_lat
cell write_bw/duration/ours-ours write_bw ours ours "-D 3" bw_pos
cell send_lat/samples/ours-ours send_lat ours ours "-n 100 -U -H" samples
cell write_lat/clock-units/ours-ours write_lat ours ours "-n 100 -C" clock_units
