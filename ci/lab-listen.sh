# ci/lab-listen.sh: sourced by the lab tests (tests/lab/lib.sh) and the lab
# benchmarks (bench/labpair.sh). Needs LAB (the path of ci/lab).
# lab_listening NODE PORT: 0 once something listens on NODE's PORT, a TCP
# socket or an rdma_cm id (-z/-R servers), 1 after about 30 s.
lab_listening() {
	local i
	for i in $(seq 60); do
		"$LAB" exec "$1" --timeout 20 -- sh -c "ss -Hltn 'sport = :$2'; rdma res show cm_id" 2>/dev/null |
			grep -qE "LISTEN.*:$2( |\$)" && return 0
		sleep 0.5
	done
	return 1
}
