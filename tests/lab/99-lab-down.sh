#!/bin/bash
# ci/lab down stops every guest of this lab: no QEMU process of it and no lab
# namespace remain (other labs, with their own PTLAB_NETNS, are left alone).
. "$(dirname "$0")/lib.sh"
"$LAB" down || fail "ci/lab down failed"
pgrep -af "qemu-system-x86_64 -name ptlab[.]${PTLAB_NETNS:-ptlab}[.]" && fail "QEMU processes remain"
ip netns list | grep -qw "${PTLAB_NETNS:-ptlab}" && fail "the lab's network namespace remains"
"$LAB" exec 1 -- true 2>/dev/null && fail "exec works on a lab that is down"
exit 0
