"""SIGTERM is honoured whenever it comes, also in the instant a command forks its
simulation worker (where it used to be dropped, or raised before the worker was watched,
and the command then waited for the whole run)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SCENARIOS
from test_worker_lifetime import EVENT_BOUND_S, children, gone_within

TRIES = 8  # each one signals within a few milliseconds of the fork


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux /proc")
def test_sigterm_as_the_worker_starts_ends_the_command_every_time(tmp_path):
    scenario = SCENARIOS / "heteroreason-u280-200.yaml"
    for attempt in range(TRIES):
        # A run of minutes: only a SIGTERM that works ends it within the bound.
        proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", "run", str(scenario), "--problems", "200000",
                                 "--quiet", "--out", str(tmp_path / f"out{attempt}")], cwd=tmp_path,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            workers = []
            while not workers and proc.poll() is None:
                workers = children(proc.pid)  # polled without a pause: the signal lands during the fork
            assert workers, f"the command ended before it started a worker: {proc.stderr.read()}"
            os.kill(proc.pid, signal.SIGTERM)
            _, err = proc.communicate(timeout=EVENT_BOUND_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 128 + signal.SIGTERM, err
        assert err.strip().splitlines()[-1] == "cosim: terminated" and "Traceback" not in err
        assert gone_within(workers, EVENT_BOUND_S)
        assert not (tmp_path / f"out{attempt}").exists()  # nothing half-written
