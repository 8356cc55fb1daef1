# SPDX-License-Identifier: BSD-2-Clause
"""ci/lab down stops every guest of this lab: no QEMU process of it and no
lab namespace remain (other labs, with their own PTLAB_NETNS, are left
alone), and exec no longer works."""

import subprocess

from benchlib.labctl import Lab


def test_down(lab_session: Lab) -> None:
    lab = lab_session
    d = lab.down()
    assert d.rc == 0, f"ci/lab down failed\n{d.evidence()}"
    p = subprocess.run(["pgrep", "-af", f"qemu-system-x86_64 -name ptlab[.]{lab.netns}[.]"],
                       capture_output=True, text=True)
    assert p.returncode != 0, f"QEMU processes remain:\n{p.stdout}"
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert lab.netns not in [line.split()[0] for line in ns.splitlines() if line.split()], \
        f"the lab's network namespace {lab.netns} remains:\n{ns}"
    d = lab.exec(1, ["true"], timeout=30)
    assert d.rc != 0, "exec works on a lab that is down"
