#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: docs/option-parity.md is what the built tools say about every
# upstream 6.29 option (ci/option-parity --check), no tool leaves an upstream
# name unrecognized, and the check fails where it must: on a name no tool
# knows, and on a committed table that differs from the tools.
set -u
top=${top_builddir:-.}
src=${srcdir:-.}
PARITY=$src/ci/option-parity
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

echo "1..3"
if ! command -v python3 >/dev/null; then
	for i in 1 2 3; do ok "check $i # SKIP no python3"; done
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_option_parity.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1. the committed table and the tools agree, nothing unrecognized
if python3 "$PARITY" --src "$src" --build "$top" --check >"$tmp/out" 2>&1; then
	ok "docs/option-parity.md matches the tools: $(tail -n 1 "$tmp/out")"
else
	not_ok "docs/option-parity.md matches the tools"
	diag <"$tmp/out"
fi

# a small source tree of our own for the failures on purpose
mkdir -p "$tmp/src/docs"
printf 'size\ts\tARG\n' >"$tmp/src/docs/upstream-options.txt"
python3 "$PARITY" --src "$tmp/src" --build "$top" >/dev/null 2>&1

# 2. a table that says otherwise is caught
sed -i 's/^| `--size` `-s` ARG | yes/| `--size` `-s` ARG | later/' "$tmp/src/docs/option-parity.md"
if ! python3 "$PARITY" --src "$tmp/src" --build "$top" --check >"$tmp/out" 2>&1 &&
	grep -q 'docs/option-parity.md and the tools disagree' "$tmp/out"; then
	ok "a committed table that differs from the tools fails the check"
else
	not_ok "a committed table that differs from the tools fails the check"
	diag <"$tmp/out"
fi

# 3. an upstream name the tools do not know is caught
printf 'size\ts\tARG\nno_such_upstream_option\t-\t-\n' >"$tmp/src/docs/upstream-options.txt"
python3 "$PARITY" --src "$tmp/src" --build "$top" >/dev/null 2>&1
if ! python3 "$PARITY" --src "$tmp/src" --build "$top" --check >"$tmp/out" 2>&1 &&
	grep -q 'does not recognize --no_such_upstream_option' "$tmp/out"; then
	ok "an unrecognized upstream option fails the check"
else
	not_ok "an unrecognized upstream option fails the check"
	diag <"$tmp/out"
fi
