#!/bin/bash
# ib_send_lat -g: multicast latency on UD (docs/wire-protocol.md §6.3, §10). Each side
# attaches to a group, advertises it in its keys and sends to the peer's.
# Ours <-> ours with one -M group for both sides (no message of a side
# comes back to it: rxe's received-packet counters) and with a group per
# side; a group that does not match the GID type is refused before any
# traffic; the groups are left on exit; a side whose peer's group is not
# routed through the RoCE netdev stops with the `ip route add` to run;
# Debian's 6.06 in both roles (a group per side, and a membership held for
# it: 6.06 never joins the IPv4 group, recorded below).
. "$(dirname "$0")/lib.sh"
lab_require 2
O=$OURS/ib_send_lat U=$UPSTREAM/ib_send_lat
A="-d rxe0 -x $GIDX -F -n 200 -g"
m16() { echo "0:0:0:0:0:0:0:0:0:0:255:255:${1//./:}"; }   # upstream's -M form
port=18950

# mc_lat FILE GROUP PEER_GROUP: our multicast latency output: the test name
# and the UD line, the local address with our group and the remote one with
# the peer's (labelled as upstream labels them: "MGID" for the server's,
# "GID" for the client's), QPN 0xffffff on both, and a latency row of 200
# iterations, 0 < t_min <= t_typical <= t_max.
gid_line() { local IFS=.; set -- $1; printf '^ M?GID: 00:00:00:00:00:00:00:00:00:00:255:255:%02d:%02d:%02d:%02d$' "$@"; }
mc_lat() {
	grep -q 'Send Latency Multicast Test' "$1" && grep -q 'MultiCast runs on UD!' "$1" &&
	grep -A1 '^ local address: .* QPN 0xffffff' "$1" | grep -qE "$(gid_line "$2")" &&
	grep -A1 '^ remote address: .* QPN 0xffffff' "$1" | grep -qE "$(gid_line "$3")" &&
	result_rows "$1" | awk '$1 == 2 && $2 == 200 && $3 > 0 && $3 <= $5 && $5 <= $4 { ok = 1 } END { exit !ok }'
}
# pair NAME "SERVER CMD" "CLIENT CMD": outputs $T/NAME.srv|.cli, SRV_RC, CLI_RC
pair() { port=$((port + 1)); run_pair "$1" 1 2 "$port" "$2" "$3"; }

# One group for both sides: the IP stack would hand each side's messages
# back to its own QP (this host is a member of the group it sends to);
# each side leaves its own address out of its membership, so each node's
# rxe receives the peer's 200 messages, not twice as many.
rcvd() { "$LAB" exec "$1" -- cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts; }
r1=$(rcvd 1) r2=$(rcvd 2)
pair same "$O $A -M 225.1.1.20" "$O $A -M 225.1.1.20"
d1=$(($(rcvd 1) - r1)) d2=$(($(rcvd 2) - r2))
if ((SRV_RC == 0 && CLI_RC == 0)) && mc_lat "$T/same.srv" 225.1.1.20 225.1.1.20 &&
   mc_lat "$T/same.cli" 225.1.1.20 225.1.1.20 && ((d1 >= 200 && d1 <= 220 && d2 >= 200 && d2 <= 220)); then
	result pass ours-ours/one-group
	note "one group: $(result_rows "$T/same.cli" | tail -n 1); packets received: node 1 $d1, node 2 $d2"
else
	result fail ours-ours/one-group "exit $SRV_RC/$CLI_RC, packets received $d1/$d2 (200 each expected)"
	show "$T/same.srv"; show "$T/same.cli"
fi

# A group per side.
pair two "$O $A -M 225.1.1.20" "$O $A -M 225.1.1.21"
if ((SRV_RC == 0 && CLI_RC == 0)) && mc_lat "$T/two.srv" 225.1.1.20 225.1.1.21 &&
   mc_lat "$T/two.cli" 225.1.1.21 225.1.1.20; then
	result pass ours-ours/two-groups; note "two groups: $(result_rows "$T/two.cli" | tail -n 1)"
else
	result fail ours-ours/two-groups "exit $SRV_RC/$CLI_RC"; show "$T/two.srv"; show "$T/two.cli"
fi

# Groups are left on exit (detach and IGMP leave) on both nodes.
left=$(for n in 1 2; do "$LAB" exec "$n" -- ip maddr show dev eth0; done | grep -cE '225\.1\.1\.2[01]')
((left == 0)) && result pass groups-left || result fail groups-left "$left memberships of 225.1.1.20/21 remain"

# The default group (ff01:0:2:c985::, IPv6) with the IPv4 GID: refused by
# name on both sides before any traffic (upstream's GID check would end the
# run after the first key exchange).
"$LAB" exec 1 --timeout 30 -- $O $A -p $((port + 1)) > "$T/def.srv" 2>&1; drs=$?
"$LAB" exec 2 --timeout 30 -- $O $A -p $((port + 1)) "$("$LAB" addr 1)" > "$T/def.cli" 2>&1; drc=$?
if ((drs == 1 && drc == 1)) && grep -q 'MGID and GID .* differ in type' "$T/def.srv" &&
   grep -q 'MGID and GID .* differ in type' "$T/def.cli" && ! grep -q 'Waiting for client' "$T/def.srv"; then
	result pass default-group-refused; note "default group with -x $GIDX: $(head -n 1 "$T/def.cli")"
