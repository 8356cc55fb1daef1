#!/bin/bash
# Faults: the peer killed at each stage of a run (before the version
# exchange, in the key exchange, mid-run, in the BW report exchange), in
# both roles; a frozen peer; completion errors; SIGINT during a run. The
# survivor must exit non-zero naming the stage, within seconds of a kill
# (it sees the peer go) or when its OOB timeout runs out (a frozen peer);
# an interrupted run prints what it measured, marked partial, exits 130
# and leaves a complete trace. (SIGINT on a multicast receiver, which must
# leave its group, is in 32-send-bw-modes.sh.)
#
# The victim stops itself at the stage (PT_TEST_STOP_AT, a test-only
# variable: raise(SIGSTOP)); a watcher on its node sends SIGKILL as soon as
# /proc shows it stopped, so the kill lands exactly there. Times are taken
# on the host from the streamed outputs of both nodes.
. "$(dirname "$0")/lib.sh"
lab_require 2
SHARE=$("$LAB" share)
WRTRACE=$BUILD/plugin/wrtrace
A="-d rxe0 -x $GIDX"
TMO=5         # the survivor must exit within this many seconds of a kill
PORT=18800
ADDR=$("$LAB" addr 1)
ONLY=${FAULTS_ONLY:-}   # a pattern: run only the cases whose name matches
wanted() { [[ -z $ONLY || $1 == *$ONLY* ]] || { PORT=$((PORT + 1)); return 1; }; }

# when FILE PATTERN SECS: wait until FILE matches PATTERN; print the host time.
when() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && { echo "$EPOCHREALTIME"; return 0; }
		sleep 0.1
	done
	return 1
}

# listening FILE: a server writing to FILE listens (its banner, printed
# after listen() and flushed; cheaper than asking the node with ss).
listening() { when "$1" 'Waiting for client to connect' 60 > /dev/null; }

# pair NAME SERVER-CMD CLIENT-CMD: run_pair's job (outputs in $T/NAME.srv
# and .cli, exit codes in SRV_RC and CLI_RC), the client started once the
# server listens. The client gets the server's address appended.
pair() {
	local sp
	"$LAB" exec 1 --timeout 120 -- $2 > "$T/$1.srv" 2>&1 & sp=$!
	listening "$T/$1.srv"
	"$LAB" exec 2 --timeout 120 -- $3 "$ADDR" > "$T/$1.cli" 2>&1
	CLI_RC=$?
	wait $sp
	SRV_RC=$?
}

# victim STAGE MODE RELEASE CMD...: the guest script that runs CMD until it
# stops at STAGE, then kills it (MODE kill) or keeps it frozen until the
# file RELEASE exists (MODE freeze, bounded).
victim() {
	local stage=$1 mode=$2 rel=$3; shift 3
	cat <<EOF
PT_TEST_STOP_AT=$stage $* & p=\$!
for i in \$(seq 600); do
	s=
	{ while read -r k v _; do [[ \$k == State: ]] && s=\$v; done < /proc/\$p/status; } 2>/dev/null
	[[ \$s == T || -z \$s ]] && break
	sleep 0.05
done
if [[ \$s != T ]]; then echo VICTIM_NEVER_STOPPED; wait \$p; echo "VICTIM_EXIT \$?"; exit 1; fi
if [[ $mode == freeze ]]; then
	echo VICTIM_FROZEN
	for i in \$(seq 300); do [[ -e $rel ]] && break; sleep 0.2; done
fi
kill -9 \$p; echo VICTIM_KILLED; wait \$p
EOF
}

