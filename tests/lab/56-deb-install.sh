#!/bin/bash
# The Debian package as installed: ci/deb's perftest-wr .deb is unpacked with
# dpkg -x into a scratch root (it conflicts with Debian's perftest, which stays
# installed as the peer), and that root's ib_send_bw runs RC against Debian's
# 6.06 in both roles. Each cell: both sides exit 0 and print the row of 65536
# bytes x 100 iterations with a BW > 0.
# The .deb: PT_DEB_DIR (default build-deb/ at the top, where ci/test's package
# stage puts it); when there is none, ci/deb builds it there first.
. "$(dirname "$0")/lib.sh"
debdir=${PT_DEB_DIR:-$top/build-deb}
find_deb() { ls -t "$debdir"/perftest-wr_*.deb 2>/dev/null | head -n 1; }
deb=$(find_deb)
if [[ -z $deb ]]; then
	note "no perftest-wr .deb in $debdir: building it with ci/deb"
	"$top/ci/deb" "$debdir" >"$T/deb.log" 2>&1 || { tail -n 30 "$T/deb.log" >&2; fail "ci/deb failed"; }
	deb=$(find_deb)
	[[ -n $deb ]] || fail "ci/deb made no perftest-wr .deb in $debdir"
fi
note "package: $deb ($(date -r "$deb" '+%F %T'))"

# The scratch root (under /tmp, which the guests see over 9p like all of /).
root=$T/root
dpkg -x "$deb" "$root" || fail "dpkg -x $deb failed"
bin=$root/usr/bin/ib_send_bw up=$UPSTREAM/ib_send_bw
[[ -x $up ]] || fail "$up missing (Debian package perftest)"
why=
for f in usr/bin/ib_send_bw usr/bin/ib_atomic_lat usr/bin/wrtrace; do
	[[ -x $root/$f ]] || why+="no $f; "
done
ls "$root"/usr/lib/*/perftest-wr/libwrtrace.so >/dev/null 2>&1 || why+="no libwrtrace.so; "
# ours, not Debian's: only ours has --trace; and the package says it conflicts
"$bin" -h 2>&1 | grep -q -- '--trace=' || why+="the unpacked ib_send_bw -h lists no --trace; "
[[ $(dpkg-deb -f "$deb" Conflicts) == *perftest* ]] || why+="no Conflicts: perftest; "
if [[ -z $why ]]; then result pass unpacked; else result fail unpacked "$why"; fi

lab_require 2
common="-d rxe0 -x $GIDX -F -n 100"
port=18560
# cell NAME SERVER-BIN CLIENT-BIN (outputs in $T/FILE.srv and .cli, FILE = NAME without /)
cell() {
	local name=$1 f=${1//\//-} why= side
	port=$((port + 1))
	run_pair "$f" 1 2 $port "$2 $common" "$3 $common"
	if ((SRV_RC != 0 || CLI_RC != 0)); then
		why="exit codes server $SRV_RC client $CLI_RC"
	else
		for side in srv cli; do
			result_rows "$T/$f.$side" | awk '$1 == 65536 && $2 == 100 && $4 > 0 { ok = 1 } END { exit !ok }' &&
				continue
			# 6.06's known 0.00 when its CPU-MHz calibration fails in a VM (lib.sh, expect_row)
			if result_rows "$T/$f.$side" | awk '$1 == 65536 && $2 == 100 { ok = 1 } END { exit !ok }' &&
				grep -q 'Correlation coefficient r^2: .* < 0.9' "$T/$f.$side"; then
				note "$name: 6.06 ($side) printed 0.00 (its MHz calibration)"
				continue
			fi
			why+="$side: no row of 65536 bytes x 100 with BW > 0; "
		done
	fi
	verdict "$name" "$f" "$why"
}
cell rc/deb-up "$bin" "$up"   # server: the package's; client: Debian's 6.06
cell rc/up-deb "$up" "$bin"
