# bench/labpair.sh: sourced by the lab benchmarks (vs-upstream, trace-overhead).
# pair NAME BIN "SERVER ARGS" "CLIENT ARGS": server on node 1, client on
# node 2 (the server's address appended), each bounded in time; the client's last result row goes
# to $tmp/NAME.row ("bytes iters peak avg rate"), outputs to $tmp/NAME.srv/cli.
# Returns non-zero (and says why on stderr) when either side failed, so a bad
# round is counted by the caller, never silently averaged in.
top=${top:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
LAB=${LAB:-$top/ci/lab}
port=${port:-19100}

. "$top/ci/lab-listen.sh"

pair() {
	local name=$1 bin=$2 sargs=$3 cargs=$4 sp src crc
	port=$((port + 1))
	"$LAB" exec 1 --timeout 300 -- "$bin" -d rxe0 -x 1 -F -p $port $sargs > "$tmp/$name.srv" 2>&1 &
	sp=$!
	if ! lab_listening 1 $port; then
		kill $sp 2>/dev/null; wait $sp
		echo "$name: the server never listened on port $port" >&2
		return 1
	fi
	"$LAB" exec 2 --timeout 300 -- "$bin" -d rxe0 -x 1 -F -p $port $cargs "$("$LAB" addr 1)" > "$tmp/$name.cli" 2>&1
	crc=$?
	wait $sp
	src=$?
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && NF >= 5 { r = $1 " " $2 " " $3 " " $4 " " $5 } END { print r }' \
		"$tmp/$name.cli" > "$tmp/$name.row"
	if ((src || crc)) || [[ ! -s $tmp/$name.row ]]; then
		echo "$name: server exit $src, client exit $crc$([[ -s $tmp/$name.row ]] || echo ', no result row')" >&2
		return 1
	fi
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
