"""`cosim run --set`: values as `serve` and `sweep` take them, and a role's file swapped
(`target.device=FILE`, `target.model=FILE`, `target.profile=DIR`...) exactly as a
scenario file naming it there would, each file checked as an input."""

import shutil

import conftest
import pytest

from conftest import ROOT, SCENARIOS, run_cli

PROFILE = ROOT / "cosim" / "data" / "validation" / "rtx4090-llama-3.1-8b" / "profile"
MODELS = ROOT / "cosim" / "data" / "models"


def _run(tmp_path, scenario, out, *sets):
    args = [a for s in sets for a in ("--set", s)]
    return run_cli("run", scenario, "--problems", "5", "--quiet", "--out", out, *args, cwd=tmp_path)


def test_set_on_run_is_the_scenario_file_with_that_value(tmp_path):
    # heteroreason-u280-300 is heteroreason-u280-200's file with the clock at 300 MHz.
    given = _run(tmp_path, "heteroreason-u280-200", "given", "fpga.clock=300 MHz")
    named = run_cli("run", "heteroreason-u280-300", "--problems", "5", "--quiet", "--out", "named", cwd=tmp_path)
    plain = _run(tmp_path, "heteroreason-u280-200", "plain")
    for proc in (given, named, plain):
        assert proc.returncode == 0, proc.stderr
    rows = {name: (tmp_path / name / "per_problem.csv").read_text() for name in ("given", "named", "plain")}
    assert rows["given"] == rows["named"] and rows["given"] != rows["plain"]


@pytest.mark.skipif(not PROFILE.is_dir(), reason="the shipped operator profile")
def test_role_files_set_on_the_command_line_run_as_the_scenario_file_naming_them(tmp_path):
    # The reference: a scenario file naming the device, the model and the profile folder.
    (tmp_path / "named.yaml").write_text(
        "system: autoregressive\nname: target-alone\ntarget:\n  device: rtx4090\n  model: llama-3.1-8b\n"
        f"  profile: {PROFILE}\n  overrides:\n    gpu.kv_reserve_tokens: 8192\n")
    shutil.copy(MODELS / "llama-3.1-8b.yaml", tmp_path / "mine.yaml")  # a model file of the user's
    named = run_cli("run", "named.yaml", "--problems", "5", "--quiet", "--out", "named", cwd=tmp_path)
    swapped = _run(tmp_path, "target-alone", "swapped", "target.device=rtx4090", "target.model=mine.yaml",
                   f"target.profile={PROFILE}", "target.device.gpu.kv_reserve_tokens=8192")
    unprofiled = _run(tmp_path, "target-alone", "unprofiled", "target.device=rtx4090", "target.model=mine.yaml",
                      "target.device.gpu.kv_reserve_tokens=8192")
    for proc in (named, swapped, unprofiled):
        assert proc.returncode == 0, proc.stderr
    rows = {name: (tmp_path / name / "per_problem.csv").read_text() for name in ("named", "swapped", "unprofiled")}
    assert rows["swapped"] == rows["named"]
    assert rows["unprofiled"] != rows["named"]  # the profile, not the roofline, timed the swapped run


def one_line_error(proc):
    """The error's line without its prefix."""
    return conftest.one_line_error(proc)[len(conftest.ERROR):]


def test_a_swapped_file_is_checked_as_the_scenario_files_own(tmp_path):
    bad = (MODELS / "qwen2.5-math-7b.yaml").read_text().splitlines()
    line = next(i for i, text in enumerate(bad) if text.startswith("layers:"))
    bad[line] = "layers: -3"
    (tmp_path / "bad.yaml").write_text("\n".join(bad) + "\n")
    message = one_line_error(_run(tmp_path, "heteroreason-u280-200", "r", "target.model=bad.yaml"))
    assert message == f"--set target.model=bad.yaml: bad.yaml:{line + 1}: layers: must be > 0, got -3"
    message = one_line_error(_run(tmp_path, "heteroreason-u280-200", "r", "prm.device=u280"))
    assert message == "--set prm.device=u280: the prm runs on a GPU, not on U280"
    (tmp_path / "empty").mkdir()
    message = one_line_error(_run(tmp_path, "target-alone", "r", "target.profile=empty"))
    assert message.startswith("--set target.profile=empty: ") and "not an operator profile" in message
    message = one_line_error(_run(tmp_path, "heteroreason-u280-200", "r", "target.model=bad.yaml",
                                  "target.model=bad.yaml"))
    assert message == "--set target.model: given twice"


def test_a_swapped_file_is_an_input_no_output_may_replace(tmp_path):
    shutil.copy(MODELS / "qwen2.5-math-7b.yaml", tmp_path / "model.yaml")
    before = (tmp_path / "model.yaml").read_text()
    proc = run_cli("run", "heteroreason-u280-200", "--problems", "2", "--quiet", "--out", "r",
                   "--set", "target.model=model.yaml", "--timeline", "model.yaml", cwd=tmp_path)
    message = one_line_error(proc)
    assert message.startswith("--timeline model.yaml: is the same file as model.yaml")
    assert (tmp_path / "model.yaml").read_text() == before and not (tmp_path / "r").exists()
