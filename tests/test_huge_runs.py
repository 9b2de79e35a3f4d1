"""Runs of any length: rows streamed to disk as problems finish, flat memory,
progress by problems, and an estimate before a very long run."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

import cosim
import cosim.engine._engine_run as engine_run
from cosim.cli import _estimate
from cosim.outputs._arrow import csv_text
from conftest import SCENARIOS
from test_worker_lifetime import EVENT_BOUND_S, children, gone_within

SCENARIO = str(SCENARIOS / "heteroreason-u280-200.yaml")


@pytest.fixture(scope="module")
def scn():
    return cosim.load_scenario(SCENARIO)


def test_progress_moves_a_chunk_of_problems_at_a_time(scn):
    seen = []
    cosim.simulate(scn, cosim.trace.generate("gsm8k", 1300, seed=3), progress=seen.append)
    chunk = engine_run.CHUNK_PROBLEMS
    assert seen == [*range(chunk, 1300, chunk), 1300]  # 512, 1024, then the last 276


def test_rows_reach_the_disk_as_problems_finish_and_appear_whole_at_the_end(scn, tmp_path):
    trace = cosim.trace.generate("gsm8k", 1300, seed=3)
    lines_at = []

    def progress(done):
        names = os.listdir(tmp_path)
        assert "per_problem.csv" not in names  # under its final name only once the run is through
        [partial] = [n for n in names if n.startswith(".per_problem.csv.partial")]
        lines_at.append((done, len((tmp_path / partial).read_text().splitlines()) - 1))

    on_disk = cosim.simulate(scn, trace, rows_to=tmp_path, progress=progress)
    assert [done for done, _ in lines_at] == [512, 1024, 1300]
    assert all(lines == done for done, lines in lines_at[:-1])  # each batch written before it is reported
    assert sorted(os.listdir(tmp_path)) == ["per_problem.arrow", "per_problem.csv"]
    in_memory = cosim.simulate(scn, trace)
    assert on_disk.summary == in_memory.summary
    assert (tmp_path / "per_problem.csv").read_text() == csv_text(in_memory.per_problem.to_arrow())
    assert on_disk.per_problem == in_memory.per_problem
    assert on_disk.per_problem.to_arrow().num_rows == 1300
    assert on_disk.last_end_s == pytest.approx(on_disk.per_problem.column("end_s")[-1], rel=1e-12)


PEAK = """
import resource, sys, tempfile, cosim
scn = cosim.load_scenario(sys.argv[1])
cosim.simulate(scn, cosim.trace.generate("gsm8k", int(sys.argv[2]), seed=0), rows_to=tempfile.mkdtemp())
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def test_memory_does_not_grow_with_the_problems(tmp_path):
    peaks = {}
    for n in (2_000, 20_000):
        out = subprocess.run([sys.executable, "-c", PEAK, SCENARIO, str(n)], capture_output=True, text=True,
                             cwd=tmp_path, check=True).stdout
        peaks[n] = [int(v) for v in out.split()]  # kB: this process, the worker
    # Keeping every row costs ~0.8 kB a problem (ids and ~30 numbers on each side of the
    # pipe): 14 MB more for 18,000 more problems. Streamed, both stay within 5 MB.
    for parent_or_worker in (0, 1):
        assert peaks[20_000][parent_or_worker] - peaks[2_000][parent_or_worker] < 5_000, peaks


def _megabytes(text):
    value, unit = re.search(r"and ([\d.]+) (kB|MB) of disk", text).groups()
    return float(value) * (1e-3 if unit == "kB" else 1)


def test_the_estimate_matches_what_the_run_writes(scn, tmp_path, monkeypatch):
    trace = cosim.trace.generate("math500", 4_000, seed=1)
    monkeypatch.setattr(_estimate, "SAMPLE_PROBLEMS", 1_000)
    line = _estimate.estimate(scn, trace, tmp_path / "run", save_trace=True)
    assert line.startswith("4000 problems: about ") and "measured on the first 1000" in line
    cosim.simulate(scn, trace, rows_to=tmp_path)
    trace.save(tmp_path / "trace.jsonl")
    written = sum((tmp_path / n).stat().st_size for n in ("per_problem.csv", "per_problem.arrow", "trace.jsonl"))
    assert _megabytes(line) == pytest.approx(written / 1e6, rel=0.05)


def test_a_run_the_disk_cannot_hold_is_refused_before_it_starts(scn, tmp_path, monkeypatch):
    monkeypatch.setattr(_estimate, "SAMPLE_PROBLEMS", 200)
    monkeypatch.setattr(_estimate.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 10_000))
    with pytest.raises(cosim.ConfigError, match=r"--problems 4000: the outputs need about .* has 10.0 kB free"):
        _estimate.estimate(scn, cosim.trace.generate("math500", 4_000, seed=1), tmp_path, save_trace=False)


def test_a_very_long_run_says_what_it_will_cost_first_and_stops_cleanly(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "cosim.cli", "run", SCENARIO, "--problems", "1000001", "--out",
                             "big", "--quiet"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    first = proc.stdout.readline()
    assert re.match(r"1000001 problems: about [\d.]+ (s|min|h) and [\d.]+ (MB|GB|TB) of disk \([\d.]+ \w+ free\), "
                    r"measured on the first 2000; the generated trace is not written", first), first
    deadline = time.monotonic() + EVENT_BOUND_S
    while not children(proc.pid) and time.monotonic() < deadline:  # the run itself has begun
        time.sleep(0.05)
    workers = children(proc.pid)
    assert workers
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=EVENT_BOUND_S)
    assert proc.returncode == 143
    assert gone_within(workers, EVENT_BOUND_S)
    assert os.listdir(tmp_path) == []  # no folder, no staging, no partial rows
