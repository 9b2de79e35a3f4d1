"""What the command line prints says what it means: one device is "1 device", a plan's cost
has its unit, a text parameter's unit is not "1", and a misspelt scenario gets a suggestion."""

import re

from conftest import run_cli


def test_counts_of_one_are_singular(tmp_path):
    served = run_cli("serve", "heteroreason-u280-200", "--requests", "1", "--rate", "1", "--quiet", "--out", "s",
                     cwd=tmp_path)
    assert served.returncode == 0, served.stderr
    assert "serving 1 request from profile math500" in served.stdout
    for role in ("draft", "prm", "target"):  # one device in each pool of the single-request system
        assert re.search(rf"^  {role}\s+1 device, +utilisation", served.stdout, re.M), served.stdout
    ran = run_cli("run", "heteroreason-u280-200", "--problems", "1", "--quiet", "--out", "r", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert " on 1 problem from profile math500 " in ran.stdout
    for out in (served.stdout, ran.stdout):
        assert not re.search(r"\b1 (devices|problems|requests)\b", out)


def _table_row(out, first):
    return next(line.split() for line in out.splitlines() if line.split()[:1] == [first])


def test_a_plans_cost_carries_its_unit(tmp_path):
    args = ("plan", "cluster-heteroreason-u280-200", "--rate", "0.3", "--requests", "10", "--slo", "1000",
            "--draft", "1", "--prm", "1", "--target", "1", "--quiet")
    # By default a device costs its highest power: watts.
    watts = run_cli(*args, "--out", "w", cwd=tmp_path)
    assert watts.returncode == 0, watts.stderr
    assert re.search(r"^\s+scenario\s+draft\s+prm\s+target\s+GPUs\s+cost W\s+p99 s$", watts.stdout, re.M)
    # A --costs file's numbers are its own: 3 + 5 + 5 for one device of each pool.
    (tmp_path / "costs.yaml").write_text("draft: 3\nprm: 5\ntarget: 5\n")
    own = run_cli(*args, "--costs", "costs.yaml", "--out", "c", cwd=tmp_path)
    assert own.returncode == 0, own.stderr
    assert re.search(r"^\s+scenario\s+draft\s+prm\s+target\s+GPUs\s+cost\s+p99 s$", own.stdout, re.M)
    assert _table_row(own.stdout, "cluster-heteroreason-u280-200")[5] == "13"
    assert "(costs per device from --costs costs.yaml, in its units)" in own.stdout


def test_params_show_text_and_true_false_parameters_without_a_numeric_unit(tmp_path):
    pcie = run_cli("params", "pcie", cwd=tmp_path)
    units = {row.split()[0]: row.split()[1] for row in pcie.stdout.splitlines()[1:] if row.strip()}
    assert units == {"name": "text", "description": "text", "bandwidth_gbps": "GB/s", "efficiency": "1",
                     "latency_ns": "ns"}
    toggles = run_cli("params", "toggles", cwd=tmp_path)
    assert re.search(r"^  step_ahead\s+bool\s", toggles.stdout, re.M)
    assert re.search(r"^  step_ahead_depth\s+1\s", toggles.stdout, re.M)


def test_a_misspelt_scenario_gets_the_nearest_name(tmp_path):
    proc = run_cli("run", "heteroreason-u280-20", "--problems", "2", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "cosim: error: unknown scenario 'heteroreason-u280-20'; did you mean 'heteroreason-u280-200'?"]
