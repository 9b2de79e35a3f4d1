"""A journal's rows are checked when they are read back, by a sweep and by a sensitivity
analysis alike: a row that lacks its point's value or a figure, or holds text or a
negative number where a figure goes, is refused naming the journal and its line, and
never used; the journal is left as it was."""

import json

import pytest

import cosim
from conftest import SCENARIOS, run_cli
from cosim.uncertainty._sensitivity import sensitivity

U280 = str(SCENARIOS / "heteroreason-u280-200.yaml")
GRID = {"pcie.bandwidth_gbps": [4, 8]}


def damage(journal, line, change):
    """The journal with its row on ``line`` (1-based) changed by ``change(row)``."""
    lines = journal.read_text().splitlines()
    row = json.loads(lines[line - 1])
    change(row)
    lines[line - 1] = json.dumps(row)
    journal.write_text("\n".join(lines) + "\n")
    return journal.read_bytes()


def drop(name):
    return lambda row: row.pop(name)


def put(name, value):
    return lambda row: row.update({name: value})


CHANGES = [
    (drop("latency_s"), "lacks latency_s"),
    (put("latency_s", "fast"), 'latency_s: expected a number >= 0 (or null), got "fast"'),
    (put("latency_s", -1e300), "latency_s: expected a number >= 0 (or null), got -1e+300"),
    (put("latency_s", True), "latency_s: expected a number >= 0 (or null), got true"),
]


@pytest.fixture(scope="module")
def workload():
    return cosim.trace.generate("math500", 3, seed=2).in_memory()


@pytest.mark.parametrize("change,why", CHANGES + [
    (drop("pcie.bandwidth_gbps"), "lacks the point's value pcie.bandwidth_gbps"),
    (put("pcie.bandwidth_gbps", 16), "its values are not those of the point its _key names"),
    (lambda row: row.update(status="error", error=None), "an error row without its error text"),
], ids=["no-figure", "text", "-1e300", "a-boolean", "no-value", "another-value", "error-without-text"])
def test_a_sweep_refuses_a_damaged_row_naming_its_line(tmp_path, workload, change, why):
    out = tmp_path / "sweep"
    scn = cosim.load_scenario(U280)
    cosim.sweep(scn, workload, GRID, out=out)
    journal = out / "points.jsonl"
    damaged = damage(journal, 3, change)  # the second point's row
    table = (out / "sweep.csv").read_bytes()
    with pytest.raises(cosim.ConfigError) as caught:
        cosim.sweep(scn, workload, GRID, out=out)
    message = str(caught.value)
    assert message.startswith(f"{journal}:3: {why}") and "delete that line" in message and "\n" not in message
    assert journal.read_bytes() == damaged and (out / "sweep.csv").read_bytes() == table


def test_a_sweep_s_own_rows_read_back_whole(tmp_path, workload):
    """A rerun finds every row it wrote acceptable: the check refuses damage, not results."""
    out = tmp_path / "sweep"
    scn = cosim.load_scenario(U280)
    first = cosim.sweep(scn, workload, {"pcie.bandwidth_gbps": [4, 8], "serve.rate": [0.5]}, out=out)
    again = cosim.sweep(scn, workload, {"pcie.bandwidth_gbps": [4, 8], "serve.rate": [0.5]}, out=out)
    assert again.rows == first.rows and all(r["status"] == "ok" for r in again.rows)


def test_the_sweep_command_names_the_damaged_line_in_one_line(tmp_path):
    out = tmp_path / "sweep"
    args = ["sweep", U280, "--set", "pcie.bandwidth_gbps=4,8", "--problems", "2", "--quiet", "--out", out]
    assert run_cli(*args, cwd=tmp_path).returncode == 0
    journal = out / "points.jsonl"
    damaged = damage(journal, 2, put("energy_j", -1e300))
    proc = run_cli(*args, cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[0] == (f"cosim: error: {journal}:2: energy_j: expected a number >= 0 (or null), got -1e+300; "
                        f"delete that line to run its point again")
    assert journal.read_bytes() == damaged


OPTIONS = dict(problems=4, seed=3, method="morris", samples=4, ranges=["fpga.clock_mhz=150:300"],
               only=["fpga.clock_mhz,u280:accelerator.macs_per_cycle"])


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    """A finished analysis's folder and its journal's bytes."""
    out = tmp_path_factory.mktemp("sens")
    first = sensitivity(cosim.load_scenario(U280), "latency_s", out=out, **OPTIONS)
    return out, (out / "points.jsonl").read_bytes(), first


@pytest.mark.parametrize("change,why", CHANGES + [
    (drop("fpga.clock_mhz"), "lacks the point's value fpga.clock_mhz"),
    (put("fpga.clock_mhz", 1.0), "its values are not those of the point its _key names"),
], ids=["no-figure", "text", "-1e300", "a-boolean", "no-value", "another-value"])
def test_a_sensitivity_analysis_refuses_a_damaged_row_naming_its_line(tmp_path, analysed, change, why):
    out, kept, _ = analysed
    folder = tmp_path / "sens"
    folder.mkdir()
    journal = folder / "points.jsonl"
    journal.write_bytes(kept)
    damaged = damage(journal, 2, change)
    with pytest.raises(cosim.ConfigError) as caught:
        sensitivity(cosim.load_scenario(U280), "latency_s", out=folder, **OPTIONS)
    message = str(caught.value)
    assert message.startswith(f"{journal}:2: {why}") and "\n" not in message
    assert journal.read_bytes() == damaged


def test_a_sensitivity_rerun_reads_its_own_rows_back(tmp_path, analysed):
    out, kept, first = analysed
    folder = tmp_path / "again"
    folder.mkdir()
    (folder / "points.jsonl").write_bytes(kept)
    again = sensitivity(cosim.load_scenario(U280), "latency_s", out=folder, **OPTIONS)
    assert again.ranking == first.ranking and (folder / "points.jsonl").read_bytes() == kept  # nothing ran again
