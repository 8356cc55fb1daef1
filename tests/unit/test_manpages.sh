#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: the man pages keep up with the code. Every option that a tool's
# -h lists is documented in ib_send_bw.1 (one page for the eight tools),
# every wrtrace command in wrtrace.1, and groff formats both pages without
# a warning.
set -u
top=${top_builddir:-.}
src=${srcdir:-.}
TOOLS="ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat"
PAGE=$src/perftest/tools/ib_send_bw.1
WPAGE=$src/plugin/recorder/wrtrace.1
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; printf '# %s\n' "$@"; }

# In roff source a dash is written \-, so --size stands as \-\-size.
documented() { grep -qF -- "$(sed 's/-/\\-/g' <<<"$2")" "$1"; }

for t in $TOOLS; do
	missing=()
	for o in $("$top/perftest/$t" -h | grep -oE '^ +(-[A-Za-z], )?--[A-Za-z_-]+' | grep -oE -- '--[A-Za-z_-]+'); do
		documented "$PAGE" "$o" || missing+=("$o")
	done
	if ((${#missing[@]})); then not_ok "$t: every -h option in ib_send_bw.1" "missing: ${missing[*]}"
	else ok "$t: every -h option in ib_send_bw.1"; fi
done
for t in $TOOLS; do
	grep -q "^\.so man1/ib_send_bw\.1" "$src/perftest/tools/$t.1" 2>/dev/null || [ "$t" = ib_send_bw ] &&
		ok "$t.1 exists" || not_ok "$t.1 exists" "no $src/perftest/tools/$t.1 pointing at ib_send_bw.1"
done
missing=()
for c in $("$top/plugin/wrtrace" --help 2>&1 | grep -oE '^(usage: +| +)wrtrace [a-z]+' | awk '{ print $NF }'); do
	grep -qE "^\.BI? \"?$c( |\"|\$)" "$WPAGE" || missing+=("$c")
done
if ((${#missing[@]})); then not_ok "wrtrace.1 documents every command" "missing: ${missing[*]}"
else ok "wrtrace.1 documents every command"; fi
for p in "$PAGE" "$WPAGE"; do
	warn=$(groff -man -ww -z "$p" 2>&1)
	[ -z "$warn" ] && ok "groff formats $(basename "$p") without warnings" ||
		not_ok "groff formats $(basename "$p") without warnings" "$warn"
done
echo "1..$n"
