#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: one definition per global symbol (docs/upstream-behaviour.md §11).
# Upstream defined duration_param in two .c files; with -fcommon the two
# tentative definitions merged silently, with GCC >= 10 (-fno-common) the
# link broke. Here we require, over every object of the layers' libraries
# (util, wire, cli, report, hooks, recorder, engine, tools) plus the tool's
# own objects and the linked tool:
#   - no common symbols (nm type C), i.e. nothing compiled with -fcommon;
#   - no strong global definition (nm types T D B R G S) in two objects,
#     even when the linker would never pull both objects into one program.
# Weak definitions (V, W) may legitimately be overridden, so they are not
# counted. Offending symbols are listed as TAP diagnostics.
set -u

top=${top_builddir:-.}
NM=${NM:-nm}
LIBS=("$top"/util/libptutil.a "$top"/perftest/wire/libwire.a "$top"/perftest/cli/libcli.a
	"$top"/perftest/report/libreport.a "$top"/plugin/hooks/libhooks.a
	"$top"/plugin/recorder/librecorder.a "$top"/perftest/engine/libengine.a
	"$top"/perftest/tools/libtools.a)
LIB=${LIBS[*]}
BIN=$top/perftest/ib_send_bw
MAIN_OBJS=()
for o in "$top"/perftest/tools/ib_send_bw.o "$top"/perftest/tools/perftest_ib_send_bw-*.o; do
	[ -f "$o" ] && MAIN_OBJS+=("$o")
done

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

# report NAME OFFENDERS: pass when OFFENDERS is empty, else list them.
report() {
	if [ -z "$2" ]; then
		ok "$1"
	else
		not_ok "$1"
		printf '%s\n' "$2" | head -n 40 | diag
	fi
}

echo "1..6"

# 1. the inputs exist (without them every other check would pass vacuously)
missing=
for l in "${LIBS[@]}"; do [ -f "$l" ] || missing="$missing $l"; done
if [ -n "$missing" ] || [ ! -x "$BIN" ]; then
	not_ok "$LIB and $BIN are built"
	for i in 2 3 4 5 6; do not_ok "check $i skipped: nothing to inspect"; done
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test_linkage.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# POSIX format, one line per symbol: "FILE[OBJ]: NAME TYPE VALUE SIZE"
if ! "$NM" -A -P "${LIBS[@]}" "${MAIN_OBJS[@]}" >"$tmp/objs" 2>"$tmp/err"; then
	not_ok "nm reads $LIB"
	diag <"$tmp/err"
	for i in 2 3 4 5 6; do not_ok "check $i skipped: nm failed"; done
	exit 0
fi
nobj=$(awk '{ print $1 }' "$tmp/objs" | sort -u | wc -l)
if [ "$nobj" -ge 2 ]; then
	ok "nm reads $nobj objects (${#LIBS[@]} layer libraries and ${#MAIN_OBJS[@]} tool object(s))"
else
	not_ok "nm reads the objects of the layer libraries"
	echo "# only $nobj object(s) with symbols"
fi

# 2. no common symbols in the objects
report "no common (C) symbols in the objects" \
	"$(awk '$3 == "C" { sub(/:$/, "", $1); print $2 " in " $1 }' "$tmp/objs")"

# 3. each strong global defined in one object only
dups=$(awk '$3 ~ /^[TDBRGS]$/ {
		sub(/:$/, "", $1)
		count[$2]++
		where[$2] = where[$2] " " $1
	}
	END { for (s in count) if (count[s] > 1) print s " defined in" where[s] }' \
	"$tmp/objs" | sort)
report "no strong global symbol defined in more than one object" "$dups"

# 4. and 5. the linked tool: no commons, no global defined twice
if "$NM" -P "$BIN" >"$tmp/bin" 2>"$tmp/err"; then
	report "no common (C) symbols in ib_send_bw" \
		"$(awk '$2 == "C" { print $1 }' "$tmp/bin")"
	report "no strong global symbol defined twice in ib_send_bw" \
		"$(awk '$2 ~ /^[TDBRGS]$/ { print $1 }' "$tmp/bin" | sort | uniq -d)"
else
	not_ok "nm reads ib_send_bw"
	diag <"$tmp/err"
	not_ok "no strong global symbol defined twice in ib_send_bw (not checked)"
fi

# 6. the build keeps -fno-common so a tentative duplicate fails to link
mk=$top/Makefile
if [ ! -f "$mk" ]; then
	ok "-fno-common in the build flags # SKIP no $mk"
else
	warn=$(sed -n 's/^WARN_CFLAGS = //p' "$mk")
	cflags=$(sed -n 's/^CFLAGS = //p' "$mk")
	case " $warn " in
	*" -fno-common "*)
		case " $cflags " in
		*" -fcommon "*) report "-fno-common in the build flags" "CFLAGS has -fcommon: $cflags" ;;
		*) ok "-fno-common in the build flags" ;;
		esac ;;
	*) report "-fno-common in the build flags" "WARN_CFLAGS lacks -fno-common: $warn" ;;
	esac
fi
exit 0
