"""A measured FPGA profile replaces the design's formula, and follows the clock when asked."""

import shutil

import pytest

import cosim
from cosim import ConfigError, standalone
from cosim.config.hardware import builtin_path

DECODE_ROWS = [("decode", 1, 0, 0.010), ("decode", 1, 1000, 0.012)]
PREFILL_ROWS = [("prefill", 10, 0, 0.030), ("prefill", 50, 0, 0.070)]


def write_csv(path, rows):
    path.write_text("phase,tokens,context,seconds\n" + "".join(f"{p},{n},{c},{s}\n" for p, n, c, s in rows))


@pytest.fixture
def measured_device(tmp_path):
    """A copy of the U280 device with a profile measured at 200 MHz, the CSV beside it."""
    def make(projection="linear", rows=DECODE_ROWS + PREFILL_ROWS, clock="200 MHz"):
        folder = tmp_path / "boards"
        folder.mkdir(exist_ok=True)
        write_csv(folder / "measured.csv", rows)
        text = builtin_path("device", "u280").read_text()
        text += f"profile:\n  file: measured.csv\n  measured_clock: {clock}\n  clock_projection: {projection}\n"
        device = folder / "u280_measured.yaml"
        device.write_text(text)
        return device
    return make


def per_token_ns(device, context, tokens, clock_mhz):
    result = standalone.fpga_decode(str(device), "qwen2.5-0.5b", context, tokens, clock_mhz=clock_mhz,
                                    record_tokens=True)
    ends = [0.0] + result.token_end_ns
    return [b - a for a, b in zip(ends, ends[1:])], result


def test_profile_replaces_the_formula_interpolating_in_context(measured_device, monkeypatch, tmp_path):
    device = measured_device()
    monkeypatch.chdir(tmp_path)  # the CSV is found beside the device file, not in the working folder
    times, result = per_token_ns(device, 500, 3, 200)
    # Linear between 10 ms at context 0 and 12 ms at context 1000.
    for i, t in enumerate(times):
        assert t == pytest.approx((0.010 + 0.002 * (500 + i) / 1000) * 1e9, rel=1e-9)
    assert result.bound == "profile"


def test_linear_projection_scales_by_the_measured_over_the_new_clock(measured_device):
    device = measured_device("linear")
    at200, _ = per_token_ns(device, 0, 2, 200)
    at300, _ = per_token_ns(device, 0, 2, 300)
    for a, b in zip(at200, at300):
        assert b == pytest.approx(a * 200 / 300, rel=1e-9)


def test_no_projection_keeps_the_measured_times_at_any_clock(measured_device):
    device = measured_device("none")
    at200, _ = per_token_ns(device, 0, 2, 200)
    at300, _ = per_token_ns(device, 0, 2, 300)
    assert at200 == pytest.approx(at300, rel=1e-12)


def test_prefill_rows_time_the_local_prefill(measured_device):
    device = measured_device("linear")
    result = standalone.fpga_run(str(device), "qwen2.5-0.5b", [("load", 0), ("prefill", 30)],
                                 {"accelerator.clock_mhz": 400})
    prefill = result.ops[1]
    # Between 30 ms at 10 tokens and 70 ms at 50 tokens: 50 ms at 30; measured at 200 MHz, run at 400.
    assert prefill["end_ns"] - prefill["start_ns"] == pytest.approx(0.050e9 * 200 / 400, rel=1e-9)


def test_a_profile_without_prefill_rows_leaves_the_prefill_to_the_formula(measured_device):
    device = measured_device(rows=DECODE_ROWS)
    plain = standalone.fpga_run("u280", "qwen2.5-0.5b", [("load", 0), ("prefill", 30)])
    measured = standalone.fpga_run(str(device), "qwen2.5-0.5b", [("load", 0), ("prefill", 30)])
    assert measured.ops[1]["end_ns"] - measured.ops[1]["start_ns"] == pytest.approx(
        plain.ops[1]["end_ns"] - plain.ops[1]["start_ns"], rel=1e-12)


def test_a_scenario_replays_with_the_profile(measured_device):
    device = measured_device("linear")
    trace = cosim.trace.Trace(cosim.trace.TraceHeader(), [
        cosim.trace.TrajectoryBuilder("p", 100).accept(20).build()])
    slow = cosim.simulate(cosim.scenario("heteroreason", 1, draft={"device": str(device)}), trace, activities=True)
    [draft] = [a for a in slow.activities if a.kind == "draft"]
    # 20 tokens from context 100: 10 ms + 2 us per context token each.
    expected = sum((0.010 + 0.002 * (100 + i) / 1000) * 1e9 for i in range(20))
    assert draft.end_ns - draft.start_ns == pytest.approx(expected, rel=1e-9)


def test_bad_profiles_name_the_device_file_and_field(measured_device, tmp_path):
    device = measured_device()
    (device.parent / "measured.csv").unlink()
    with pytest.raises(ConfigError, match=r"u280_measured\.yaml:\d+: .*measured\.csv: no such file"):
        cosim.load_device(str(device))
    device = measured_device(projection="quadratic")
    with pytest.raises(ConfigError, match=r"u280_measured\.yaml:\d+: profile.clock_projection: one of linear, "
                                          r"none, got 'quadratic'"):
        cosim.load_device(str(device))
    device = measured_device(rows=[("decode", 1, 0, -1.0)])
    with pytest.raises(ConfigError, match=r"u280_measured\.yaml:\d+: .*measured\.csv:2: seconds"):
        cosim.load_device(str(device))
    shutil.rmtree(device.parent)
