"""Every input of a command is kept from its outputs, not only the scenario and --trace:
the device, model and link YAMLs a scenario names, a role's profile CSV, a dataset
profile, the --policy file, and the files a run writes in its own folder. Each is refused
before any work, in one line with status 2, and every input stays byte for byte."""

import hashlib
import os

import pytest

from conftest import ROOT, run_cli

DATA = ROOT / "cosim" / "data"
INPUTS = ("dev.yaml", "model.yaml", "link.yaml", "prof.csv", "ds.yaml", "pol.py", "s.yaml")


@pytest.fixture
def inputs(tmp_path):
    """A scenario naming its own device, model, link and profile files, beside a dataset
    profile and a policy file."""
    (tmp_path / "dev.yaml").write_bytes((DATA / "devices" / "rtx3090.yaml").read_bytes())
    (tmp_path / "model.yaml").write_bytes((DATA / "models" / "qwen2.5-0.5b.yaml").read_bytes())
    (tmp_path / "link.yaml").write_bytes((DATA / "links" / "pcie_gen4_x16.yaml").read_bytes())
    (tmp_path / "ds.yaml").write_bytes((DATA / "profiles" / "gsm8k.yaml").read_bytes())
    (tmp_path / "prof.csv").write_text("phase,tokens,context,seconds\ndecode,1,0,0.020\ndecode,1,1000,0.021\n"
                                       "prefill,100,0,0.030\nprefill,200,0,0.040\n")
    (tmp_path / "pol.py").write_text("from cosim.live import Policy\n\n\nclass P(Policy):\n    pass\n")
    (tmp_path / "s.yaml").write_text("name: s\nsystem: heteroreason\ndraft: {device: u280, model: model.yaml}\n"
                                     "prm: {device: dev.yaml, link: link.yaml}\n"
                                     "target: {device: rtx3090, profile: prof.csv}\n")
    return tmp_path


def digests(folder):
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in INPUTS}


def refused(proc, message):
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("cosim: error: ") and message in proc.stderr, proc.stderr


RUN = ["run", "s.yaml", "--problems", "2", "--out", "o", "--quiet"]
SERVE = ["serve", "s.yaml", "--requests", "3", "--rate", "1", "--out", "o", "--quiet"]


@pytest.mark.parametrize("args,message", [
    (RUN + ["--timeline", "dev.yaml"], "--timeline dev.yaml: is the same file as "),
    (RUN + ["--timeline", "model.yaml"], "--timeline model.yaml: is the same file as "),
    (RUN + ["--timeline", "link.yaml"], "--timeline link.yaml: is the same file as "),
    (RUN + ["--timeline", "prof.csv"], "--timeline prof.csv: is the same file as "),
    (RUN + ["--timeline", "ds.yaml", "--profile", "ds.yaml"], "--timeline ds.yaml: is the same file as --profile"),
    (RUN + ["--timeline", "pol.py", "--policy", "pol.py:P"], "--timeline pol.py: is the same file as --policy"),
    (RUN + ["--timeline", "o/manifest.json"], "--timeline o/manifest.json: is the same file as --out "
                                              "o/manifest.json"),
    (SERVE + ["--timeline", "prof.csv"], "--timeline prof.csv: is the same file as "),
    (SERVE + ["--timeline", "o/manifest.json"], "is the same file as --out o/manifest.json"),
    (SERVE + ["--timeline", "ds.yaml", "--profile", "ds.yaml"], "is the same file as --profile"),
    (["trace", "gen", "--profile", "ds.yaml", "--problems", "2", "--out", "ds.yaml"],
     "--out ds.yaml: is the same file as --profile"),
    (["fit", "fpga", "prof.csv", "--model", "model.yaml", "--out", "model.yaml"],
     "--out model.yaml: is the same file as the model file model.yaml"),
    # Other spellings of the same file: a link to it, a path through another folder.
    (RUN + ["--timeline", "linked.yaml"], "--timeline linked.yaml: is the same file as "),
    (RUN + ["--timeline", "sub/../model.yaml"], "is the same file as "),
    (RUN + ["--timeline", "nosuch/../model.yaml"], "is the same file as "),
])
def test_an_output_naming_any_input_is_refused_before_any_work(inputs, args, message):
    (inputs / "sub").mkdir()
    os.symlink("dev.yaml", inputs / "linked.yaml")
    before = digests(inputs)
    refused(run_cli(*args, cwd=inputs, timeout=300), message)
    assert digests(inputs) == before
    assert not (inputs / "o").exists()
    assert not [p.name for p in inputs.iterdir() if p.name.startswith(".")]  # nothing staged either


