"""Plausible ranges on estimates: every shipped estimate declares one, a declared range is
checked as the file is read (it holds the value, low below high, finite, in the value's
unit and rule), and each bad range is one line naming the file, line and parameter."""

import dataclasses
import itertools
import re

import pytest

import cosim
from cosim.schema import _params
from cosim.schema._params import param
from cosim.errors import ConfigError
from cosim.trace import DatasetProfile, builtin_profiles, load_profile
from cosim.uncertainty._ranges import cited_values, declaration_problems, range_problems


def test_every_shipped_estimate_declares_a_plausible_range():
    problems = range_problems()
    assert not problems, "\n" + "\n".join(problems)


def test_the_ranges_are_read_in_the_values_unit():
    gpu = cosim.load_device("rtx3090").gpu
    cited = _params.citations(gpu)
    assert cited["request_overhead_ns"] == _params.Cited("estimate", 15e6, 50e6)  # [15 ms, 50 ms]
    assert cited["memory_bandwidth_gbps"].kind == "source" and cited["memory_bandwidth_gbps"].range is None
    link = _params.citations(cosim.load_link("pcie_gen3_x16"))
    assert link["latency_ns"].range == (500.0, 5000.0)  # [0.5 us, 5 us]
    # A sourced value may declare its measured spread too.
    assert _params.citations(cosim.load_device("rtx3090").power)["idle_w"] == _params.Cited("source", 16.0, 30.0)


def test_a_value_changed_in_a_scenario_loses_the_files_range():
    scn = cosim.load_scenario("heteroreason-u280-200")
    assert "macs_per_cycle" in _params.citations(scn.draft.device.accelerator)
    changed = scn.with_value("fpga.macs_per_cycle", 320)
    assert "macs_per_cycle" not in _params.citations(changed.draft.device.accelerator)
    # The scenario's own clock override (a plain value) is not the device file's estimate.
    assert "clock_mhz" not in _params.citations(scn.draft.device.accelerator)


def test_an_override_may_carry_its_own_range():
    clock = {"value": "250 MHz", "estimate": "a timing-closure guess", "range": ["200 MHz", "300 MHz"]}
    scn = cosim.scenario("heteroreason", 1, draft={"device": "u280", "overrides": {"accelerator.clock": clock}})
    assert _params.citations(scn.draft.device.accelerator)["clock_mhz"] == _params.Cited("estimate", 200.0, 300.0)


def _device_file(tmp_path, line):
    text = cosim.hardware.builtin_path("device", "rtx3090").read_text()
    text = re.sub(r"  request_overhead: .*\n", f"  request_overhead: {line}\n", text)
    path = tmp_path / "gpu.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("given,message", [
    ('{value: 30 ms, estimate: "x", range: [40 ms, 60 ms]}', "[4e+07, 6e+07] does not contain the value 3e+07"),
    ('{value: 30 ms, estimate: "x", range: [60 ms, 15 ms]}', "reversed: [6e+07, 1.5e+07]; give [low, high]"),
    ('{value: 30 ms, estimate: "x", range: [.nan, 60 ms]}', "must be a finite number"),
    ('{value: 30 ms, estimate: "x", range: [nan ms, 60 ms]}', "request_overhead.range[0]"),
    ('{value: 30 ms, estimate: "x", range: [10, 60]}', "missing unit in 10"),
    ('{value: 30 ms, estimate: "x", range: [30 ms, 30 ms]}', "is one value; a range needs low < high"),
    ('{value: 30 ms, estimate: "x", range: [-1 ms, 60 ms]}', "must be >= 0, as request_overhead_ns itself"),
    ('{value: 30 ms, estimate: "x", range: 30 ms}', "expected [low, high] in the value's unit"),
    ('{value: 30 ms, range: [15 ms, 50 ms]}', "needs a 'source' or an 'estimate' note"),
])
def test_a_bad_range_is_one_line_naming_file_line_and_parameter(tmp_path, given, message):
    path = _device_file(tmp_path, given)
    with pytest.raises(ConfigError) as caught:
        cosim.load_device(str(path))
    text = str(caught.value)
    assert "\n" not in text and message in text
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if l.startswith("  request_overhead:"))
    assert text.startswith(f"{path}:{line}: gpu.request_overhead")


