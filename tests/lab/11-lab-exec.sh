#!/bin/bash
# ci/lab exec: exit status, separate stdout/stderr, cwd, concurrency, timeout, bad node.
. "$(dirname "$0")/lib.sh"
lab_require 2
"$LAB" exec 1 -- sh -c 'exit 7'; rc=$?
[[ $rc == 7 ]] || fail "exit 7 came back as $rc"
"$LAB" exec 2 -- false; rc=$?
[[ $rc == 1 ]] || fail "false came back as $rc"
out=$("$LAB" exec 1 -- sh -c 'echo out; echo err >&2' 2>"$T/err") || fail "echo failed"
[[ $out == out && $(cat "$T/err") == err ]] || fail "stdout/stderr mixed up: '$out' / '$(cat "$T/err")'"
[[ $(cd "$top" && "$LAB" exec 2 -- pwd) == "$top" ]] || fail "cwd not kept"
# concurrent: a reader on node 1 blocks until node 2 writes to the share
sh=$("$LAB" share)
rm -f "$sh/flag"
"$LAB" exec 1 --timeout 60 -- sh -c "while [ ! -e $sh/flag ]; do sleep 0.1; done; echo seen" > "$T/w" &
p=$!
sleep 1
"$LAB" exec 2 -- touch "$sh/flag" || fail "touch on node 2 failed"
wait $p || fail "waiter on node 1 failed"
[[ $(cat "$T/w") == seen ]] || fail "concurrent commands did not meet"
t0=$SECONDS
"$LAB" exec 1 --timeout 2 -- sleep 60; rc=$?
[[ $rc == 124 ]] || fail "timeout gave $rc, not 124"
((SECONDS - t0 < 20)) || fail "timeout took $((SECONDS - t0)) s"
"$LAB" exec 9 -- true 2>/dev/null && fail "exec on a missing node succeeded"
"$LAB" exec 1 -- /nonexistent/binary 2>/dev/null && fail "a missing binary succeeded"
exit 0
