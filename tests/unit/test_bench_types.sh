#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: the Python that bench/ and the lab tests share is typed. mypy
# --strict over bench/benchlib (the library), then over each Python script
# of bench/ (those whose first line names python: sweep, interop, compare,
# plot, ...) one at a time, as each is its own __main__; and the check
# fails where it must: an untyped function next to the library. Skips, with
# the reason, when no python3 here has mypy (Debian package mypy, which
# ci/deps installs).
set -u
src=${srcdir:-.}
bench=$(cd "$src/bench" && pwd)
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

scripts=()
for f in "$bench"/*; do
	[[ -f $f && -x $f ]] && head -n 1 "$f" | grep -q '^#!.*python' && scripts+=("${f##*/}")
done
echo "1..$((${#scripts[@]} + 2))"

# Debian's mypy lives in Debian's python3 (another python3 may come first in PATH).
py=
for p in python3 /usr/bin/python3; do
	command -v "$p" >/dev/null && "$p" -c 'import mypy' 2>/dev/null && { py=$p; break; }
done
if [[ -z $py ]]; then
	why="mypy is not installed (Debian package mypy; ci/deps installs it)"
	ok "mypy --strict bench/benchlib # SKIP $why"
	for s in "${scripts[@]}"; do ok "mypy --strict bench/$s # SKIP $why"; done
	ok "mypy --strict fails on an untyped function # SKIP $why"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_bench_types.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# strict NAME ARGS...: mypy --strict ARGS in bench/ (where benchlib is found) passes.
strict() {
	local name=$1
	shift
	if (cd "$bench" && "$py" -m mypy --strict --cache-dir "$tmp/cache" "$@") >"$tmp/out" 2>&1; then
		ok "$name: $(tail -n 1 "$tmp/out")"
	else
		not_ok "$name"
		diag <"$tmp/out"
	fi
}

strict "mypy --strict bench/benchlib" benchlib
for s in "${scripts[@]}"; do
	strict "mypy --strict bench/$s" "$s"
done

# The same run must fail on a module with an untyped function that uses the library.
mkdir -p "$tmp/bad"
printf 'from benchlib import labctl\n\n\ndef untyped(x):\n    return labctl.tail(x)\n' \
	>"$tmp/bad/untyped_use.py"
if (cd "$bench" && "$py" -m mypy --strict --cache-dir "$tmp/cache" "$tmp/bad/untyped_use.py") \
	>"$tmp/out" 2>&1; then
	not_ok "mypy --strict fails on an untyped function (it passed)"
	diag <"$tmp/out"
elif grep -q 'no-untyped-def' "$tmp/out"; then
	ok "mypy --strict fails on an untyped function: $(grep -c 'error:' "$tmp/out") error(s)"
else
	not_ok "mypy --strict fails on an untyped function (for another reason)"
	diag <"$tmp/out"
fi
