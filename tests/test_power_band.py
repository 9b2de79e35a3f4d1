"""The power model's band of an energy figure: every ranged power parameter at its low end,
then at its high end. Checked against the same values set by hand, against random points
inside the ranges (none may leave the band: the claim that lets two runs bound them all),
and against the timing, which no power parameter may move."""

import random

import pytest
import yaml

from cosim import trace as traces
from cosim.config import hardware
from cosim.config.scenario import load_scenario
from cosim.engine._workflow import simulate
from cosim.uncertainty._power_band import band, power_ends, power_factors
from conftest import run_cli


def ranged_power(device):
    """(name, low, high) of each power value of a built-in device file with a declared range,
    read from the file here."""
    data = yaml.safe_load(hardware.builtin_path("device", device).read_text())["power"]
    out = []
    for name, raw in data.items():
        if isinstance(raw, dict) and "range" in raw:
            low, high = (float(str(v).split()[0]) for v in raw["range"])
            # The file's stems with their canonical units (the design model's energies in pJ).
            canonical = {"mac_energy": "mac_energy_pj", "memory_energy": "memory_energy_pj_per_bit"}
            out.append((canonical.get(name, name if name.endswith("_load") else f"{name}_w"), low, high))
    return out


@pytest.fixture(scope="module")
def workload():
    return traces.generate(traces.load_profile("math500"), 12, 3, backtracking=True, config=1).in_memory()


def energy(scn, trace):
    return simulate(scn, trace).summary["energy_j_per_token"]


@pytest.mark.parametrize("name,devices", [
    ("heteroreason-u280-200", {"draft": "u280", "prm": "rtx3090", "target": "rtx3090"}),
    ("heteroreason-qwen3-32b-tp2", {"draft": "u280", "prm": "h100-sxm", "target": "h100-sxm"}),
])
def test_the_ends_are_the_files_ranges_set_by_hand(name, devices, workload):
    scn = load_scenario(name, 1)
    low, high = power_ends(scn)
    by_hand = {}
    for end, index in (("low", 1), ("high", 2)):
        values = {}
        for role, device in devices.items():
            for entry in ranged_power(device):
                values[f"{role}.device.power.{entry[0]}"] = entry[index]
        by_hand[end] = scn.with_values(values)
    assert energy(low, workload) == energy(by_hand["low"], workload)
    assert energy(high, workload) == energy(by_hand["high"], workload)
    found = band(scn, lambda s: simulate(s, workload), lambda r: r.summary["energy_j_per_token"])
    assert found == (energy(by_hand["low"], workload), energy(by_hand["high"], workload))
    assert found[0] < energy(scn, workload) < found[1]


@pytest.mark.parametrize("name", ["heteroreason-v80", "heteroreason-qwen3-32b-tp2"])
def test_no_point_inside_the_ranges_leaves_the_band_and_none_moves_the_timing(name, workload):
    # The design model (the V80's idle and energies), state powers (the RTX 3090) and the load
    # model (the H100's idle, limit and loads): each random point of the box lands inside the
    # band its two ends give.
    scn = load_scenario(name, 1)
    chosen = power_factors(scn)
    low, high = band(scn, lambda s: simulate(s, workload), lambda r: r.summary["energy_j_per_token"])
    nominal = simulate(scn, workload)
    draw = random.Random(7)
    for _ in range(4):
        values = {}
        for f in chosen:
            x = draw.uniform(f.low, f.high)
            values.update({path: x for path in f.paths})
        point = simulate(scn.with_values(values), workload)
        assert low <= point.summary["energy_j_per_token"] <= high
        assert point.summary["latency_s"] == nominal.summary["latency_s"]


def test_a_scenario_with_no_ranged_power_has_no_band(workload, tmp_path):
    # The FlexLLM U280 board's power comes from a log, with its decode power's range; with
    # that range gone and every GPU's too, nothing is left to move.
    scn = load_scenario("heteroreason-u280-200", 1)
    fixed = scn
    for f in power_factors(scn):
        for path in f.paths:
            fixed = fixed.with_value(path, f.nominal)  # a value given plainly carries no range
    assert power_factors(fixed) == []
    assert power_ends(fixed) is None
    assert band(fixed, lambda s: simulate(s, workload), lambda r: 0.0) is None


def test_serve_prints_and_writes_the_band(tmp_path):
    out = tmp_path / "s"
    done = run_cli("serve", "heteroreason-u280-200", "--requests", "40", "--rate", "1", "--out", out, "--quiet",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = yaml.safe_load((out / "summary.json").read_text())
    low, high = summary["power_band"]["energy_j_per_token"]
    assert low < summary["energy_j_per_token"] < high
    assert f"power model's band {low:.3f} to {high:.3f}" in done.stdout
    skipped = run_cli("serve", "heteroreason-u280-200", "--requests", "40", "--rate", "1", "--out", tmp_path / "n",
                      "--quiet", "--no-power-band", cwd=tmp_path)
    assert skipped.returncode == 0 and "band" not in skipped.stdout
    assert yaml.safe_load((tmp_path / "n" / "summary.json").read_text())["power_band"]["energy_j_per_token"] is None