def test_a_range_on_text_or_a_missing_parameter_is_refused(tmp_path):
    text = cosim.hardware.builtin_path("link", "pcie_gen3_x16").read_text()
    path = tmp_path / "link.yaml"
    path.write_text(text.replace("name: PCIe Gen3 x16", 'name: {value: PCIe Gen3 x16, estimate: "x", range: [1, 2]}'))
    with pytest.raises(ConfigError, match=r"link.yaml:\d+: name.range: a range needs a number; name is text"):
        cosim.load_link(str(path))
    path.write_text(text + 'latency_jitter: {value: 1 us, estimate: "x", range: [0 us, 2 us]}\n')
    with pytest.raises(ConfigError, match=r"link.yaml:\d+: latency_jitter: unknown parameter"):
        cosim.load_link(str(path))


def test_the_check_names_an_estimate_without_a_range_in_a_file(tmp_path):
    from cosim.uncertainty import _ranges

    path = _device_file(tmp_path, '{value: 30 ms, estimate: "no range given"}')
    device = cosim.load_device(str(path))
    found = [(p, o, n, c) for p, o, n, c in cited_values(device) if c.kind == "estimate" and c.range is None]
    assert [p for p, *_ in found] == ["gpu.request_overhead_ns"]
    place = _params.origin(found[0][1], found[0][2])
    assert _ranges.missing_range(place).startswith(f"{path}:")
    assert "add range: [LOW, HIGH] beside its value" in _ranges.missing_range(place)


def test_the_check_names_a_bad_declaration():
    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Fake:
        plain: int = param("no note", default=3)
        unranged: int = param("an estimate", default=64, note="estimate: a guess")
        reversed_: int = param("reversed", default=64, note="estimate: a guess", range=(128, 32))
        outside: float = param("outside", default=0.5, rule="fraction", note="estimate: a guess", range=(0.6, 0.9))
        beyond_rule: float = param("beyond", default=0.5, rule="fraction", note="estimate: a guess", range=(0.2, 1.5))
        not_finite: float = param("nan", default=0.5, note="estimate: a guess", range=(float("nan"), 1.0))
        ranged: int = param("fine", default=64, note="estimate: a guess", range=(32, 128))

    problems = declaration_problems([Fake])
    by_name = {re.search(r"Fake\.(\w+)", p).group(1): p for p in problems}
    assert set(by_name) == {"unranged", "reversed_", "outside", "beyond_rule", "not_finite"}
    assert "add range=(LOW, HIGH) to its declaration" in by_name["unranged"]
    assert "reversed or empty" in by_name["reversed_"]
    assert "does not contain the default 0.5" in by_name["outside"]
    assert "breaks the parameter's rule" in by_name["beyond_rule"]
    assert "is not finite" in by_name["not_finite"]
    assert all(re.match(r".*test_estimate_ranges\.py:\d+: Fake\.", p) for p in problems)


@pytest.mark.parametrize("name", builtin_profiles())
def test_every_corner_of_a_profiles_ranges_passes_its_own_checks(name):
    """The profile's checks bound the draft reject rate (under 0.3 at threshold 0.7); the draft's
    good-step probability and the PRM's score distributions set it, and any combination of
    their declared ends must stay a valid profile, as sensitivity analysis draws them."""
    profile = load_profile(name)
    cited = _params.citations(profile)
    names = [n for n in ("draft_good_step_probability", "prm_good_logit_mean", "prm_good_logit_sigma",
                         "prm_bad_logit_mean", "prm_bad_logit_sigma") if n in cited and cited[n].range]
    assert "draft_good_step_probability" in names
    for corner in itertools.product(*(cited[n].range for n in names)):
        varied = dataclasses.replace(profile, **dict(zip(names, corner)))
        varied.check(lambda field: field)


def test_cosim_params_shows_a_defaults_range(capsys):
    from cosim.cli import main

    assert main(["params", "batching"]) == 0
    assert "plausible range 32 to 128" in capsys.readouterr().out
    assert isinstance(DatasetProfile, type)
