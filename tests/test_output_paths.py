"""Output paths: a link given as an output is written through and stays a link; a run
folder that is (or holds) the working folder is refused before the run; what a killed run
staged, of every kind, is removed by the next run into the same place; and errors name the
path the user gave, never a hidden staging name."""

import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from conftest import run_cli

RUN = ["run", "heteroreason-u280-200", "--problems", "2", "--quiet"]


def hidden(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr, proc.stderr


def test_an_out_folder_that_is_a_link_is_written_through_twice(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink("real", tmp_path / "link")
    for _ in range(2):  # the second run replaces the first's files through the same link
        assert run_cli(*RUN, "--out", "link", cwd=tmp_path, timeout=300).returncode == 0
        assert os.readlink(tmp_path / "link") == "real"
        assert {"manifest.json", "summary.json", "per_problem.csv"} <= {p.name for p in (tmp_path / "real").iterdir()}
    os.symlink("elsewhere", tmp_path / "dangling")  # a link to nothing yet: the folder is made there
    assert run_cli(*RUN, "--out", "dangling", cwd=tmp_path, timeout=300).returncode == 0
    assert os.readlink(tmp_path / "dangling") == "elsewhere" and (tmp_path / "elsewhere" / "manifest.json").exists()
    assert hidden(tmp_path) == []


def test_file_outputs_that_are_links_stay_links(tmp_path):
    (tmp_path / "t.json").write_text("")
    os.symlink("t.json", tmp_path / "tl.json")
    os.symlink("w.vcd", tmp_path / "wl.vcd")
    proc = run_cli(*RUN, "--out", "r", "--timeline", "tl.json", "--vcd", "wl.vcd", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert os.readlink(tmp_path / "tl.json") == "t.json" and os.readlink(tmp_path / "wl.vcd") == "w.vcd"
    assert (tmp_path / "t.json").read_text().startswith(("[", "{"))
    assert b"$enddefinitions" in (tmp_path / "w.vcd").read_bytes()
    assert (tmp_path / "wl.gtkw").exists()  # the save file beside the name given
    assert hidden(tmp_path) == []


@pytest.mark.parametrize("out", [".", "..", "ABSOLUTE"])
def test_a_run_folder_holding_the_working_folder_is_refused_before_the_run(tmp_path, out):
    work = tmp_path / "work"
    work.mkdir()
    out = str(work) if out == "ABSOLUTE" else out
    refused(run_cli(*RUN, "--out", out, cwd=work, timeout=300), f"--out {out}: is the working folder or holds it")
    assert list(work.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    refused(run_cli("serve", "cluster-heteroreason-u280-200", "--requests", "2", "--rate", "1", "--out", out,
                    "--quiet", cwd=work, timeout=300), "is the working folder or holds it")
    assert list(work.iterdir()) == []


def test_what_a_killed_run_staged_is_removed_by_the_next_run(tmp_path):
    args = [sys.executable, "-m", "cosim.cli", "run", "heteroreason-u280-200", "--problems", "5000", "--out", "r",
            "--vcd", "w.vcd", "--timeline", "t.json", "--quiet"]
    proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # Wait for the event (the waveform being written under its hidden name), bounded generously.
        deadline = time.monotonic() + 240
        while not any("partial" in name for name in hidden(tmp_path)):
            assert proc.poll() is None, "the run ended before its waveform was staged"
            assert time.monotonic() < deadline, "the waveform was never staged"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=120)
    left = hidden(tmp_path)
    assert any("partial" in n for n in left) and any(n.startswith(".r.staging-") for n in left)
    # A killed atomic write's temporary file, as a killed sweep would leave it (the process is gone).
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=120)
    (tmp_path / f".t.json.tmp-{gone.pid}-abc123").write_text("half")
    proc = run_cli(*RUN, "--out", "r", "--vcd", "w.vcd", "--timeline", "t.json", cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert hidden(tmp_path) == [] and hidden(tmp_path / "r") == []
    assert {"w.vcd", "w.gtkw", "t.json", "r"} == {p.name for p in tmp_path.iterdir()}


def limit_file_size(limit):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail instead of killing
    return apply


@pytest.mark.parametrize("limit,args,named", [
    # 100 problems' waveform (about 3.7 kB each) is past 200 kB, their rows are not (about
    # 390 bytes each); 300 requests' rows are past 30 kB.
    (200_000, ["run", "heteroreason-u280-200", "--problems", "100", "--out", "r", "--vcd", "w.vcd"],
     "w.vcd: the waveform was not written whole"),
    (200_000, ["run", "heteroreason-u280-200", "--problems", "100", "--out", "r", "--vcd", "sub/w.vcd"],
     "sub/w.vcd: the waveform was not written whole"),
    (30_000, ["serve", "cluster-heteroreason-u280-200", "--requests", "300", "--rate", "1", "--out", "s"],
     "s/per_request.csv: writing failed"),
])
def test_a_failed_write_names_the_path_given(tmp_path, limit, args, named):
    (tmp_path / "sub").mkdir()
    proc = subprocess.run([sys.executable, "-m", "cosim.cli", *args, "--quiet"], cwd=tmp_path, capture_output=True,
                          text=True, preexec_fn=limit_file_size(limit), timeout=300)
    refused(proc, named)
    assert "staging" not in proc.stderr and "partial" not in proc.stderr
    assert hidden(tmp_path) == [] and hidden(tmp_path / "sub") == []
