#!/bin/bash
# The README's main job on a host that has an RDMA device: ci/demo run inside
# lab node 1 (rxe0 is its device; the guest's root is read-only, so the build
# is the host's and the results go to the share). Host mode is chosen by
# itself; RC and UD runs between two processes through rxe0 complete with
# traces, summaries and PNG plots; the local sweep writes a dataset and plots.
. "$(dirname "$0")/lib.sh"
lab_require 2
SHARE=$("$LAB" share)
out=$SHARE/demo-host
rm -rf "$out"
"$LAB" exec 1 --timeout 600 -- env DEMO_NO_BUILD=1 PT_BUILD="$BUILD" DEMO_OUT="$out" DEMO_ITERS=300 \
	DEMO_SWEEP_ARGS="--iters 100 --size 64 --qps 1" "$top/ci/demo" > "$T/demo.log" 2>&1
rc=$?
check() { # NAME CONDITION-COMMAND...
	local name=$1; shift
	if "$@"; then result pass "$name"; else result fail "$name" "demo exit $rc"; show "$T/demo.log"; fi
}
check host-mode-chosen grep -q '^demo: host mode (rxe0 1)' "$T/demo.log"
check exit-0 test $rc -eq 0
check rc-ud-rows bash -c "[[ \$(grep -cE '^ (65536|1024) +300 ' '$T/demo.log') == 2 ]]"
check summaries bash -c "[[ \$(grep -c 'wrtrace run 0' '$T/demo.log') -ge 2 ]]"
pngs_ok() {
	local n=0 f
	for f in "$out"/*.png "$out"/sweep/plots/*.png; do
		[[ -s $f && $(file -b "$f") == PNG* ]] || return 1
		n=$((n + 1))
	done
	((n >= 5))   # four traces, at least one sweep plot
}
check pngs pngs_ok
sweep_ok() {
	python3 - "$out/sweep/dataset.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert len(rows) == 2 and all(r["status"] == "ok" for r in rows), rows
PY
}
check sweep-dataset sweep_ok
note "demo (host mode in node 1): $(grep -c . "$T/demo.log") lines, $(ls "$out" | wc -l) files in the results folder"
