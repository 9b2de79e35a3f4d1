"""Faults: killed workers, interrupted sweeps, SystemC errors in a worker."""

import json
import os
import signal
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

import cosim
from conftest import SCENARIOS
from ctrl_c import as_typed_at_a_terminal
import cosim.engine._engine_run as workflow

SCENARIO = str(SCENARIOS / "heteroreason-u280-200.yaml")


def test_a_sweep_point_whose_worker_is_killed_fails_alone(monkeypatch):
    real = workflow.native

    class KillAt250:
        def __getattr__(self, name):  # the rest of the module as it is
            return getattr(real(), name)

        def simulate(self, top, system, *args):
            if system["draft"]["fpga"]["clock_mhz"] == 250:
                os.kill(os.getpid(), signal.SIGKILL)  # the simulation worker dies mid-point
            return real().simulate(top, system, *args)

    monkeypatch.setattr(workflow, "native", lambda: KillAt250())
    scn = cosim.load_scenario(SCENARIO)
    workload = cosim.trace.generate("gsm8k", 5, seed=1)
    table = cosim.sweep(scn, workload, {"fpga.clock_mhz": [200, 250, 300, 350]}, workers=2)
    status = {r["fpga.clock_mhz"]: r["status"] for r in table.rows}
    assert status == {200: "ok", 250: "error", 300: "ok", 350: "ok"}
    [failed] = table.failed()
    assert "WorkerCrashed" in failed["error"] and "SIGKILL" in failed["error"]


def test_an_interrupted_sweep_leaves_valid_files_and_resumes(tmp_path):
    out = tmp_path / "sweep"
    args = [sys.executable, "-m", "cosim.cli", "sweep", SCENARIO, "--set", "pcie.bandwidth_gbps=" +
            ",".join(str(b) for b in range(1, 41)), "--problems", "150", "--out", str(out), "--quiet"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=as_typed_at_a_terminal)
    journal = out / "points.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not journal.exists() or len(journal.read_text().splitlines()) < 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    finished = [row for row in map(json.loads, journal.read_text().splitlines()) if "_key" in row]
    assert 3 <= len(finished) < 40
    csv_rows = (out / "sweep.csv").read_text().splitlines()
    assert len(csv_rows) == len(finished) + 1  # every finished point, nothing half-written
    assert pq.read_table(out / "sweep.parquet").num_rows == len(finished)
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    assert len(journal.read_text().splitlines()) == 41  # the header and each point once: only the missing ran
    assert len((out / "sweep.csv").read_text().splitlines()) == 41


@pytest.mark.coroutine_unwind
def test_a_systemc_error_in_a_worker_becomes_a_python_exception():
    from cosim.engine._isolation import run_isolated
    from cosim._extension import native

    with pytest.raises(cosim.SimulationError, match=r"SystemC: .*a deliberate SystemC error"):
        run_isolated(lambda: native().systemc_selftest("a deliberate SystemC error"))
    # The interpreter is fine afterwards.
    assert cosim.standalone.transfer("pcie_gen3_x16", 64).time_ns > 0