else
	result fail default-group-refused "exit $drs/$drc"; show "$T/def.srv"; show "$T/def.cli"
fi

# No multicast route on the client's node: it stops with the fix; the
# server sees its peer go and fails too (bounded).
"$LAB" exec 2 -- ip route del 224.0.0.0/4 dev eth0
pair noroute "$O $A -M 225.1.1.20 --oob_timeout 20" "$O $A -M 225.1.1.21 --oob_timeout 20"
"$LAB" exec 2 -- ip route add 224.0.0.0/4 dev eth0
if ((CLI_RC == 1 && SRV_RC != 0)) && grep -q 'ip route add 224.0.0.0/4 dev eth0' "$T/noroute.cli"; then
	result pass no-route-refused; note "no route: $(grep -m1 'not routed' "$T/noroute.cli")"
else
	result fail no-route-refused "exit $SRV_RC/$CLI_RC"; show "$T/noroute.srv"; show "$T/noroute.cli"
fi

# Debian's 6.06 attaches its QP but never joins the IPv4 group, so on rxe
# it receives nothing: as a server it waits forever after the table header
# (it has no stall limit) while our client gives up after --oob_timeout
# (15 s, so 6.06 is stopped at 40 s, well after our client has gone).
# (stdbuf: 6.06 is killed, so its output must not wait in a buffer)
"$LAB" exec 1 --timeout 40 -- stdbuf -oL $U $A -M "$(m16 225.1.1.26)" -p $((port + 1)) > "$T/nohold.srv" 2>&1 & sp=$!
wait_listen 1 $((port + 1))
"$LAB" exec 2 --timeout 60 -- $O $A -M 225.1.1.27 --oob_timeout 15 -p $((port + 1)) "$("$LAB" addr 1)" > "$T/nohold.cli" 2>&1; nrc=$?
wait $sp; nrs=$?
port=$((port + 1))
if ((nrc == 17 && nrs == 124)) && grep -q 'No completion for 15 seconds' "$T/nohold.cli" &&
   grep -q '#bytes' "$T/nohold.srv" && [[ -z $(result_rows "$T/nohold.srv") ]]; then
	result pass up-without-membership-hangs
	note "6.06 server without an IPv4 membership: no row, still waiting when stopped after 40 s (exit $nrs); our client: $(grep -m1 'No completion' "$T/nohold.cli") (exit $nrc)"
else
	result fail up-without-membership-hangs "6.06 server exit $nrs, our client exit $nrc"; show "$T/nohold.srv"; show "$T/nohold.cli"
fi

# With a membership held for 6.06's group on its node (igmp_hold.py), a
# group per side: ours <-> 6.06 in both roles. 6.06's own numbers may read
# inf in a VM (its CPU-frequency estimate fails): only its row is checked.
HOLD=$(dirname "$0")/igmp_hold.py STOP=$("$LAB" share)/igmp-stop.$$ HOLDERS=()
hold() { # NODE GROUP: hold the membership in the background until $STOP exists
	"$LAB" exec "$1" --timeout 200 -- python3 "$HOLD" eth0 180 "$STOP" "$2" > "$T/hold$1" 2>&1 &
	HOLDERS+=($!)
	for _ in $(seq 40); do grep -q holding "$T/hold$1" && return 0; sleep 0.5; done
	fail "could not hold $2 on node $1"
}
up_row() { result_rows "$1" | awk '$1 == 2 && $2 == 200 { ok = 1 } END { exit !ok }'; }
hold 1 225.1.1.22
pair up-ours "$U $A -M $(m16 225.1.1.22)" "$O $A -M 225.1.1.23"
if ((SRV_RC == 0 && CLI_RC == 0)) && up_row "$T/up-ours.srv" && mc_lat "$T/up-ours.cli" 225.1.1.23 225.1.1.22; then
	result pass up-ours; note "6.06 server, our client: $(result_rows "$T/up-ours.cli" | tail -n 1)"
else
	result fail up-ours "exit $SRV_RC/$CLI_RC"; show "$T/up-ours.srv"; show "$T/up-ours.cli"
fi
hold 2 225.1.1.25
pair ours-up "$O $A -M 225.1.1.24" "$U $A -M $(m16 225.1.1.25)"
if ((SRV_RC == 0 && CLI_RC == 0)) && mc_lat "$T/ours-up.srv" 225.1.1.24 225.1.1.25 && up_row "$T/ours-up.cli"; then
	result pass ours-up; note "our server, 6.06 client: $(result_rows "$T/ours-up.srv" | tail -n 1)"
else
	result fail ours-up "exit $SRV_RC/$CLI_RC"; show "$T/ours-up.srv"; show "$T/ours-up.cli"
fi
touch "$STOP"
wait "${HOLDERS[@]}"
rm -f "$STOP"
