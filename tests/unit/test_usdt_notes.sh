#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test: every tool carries every USDT probe of plugin/hooks/probes.h
# (provider perftest), each with a semaphore, as `readelf -n` lists them in
# .note.stapsdt, and each is documented in docs/usdt.md. A tool that lost a
# probe (a loop rewritten without it, a link that dropped the object) fails
# here. The per-WR probes' semaphores must be the four halves of the word
# pt_probe_wr_semaphores (probes.h), which the latency loops test once per
# iteration: a note pointing elsewhere would leave its probe dark there. Skipped when configure found no <sys/sdt.h> (it said so).
set -u

top=${top_builddir:-.}
src=${srcdir:-$(dirname "$0")/../..}
READELF=${READELF:-readelf}
TOOLS=(ib_send_bw ib_send_lat ib_write_bw ib_write_lat ib_read_bw ib_read_lat ib_atomic_bw ib_atomic_lat)
PROBES=(run_start run_end post post_recv complete complete_recv)
WR_PROBES=(post post_recv complete complete_recv)   # in the word, in this order
NM=${NM:-nm}

if ! grep -q '^#define HAVE_USDT 1' "$top/config.h"; then
	echo "1..0 # SKIP built without USDT probes (no sys/sdt.h: apt-get install systemtap-sdt-dev)"
	exit 0
fi
command -v "$READELF" >/dev/null || { echo "Bail out! $READELF not found (binutils)"; exit 1; }
echo "1..$(( 2 * ${#TOOLS[@]} + ${#PROBES[@]} ))"
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
for t in "${TOOLS[@]}"; do
	n=$((n + 1))
	bin=$top/perftest/$t
	word=$("$NM" "$bin" 2>/dev/null | awk '$3 == "pt_probe_wr_semaphores" { print $1 }')
	if [ -z "$word" ]; then
		echo "not ok $n - $t: no pt_probe_wr_semaphores symbol"
		continue
	fi
	bad=()
	for k in "${!WR_PROBES[@]}"; do
		p=${WR_PROBES[$k]}
		want=$(printf '0x%016x' $(( 0x$word + 2 * k )))
		got=$("$READELF" -n "$bin" | awk -v p="$p" '/Provider:/ { prov = $2 } /Name:/ { name = $2 }
			/Semaphore:/ && prov == "perftest" && name == p { print $NF }' | sort -u)
		[ "$got" = "$want" ] || bad+=("$p at ${got//$'\n'/,} not $want")
	done
	if ((${#bad[@]})); then
		echo "not ok $n - $t: per-WR semaphores outside the word: ${bad[*]}"
	else
		echo "ok $n - $t: the per-WR probes' semaphores are the halves of pt_probe_wr_semaphores"
	fi
done
