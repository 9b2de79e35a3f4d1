"""A run's other outputs (--vcd, its GTKWave file, --timeline) kept clear of its run folder
(--out), which a run puts in place whole: one that is the folder, a folder it goes in, a
file the run writes there or inside a folder within it is refused before any work, in one
line naming both options, with nothing written; a file directly in the folder under a name
of its own is published with the run."""

import json
import os

import pytest

from conftest import run_cli

RUN = ["run", "heteroreason-u280-200", "--problems", "2", "--quiet"]
SERVE = ["serve", "cluster-heteroreason-u280-200", "--rate", "2", "--requests", "4", "--quiet"]


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr, proc.stderr


def tree(folder):
    """Every path under ``folder`` with its bytes (None for a folder or a link's name)."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, folder)
            found[rel] = os.readlink(path) if os.path.islink(path) else (
                None if os.path.isdir(path) else open(path, "rb").read())
    return found


CLASHES = [
    (["--vcd", "w.vcd", "--out", "w.vcd"], "--vcd w.vcd: is the run folder (--out w.vcd); give another path"),
    (["--vcd", "w", "--out", "w.vcd"], "--vcd w.vcd: is the run folder (--out w.vcd)"),
    (["--timeline", "t.json", "--out", "t.json"], "--timeline t.json: is the run folder (--out t.json)"),
    (["--vcd", "w.vcd", "--out", "w.gtkw"],
     "--vcd w.vcd: its GTKWave file w.gtkw is the run folder (--out w.gtkw); give another path"),
    (["--timeline", "./t.json", "--out", "sub/../t.json"], "is the run folder (--out sub/../t.json)"),
    (["--timeline", "ABS/t.json", "--out", "t.json"], "is the run folder (--out t.json)"),
    (["--timeline", "t.json", "--out", "t.json/run"],
     "--timeline t.json: is a folder the run folder goes in (--out t.json/run)"),
    (["--vcd", "o/sub/w.vcd", "--out", "o"],
     "--vcd o/sub/w.vcd: lies in a folder inside the run folder, which the run replaces whole (--out o)"),
    (["--timeline", "o/summary.json", "--out", "o"], "--timeline o/summary.json: is the same file as --out o/summary.json"),
    (["--timeline", "o/manifest.json", "--out", "o"], "is the same file as --out o/manifest.json"),
]


@pytest.mark.parametrize("command", [RUN, SERVE], ids=["run", "serve"])
@pytest.mark.parametrize("args,message", CLASHES)
def test_an_output_clashing_with_the_run_folder_is_refused_before_any_work(tmp_path, command, args, message):
    (tmp_path / "sub").mkdir()
    args = [a.replace("ABS", str(tmp_path)) for a in args]
    message = message.replace("ABS", str(tmp_path))
    refused(run_cli(*command, *args, cwd=tmp_path, timeout=300), message)
    assert tree(tmp_path) == {"sub": None}  # nothing written, no folder made


def test_a_link_to_the_run_folder_and_an_existing_file_are_caught_and_left_alone(tmp_path):
    (tmp_path / "t.json").write_bytes(b"mine\n")
    os.symlink("real", tmp_path / "link")
    before = tree(tmp_path)
    refused(run_cli(*RUN, "--timeline", "real", "--out", "link", cwd=tmp_path),
            "--timeline real: is the run folder (--out link)")
    refused(run_cli(*RUN, "--timeline", "link", "--out", "real", cwd=tmp_path),
            "--timeline link: is the run folder (--out real)")
    # t.json is a file: the run folder cannot go in it, and it stays as it was
    refused(run_cli(*RUN, "--timeline", "t.json", "--out", "t.json/run", cwd=tmp_path), "--out t.json/run")
    assert tree(tmp_path) == before


def test_an_earlier_run_is_left_whole_when_a_clash_is_refused(tmp_path):
    assert run_cli(*RUN, "--out", "o", cwd=tmp_path, timeout=300).returncode == 0
    before = tree(tmp_path)
    for args, message in [(["--timeline", "o/per_problem.csv"], "is the same file as --out o/per_problem.csv"),
                          (["--vcd", "o/sub/w.vcd"], "lies in a folder inside the run folder"),
                          (["--timeline", "o"], "--timeline o: is a folder")]:
        refused(run_cli(*RUN, "--out", "o", *args, cwd=tmp_path), message)
    assert tree(tmp_path) == before


@pytest.mark.parametrize("command", [RUN, SERVE], ids=["run", "serve"])
def test_extra_outputs_directly_in_the_run_folder_are_published_with_it(tmp_path, command):
    for _ in range(2):  # the second run replaces the first, extra files included
        proc = run_cli(*command, "--out", "o", "--vcd", "o/w.vcd", "--timeline", "o/t.json", cwd=tmp_path,
                       timeout=300)
        assert proc.returncode == 0, proc.stderr
        written = {p.name for p in (tmp_path / "o").iterdir()}
        assert {"w.vcd", "w.gtkw", "t.json", "summary.json", "manifest.json"} <= written
        assert {"w.vcd", "w.gtkw", "t.json"} <= set(json.loads((tmp_path / "o" / "manifest.json").read_text())["files"])
        assert b"$enddefinitions" in (tmp_path / "o" / "w.vcd").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]  # nothing staged left beside it
