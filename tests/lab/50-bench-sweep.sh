#!/bin/bash
# bench/ in the lab (issue 6): the small sweep of bench/matrix/lab-small.ini
# (ib_send_bw, 2 sizes x 2 QP counts x RC/UD, nic-local) between node 1 and
# node 2 completes; the dataset has one row per run with every metadata field;
# the plots are valid PNGs; compare of the dataset with itself gives 1.00.
. "$(dirname "$0")/lib.sh"
lab_require 2
out=$T/sweep
matrix=$top/bench/matrix/lab-small.ini
runs=$("$top/bench/sweep" --launcher lab --matrix "$matrix" --out "$out" --dry-run |
	sed -n 's/^\([0-9]*\) runs, .*/\1/p')

# sweep: every run ok (exit 0) and one progress line per run
if "$top/bench/sweep" --launcher lab --matrix "$matrix" --out "$out" \
	--bindir "$OURS" --nicinfo "$BUILD/bench/nicinfo" > "$T/sweep.log" 2>&1 &&
	(($(grep -c "^\[[0-9]*/$runs\] .*ETA" "$T/sweep.log") == runs)); then
	result pass sweep
	grep -E '^\[' "$T/sweep.log" | sed 's/^/  /' >&2
else
	result fail sweep "exit or progress lines wrong (want $runs runs)"; show "$T/sweep.log"
fi

# dataset: one ok row per run, the same in JSONL and CSV, metadata filled
if python3 - "$out" "$runs" "$top/bench" > "$T/check.log" 2>&1 <<'EOF'
import sys
sys.path.insert(0, sys.argv[3])
from benchlib import dataset
out, runs = sys.argv[1], int(sys.argv[2])
rows = dataset.load(out + "/dataset.jsonl")
assert rows == dataset.load(out + "/dataset.csv"), "JSONL and CSV differ"
assert len(rows) == runs, f"{len(rows)} rows for {runs} runs"
need = ("tool_version", "peer_version", "client_host", "server_host", "client_kernel",
        "server_kernel", "device", "port_rate", "link_layer", "netdev", "client_placement",
        "server_placement", "client_cmd", "server_cmd", "client_rc", "server_rc", "start_time",
        "bw_gbps", "msg_rate_mpps", "bw_pct_reason", "client_nic", "server_nic", "test_info")
for r in rows:
    assert r["status"] == "ok", (r["run_id"], r["error"])
    missing = [k for k in need if r[k] is None]
    assert not missing, (r["run_id"], missing)
    assert r["client_placement"].startswith("nic-local: cpus "), r["client_placement"]
    assert r["client_host"] != r["server_host"], "both ends on one node"
    print(r["run_id"], r["conn"], "q%d" % r["qps"], r["size"], "%.3f Gb/s" % r["bw_gbps"],
          r["client_placement"], "limit:", r["limit_gbps"], r["bw_pct_reason"])
EOF
then
	result pass dataset; sed 's/^/  /' "$T/check.log" >&2
else
	result fail dataset; show "$T/check.log"
fi

# plots: three PNGs (BW, rate; no latency runs here) with the PNG signature
"$top/bench/plot" "$out" -o "$out/plots" > "$T/plot.log" 2>&1
n=0
for p in "$out"/plots/*.png; do
	[[ -s $p && $(head -c 8 "$p" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] && n=$((n + 1))
done
((n == 2)) && result pass plots || { result fail plots "$n valid PNGs, want 2"; show "$T/plot.log"; }

# compare with itself: exit 0, every ratio 1.00
"$top/bench/compare" "$out" "$out" > "$T/cmp.log" 2>&1
rc=$?
if ((rc == 0)) && grep -q "^compared $runs .* 0 with a regression" "$T/cmp.log" &&
	! awk '/^ib_/ { for (i = NF - 4; i < NF; i++) if ($i != "1.00" && $i != "-") bad = 1 } END { exit !bad }' "$T/cmp.log"; then
	result pass compare-self
else
	result fail compare-self "exit $rc"; show "$T/cmp.log"
fi