def test_the_message_names_the_input_as_the_scenario_gives_it(inputs):
    proc = run_cli(*RUN, "--timeline", "link.yaml", cwd=inputs, timeout=300)
    refused(proc, "--timeline link.yaml: is the same file as ")
    assert "link.yaml, which the run reads" in proc.stderr


def test_a_run_folder_holding_an_input_is_refused(inputs):
    # The run replaces its whole folder: one that holds the scenario's profile would lose it.
    (inputs / "o").mkdir()
    os.replace(inputs / "prof.csv", inputs / "o" / "prof.csv")
    (inputs / "s.yaml").write_text((inputs / "s.yaml").read_text().replace("profile: prof.csv",
                                                                           "profile: o/prof.csv"))
    before = (inputs / "o" / "prof.csv").read_bytes()
    refused(run_cli(*RUN, cwd=inputs, timeout=300), "--out o: holds ")
    assert (inputs / "o" / "prof.csv").read_bytes() == before
    assert sorted(p.name for p in (inputs / "o").iterdir()) == ["prof.csv"]


@pytest.mark.parametrize("args,message", [
    (["--trace", "o/t.jsonl"], "--out o: holds o/t.jsonl, which the run reads"),
    (["--problems", "2", "--policy", "o/pol.py:P"], "--out o: holds o/pol.py, which the run reads"),
    (["--trace", "o/trace.jsonl"], "--out o/trace.jsonl: is the same file as --trace"),
])
def test_a_run_folder_holding_a_later_input_is_refused(inputs, args, message):
    assert run_cli("run", "s.yaml", "--problems", "2", "--out", "o", "--quiet", cwd=inputs, timeout=300).returncode == 0
    (inputs / "o" / "t.jsonl").write_bytes((inputs / "o" / "trace.jsonl").read_bytes())
    (inputs / "o" / "pol.py").write_bytes((inputs / "pol.py").read_bytes())
    before = {p.name: p.read_bytes() for p in (inputs / "o").iterdir()}
    refused(run_cli("run", "s.yaml", "--out", "o", "--quiet", *args, cwd=inputs, timeout=300), message)
    assert {p.name: p.read_bytes() for p in (inputs / "o").iterdir()} == before


def test_outputs_apart_from_every_input_still_run(inputs):
    before = digests(inputs)
    proc = run_cli(*RUN, "--timeline", "t.json", "--profile", "ds.yaml", cwd=inputs, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert digests(inputs) == before
    assert (inputs / "t.json").stat().st_size > 0 and (inputs / "o" / "manifest.json").exists()


def test_the_last_guard_refuses_a_write_over_a_file_read(tmp_path):
    # Under a command's record of what it read, no write replaces such a file, whichever
    # command forgot to check first.
    from cosim import ConfigError
    from cosim._inputs import read_text, recording
    from cosim.outputs._atomic import write_atomically

    path = tmp_path / "read.yaml"
    path.write_text("a: 1\n")
    with recording():
        read_text(path)
        with pytest.raises(ConfigError, match="read.yaml: is the same file as .*read.yaml, which the run reads"):
            write_atomically(tmp_path / "sub" / ".." / "read.yaml", "b: 2\n")
        write_atomically(tmp_path / "other.yaml", "b: 2\n")
    assert path.read_text() == "a: 1\n"
    write_atomically(path, "c: 3\n")  # outside a command's record, an ordinary write
    assert path.read_text() == "c: 3\n"