# fault NAME TOOL STAGE VICTIM MODE RC REGEX SERVER-ARGS [CLIENT-ARGS]: kill
# (or freeze) the server (VICTIM srv, node 1) or the client (cli, node 2)
# at STAGE; the other side must exit RC and say REGEX (grep -E): after a
# kill within TMO seconds, though its --oob_timeout is 30 (it saw the peer
# go, it did not time out); after a freeze when its --oob_timeout of TMO
# runs out.
fault() {
	wanted "$1" || return 0
	local name=$1 tool=$2 stage=$3 vic=$4 mode=$5 want=$6 re=$7 sargs=$8 cargs=${9:-$8}
	local f=${name//\//-} port=$((PORT++))
	local rel=$SHARE/release.$f vf=$T/$f.victim sf=$T/$f.survivor
	local cmd=("$OURS/$tool $A $sargs -p $port" "$OURS/$tool $A $cargs -p $port $ADDR")
	local v=0 s=1 vp sp t_ev t_end rc dt why= tmo=30
	[[ $vic == cli ]] && v=1 s=0
	[[ $mode == freeze ]] && tmo=$TMO
	rm -f "$rel"
	# The victim starts first with a long OOB timeout (the connect/accept
	# wait too): a victim server is listening before the client starts; a
	# victim client retries its connect until the survivor listens. (A
	# surviving server with a short timeout could give up waiting for the
	# client to come up on a loaded host: freeze cases freeze the server.)
	"$LAB" exec $((v + 1)) --timeout 120 -- \
		bash -c "$(victim "$stage" "$mode" "$rel" "${cmd[v]} --oob_timeout 60")" > "$vf" 2>&1 & vp=$!
	[[ $vic == srv ]] && listening "$vf"
	"$LAB" exec $((s + 1)) --timeout 120 -- \
		bash -c "${cmd[s]} --oob_timeout $tmo; echo SURVIVOR_EXIT \$?" > "$sf" 2>&1 & sp=$!
	t_ev=$(when "$vf" 'VICTIM_KILLED\|VICTIM_FROZEN\|VICTIM_NEVER' 60)
	t_end=$(when "$sf" 'SURVIVOR_EXIT' 60)
	touch "$rel"
	wait "$vp" "$sp"
	rc=$(awk '/^SURVIVOR_EXIT/ { print $2 }' "$sf")
	dt=$(awk -v a="$t_ev" -v b="$t_end" 'BEGIN { if (a && b) printf "%.1f", b - a; else print "?" }')
	grep -q VICTIM_NEVER "$vf" && why="the victim never reached stage $stage"
	[[ -z $why && $rc != "$want" ]] && why="survivor exit '$rc', want $want"
	[[ -z $why && $dt == "?" ]] && why="no exit seen"
	if [[ -z $why && $mode == kill ]]; then
		awk -v d="$dt" -v t="$TMO" 'BEGIN { exit !(d < t) }' || why="exit ${dt}s after the kill, not within ${TMO}s"
	elif [[ -z $why ]]; then
		awk -v d="$dt" -v t="$TMO" 'BEGIN { exit !(d >= t - 1 && d < t + 6) }' ||
			why="exit ${dt}s after the freeze, want about ${TMO}s"
	fi
	[[ -z $why ]] && ! grep -qE "$re" "$sf" && why="the survivor does not say /$re/"
	if [[ -z $why ]]; then
		result pass "$name"
		note "$name: exit $rc ${dt}s after the $mode: $(grep -m1 -E "$re" "$sf" | sed 's/^ *//')"
	else
		result fail "$name" "$why"; show "$sf"; show "$vf"
	fi
}

O="-n 20"
N="-n 100000"  # long enough to be killed mid-run
fault version/kill-client ib_send_bw version cli kill 1 'receiving the version' "$O"
fault version/kill-server ib_send_bw version srv kill 1 'the version' "$O"
fault keys/kill-client ib_send_bw keys cli kill 1 'the key message' "$O"
fault keys/kill-server ib_send_bw keys srv kill 1 'the key message' "$O"
fault keys/freeze-server ib_send_bw keys srv freeze 1 'timed out .* the key message' "$O"
fault run/send-bw-kill-client ib_send_bw run cli kill 17 'went away during the run' "$N"
fault run/send-bw-kill-server ib_send_bw run srv kill 17 'went away during the run' "$N"
# (small messages: the frozen server's kernel keeps taking them until its
# receives run out, which then takes little time)
fault run/send-bw-freeze-server ib_send_bw run srv freeze 17 'No send completion for 5 seconds' "-s 4096 $N"
fault run/write-bw-kill-client ib_write_bw run cli kill 1 'went away during the run' "$N"
fault run/write-bw-kill-server ib_write_bw run srv kill 1 'went away during the run' "$N"
fault run/send-lat-kill-server ib_send_lat run srv kill 17 'went away during the run' "$N"
# -R: the out-of-band channel is an rdma_cm connection, whose disconnect the
# run loops see instead of a TCP socket closing
fault run/send-bw-R-kill-client ib_send_bw run cli kill 17 'went away during the run' "-R $N"
fault run/send-bw-R-kill-server ib_send_bw run srv kill 17 'went away during the run' "-R $N"
# (-b with one-packet messages: rxe 6.1 sometimes NAKs a retransmitted
# multi-packet SEND as an invalid request under load, failing the run)
fault report/send-bw-kill-client ib_send_bw report cli kill 17 'the report size' "-b -s 1024 $O"
fault report/send-bw-kill-server ib_send_bw report srv kill 17 'the report size' "-b -s 1024 $O"
fault report/write-bw-kill-client ib_write_bw report cli kill 1 'the report size' "$O"
fault report/write-bw-kill-server ib_write_bw report srv kill 1 'the report size' "$O"

# says FILE RE...: FILE matches every RE (grep -E).
says() {
	local f=$1 re; shift
	for re; do grep -qE "$re" "$f" || return 1; done
}

# Completion errors: the client sends more than the server's buffers hold.
# SEND: the receive fails and the sender gets a NAK; both exit 17
# (upstream's code for send_bw). WRITE beyond the server's MR: remote
# access error, exit 1 (other tools); the server, which waits for the
# client's run, sees it go away. Both name the status, the QP and the WR.
QPWR='on QP 0 \(QPN 0x[0-9a-f]{6}\), (send|receive) WR #[0-9]+ \(wr_id 0x[0-9a-f]+\)'
# wc_case NAME TOOL SERVER-ARGS CLIENT-ARGS SRV-RC CLI-RC SRV-RE CLI-RE
wc_case() {
	wanted "$1" || return 0
	local name=$1 f=${1//\//-} port=$((PORT++)) why=
	pair "$f" "$OURS/$2 $A $3 -p $port" "$OURS/$2 $A $4 -p $port"
	[[ $SRV_RC == "$5" && $CLI_RC == "$6" ]] || why="exit $SRV_RC/$CLI_RC, want $5/$6"
	[[ -z $why ]] && ! says "$T/$f.srv" "$7" && why="server does not say /$7/"
	[[ -z $why && $7 == Failed* ]] && ! says "$T/$f.srv" "$QPWR" && why="server does not say which QP and WR"
	[[ -z $why ]] && ! says "$T/$f.cli" "$8" "$QPWR" && why="client does not say /$8/ and which QP and WR"
	if [[ -z $why ]]; then
		result pass "$name"
		note "$name: server exit $SRV_RC: $(grep -E -A2 "Completion with error|went away" "$T/$f.srv" | tr -s ' \n' ' ')"
		note "$name: client exit $CLI_RC: $(grep -A3 'Completion with error' "$T/$f.cli" | tr -s ' \n' ' ')"
	else
		result fail "$name" "$why"; show "$T/$f.srv"; show "$T/$f.cli"
	fi
}
# (rxe reports the too-long SEND as a local QP operation error at the
# receiver and a remote operation error at the sender; hardware says local
# length / remote invalid request.)
wc_case wc/send-bw-length ib_send_bw "-s 1024 -n 50" "-s 4096 -n 50" 17 17 \
	"Failed status (1|2): local (length|QP operation) error" "Failed status (9|11): remote (invalid request|operation) error"
wc_case wc/write-bw-access ib_write_bw "-s 64 -n 50" "-s 65536 -n 50" 1 1 \
	'went away during the run' "Failed status 10: remote access error"

# SIGINT during a run (client, iteration mode): exit 130, a row from what
# was measured marked partial, and a complete --trace file whose completed
# WRs match the partial count; the server sees the client go away.
# sigint NAME TOOL OPCODE: OPCODE is the client's traced send opcode.
sigint() {
	wanted "$1" || return 0
	local name=$1 f=${1//\//-} tool=$2 op=$3 port=$((PORT++)) why= n rows
	rm -f "$SHARE/$f.csv"
	pair "$f" "$OURS/$tool $A -n 1000000 -p $port" \
		"timeout --preserve-status -s INT 8 $OURS/$tool $A -n 1000000 --trace=$SHARE/$f.csv -p $port"
	n=$(sed -nE 's/^ Partial results: interrupted by signal 2 after ([0-9]+) of 1000000 (messages|iterations)$/\1/p' "$T/$f.cli")
	((CLI_RC == 130)) || why="client exit $CLI_RC, want 130"
	[[ -z $why && -z $n ]] && why="no 'Partial results' line"
	# the row: BW (bytes, iterations, peak, avg, rate) or LAT (9 columns)
	[[ -z $why ]] && ! awk -v n="$n" -v w=$([[ $tool == *_bw ]] && echo 5 || echo 9) \
		'$1 ~ /^[0-9]+$/ && $2 == n && NF >= w { f = 1 } END { exit !f }' "$T/$f.cli" &&
		why="no result row with $n iterations"
	[[ -z $why ]] && ! grep -q 'Interrupted by signal 2' "$T/$f.cli" && why="no 'Interrupted by signal 2'"
	[[ -z $why && $SRV_RC != 17 ]] && why="server exit $SRV_RC, want 17"
	[[ -z $why ]] && ! grep -q 'went away during the run' "$T/$f.srv" && why="server does not say the client went away"
	[[ -z $why ]] && ! "$WRTRACE" report "$SHARE/$f.csv" > "$T/$f.report" 2>&1 && why="wrtrace report failed"
	if [[ -z $why ]]; then
		# completed sends in the trace: the partial count (a LAT run may have one
		# send in flight when it stops)
		rows=$(python3 -c '
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if r["opcode"] == sys.argv[2] and r["status"] != ""]
print(len(rows))' "$SHARE/$f.csv" "$op")
		[[ $rows == "$n" || ($tool == *_lat && $rows == $((n - 1))) ]] ||
			why="the trace has $rows completed $op rows, the partial row $n"
	fi
	if [[ -z $why ]]; then
		result pass "$name"
		note "$name: exit 130, $(grep -A1 '^ Partial' "$T/$f.cli" | tr -s ' \n' ' '); trace: $rows completed $op rows; server: $(grep -m1 'went away' "$T/$f.srv" | sed 's/^ *//')"
	else
		result fail "$name" "$why"; show "$T/$f.cli"; show "$T/$f.srv"; [[ -f $T/$f.report ]] && show "$T/$f.report"
	fi
}
sigint sigint/send-bw ib_send_bw SEND
sigint sigint/send-lat ib_send_lat SEND

# SIGINT on a server still waiting for its client (an out-of-band wait,
# here 60 s long): it stops at once and exits 130.
wanted sigint/waiting-server || exit 0
s0=$EPOCHREALTIME
"$LAB" exec 1 --timeout 60 -- timeout --preserve-status -s INT 3 $OURS/ib_write_bw $A -p $((PORT++)) > "$T/wait.out" 2>&1
rc=$? dt=$(awk -v a="$s0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
if ((rc == 130)) && awk -v d="$dt" 'BEGIN { exit !(d < 30) }'; then
	result pass sigint/waiting-server; note "sigint/waiting-server: exit 130, ${dt}s in all (SIGINT after 3 s): $(grep -m1 -i interrupt "$T/wait.out" | sed 's/^ *//')"
else
	result fail sigint/waiting-server "exit $rc after ${dt}s (SIGINT after 3 s, --oob_timeout 60)"; show "$T/wait.out"
fi
