#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# TAP test of the ib_send_bw command line (docs/upstream-behaviour.md §1, §4, §9).
# Every case must be decided while parsing, before any device or socket is
# used: each run is capped by `timeout 10`, must finish in under 5 seconds,
# and must leave no sanitizer report. Cases that get past parsing name a
# device that does not exist, so they end with the "no device" message
# whether or not the machine has RDMA devices, and never listen or connect.
set -u

top=${top_builddir:-.}
BIN=${IB_SEND_BW:-$top/perftest/ib_send_bw}
NODEV=nosuchdev_cli_test
NODEV_MSG="Did not detect devices|IB device $NODEV not found"
MGID_ERR="Invalid MGID '.*' for -M: "
MAX_SECONDS=5

n=0
mode=count

# t NAME RC REGEX [--not REGEX] -- ARGS...
# Run the binary with ARGS; pass if it exits with RC within MAX_SECONDS, its
# output (stdout and stderr) matches REGEX (grep -E) and not the --not one.
t() {
	local name=$1 want_rc=$2 want=$3 reject=
	shift 3
	if [ "${1-}" = --not ]; then
		reject=$2
		shift 2
	fi
	[ "${1-}" = -- ] && shift
	n=$((n + 1))
	[ "$mode" = count ] && return 0

	local out rc start end ms why=
	start=${EPOCHREALTIME:-0}      # bash >= 5; otherwise no time check
	start=${start//[.,]/}
	out=$(timeout -k 2 10 "$BIN" "$@" 2>&1)
	rc=$?
	end=${EPOCHREALTIME:-0}
	end=${end//[.,]/}
	ms=$(((end - start) / 1000))

	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		why="timed out after 10 s (did it open a device or the network?)"
	elif [ "$rc" -ne "$want_rc" ]; then
		why="exit code $rc, expected $want_rc"
	elif [ "$ms" -gt $((MAX_SECONDS * 1000)) ]; then
		why="took ${ms} ms"
	elif grep -Eq 'Sanitizer|runtime error:' <<<"$out"; then
		why="sanitizer report"
	elif ! grep -Eq -- "$want" <<<"$out"; then
		why="output does not match /$want/"
	elif [ -n "$reject" ] && grep -Eq -- "$reject" <<<"$out"; then
		why="output matches /$reject/"
	fi
	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		echo "# $why"
		echo "# command: ib_send_bw$(printf ' %q' "$@")"
		sed 's/^/#   | /' <<<"$out" | head -n 15
	fi
}

# Bad -M values: each must be refused by the MGID parser, server and client.
LONG200=$(printf '%0200d' 1)
T17=$(printf '0:%.0s' {1..16})0
BAD_MGIDS=(
	225.1.1                 # 3 dotted numbers
	225.1.1.256             # byte out of range
	10.0.0.1                # IPv4, not multicast
	255.255.255.255         # broadcast, not multicast
	1:2:3                   # too few tokens
	"$T17"                  # 17 tokens
	0:0:0:0:0:0:0:0:0:0:255:255:256:1:1:20   # token 256
	0:0:0:0:0:0:0:0:0:0:255:255:10:1:1:20    # maps to unicast IPv4
	0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:     # empty last token
	0x1ff:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20
	abc
	""
	"$LONG200"
	ff0e::zz
	-1.1.1.1
	225.1.1.20x
	225.01.1.20             # leading zero (upstream would read octal)
	"225.1.1.20 "
	225..1.1
	225.1.1.20.
	::1                     # unicast IPv6
	fe80::1
	::ffff:10.1.1.1
	ff0e:::1
	1.2.3.4:5
)

# Valid forms: parsing succeeds and the run stops at the device.
GOOD_MGIDS=(
	225.1.1.20
	239.255.255.255
	0:0:0:0:0:0:0:0:0:0:255:255:225:1:1:20
	0:0:0:0:0:0:0:0:0:0:0xff:0xff:0xe1:1:1:0x14
	255:1:0:0:0:2:201:133:0:0:0:0:0:0:0:0
	ff0e::ffff:e101:114
	ff0e::ffff:225.1.1.20
	::ffff:225.1.1.20
	ff01:0:2:c985::
)

cases() {
	local m side
	local -a host

	# -V and -h answer and return 1 (docs/upstream-behaviour.md §9)
	t "-V prints the version" 1 '^Version: 6\.06$' -- -V
	t "--version prints the version" 1 '^Version: 6\.06$' -- --version
	t "-h lists --use_old_post_send" 1 '--use_old_post_send' -- -h
	t "-h lists --out_json" 1 '--out_json' -- -h
	t "--help prints the usage" 1 '^Usage:' -- --help

	# -M, server and client (the client form must not connect anywhere)
	for side in server client; do
		host=()
		[ $side = client ] && host=(127.0.0.1)
		for m in "${BAD_MGIDS[@]}"; do
			t "$side: -M '${m:0:40}' is refused" 1 "$MGID_ERR" --not "$NODEV_MSG" \
				-- -d $NODEV -g -M "$m" "${host[@]}"
		done
		for m in "${GOOD_MGIDS[@]}"; do
			t "$side: -M $m parses, then no device" 1 "$NODEV_MSG" --not 'MGID|-M' \
				-- -d $NODEV -g -M "$m" "${host[@]}"
		done
		t "$side: --MGID long form is checked too" 1 "Invalid MGID '225\.1\.1' for --MGID" \
			-- -d $NODEV --mcg --MGID=225.1.1 "${host[@]}"
	done
	t "-M without an argument" 1 "missing argument for '-M'" -- -g -M
	t "-M without -g" 1 'needs -g' -- -d $NODEV -M 225.1.1.20

	# -g constraints (docs/upstream-behaviour.md §4.1)
	t "-g -b is refused" 1 'Bidirectional mode not supported in multicast' -- -d $NODEV -g -b
	t "-g -q 2 is refused" 1 'Only 1 QP supported in multicast' -- -d $NODEV -g -q 2
	t "-g -c RC is refused" 1 'Multicast runs on UD only, not -c RC' -- -d $NODEV -g -c RC
	t "-g -c UC is refused" 1 'Multicast runs on UD only, not -c UC' -- -d $NODEV -g -c UC
	t "-g -R is refused" 1 'rdma_cm .* not supported in multicast' -- -d $NODEV -g -R
	t "-g -c UD parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV -g -c UD

	# upstream options this build cannot drive, or has not implemented yet
	t "--use_cuda=0 is not supported" 1 '^ option --use_cuda is not supported by this build: GPU memory' \
		-- --use_cuda=0
	t "--rate_limit_type=PP is not supported" 1 \
		'^ --rate_limit_type PP needs mlx5 packet pacing indexes' -- --rate_limit=10 --rate_limit_type=PP
	t "-O parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV -O
	t "--odp parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV --odp
	t "--ethertype is known" 1 'not supported by this build: raw Ethernet' -- --ethertype=0x800
	# -w/-y parse (then no device); bad values are refused
	t "-w 10 -y 0.5 parse, then no device" 1 "$NODEV_MSG" -- -d $NODEV -w 10 -y 0.5
	t "-w abc is refused" 1 "Invalid value 'abc' for -w" -- -w abc
	# accepted and acted on: they get as far as the device
	t "-e parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV -e
	t "--run_infinitely parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV --run_infinitely
	t "--cpu_util -D 4 parses, then no device" 1 "$NODEV_MSG" -- -d $NODEV -D 4 --cpu_util
	t "--cpu_util needs -D" 1 'cpu_util is only valid in duration mode' -- -d $NODEV --cpu_util
	t "-e -D is refused" 1 'cannot be combined with events' -- -d $NODEV -e -D 4

	# unknown options, bad values, bad combinations
	t "--bogus is an invalid flag" 1 "unrecognized or ambiguous option '--bogus'" -- --bogus
	t "-n abc is refused" 1 "Invalid value 'abc' for -n" -- -n abc
	t "-n 4 is below the minimum" 1 "Invalid value '4' for -n" -- -n 4
	t "-s 0 is refused" 1 "Invalid value '0' for -s" -- -s 0
	t "-s 1X is refused" 1 "Invalid value '1X' for -s" -- -s 1X
	t "-p 70000 is refused" 1 "Invalid value '70000' for -p" -- -p 70000
	t "-D 4 -f 2 breaks DURATION > 2*MARGIN" 1 'DURATION > 2\*MARGIN' -- -D 4 -f 2
	t "-D with -n is refused" 1 '-n and -D cannot be combined' -- -D 4 -n 100
	t "-c XYZ is refused" 1 "Invalid connection type 'XYZ'" -- -c XYZ
	t "-c XRC is not supported" 1 'connection type XRC is not supported' -- -c XRC
	t "two host names are refused" 1 'Invalid Command line' -- host1 host2
	t "empty -d is refused" 1 'Empty value for -d' -- -d ''

	# valid options, no such device: server and client
	t "server: -d $NODEV is not found" 1 "$NODEV_MSG" \
		-- -d $NODEV -c UD -s 1024 -n 1000 -F --report_gbits
	t "client: -d $NODEV is not found" 1 "$NODEV_MSG" \
		-- -d $NODEV -D 4 -f 1 -q 2 127.0.0.1

	# PERFTEST_CLOCK (util/tsc.h): garbage is refused before the device,
	# each valid value gets as far as the device
	PERFTEST_CLOCK=fast t "PERFTEST_CLOCK=fast is refused" 1 \
		'PERFTEST_CLOCK=fast: expected auto, tsc or raw' --not "$NODEV_MSG" -- -d $NODEV
	for m in auto raw tsc; do
		PERFTEST_CLOCK=$m t "PERFTEST_CLOCK=$m is taken" 1 "$NODEV_MSG" \
			--not 'expected auto, tsc or raw' -- -d $NODEV
	done
}

if [ ! -x "$BIN" ]; then
	echo "1..0 # SKIP $BIN is not built"
	exit 0
fi
cases
echo "1..$n"
mode=run
n=0
cases
exit 0
