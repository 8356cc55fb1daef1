#!/bin/bash
# Per-WR tracing in our tools: --trace on both sides (RC and UD ib_send_bw,
# ib_send_lat, ib_write_bw with 2 QPs): one record per WR, counts match the
# iterations, post times rise per QP, completion >= post; the summary is
# printed and `wrtrace report` reads the file back; the example plugin is
# loaded and called (--plugin).
. "$(dirname "$0")/lib.sh"
lab_require 2
SHARE=$("$LAB" share)
WRTRACE=$BUILD/plugin/wrtrace
COUNT=$BUILD/plugin/examples/count_plugin.so
[[ -x $WRTRACE && -f $COUNT ]] || fail "wrtrace or the example plugin is not built in $BUILD"

# check_trace FILE OPCODE=ROWS[,OPCODE=ROWS]: that many rows of each opcode,
# completion >= post on every row that has both, and per QP the post times
# of sends do not go backwards in sequence order. Send rows have the run's
# size, are signaled every cq_mod WRs and at the last, and (BW tools) carry
# the wr_id the tool posted, QP << 48 | sequence.
check_trace() {
	python3 - "$@" <<'EOF'
import csv, sys
path, spec = sys.argv[1], sys.argv[2]
allrows = list(csv.DictReader(l for l in open(path) if not l.startswith('#')))
meta = dict(kv.split('=', 1) for l in open(path) if l.startswith('# run=') for kv in l[2:].split())
for item in spec.split(','):
    op, want = item.split('=')
    rows = [r for r in allrows if r['opcode'] == op]
    assert len(rows) == int(want), f"{len(rows)} {op} rows, want {want}"
assert len(allrows) == sum(int(i.split('=')[1]) for i in spec.split(',')), f"{len(allrows)} rows in all"
for op in {r['opcode'] for r in allrows}:
  rows = [r for r in allrows if r['opcode'] == op]
  for r in rows:
    if r['t_post_ns'] and r['t_comp_ns']:
        assert int(r['t_comp_ns']) >= int(r['t_post_ns']), f"completion before post: {r}"
    assert r['status'] in ('0', 'SUCCESS', ''), f"status {r['status']}"
  if op != 'RECV':
    by_qp = {}
    for r in rows:
        by_qp.setdefault(r['qp'], []).append((int(r['seq']), int(r['t_post_ns'])))
    for qp, v in by_qp.items():
        v.sort()
        assert all(b[1] >= a[1] for a, b in zip(v, v[1:])), f"post times go back on QP {qp}"
        assert [s for s, _ in v] == list(range(len(v))), f"sequence gaps on QP {qp}"
    cq_mod, size, bw = int(meta['cq_mod']), meta['msg_size'], meta['tool'].endswith('_bw')
    last = {}
    for r in rows:
        last[r['qp']] = max(last.get(r['qp'], 0), int(r['seq']))
    for r in rows:
        seq, qp = int(r['seq']), int(r['qp'])
        assert r['bytes'] == size, f"{r['bytes']} bytes, the run's size is {size}: {r}"
        want = (seq + 1) % cq_mod == 0 or seq == last[r['qp']]
        assert r['signaled'] == str(int(want)), f"signaled {r['signaled']}, cq_mod {cq_mod}: {r}"
        assert not bw or int(r['wr_id'], 16) == (qp << 48 | seq), f"wr_id {r['wr_id']}: {r}"
EOF
}

