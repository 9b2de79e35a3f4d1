"""Outputs never destroy inputs or each other, keep the user's umask, fail in one line,
and a run's folder always holds one whole run."""

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time

import pytest

from conftest import SCENARIOS, run_cli

SCENARIO = SCENARIOS / "heteroreason-u280-200.yaml"


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr and "Traceback" not in proc.stderr


@pytest.fixture
def trace(tmp_path):
    proc = run_cli("trace", "gen", "--profile", "gsm8k", "--problems", "3", "--out", "t.jsonl", "--quiet",
                   cwd=tmp_path)
    assert proc.returncode == 0
    return tmp_path / "t.jsonl"


@pytest.mark.parametrize("args,message", [
    (["--trace", "t.jsonl", "--timeline", "t.jsonl"], "--timeline t.jsonl: is the same file as --trace"),
    (["--trace", "t.jsonl", "--timeline", "./sub/../t.jsonl"], "is the same file as --trace"),
    (["--trace", "t.jsonl", "--vcd", "w.vcd", "--timeline", "w.vcd"], "--timeline w.vcd: is the same file as --vcd"),
    (["--trace", "t.jsonl", "--vcd", "w", "--timeline", "w.vcd"], "is the same file as --vcd"),
    (["--trace", "t.jsonl", "--out", "o", "--timeline", "o/summary.json"], "is the same file as --out o/summary.json"),
    (["--trace", "t.jsonl", "--vcd", "/dev/null"], "--vcd /dev/null: is a device"),
    (["--trace", "t.jsonl", "--timeline", "."], "is a folder"),
    (["--trace", "t.jsonl", "--timeline", "newdir/"], "names a folder"),
    (["--trace", "t.jsonl", "--vcd-detail", "token"], "--vcd-detail: applies to a waveform"),
])
def test_outputs_that_would_destroy_an_input_or_each_other_are_refused(tmp_path, trace, args, message):
    (tmp_path / "sub").mkdir()
    before = trace.read_bytes()
    refused(run_cli("run", SCENARIO, *args, cwd=tmp_path), message)
    assert trace.read_bytes() == before
    assert not (tmp_path / "o").exists() and not (tmp_path / "newdir").exists()


def test_a_read_only_output_and_a_folder_of_other_files_are_left_alone(tmp_path, trace):
    (tmp_path / "ro.json").write_text("mine")
    (tmp_path / "ro.json").chmod(0o444)
    refused(run_cli("run", SCENARIO, "--trace", "t.jsonl", "--timeline", "ro.json", cwd=tmp_path),
            "--timeline ro.json: is read-only")
    assert (tmp_path / "ro.json").read_text() == "mine"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    refused(run_cli("run", SCENARIO, "--trace", "t.jsonl", "--out", "mine", cwd=tmp_path),
            "holds files that no cosim run wrote there")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep"
    refused(run_cli("trace", "import-rsd", "t.jsonl", "--dataset", "x", "--out", "t.jsonl", cwd=tmp_path),
            "--out t.jsonl: is the same file as the RSD outputs")


def test_outputs_take_the_mode_the_umask_gives(tmp_path, trace):
    def umask_027():
        os.umask(0o027)

    for args in (["run", SCENARIO, "--trace", "t.jsonl", "--out", "r", "--vcd", "r/w.vcd", "--quiet"],
                 ["sweep", SCENARIO, "--trace", "t.jsonl", "--set", "pcie.bandwidth_gbps=4", "--out", "s",
                  "--quiet"]):
        proc = subprocess.run([sys.executable, "-m", "cosim.cli", *map(str, args)], cwd=tmp_path,
                              capture_output=True, text=True, preexec_fn=umask_027, timeout=300)
        assert proc.returncode == 0, proc.stderr
    files = [p for folder in ("r", "s") for p in (tmp_path / folder).iterdir()]
    assert {"sweep.parquet", "w.vcd", "w.gtkw", "manifest.json"} <= {p.name for p in files}
    assert {stat.S_IMODE(p.stat().st_mode) for p in files} == {0o640}


