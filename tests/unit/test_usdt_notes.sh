#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: every tool carries every USDT probe of plugin/hooks/probes.h
# (provider perftest), each with a semaphore, as `readelf -n` lists them in
# .note.stapsdt, and each is documented in docs/usdt.md. A tool that lost a
# probe (a loop rewritten without it, a link that dropped the object) fails
# here. Skipped when configure found no <sys/sdt.h> (it said so).
set -u

top=${top_builddir:-.}
src=${srcdir:-$(dirname "$0")/../..}
READELF=${READELF:-readelf}
TOOLS=(ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat)
PROBES=(run_start run_end post post_recv complete complete_recv)

if ! grep -q '^#define HAVE_USDT 1' "$top/config.h"; then
	echo "1..0 # SKIP built without USDT probes (no sys/sdt.h: apt-get install systemtap-sdt-dev)"
	exit 0
fi
command -v "$READELF" >/dev/null || { echo "Bail out! $READELF not found (binutils)"; exit 1; }
echo "1..$(( ${#TOOLS[@]} + ${#PROBES[@]} ))"
n=0
for t in "${TOOLS[@]}"; do
	n=$((n + 1))
	bin=$top/perftest/$t
	if [ ! -x "$bin" ]; then
		echo "not ok $n - $t: not built ($bin)"
		continue
	fi
	# "perftest NAME SEMAPHORE" for each stapsdt note
	notes=$("$READELF" -n "$bin" | awk '/Provider:/ { p = $2 } /Name:/ { name = $2 }
		/Semaphore:/ { print p, name, $NF }')
	missing=()
	for p in "${PROBES[@]}"; do
		echo "$notes" | awk -v p="$p" '$1 == "perftest" && $2 == p && $3 !~ /^0x0+$/ { f = 1 }
			END { exit !f }' || missing+=("$p")
	done
	if ((${#missing[@]})); then
		echo "not ok $n - $t: probes missing (or without a semaphore): ${missing[*]}"
		echo "$notes" | sed 's/^/# /'
	else
		echo "ok $n - $t: perftest:{${PROBES[*]}} present, each with a semaphore"
	fi
done
for p in "${PROBES[@]}"; do
	n=$((n + 1))
	if grep -q "^| \`$p\` |" "$src/docs/usdt.md"; then
		echo "ok $n - docs/usdt.md documents $p"
	else
		echo "not ok $n - docs/usdt.md has no row for $p"
	fi
done