# trace_pair NAME TOOL ARGS SRV_SPEC CLI_SPEC (OPCODE=ROWS,...; "-" = no file;
# RECV=auto: as many as the server reports messages, since UD may lose some)
trace_pair() {
	local name=$1 tool=$2 args=$3 why=
	rm -f "$SHARE/$name".*.csv
	run_pair "$name" 1 2 18750 "$OURS/$tool -d rxe0 -x $GIDX $args --trace=$SHARE/$name.srv.csv" \
		"$OURS/$tool -d rxe0 -x $GIDX $args --trace=$SHARE/$name.cli.csv"
	((SRV_RC == 0 && CLI_RC == 0)) || why="exit $SRV_RC/$CLI_RC"
	local sspec=$4
	[[ $sspec == RECV=auto ]] && sspec=RECV=$(result_rows "$T/$name.srv" | awk '{ print $2; exit }')
	[[ -z $why && $sspec != - ]] && { out=$(check_trace "$SHARE/$name.srv.csv" "$sspec" 2>&1) || why="server: $(tail -n 1 <<<"$out")"; }
	[[ -z $why ]] && { out=$(check_trace "$SHARE/$name.cli.csv" "$5" 2>&1) || why="client: $(tail -n 1 <<<"$out")"; }
	[[ -z $why ]] && { grep -q 'wrtrace run 0' "$T/$name.cli" && grep -q 'hardware CQE timestamps: not supported by rxe0' "$T/$name.cli" || why="no summary"; }
	[[ -z $why ]] && { "$WRTRACE" report "$SHARE/$name.cli.csv" > "$T/$name.report" 2>&1 || why="wrtrace report failed"; }
	# our loops are regular: the recorder must defer every row to run end
	[[ -z $why ]] && { ho=$(grep -h 'rows built at each CQE' "$T/$name.srv" "$T/$name.cli" | head -n 1); [[ -z $ho ]] || why="deferral ended:$ho"; }
	if [[ -z $why ]]; then
		result pass "$name"; note "$name: $(grep -m1 'post->compl' "$T/$name.cli" | tr -s ' ')"
	else
		result fail "$name" "$why"; show "$T/$name.srv"; show "$T/$name.cli"
	fi
}

trace_pair rc-send-bw ib_send_bw "-n 200 -Q 16" RECV=200 SEND=200
trace_pair ud-send-bw ib_send_bw "-c UD -s 1024 -n 200" RECV=auto SEND=200
trace_pair send-lat ib_send_lat "-n 100" SEND=100,RECV=100 SEND=100,RECV=100
trace_pair write-bw-q2 ib_write_bw "-q 2 -n 100 -Q 8" - WRITE=200

# The example plugin: one start and one end line per run, every WR counted.
rm -f "$SHARE/count.txt"
run_pair plugin 1 2 18751 "$OURS/ib_send_bw -d rxe0 -x $GIDX -n 150" \
	"$OURS/ib_send_bw -d rxe0 -x $GIDX -n 150 --plugin=$COUNT:$SHARE/count.txt"
if ((SRV_RC == 0 && CLI_RC == 0)) && grep -q '^start run=0 tool=ib_send_bw device=rxe0 qps=1' "$SHARE/count.txt" &&
   grep -q '^end run=0 .* wrs=150 .* last_seq=149 ' "$SHARE/count.txt"; then
	result pass example-plugin; note "example plugin: $(tail -n 1 "$SHARE/count.txt")"
else
	result fail example-plugin "exit $SRV_RC/$CLI_RC"; cat "$SHARE/count.txt" >&2; show "$T/plugin.cli"
fi
# A plugin that cannot be loaded stops the tool before any traffic.
"$LAB" exec 2 --timeout 30 -- $OURS/ib_send_bw -d rxe0 --plugin=/nonexistent.so 192.0.2.1 > "$T/bad" 2>&1; rc=$?
if ((rc == 1)) && grep -q 'nonexistent.so' "$T/bad"; then
	result pass bad-plugin-refused; note "bad plugin: $(head -n 1 "$T/bad")"
else
	result fail bad-plugin-refused "exit $rc"; show "$T/bad"
fi
# What --trace costs on the lab link (bench/trace-overhead): six plain and
# six traced runs of RC 64 B in ABBA order, each trace holding every WR;
# the ratio of the medians is a figure for the log, not a pass mark (one
# run's rate varies by 2x on the TCG link, far more than the per-WR cost,
# which build/bench/hook-overhead measures).
if PT_BUILD=$BUILD "$top/bench/trace-overhead" 6 2000 > "$T/overhead" 2>&1; then
	result pass trace-overhead
	note "trace-overhead: $(grep -A1 '^case' "$T/overhead" | tail -n 1 | tr -s ' ')"
	show "$T/overhead"
else
	result fail trace-overhead "bench/trace-overhead failed"; show "$T/overhead"
fi
