"""A command started as a background job of a script (SIGINT ignored, as a shell without
job control starts one, so that Ctrl-C at the terminal spares it) ignores Ctrl-C, and so
do its simulation workers: the run finishes whole. SIGTERM still stops it (test_faults,
test_sigterm_at_start)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import SCENARIOS
from ctrl_c import as_a_background_job
from test_output_safety import run_state
from test_worker_lifetime import EVENT_BOUND_S, children

SIGINT_BIT = 1 << (signal.SIGINT - 1)  # its place in /proc's signal masks


def signal_mask(pid, field):
    """A /proc/PID/status signal mask (SigBlk, SigIgn, SigCgt) as an integer; None once gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    return next(int(line.split()[1], 16) for line in lines if line.startswith(f"{field}:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_a_background_job_and_its_workers_ignore_ctrl_c_and_finish_whole(tmp_path):
    scenario = SCENARIOS / "heteroreason-u280-200.yaml"
    # A run of several seconds, in a process group of its own (as a job is).
    proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", "run", str(scenario), "--problems", "2000",
                             "--out", "r", "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=as_a_background_job,
                            start_new_session=True)
    try:
        # A worker is set up once it unblocks the signals it was forked with held back.
        worker, deadline = None, time.monotonic() + EVENT_BOUND_S
        while worker is None and time.monotonic() < deadline and proc.poll() is None:
            for pid in children(proc.pid):
                blocked = signal_mask(pid, "SigBlk")
                if blocked is not None and not blocked & SIGINT_BIT:
                    worker = pid
            time.sleep(0.01)
        assert worker is not None, f"no worker set up: {proc.stderr.read() if proc.poll() is not None else ''}"
        assert signal_mask(worker, "SigIgn") & SIGINT_BIT, "the worker takes Ctrl-C its command ignores"
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at the terminal reaches the whole group
        _, err = proc.communicate(timeout=EVENT_BOUND_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "interrupted" not in err
    run_state(tmp_path / "r")  # one whole run, every file its manifest lists
