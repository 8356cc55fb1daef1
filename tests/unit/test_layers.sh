#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: the layering of docs/architecture.md holds (ci/check-layers over
# the sources and this build's objects), and the check fails where it must:
# an include of a layer above, an include that does not name its folder, a
# symbol taken from a layer above, and two files that use each other.
set -u
top=${top_builddir:-.}
src=${srcdir:-.}
CC=${CC:-cc}
CHECK=$src/ci/check-layers
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

echo "1..7"
if ! command -v python3 >/dev/null; then
	for i in 1 2 3 4 5 6 7; do ok "check $i # SKIP no python3"; done
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# 1. the tree as it is
if python3 "$CHECK" --src "$src" --build "$top" >"$tmp/out" 2>&1 &&
	grep -q 'direction kept, no cycles' "$tmp/out"; then
	ok "the tree keeps its layers: $(tail -n 1 "$tmp/out")"
else
	not_ok "the tree keeps its layers"
	diag <"$tmp/out"
fi

# expect_fail NAME PATTERN ARGS...: the check exits 1 and names PATTERN.
expect_fail() {
	local name=$1 pat=$2
	shift 2
	if python3 "$CHECK" "$@" >"$tmp/out" 2>&1; then
		not_ok "$name (the check passed)"
		diag <"$tmp/out"
	elif grep -qE "$pat" "$tmp/out"; then
		ok "$name"
	else
		not_ok "$name (no finding matches /$pat/)"
		diag <"$tmp/out"
	fi
}

# A copy of the sources the check reads, to break on purpose.
copy_tree() {
	rm -rf "$tmp/src" && mkdir -p "$tmp/src/docs"
	cp "$src/docs/architecture.md" "$tmp/src/docs/"
	for d in util perftest plugin bench; do cp -r "$src/$d" "$tmp/src/"; done
}

# 2. the wire layer includes the engine
copy_tree
echo '#include "perftest/engine/engine.h"' >>"$tmp/src/perftest/wire/wire.c"
expect_fail "an include of a layer above is refused" \
	'perftest/wire/wire.c:[0-9]+: .*perftest/wire/ may not use perftest/engine/' --src "$tmp/src"

# 3. the recorder includes a header of another folder without naming it
copy_tree
echo '#include "hooks.h"' >>"$tmp/src/plugin/recorder/wrtrace.c"
expect_fail "an include that does not name its folder is refused" \
	'wrtrace.c:[0-9]+: #include "hooks.h": name its folder' --src "$tmp/src"

# 4. two headers that include each other
copy_tree
echo '#include "perftest/wire/oob.h"' >>"$tmp/src/perftest/wire/wire.h"
expect_fail "a header cycle is reported" 'header cycle: .*wire.h' --src "$tmp/src"

# Objects of a small made-up tree: util/a.c calls engine code (upward), and
# perftest/wire/x.c and y.c call each other (a file cycle).
mk() { mkdir -p "$tmp/o/$(dirname "$1")" "$tmp/b/$(dirname "$1")"; printf '%s\n' "$2" >"$tmp/o/$1"; }
rm -rf "$tmp/o" "$tmp/b"
mkdir -p "$tmp/o/docs" && cp "$src/docs/architecture.md" "$tmp/o/docs/"
mk util/a.c 'int engine_fn(void); int util_fn(void) { return engine_fn(); }'
mk perftest/engine/e.c 'int engine_fn(void) { return 1; }'
mk perftest/wire/x.c 'int y_fn(void); int x_fn(void) { return y_fn(); }'
mk perftest/wire/y.c 'int x_fn(void); int y_fn(void) { return x_fn() + 1; }'
built=1
for f in util/a.c perftest/engine/e.c perftest/wire/x.c perftest/wire/y.c; do
	"$CC" -c -o "$tmp/b/${f%.c}.o" "$tmp/o/$f" 2>>"$tmp/cc" || built=0
done
if [ "$built" = 1 ]; then
	# 5. and 6.
	expect_fail "a symbol taken from a layer above is refused" \
		'util/a.c links against perftest/engine/e.c \(engine_fn\): util/ may not use perftest/engine/' \
		--src "$tmp/o" --build "$tmp/b"
	expect_fail "a file-level cycle is reported" \
		'file cycle: perftest/wire/x.c, perftest/wire/y.c' --src "$tmp/o" --build "$tmp/b"
else
	not_ok "a symbol taken from a layer above is refused (cannot compile the made-up tree)"
	not_ok "a file-level cycle is reported (cannot compile the made-up tree)"
	diag <"$tmp/cc"
fi

# 7. a build tree without objects is no pass
mkdir -p "$tmp/empty"
expect_fail "a build tree without objects is refused" 'no objects' --src "$src" --build "$tmp/empty"
