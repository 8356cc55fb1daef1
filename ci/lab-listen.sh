# ci/lab-listen.sh: sourced by the shell lab benchmarks (bench/labpair.sh);
# the python side waits the same way (bench/benchlib/labctl.py). Needs LAB (the path of ci/lab).
# lab_listening NODE PORT: 0 once something listens on NODE's PORT, a TCP
# socket or an rdma_cm id (-z/-R servers), 1 after about 30 s. The loop runs
# in the guest (ci/lab-wait-listen), in one exec: a check from the host costs
# an exec round trip (~1 s under TCG).
lab_listening() {
	"$LAB" exec "$1" --timeout 40 -- "$(dirname "$LAB")/lab-wait-listen" "$2" >/dev/null
}
