"""A simulation worker never outlives the command that started it, however the command ends."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SCENARIOS

# Every wait here is for an event (a worker appears, the command exits, a worker is gone),
# bounded far above its normal time (well under a second, or a few for a start) so that a
# busy machine never fails it; only a command or worker that truly hangs reaches it.
EVENT_BOUND_S = 120


def children(pid):
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def alive(pid):
    """Running, and not a zombie waiting to be reaped (that holds no memory)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def start(args, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", *map(str, args)], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + EVENT_BOUND_S
    while time.monotonic() < deadline:
        workers = children(proc.pid)
        if workers:
            return proc, workers
        if proc.poll() is not None:
            pytest.fail(f"the command ended before it started a worker: {proc.stderr.read()}")
        time.sleep(0.02)
    proc.kill()
    pytest.fail(f"no worker started within {EVENT_BOUND_S} s")


def gone_within(pids, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_killing_the_command_ends_its_workers(tmp_path, how, command):
    scenario = SCENARIOS / "heteroreason-u280-200.yaml"
    args = ["run", scenario, "--problems", "200000", "--quiet", "--out", tmp_path / "out"] if command == "run" else \
        ["sweep", scenario, "--set", "pcie.bandwidth_gbps=2,4,8,16", "--problems", "3000", "--workers", "2",
         "--quiet", "--out", tmp_path / "out"]
    proc, workers = start(args, tmp_path)
    os.kill(proc.pid, how)  # at once: often while the command is still starting its worker
    proc.wait(timeout=EVENT_BOUND_S)
    assert gone_within(workers, EVENT_BOUND_S), f"workers {workers} outlived their parent"
    if how == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
        assert "terminated" in proc.stderr.read()