def limit_file_size(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing
    return apply


@pytest.mark.parametrize("args,what", [
    # The waveform of 100 problems is past 200 kB (about 3.7 kB a problem); everything else below.
    (["--problems", "100", "--vcd", "r/w.vcd"], "r/w.vcd: the waveform was not written whole"),
    # 3,000 problems' rows are past 200 kB (about 390 bytes a problem).
    (["--problems", "3000"], "r/per_problem.csv: writing failed: File too large"),
])
def test_a_failed_write_is_one_line_and_leaves_nothing_under_a_final_name(tmp_path, args, what):
    proc = subprocess.run([sys.executable, "-m", "cosim.cli", "run", str(SCENARIO), *args, "--out", "r", "--quiet"],
                          cwd=tmp_path, capture_output=True, text=True, preexec_fn=limit_file_size(200_000),
                          timeout=300)
    refused(proc, what)
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging left either


def run_state(folder):
    """The run a folder holds: its id, after checking every listed file is there, whole."""
    import hashlib

    manifest = json.loads((folder / "manifest.json").read_text())
    assert {p.name for p in folder.iterdir()} == set(manifest["files"]) | {"manifest.json"}
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == entry["sha256"], name
    return manifest["run_id"]


# Runs `cosim run` and, at the stage named, says so in a file and waits there to be killed:
# "running" once the first problem has finished (the worker simulating, rows being
# written), "publishing" with every file and the manifest staged, just before the run is
# swapped into its folder, "published" just after.
PAUSED_RUN = """
import pathlib, sys, time
from cosim.cli import _commands, main
from cosim.outputs import _safety

stage, marker = sys.argv[1], pathlib.Path(sys.argv[2])


def pause(where):
    marker.write_text(where)
    time.sleep(600)


bar = _commands.finished_bar
def paused_bar(*args):
    shown, progress = bar(*args)
    def first_then_pause(done):
        progress(done)
        if stage == "running" and done >= 1:
            pause("running")
    return shown, first_then_pause

exchange = _safety._exchange
def paused_exchange(staging, folder):
    if stage == "publishing":
        pause(str(staging))
    swapped = exchange(staging, folder)
    if stage == "published":
        pause(str(folder))
    return swapped

_commands.finished_bar = paused_bar
_safety._exchange = paused_exchange
sys.exit(main(sys.argv[3:]))
"""


def staged_run_ids(work):
    """The run ids of the staging folders beside the run folder (a staging folder is named
    after its command's process and its run)."""
    return {p.name.rsplit("-", 1)[1] for p in work.iterdir() if p.name.startswith(".r") and p.is_dir()}


@pytest.mark.parametrize("stage,how", [("running", signal.SIGKILL), ("running", signal.SIGTERM),
                                       ("publishing", signal.SIGKILL), ("published", signal.SIGKILL)])
def test_a_run_killed_at_each_stage_leaves_one_whole_run(tmp_path, stage, how):
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "paused_run.py").write_text(PAUSED_RUN)
    marker = tmp_path / "at_stage"
    args = ["run", str(SCENARIO), "--problems", "30", "--out", "r", "--vcd", "r/w.vcd", "--timeline", "r/t.json",
            "--quiet"]
    assert subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=work, capture_output=True,
                          timeout=300).returncode == 0
    previous = run_state(work / "r")
    proc = subprocess.Popen([sys.executable, str(tmp_path / "paused_run.py"), stage, str(marker), *args], cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120  # an event, bounded far above its normal time (a second or two)
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert marker.exists(), f"the run never reached {stage}: {proc.stderr.read() if proc.poll() else ''}"
        new = staged_run_ids(work) - {previous}
        assert len(new) == 1  # the killed run's own staging, beside the folder
        proc.send_signal(how)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    now = run_state(work / "r")  # whichever run the folder holds, it holds whole
    if stage == "published":
        # Swapped in: the folder holds the new run; the previous one waits in the staging
        # folder for the next run to remove it.
        [aside] = [p for p in work.iterdir() if p.name.startswith(".r")]
        assert now in new and json.loads((aside / "manifest.json").read_text())["run_id"] == previous
    else:
        assert now == previous  # killed before the swap: the previous run, as it was
    if how == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM and "terminated" in err
        assert staged_run_ids(work) == set()  # a command that unwinds removes what it staged
    assert subprocess.run([sys.executable, "-m", "cosim.cli", *args], cwd=work, capture_output=True,
                          timeout=300).returncode == 0
    assert run_state(work / "r") not in (previous, now)
    assert [p.name for p in work.iterdir()] == ["r"]  # no stale staging after the next run


def test_a_report_is_published_whole_and_never_over_other_files(tmp_path):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    refused(run_cli("report", "--problems", "2", "--out", "mine", "--quiet", cwd=tmp_path),
            "holds files that no cosim run wrote there")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]  # nothing staged, nothing begun


def test_sweep_outputs_are_checked_before_any_point_runs(tmp_path, trace):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "sweep.csv").mkdir()  # a folder where the table goes
    refused(run_cli("sweep", SCENARIO, "--trace", "t.jsonl", "--set", "pcie.bandwidth_gbps=4,8", "--out", "s",
                    cwd=tmp_path), "--out s/sweep.csv: is a folder")
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["sweep.csv"]  # no journal begun
