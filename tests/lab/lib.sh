# tests/lab/lib.sh: helpers sourced by the lab tests. A test exits 0 (pass),
# 77 (skip) or anything else (fail), and says why on stderr.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB=$top/ci/lab
BUILD=${PT_BUILD:-$top/build}          # where ci/test built our tools
GIDX=${LABTEST_GID_INDEX:-1}           # rxe on 6.1: index 1 is the IPv4-mapped RoCE v2 GID
UPSTREAM=${LABTEST_UPSTREAM:-/usr/bin} # Debian's perftest 6.06
T=$(mktemp -d /tmp/labtest.XXXXXX)
trap 'rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }
note() { echo "  $*" >&2; }

lab_nodes() { cat "${PTLAB_DIR:-/var/tmp/ptlab}/nodes" 2>/dev/null || echo 0; }
# ud_mtu: the RoCE MTU of the running lab, the default and largest UD
# message (ci/lab: eth0 9000 -> 4096, 1500 -> 1024).
ud_mtu() {
	local m; m=$(cat "${PTLAB_DIR:-/var/tmp/ptlab}/mtu" 2>/dev/null || echo 1500)
	local ib=256; for v in 512 1024 2048 4096; do ((m >= v + 100)) && ib=$v; done; echo $ib
}

# lab_require N: make sure exactly N nodes are up.
lab_require() {
	if [[ $(lab_nodes) != "$1" ]] || ! "$LAB" status 2>/dev/null | grep -q running; then
		"$LAB" down >/dev/null 2>&1
		"$LAB" up --nodes "$1" || fail "the lab did not come up with $1 nodes"
	fi
}

. "$top/ci/lab-listen.sh"
# wait_listen NODE PORT: until something listens on PORT on NODE, else fail.
wait_listen() { lab_listening "$1" "$2" || fail "nothing listens on port $2 on node $1"; }

# run_pair NAME SNODE CNODE PORT "SERVER CMD" "CLIENT CMD": run a server and a
# client; outputs in $T/NAME.srv / $T/NAME.cli, exit codes in SRV_RC / CLI_RC.
# The client gets the server's address appended. ci/lab-serve runs the
# server and marks in the share when it listens; the client starts then.
run_pair() {
	local name=$1 sn=$2 cn=$3 port=$4 scmd=$5 ccmd=$6 spid marker i
	marker=$("$LAB" share)/listening.${name//\//-}.$port.$$
	rm -f "$marker"
	"$LAB" exec "$sn" --timeout 300 -- "$top/ci/lab-serve" "$marker" "$port" $scmd -p "$port" \
		> "$T/$name.srv" 2>&1 &
	spid=$!
	for ((i = 0; i < 1200; i++)); do
		[[ -e $marker ]] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	[[ -e $marker ]] || { show "$T/$name.srv"; fail "nothing listens on port $port on node $sn"; }
	rm -f "$marker"
	"$LAB" exec "$cn" --timeout 300 -- $ccmd -p "$port" "$("$LAB" addr "$sn")" > "$T/$name.cli" 2>&1
	CLI_RC=$?
	wait $spid
	SRV_RC=$?
}

show() { sed 's/^/    | /' "$1" >&2; }

# result_rows FILE: "bytes iterations bw_peak bw_avg msgrate" per result row.
result_rows() { awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { print $1, $2, $3, $4, $5 }' "$1"; }

# expect_rows NAME FILE SIZE ITERS [ROLE]: exactly one row with that size and
# iteration count, and an average BW > 0.
# Debian's 6.06 prints 0.00 when its CPU-MHz calibration fails in a VM
# ("Correlation coefficient r^2: ... < 0.9", the upstream bug ours fixes):
# that row is accepted, with a note, when its size and iterations are right.
expect_row() {
	local rows; rows=$(result_rows "$2")
	[[ -n $rows ]] || { show "$2"; fail "$1: no result row"; }
	echo "$rows" | awk -v s="$3" -v n="$4" '$1 == s && $2 == n && $4 > 0 { ok = 1 } END { exit !ok }' && return 0
	if echo "$rows" | awk -v s="$3" -v n="$4" '$1 == s && $2 == n { ok = 1 } END { exit !ok }' &&
		grep -q 'Correlation coefficient r^2: .* < 0.9' "$2"; then
		note "$1: 6.06 printed 0.00: $(grep -o 'Correlation coefficient r^2: .* < 0.9' "$2" | head -n 1) (its MHz calibration)"
		return 0
	fi
	show "$2"; fail "$1: no row with size $3, $4 iterations and BW > 0 (rows: $rows)"
}

OURS=${LABTEST_OURS:-$BUILD/perftest}   # our tools
# result pass|fail|skip NAME [WHY]: one counted result (see tests/lab/run).
result() { echo "RESULT $1 $2"; [[ -n ${3:-} ]] && echo "    $2: $3" >&2; return 0; }

# verdict NAME F WHY: one cell's result from the outputs $T/F.srv and .cli; an
# empty WHY passes (noting the client's last row), else both outputs are shown.
verdict() {
	if [[ -z $3 ]]; then
		result pass "$1"; note "$1: $(result_rows "$T/$2.cli" | tail -n 1)"
	else
		result fail "$1" "$3"; show "$T/$2.srv"; show "$T/$2.cli"
	fi
}

# same_rows A B: the two outputs have the same (size, iterations) rows.
same_rows() { diff <(result_rows "$1" | awk '{ print $1, $2 }') <(result_rows "$2" | awk '{ print $1, $2 }') >/dev/null; }
