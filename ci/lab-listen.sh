# ci/lab-listen.sh: sourced by the lab tests (tests/lab/lib.sh) and the lab
# benchmarks (bench/labpair.sh). Needs LAB (the path of ci/lab).
# lab_listening NODE PORT: 0 once something listens on NODE's PORT, a TCP
# socket or an rdma_cm id (-z/-R servers), 1 after about 30 s.
# The loop runs in the guest, in one exec: a check from the host costs an
# exec round trip (~1 s under TCG). TCP listeners are read from /proc/net
# with bash builtins (a fork costs ~0.1 s of the guest's one CPU, which the
# starting server needs), about every 0.2 s; `rdma res` every fourth time.
lab_listening() {
	# shellcheck disable=SC2016 # expanded by the guest's bash
	"$LAB" exec "$1" --timeout 40 -- bash -c '
		printf -v hex %04X "$1"
		for ((i = 0; SECONDS < 30; i++)); do
			for f in /proc/net/tcp /proc/net/tcp6; do
				while read -r _ local _ state _; do
					[[ $local == *:$hex && $state == 0A ]] && exit 0
				done < "$f"
			done
			((i % 4 == 3)) && rdma res show cm_id 2>/dev/null |
				grep -qE "LISTEN.*:$1( |\$)" && exit 0
			sleep 0.1
		done
		exit 1' bash "$2" >/dev/null
}
