#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: the wrtrace command on traces made by the built-in recorder
# (tests/unit/wrtrace_synth, the --trace path): report reprints the capture
# summary from CSV and JSONL, bad files and arguments fail with a message and
# a non-zero status, plot writes a PNG through gnuplot.
set -u
top=${top_builddir:-.}
WRTRACE=$top/plugin/wrtrace
SYNTH=$top/tests/unit/wrtrace_synth
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }
# check NAME CMD...: pass when CMD succeeds
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

echo "1..15"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_wrtrace_cli.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1-2: capture, CSV and JSONL; the capture prints the summary
"$SYNTH" "$tmp/t.csv" 1000 >"$tmp/cap_csv.txt" 2>"$tmp/err" &&
	"$SYNTH" "$tmp/t.jsonl" 1000 >"$tmp/cap_jsonl.txt" 2>>"$tmp/err"
check "wrtrace_synth writes CSV and JSONL traces" test -s "$tmp/t.csv" -a -s "$tmp/t.jsonl"
[ -s "$tmp/err" ] && diag <"$tmp/err"
check "the CSV has a row per WR (2 QPs x 1000) after 3 header lines" \
	test "$(wc -l <"$tmp/t.csv")" -eq 2003

# 3-6: report == capture summary (minus the 'rows written' line)
for fmt in csv jsonl; do
	if "$WRTRACE" report "$tmp/t.$fmt" >"$tmp/rep_$fmt.txt" 2>"$tmp/err"; then
		ok "wrtrace report t.$fmt exits 0"
	else
		not_ok "wrtrace report t.$fmt exits 0"
		diag <"$tmp/err"
	fi
	grep -v ' rows written to ' "$tmp/cap_$fmt.txt" >"$tmp/cap_$fmt.cmp"
	if cmp -s "$tmp/cap_$fmt.cmp" "$tmp/rep_$fmt.txt"; then
		ok "report of t.$fmt reprints the capture summary exactly"
	else
		not_ok "report of t.$fmt reprints the capture summary exactly"
		diff "$tmp/cap_$fmt.cmp" "$tmp/rep_$fmt.txt" | diag
	fi
done

# 7: the summary says what it must
if grep -q 'hardware CQE timestamps: not supported by mock0' "$tmp/rep_csv.txt" &&
	grep -q 'send post->compl *2000 ' "$tmp/rep_csv.txt" &&
	grep -q 'dropped over the 2000-record cap: 0' "$tmp/rep_csv.txt"; then
	ok "summary: HW clock state, 2000 latencies, 0 drops"
else
	not_ok "summary: HW clock state, 2000 latencies, 0 drops"
	diag <"$tmp/rep_csv.txt"
fi

# 8: drops over the cap are reported by report too
"$SYNTH" "$tmp/d.csv:max=100" 1000 >/dev/null 2>&1
if "$WRTRACE" report "$tmp/d.csv" 2>&1 | grep -q 'dropped over the 100-record cap: 1900'; then
	ok "a capped trace reports its 1900 drops"
else
	not_ok "a capped trace reports its 1900 drops"
fi

# expect_fail NAME PATTERN CMD...: non-zero exit and PATTERN in stderr
expect_fail() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ $rc -ne 0 ] && grep -q -- "$pat" "$tmp/err"; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"
		diag <"$tmp/err"
	fi
}

# 9-12: bad input
expect_fail "report of a missing file fails" "No such file" "$WRTRACE" report "$tmp/none.csv"
sed '5s/,SEND,/,PUT,/' "$tmp/t.csv" >"$tmp/bad.csv"
expect_fail "report of a damaged CSV names the line" "bad.csv:5: opcode 'PUT' unknown" \
	"$WRTRACE" report "$tmp/bad.csv"
expect_fail "unknown command fails with usage" "unknown command 'show'" "$WRTRACE" show x
expect_fail "plot without -o fails with usage" "usage:" "$WRTRACE" plot "$tmp/t.csv"

# 13-14: plot
if ! command -v gnuplot >/dev/null; then
	ok "plot writes a PNG # SKIP gnuplot not installed (ci/deps installs gnuplot-nox)"
	ok "plot of a damaged trace fails # SKIP gnuplot not installed"
	ok "plot is titled by the run # SKIP gnuplot not installed"
	exit 0
fi
if "$WRTRACE" plot "$tmp/t.jsonl" -o "$tmp/o.png" >"$tmp/out" 2>"$tmp/err" &&
	[ "$(head -c 8 "$tmp/o.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
	ok "plot writes a PNG"
	cp "$tmp/out" "$tmp/plot_out"
else
	not_ok "plot writes a PNG"
	diag <"$tmp/err"
fi
expect_fail "plot of a damaged trace fails before gnuplot" "bad.csv:5:" \
	"$WRTRACE" plot "$tmp/bad.csv" -o "$tmp/bad.png"
# the title is the run's (tool, mode, side, size, WR count), not the file's path
if grep -Eq "^wrtrace: wrote .*o\.png \([^/]* (RC|UC|UD)[^/]*, [0-9]+ WRs\)$" "$tmp/plot_out" 2>/dev/null; then
	ok "plot is titled by the run"
else
	not_ok "plot is titled by the run"
	diag <"$tmp/out"
fi
exit 0
