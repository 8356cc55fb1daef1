#!/bin/bash
# Three nodes on one L2 segment: rxe0 ACTIVE everywhere, everyone reaches everyone.
# Runs just before the multicast tests (40), which need the same three nodes:
# one lab boot for both.
. "$(dirname "$0")/lib.sh"
lab_require 3
for n in 1 2 3; do
	"$LAB" exec "$n" -- grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state || fail "node $n: rxe0 not ACTIVE"
	for m in 1 2 3; do
		((n == m)) && continue
		"$LAB" exec "$n" --timeout 60 -- ping -c 1 -W 10 "$("$LAB" addr $m)" >/dev/null ||
			fail "node $n cannot reach node $m"
	done
done
