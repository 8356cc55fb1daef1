#!/bin/bash
# rdma_cm modes: -z (the out-of-band messages over an RC QP that rdma_cm
# connects, keys as raw structs) and -R (the data QPs created and connected
# by rdma_cm; UD takes the peer's QPN, Q_Key and path from rdma_cm and, for
# -b and latency tests, a SEND_WITH_IMM back to the server). Ours <-> ours
# and ours <-> Debian's 6.06 in both roles. Then the raw key layouts: 56
# bytes up to 6.28, 64 from 6.29 (played by ours announcing 6.29): chosen by
# the peer's version, and a mismatch is refused with both layouts named.
# (Per cell: both sides exit 0, the client's row has the size and count.)
. "$(dirname "$0")/lib.sh"
lab_require 2
# tool | mode | arguments | size | iterations | pairs (server:client). Each
# mode runs against 6.06 in both roles; the RDMA-verb tools alternate roles so
# that both our server and our client meet 6.06 over -R; ours <-> ours is the
# layout cells at the end.
UPP="ours:up up:ours"
UD=$(ud_mtu)   # UD messages default to the RoCE MTU
CELLS=(
	"send_bw|z-rc|-z -n 100|65536|100|$UPP"
	"send_bw|z-ud|-z -c UD -n 100|$UD|100|$UPP"
	"send_bw|R-rc|-R -n 100|65536|100|$UPP"
	"send_bw|R-ud|-R -c UD -n 100|$UD|100|$UPP"
	"send_bw|R-rc-q2|-R -q 2 -n 50|65536|100|ours:up"
	"send_bw|R-ud-bidir|-R -c UD -b -n 50|$UD|50|$UPP"
	"send_lat|R-ud|-R -c UD -n 50|2|50|$UPP"
	"write_bw|R-rc|-R -n 100|65536|100|up:ours"
	"read_bw|R-rc|-R -n 100|65536|100|ours:up"
	"atomic_bw|R-rc|-R -n 100|8|100|up:ours"
	"write_lat|R-rc|-R -n 50|2|50|ours:up"
	"write_lat|z-rc|-z -n 50|2|50|up:ours"
	"read_lat|R-rc|-R -n 50|2|50|ours:up"
	"atomic_lat|R-rc|-R -n 50|8|50|up:ours"
)
bin() { [[ $1 == ours ]] && echo "$OURS/ib_$2" || echo "$UPSTREAM/ib_$2"; }

# rows_ok FILE SIZE ITERS KIND [any]: a row of that size and count with
# figures > 0: BW average or message rate (bw), t_min (lat). With "any" the
# figures may be zero: 6.06's CPU-MHz clock prints 0.00 in a loaded VM.
rows_ok() {
	result_rows "$1" | awk -v s="$2" -v n="$3" -v k="$4" -v any="${5:-}" '$1 == s && $2 == n {
		if (any || (k == "bw" && ($4 > 0 || $5 > 0)) || (k == "lat" && $3 > 0)) ok = 1 }
		END { exit !ok }'
}

port=18400
for cell in "${CELLS[@]}"; do
	IFS='|' read -r tool mode margs size iters pairs <<<"$cell"
	[[ -n ${LABTEST_MODES:-} && ! "$tool/$mode" =~ $LABTEST_MODES ]] && continue
	for pair in $pairs; do
		s=${pair%:*} c=${pair#*:} name=$tool/$mode/$s-$c f=$tool-$mode-$s-$c
		port=$((port + 1))
		run_pair "$f" 1 2 "$port" "$(bin "$s" "$tool") -d rxe0 -x $GIDX -F $margs" \
			"$(bin "$c" "$tool") -d rxe0 -x $GIDX -F $margs"
		kind=bw; [[ $tool == *_lat ]] && kind=lat
		any=; [[ $c == up ]] && any=any
		why=
		((SRV_RC == 0 && CLI_RC == 0)) || why="exit server $SRV_RC, client $CLI_RC"
		[[ -z $why ]] && ! rows_ok "$T/$f.cli" "$size" "$iters" $kind $any && why="client rows"
		# our send_bw/send_lat server measures too: its figures must be real
		[[ -z $why && $s == ours && $tool == send_* ]] && ! rows_ok "$T/$f.srv" "$size" "$iters" $kind &&
			why="server rows"
		for side in srv cli; do
			who=$s; [[ $side == cli ]] && who=$c
			[[ $who == ours ]] || continue
			grep -q 'Data ex. method : rdma_cm' "$T/$f.$side" || why="${why:+$why, }our header lacks 'Data ex. method : rdma_cm'"
			[[ $mode == R-* ]] && ! grep -qP 'rdma_cm QPs\t : ON' "$T/$f.$side" && why="${why:+$why, }our header lacks 'rdma_cm QPs : ON'"
		done
		verdict "$name" "$f" "$why"
	done
done

# Raw key layouts, ours on both sides: "6.29" announces itself, so the other
# side must send it 64-byte keys (and both keep the 64-byte layout).
O="$OURS/ib_send_bw -d rxe0 -x $GIDX -F"
for mode in -z -R; do
	run_pair "layout$mode" 1 2 $((port += 1)) "$O $mode -n 50" "$O $mode -n 50 --announce_version 6.29"
	if ((SRV_RC == 0 && CLI_RC == 0)) && rows_ok "$T/layout$mode.cli" 65536 50 bw; then
		result pass "raw-key-64/$mode"; note "6.06 server <-> '6.29' client ($mode): 64-byte keys, run completed"
	else
		result fail "raw-key-64/$mode" "exit $SRV_RC/$CLI_RC"; show "$T/layout$mode.srv"; show "$T/layout$mode.cli"
	fi
done
# Without a version exchange the server cannot know: it expects 56 bytes, the
# "6.29" client sends 64, and the server says so (no hang, no garbage keys).
run_pair layout-mismatch 1 2 $((port += 1)) "$O -z -n 50 --dont_xchg_versions" \
	"$O -z -n 50 --dont_xchg_versions --announce_version 6.29"
if ((SRV_RC == 1 && CLI_RC == 1)) &&
	grep -q 'peer sent a 64-byte message where 56 bytes were expected.*56 bytes up to perftest 6.28 and 64 from 6.29' "$T/layout-mismatch.srv"; then
	result pass raw-key-mismatch; note "mismatch: $(grep -o 'peer sent a 64-byte[^;]*' "$T/layout-mismatch.srv")"
else
	result fail raw-key-mismatch "exit $SRV_RC/$CLI_RC"; show "$T/layout-mismatch.srv"; show "$T/layout-mismatch.cli"
fi
