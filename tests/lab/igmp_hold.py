#!/usr/bin/env python3
# igmp_hold.py IFNAME SECONDS STOPFILE GROUP...: hold IPv4 memberships of the
# groups on IFNAME until STOPFILE exists, at most SECONDS. Lab tests: Debian's
# 6.06 attaches its QP to a group but never joins it at the IP level, so
# rxe's IP stack drops the packets unless someone holds the membership.
import os, socket, struct, sys, time

ifname, secs, stop, groups = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
idx = socket.if_nametoindex(ifname)
for g in groups:
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
                 struct.pack("4s4si", socket.inet_aton(g), socket.inet_aton("0.0.0.0"), idx))
print("holding", *groups, flush=True)
end = time.monotonic() + secs
while time.monotonic() < end and not os.path.exists(stop):
    time.sleep(0.2)
