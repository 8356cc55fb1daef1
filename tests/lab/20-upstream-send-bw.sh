#!/bin/bash
# Debian's upstream ib_send_bw (6.06) RC and UD between node 1 and node 2:
# both sides exit 0 and report the requested iteration count.
. "$(dirname "$0")/lib.sh"
lab_require 2
UD=$(ud_mtu)   # the default UD message: the RoCE MTU
bw=$UPSTREAM/ib_send_bw
[[ -x $bw ]] || fail "$bw missing (Debian package perftest)"
common="-d rxe0 -x $GIDX -F -n 300"
run_pair rc 1 2 18515 "$bw $common" "$bw $common"
((SRV_RC == 0 && CLI_RC == 0)) || { show "$T/rc.srv"; show "$T/rc.cli"; fail "RC: server $SRV_RC client $CLI_RC"; }
expect_row "RC client" "$T/rc.cli" 65536 300
expect_row "RC server" "$T/rc.srv" 65536 300
note "RC: $(result_rows "$T/rc.cli")"
run_pair ud 1 2 18516 "$bw $common -c UD" "$bw $common -c UD"
((SRV_RC == 0 && CLI_RC == 0)) || { show "$T/ud.srv"; show "$T/ud.cli"; fail "UD: server $SRV_RC client $CLI_RC"; }
expect_row "UD client" "$T/ud.cli" "$UD" 300
expect_row "UD server" "$T/ud.srv" "$UD" 300
note "UD: $(result_rows "$T/ud.cli")"
