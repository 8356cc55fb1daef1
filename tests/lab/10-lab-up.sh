#!/bin/bash
# Two nodes come up with rxe0 ACTIVE and the IPv4-mapped RoCE v2 GID at index $GIDX.
. "$(dirname "$0")/lib.sh"
lab_require 2
for n in 1 2; do
	ip=$("$LAB" addr "$n")
	want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
	got=$("$LAB" exec "$n" -- cat /sys/class/infiniband/rxe0/ports/1/state /sys/class/infiniband/rxe0/ports/1/gids/$GIDX /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$GIDX) ||
		fail "node $n: cannot read rxe0 sysfs"
	note "node $n: $(echo $got)"
	grep -q '4: ACTIVE' <<<"$got" || fail "node $n: rxe0 port not ACTIVE"
	grep -qx "$want" <<<"$got" || fail "node $n: GID $GIDX is not $want"
	grep -qx 'RoCE v2' <<<"$got" || fail "node $n: GID $GIDX is not RoCE v2"
done
