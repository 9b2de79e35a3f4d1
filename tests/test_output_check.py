"""One output check, made before any work, by every command that writes a file: an --out
that is one of the command's inputs (by any spelling or link), lies in a folder it reads,
or cannot take a file is refused in one line naming --out and what the clashing file is,
with nothing written and every input as it was."""

import os
import shutil

import pytest

from conftest import ROOT, run_cli

PROFILE = ROOT / "cosim" / "data" / "profiles" / "gsm8k.yaml"


def tree(folder):
    """Every path under ``folder``: a file's bytes, a link's target, or its kind."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[path] = ("link", os.readlink(path))
        elif path.is_fifo():
            found[path] = "fifo"
        else:
            found[path] = "folder" if path.is_dir() else path.read_bytes()
    return found


@pytest.fixture
def inputs(tmp_path):
    """Input files and folders of the kinds the commands read (contents do not matter: the
    outputs are refused before any input is read past its name), and links to them."""
    shutil.copy(PROFILE, tmp_path / "prof.yaml")
    for name in ("t.jsonl", "log.jsonl", "rsd.jsonl", "m.csv", "config.json"):
        (tmp_path / name).write_text(f"{name}\n")
    (tmp_path / "c.yaml").write_text("draft: 1\nprm: 1\ntarget: 1\n")
    (tmp_path / "data.jsonl").write_text('{"question": "1+1?", "answer": "2"}\n')
    for folder in ("tok", "d", "tg", "p", "o", "s"):
        (tmp_path / folder).mkdir()
    (tmp_path / "prof-link.jsonl").symlink_to("prof.yaml")
    (tmp_path / "config-link.yaml").symlink_to("config.json")
    (tmp_path / "m-link.yaml").symlink_to("m.csv")
    (tmp_path / "o" / "plan.json").symlink_to("../c.yaml")
    (tmp_path / "o" / "points.jsonl").symlink_to("../t.jsonl")
    (tmp_path / "s" / "sweep.csv").symlink_to("../t.jsonl")
    os.mkfifo(tmp_path / "fifo.jsonl")
    return tmp_path


CASES = [
    (["trace", "gen", "--profile", "prof.yaml", "--out", "prof-link.jsonl"],
     "--out prof-link.jsonl: is the same file as --profile"),
    (["trace", "gen", "--profile", "gsm8k", "--out", "fifo.jsonl"], "--out fifo.jsonl: is a FIFO"),
    (["trace", "import", "log.jsonl", "--out", "./log.jsonl"],
     "--out ./log.jsonl: is the same file as the request log log.jsonl"),
    (["trace", "import-rsd", "rsd.jsonl", "--dataset", "x", "--out", "rsd.jsonl"],
     "--out rsd.jsonl: is the same file as the RSD outputs rsd.jsonl"),
    (["trace", "import-rsd", "rsd.jsonl", "--dataset", "x", "--tokenizer", "tok", "--out", "tok/t.jsonl"],
     "--out tok/t.jsonl: lies in --tokenizer tok, which the command reads"),
    (["model", "import", "config.json", "--out", "config-link.yaml"],
     "--out config-link.yaml: is the same file as the config.json config.json being imported"),
    (["fit", "gpu", "m.csv", "--model", "qwen2.5-math-7b", "--out", "m-link.yaml"],
     "--out m-link.yaml: is the same file as the fit's input profile CSV m.csv"),
    (["plan", "cluster-heteroreason-u280-200", "--rate", "1", "--slo", "30", "--costs", "c.yaml", "--out", "o"],
     "--out o/plan.json: is the same file as --costs"),
    (["sensitivity", "heteroreason-u280-200", "--trace", "t.jsonl", "--out", "o"],
     "--out o/points.jsonl: is the same file as --trace"),
    (["sweep", "heteroreason-u280-200", "--trace", "t.jsonl", "--set", "pcie.bandwidth_gbps=4", "--out", "s"],
     "--out s/sweep.csv: is the same file as --trace"),
    (["record", "--draft", "d", "--target", "tg", "--prm", "p", "--dataset", "data.jsonl", "--out", "d"],
     "--out d/trace.jsonl: lies in --draft d, which the command reads"),
]


@pytest.mark.parametrize("args,message", CASES, ids=[" ".join(args[:2]) for args, _ in CASES])
def test_an_out_that_is_an_input_is_refused_before_any_work(inputs, args, message):
    before = tree(inputs)
    done = run_cli(*args, cwd=inputs, timeout=300)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"cosim: error: {message}") and "Traceback" not in done.stderr, done.stderr
    assert done.stdout == ""  # no work began
    assert tree(inputs) == before  # nothing written, every input as it was


def test_a_run_folder_named_like_a_built_in_scenario_is_no_input(tmp_path):
    # The scenario is the built-in of that name, not a file in the folder the run replaces.
    done = run_cli("run", "heteroreason-u280-200", "--problems", "2", "--quiet", "--out", "heteroreason-u280-200",
                   cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "heteroreason-u280-200" / "summary.json").exists()
