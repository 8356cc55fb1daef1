# SPDX-License-Identifier: BSD-2-Clause
"""A burst of control-path calls loses nothing silently. A verbs loop of
ours (BURST_C) runs on node 1 in a cgroup of its own for a few seconds:
each round allocates a PD, registers an MR, creates a CQ and 8 RC QPs
(each moved to INIT), then destroys them all, counting every call that
succeeded. `rdmamon events --listen` (scraped with curl on the node; the
events view, as only it streams events through the ring buffer) must then
show, for that cgroup, creates and destroys per type equal to the loop's
counts exactly and create_qp / modify_qp / destroy_qp calls equal to the
loop's; and for the events through the ring buffer, the events read plus
the loss reported equal what happened, per kind (exactly, whatever the
loss). Skips when rdmamon is not built or the node has no BPF support."""

import json
import time
from pathlib import Path

import pytest

from benchlib import caps
from benchlib.labctl import Lab
from monitorlib import (MONITOR_START, RDMAMON, Monitor, compile_c, make_cgroups, next_scrape, remove_cgroups,
                        samples, value)

pytestmark = pytest.mark.nodes(2)
CG = "ptlab-burst"
PORT = 9483
SECONDS = 4

BURST_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>
#define NQP 8
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    double secs = atof(argv[2]), t0;
    struct ibv_device **l = ibv_get_device_list(NULL);
    struct ibv_context *c = NULL;
    for (int i = 0; l && l[i]; i++)
        if (!strcmp(ibv_get_device_name(l[i]), argv[1])) c = ibv_open_device(l[i]);
    if (!c) { fprintf(stderr, "no device %s\n", argv[1]); return 2; }
    static char buf[4096];
    long pd = 0, mr = 0, cq = 0, qp = 0, mod = 0, dqp = 0, dcq = 0, dmr = 0, dpd = 0, rounds = 0;
    t0 = now();
    while (now() - t0 < secs) {
        struct ibv_pd *p = ibv_alloc_pd(c);
        if (!p) { perror("alloc_pd"); return 1; } pd++;
        struct ibv_mr *m = ibv_reg_mr(p, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
        if (!m) { perror("reg_mr"); return 1; } mr++;
        struct ibv_cq *q = ibv_create_cq(c, 64, NULL, NULL, 0);
        if (!q) { perror("create_cq"); return 1; } cq++;
        struct ibv_qp *qs[NQP];
        for (int i = 0; i < NQP; i++) {
            struct ibv_qp_init_attr a = { .send_cq = q, .recv_cq = q, .qp_type = IBV_QPT_RC,
                .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
            if (!(qs[i] = ibv_create_qp(p, &a))) { perror("create_qp"); return 1; } qp++;
            struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1, .pkey_index = 0,
                .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
            if (ibv_modify_qp(qs[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
                perror("modify_qp"); return 1; }
            mod++;
        }
        for (int i = 0; i < NQP; i++) { if (ibv_destroy_qp(qs[i])) { perror("destroy_qp"); return 1; } dqp++; }
        if (ibv_destroy_cq(q)) { perror("destroy_cq"); return 1; } dcq++;
        if (ibv_dereg_mr(m)) { perror("dereg_mr"); return 1; } dmr++;
        if (ibv_dealloc_pd(p)) { perror("dealloc_pd"); return 1; } dpd++;
        rounds++;
    }
    double t = now() - t0;
    ibv_close_device(c);
    printf("{\"seconds\": %.3f, \"rounds\": %ld, \"create\": {\"pd\": %ld, \"mr\": %ld, \"cq\": %ld, \"qp\": %ld, \"ctx\": 1},"
           " \"destroy\": {\"pd\": %ld, \"mr\": %ld, \"cq\": %ld, \"qp\": %ld, \"ctx\": 1}, \"modify_qp\": %ld}\n",
           t, rounds, pd, mr, cq, qp, dpd, dmr, dcq, dqp, mod);
    return 0;
}
"""


def need(reason):
    if reason:
        pytest.skip(reason)


def ring(ss):
    """(events read, lost) per kind from a scrape."""
    return {k: (value(ss, "rdmamon_ring_events_total", kind=k), value(ss, "rdmamon_lost_total", what=f"ring_{k}"))
            for k in ("add", "del", "call")}


@pytest.mark.name("exact")
def test_burst(lab: Lab, dev: str, workdir: Path, note) -> None:
    need(caps.built(RDMAMON))
    need(caps.bpf(lab))
    exe = compile_c(lab, workdir, "rdmamon-burst", BURST_C)
    url = f"http://127.0.0.1:{PORT}/metrics"
    mon = Monitor(lab, workdir, args=["--listen", str(PORT)], tag="rdmamon-burst", view="events")
    try:
        t, _ = next_scrape(lab, url, timeout=MONITOR_START)
        make_cgroups(lab, [CG])
        t, before_text = next_scrape(lab, url, t)     # a reading with nothing running
        before = samples(before_text)
        d = lab.exec(1, ["sh", "-c", f"echo $$ > /sys/fs/cgroup/{CG}/cgroup.procs && exec {exe} {dev} {SECONDS}"],
                     timeout=120)
        assert d.rc == 0, f"the burst loop failed\n{d.evidence()}"
        loop = json.loads(d.out.strip().splitlines()[-1])
        # two intervals after the loop's end: every event of it is read or counted lost
        t, _ = next_scrape(lab, url, t)
        t, after_text = next_scrape(lab, url, t)
        after = samples(after_text)
        cg = f"/{CG}"
        got = {w: {t: value(after, f"rdmamon_{w}s_total", cgroup=cg, type=t) for t in loop[w]}
               for w in ("create", "destroy")}
        want = {w: {t: float(n) for t, n in loop[w].items()} for w in ("create", "destroy")}
        assert got == want, f"rdmamon {got} != the loop's {want}"
        for op, n in (("create_qp", loop["create"]["qp"]), ("modify_qp", loop["modify_qp"]),
                      ("destroy_qp", loop["destroy"]["qp"]), ("alloc_pd", loop["create"]["pd"]),
                      ("create_cq", loop["create"]["cq"]), ("reg_mr", loop["create"]["mr"])):
            calls = value(after, "rdmamon_calls_total", cgroup=cg, operation=op, errno="ok")
            assert calls == n, f"{op}: rdmamon {calls} calls, the loop made {n}"
        # events: what happened system-wide meanwhile (the loop alone: node 1 is otherwise idle)
        adds = value(after, "rdmamon_creates_total") - value(before, "rdmamon_creates_total")
        dels = value(after, "rdmamon_destroys_total") - value(before, "rdmamon_destroys_total")
        calls = value(after, "rdmamon_calls_total") - value(before, "rdmamon_calls_total")
        assert adds == sum(loop["create"].values()) and dels == sum(loop["destroy"].values()), \
            f"other activity on node 1 during the burst: {adds} adds, {dels} deletes"
        rb, ra = ring(before), ring(after)
        for kind, happened in (("add", adds), ("del", dels), ("call", calls)):
            read = ra[kind][0] - rb[kind][0]
            lost = ra[kind][1] - rb[kind][1]
            assert read + lost == happened, \
                f"{kind} events: {read:.0f} read + {lost:.0f} reported lost != {happened:.0f} that happened"
        qps = loop["create"]["qp"] / loop["seconds"]
        lost_all = sum(ra[k][1] - rb[k][1] for k in ra)
        note(f"{loop['rounds']} rounds in {loop['seconds']:.1f} s: {loop['create']['qp']} QPs "
             f"({qps:.0f}/s), {loop['create']['cq']} CQ/PD/MR; rdmamon equal per type; events "
             f"add {adds:.0f}, del {dels:.0f}, call {calls:.0f}, lost {lost_all:.0f}")
        # the rate is the guest's (TCG, shared host): ~70/s at host load 37, 1450/s on an idle host
        assert loop["create"]["qp"] >= 200, f"only {loop['create']['qp']} QPs in {SECONDS} s: not a burst"
    finally:
        mon.stop()
        remove_cgroups(lab, [CG])
