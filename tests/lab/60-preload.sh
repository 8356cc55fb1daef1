#!/bin/bash
# LD_PRELOAD mode of libwrtrace.so on Debian's unmodified ib_send_bw 6.06,
# server and client both traced: the default ibv_wr_* path and
# --use_old_post_send, RC (plus UD). Per side: one row per WR, as many
# completed rows as iterations (sends on the client, receives on the
# server), times monotonic per QP, completion >= post, nothing dropped or
# unmatched, and the file reads back with `wrtrace report`. Then the
# self-checks: silent on /bin/true, a message when a verbs program opens no
# device through the preload, or when the preload is shadowed.
. "$(dirname "$0")/lib.sh"
lab_require 2
U=$UPSTREAM/ib_send_bw
LIB=$BUILD/plugin/libwrtrace.so WRT=$BUILD/plugin/wrtrace
[[ -f $LIB && -x $WRT ]] || fail "no $LIB or $WRT: build first (PT_BUILD=$BUILD)"
SHARE=$("$LAB" share)
D=$(mktemp -d "$SHARE/preload.XXXXXX")
trap 'rm -rf "$T" "$D"' EXIT
N=200
pre() { echo "env LD_PRELOAD=$LIB WRTRACE_OUT=$D/$1.csv"; }

# check_trace FILE ITERS KIND: KIND send|recv rows completed == ITERS, no
# row of the other kind completed, and the per-row invariants.
check_trace() {
	"$WRT" report "$1" > "$1.report" 2>&1 || { show "$1.report"; return 1; }
	awk -F, -v n="$2" -v kind="$3" '
		/^#/ || /^run,/ { next }
		{ rows++; recv = ($5 == "RECV"); done = ($11 != "")
		  if (!done) { if (!recv) { print "send without completion: " $0; bad++ } ; next }
		  if (recv) nr++; else { ns++; own += $8 }
		  if ($10 != "" && $11 + 0 < $10 + 0) { print "completion before post: " $0; bad++ }
		  if ($9 != 0) { print "error status: " $0; bad++ }
		  k = $2 "/" recv
		  if ($10 != "" && (k in lp) && $10 + 0 < lp[k]) { print "post time goes back: " $0; bad++ }
		  if ((k in lc) && $11 + 0 < lc[k]) { print "completion time goes back: " $0; bad++ }
		  if ((k in ls) && $3 + 0 != ls[k] + 1) { print "sequence gap: " $0; bad++ }
		  if ($10 != "") lp[k] = $10 + 0; lc[k] = $11 + 0; ls[k] = $3 + 0 }
		END { want = kind == "send" ? ns : nr; other = kind == "send" ? nr : ns
		      printf "%d rows, %d send (%d with their own CQE) + %d recv completed\n", rows, ns, own, nr
		      if (unsig && kind == "send" && own >= ns) { print "no unsignaled send retired by a later CQE"; bad++ }
		      exit !(bad == 0 && want == n && other == 0) }' unsig="${UNSIG:-0}" "$1" > "$1.check" 2>&1 ||
		{ show "$1.check"; return 1; }
	grep -q 'dropped=0 untracked=0 incomplete=0' "$1" && grep -q 'unmatched=0 errors=0' "$1" ||
		{ grep '^# run' "$1" >&2; return 1; }
}

# case NAME PORT ARGS...: one traced server/client pair of Debian's binary.
case_pair() {
	local name=$1 port=$2; shift 2
	local args="-d rxe0 -x $GIDX -n $N $*"
	run_pair "$name" 1 2 "$port" "$(pre "$name.srv") $U $args" "$(pre "$name.cli") $U $args"
	# 6.06's own bug in a VM: its MHz calibration fails (r^2 < 0.9), it prints
	# "Can't produce a report" and exits 1; what it traced is still checked
	local no_report=0
	((CLI_RC == 1)) && grep -q "Can't produce a report" "$T/$name.cli" &&
		grep -q 'Correlation coefficient r^2: .* < 0.9' "$T/$name.cli" && no_report=1
	((no_report)) && note "$name: 6.06's client could not calibrate its clock (r^2 < 0.9): no report, exit 1"
	if ((SRV_RC == 0 && (CLI_RC == 0 || no_report))) &&
	   { ((no_report)) || expect_row "$name" "$T/$name.cli" "${SIZE:-65536}" "$N"; } &&
	   check_trace "$D/$name.cli.csv" "$N" send && check_trace "$D/$name.srv.csv" "$N" recv &&
	   grep -q 'hardware CQE timestamps: not supported by rxe0' "$T/$name.cli" &&
	   ! grep -q 'rows built at each CQE' "$T/$name.srv" "$T/$name.cli"; then   # deferred to run end
		result pass "preload/$name"
		note "$name: client $(cat "$D/$name.cli.csv.check"); server $(cat "$D/$name.srv.csv.check")"
	else
		result fail "preload/$name" "exit $SRV_RC/$CLI_RC$(grep -h -m1 'rows built at each CQE' "$T/$name.srv" "$T/$name.cli" | head -n 1)"
		show "$T/$name.srv"; show "$T/$name.cli"
	fi
}

# -Q 16: most sends unsignaled, retired FIFO-wise by the next signaled CQE
UNSIG=1 case_pair rc-wr 19510 -Q 16
UNSIG=1 case_pair rc-old 19511 -Q 16 --use_old_post_send
SIZE=1024 case_pair ud-wr 19512 -c UD -s 1024
SIZE=1024 case_pair ud-old 19513 -c UD -s 1024 --use_old_post_send

# Self-checks. /bin/true: nothing on stderr, exit 0.
"$LAB" exec 2 --timeout 60 -- env LD_PRELOAD="$LIB" WRTRACE_OUT="$D/true.csv" /bin/true > "$T/true.out" 2>&1
rc=$?
if ((rc == 0)) && [[ ! -s $T/true.out ]]; then
	result pass preload/selfcheck-quiet
else
	result fail preload/selfcheck-quiet "exit $rc"; show "$T/true.out"
fi
# ibv_devices loads libibverbs but opens no device: the preload says so.
"$LAB" exec 2 --timeout 60 -- env LD_PRELOAD="$LIB" WRTRACE_OUT="$D/dev.csv" ibv_devices > "$T/dev.out" 2>&1
if grep -q 'wrtrace: LD_PRELOAD active but no verbs device was opened through it' "$T/dev.out" &&
   grep -q rxe0 "$T/dev.out"; then
	result pass preload/selfcheck-no-device
else
	result fail preload/selfcheck-no-device; show "$T/dev.out"
fi
# libibverbs ahead of us in LD_PRELOAD: interposition cannot take; said at start.
"$LAB" exec 2 --timeout 60 -- env LD_PRELOAD="libibverbs.so.1 $LIB" WRTRACE_OUT="$D/sh.csv" \
	ibv_devinfo -d rxe0 > "$T/sh.out" 2>&1
if grep -q "wrtrace: LD_PRELOAD active but ibv_open_device resolves to .*libibverbs" "$T/sh.out" &&
   grep -q 'hca_id:.*rxe0' "$T/sh.out"; then
	result pass preload/selfcheck-shadowed
else
	result fail preload/selfcheck-shadowed; show "$T/sh.out"
fi
