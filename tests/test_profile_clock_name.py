"""A device profile's clock is `measured_clock` (the kernel clock of the measurement), apart
from the accelerator's `clock` (the clock the design runs at); the old name still loads."""

import json
import warnings

import pytest
import yaml

import cosim
from cosim import ConfigError, standalone
from cosim.config.hardware import builtin_path

from conftest import run_cli

# Measured at 150 MHz: 10 ms a token at context 0, 12 ms at 1000; a 30-token prefill
# between 30 ms at 10 tokens and 70 ms at 50 tokens.
CSV = "phase,tokens,context,seconds\ndecode,1,0,0.010\ndecode,1,1000,0.012\nprefill,10,0,0.030\nprefill,50,0,0.070\n"


def device_file(tmp_path, clock_lines):
    """A copy of the U280 device with a profile whose clock is given by ``clock_lines``;
    the file, and the line of each of those."""
    folder = tmp_path / "boards"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "measured.csv").write_text(CSV)
    text = builtin_path("device", "u280").read_text() + "profile:\n  file: measured.csv\n"
    text += "".join(f"  {line}\n" for line in clock_lines) + "  clock_projection: linear\n"
    path = folder / "u280_measured.yaml"
    path.write_text(text)
    lines = text.splitlines()
    return path, [lines.index(f"  {line}") + 1 for line in clock_lines]


def decode_ns(device, clock_mhz):
    result = standalone.fpga_decode(str(device), "qwen2.5-0.5b", 500, 3, clock_mhz=clock_mhz, record_tokens=True)
    ends = [0.0] + result.token_end_ns
    return [b - a for a, b in zip(ends, ends[1:])]


def prefill_ns(device, clock_mhz):
    op = standalone.fpga_run(str(device), "qwen2.5-0.5b", [("load", 0), ("prefill", 30)],
                             {"accelerator.clock_mhz": clock_mhz}).ops[1]
    return op["end_ns"] - op["start_ns"]


def test_measured_clock_projects_times_by_measured_over_clock(tmp_path):
    device, _ = device_file(tmp_path, ["measured_clock: 150 MHz"])
    assert cosim.load_device(str(device)).profile.measured_clock_mhz == 150.0
    # Linear projection, worked by hand: the measured time x 150 / the clock it runs at.
    for i, t in enumerate(decode_ns(device, 300)):
        assert t == pytest.approx((0.010 + 0.002 * (500 + i) / 1000) * 1e9 * 150 / 300, rel=1e-9)
    assert prefill_ns(device, 600) == pytest.approx(0.050e9 * 150 / 600, rel=1e-9)


@pytest.mark.parametrize("given", ["measured_clock_mhz: 150", "measured_clock: 0.15 GHz",
                                   "measured_clock: 150000 kHz"])
def test_the_unit_comes_from_the_name(tmp_path, given):
    device, _ = device_file(tmp_path, [given])
    assert cosim.load_device(str(device)).profile.measured_clock_mhz == pytest.approx(150.0, rel=1e-12)


def test_a_bare_number_under_the_stem_is_a_missing_unit(tmp_path):
    device, [line] = device_file(tmp_path, ["measured_clock: 150"])
    with pytest.raises(ConfigError, match=rf"u280_measured\.yaml:{line}: profile\.measured_clock: missing unit "
                                          rf"in 150; .* or give the number under 'measured_clock_mhz'"):
        cosim.load_device(str(device))


@pytest.mark.parametrize("old, new", [("clock: 150 MHz", "measured_clock"),
                                      ("clock_mhz: 150", "measured_clock_mhz")])
def test_the_old_name_loads_with_a_deprecation_warning_naming_file_and_line(tmp_path, old, new):
    device, [line] = device_file(tmp_path, [old])
    with pytest.warns(DeprecationWarning) as caught:
        loaded = cosim.load_device(str(device))
    [warning] = caught.list
    text = str(warning.message)
    assert text == (f"{device}:{line}: profile.{old.split(':')[0]}: deprecated name; write {new} "
                    f"(the clock the profile was measured at)")
    assert "\n" not in text and warning.filename == __file__  # it points at the caller
    assert loaded.profile.measured_clock_mhz == 150.0
    with pytest.warns(DeprecationWarning):
        old_decode, old_prefill = decode_ns(device, 300), prefill_ns(device, 600)
    new_device, _ = device_file(tmp_path / "new", ["measured_clock: 150 MHz"])
    assert old_decode == decode_ns(new_device, 300) and old_prefill == prefill_ns(new_device, 600)


def test_the_warning_points_at_the_caller_of_a_scenario_too(tmp_path):
    device, [line] = device_file(tmp_path, ["clock: 150 MHz"])
    with pytest.warns(DeprecationWarning, match=rf"u280_measured\.yaml:{line}: profile\.clock: ") as caught:
        scn = cosim.scenario("heteroreason", 1, draft={"device": str(device)})
    assert [w.filename for w in caught.list] == [__file__]
    assert scn.draft.device.profile.measured_clock_mhz == 150.0


@pytest.mark.parametrize("keys", [["clock: 150 MHz", "measured_clock: 150 MHz"],
                                  ["measured_clock_mhz: 150", "clock_mhz: 150"],
                                  ["clock: 150 MHz", "measured_clock_mhz: 150"]])
def test_old_and_new_names_together_are_an_error_naming_file_and_line(tmp_path, keys):
    device, lines = device_file(tmp_path, keys)
    old = next(i for i, k in enumerate(keys) if k.startswith("clock"))
    new = keys[1 - old].split(":")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning before the error
        with pytest.raises(ConfigError, match=rf"^{device}:{lines[old]}: profile\.{keys[old].split(':')[0]}: the "
                                              rf"old name of profile\.{new}, which is also given; keep {new} only$"):
            cosim.load_device(str(device))


def test_the_command_line_warns_on_the_old_name_and_refuses_both(tmp_path):
    device, [line] = device_file(tmp_path, ["clock: 150 MHz"])
    (tmp_path / "s.yaml").write_text("system: heteroreason\ndraft: {device: boards/u280_measured.yaml}\n")
    old = run_cli("run", "s.yaml", "--problems", "1", "--quiet", "--out", "run_old", cwd=tmp_path, timeout=300)
    assert old.returncode == 0, old.stderr
    assert f"u280_measured.yaml:{line}: profile.clock: deprecated name; write measured_clock" in old.stderr
    resolved = yaml.safe_load((tmp_path / "run_old" / "scenario.resolved.yaml").read_text())
    assert resolved["draft"]["device"]["profile"] == {"file": str(device.parent / "measured.csv"),
                                                      "measured_clock_mhz": 150.0, "clock_projection": "linear"}
    new_device, _ = device_file(tmp_path / "new", ["measured_clock: 150 MHz"])
    (tmp_path / "n.yaml").write_text(f"system: heteroreason\ndraft: {{device: {new_device}}}\n")
    new = run_cli("run", "n.yaml", "--problems", "1", "--quiet", "--out", "run_new", cwd=tmp_path, timeout=300)
    assert new.returncode == 0 and "DeprecationWarning" not in new.stderr, new.stderr
    summary = [json.loads((tmp_path / out / "summary.json").read_text()) for out in ("run_old", "run_new")]
    assert summary[0] == summary[1]

    both, [clock, _] = device_file(tmp_path / "both", ["clock: 150 MHz", "measured_clock: 150 MHz"])
    (tmp_path / "b.yaml").write_text(f"system: heteroreason\ndraft: {{device: {both}}}\n")
    proc = run_cli("run", "b.yaml", "--problems", "1", "--quiet", "--out", "run_both", cwd=tmp_path, timeout=300)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("cosim: error: b.yaml:2: draft.device: ")
    assert proc.stderr.strip().endswith(f"{both}:{clock}: profile.clock: the old name of profile.measured_clock, "
                                        f"which is also given; keep measured_clock only")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "run_both").exists()


def test_an_inline_device_written_with_the_old_name_loads_naming_the_scenario_line(tmp_path):
    # A scenario.resolved.yaml written before the rename holds the device inline.
    device, _ = device_file(tmp_path, ["measured_clock: 150 MHz"])
    inline = yaml.safe_load(builtin_path("device", "u280").read_text())
    inline["profile"] = {"file": str(device.parent / "measured.csv"), "clock_mhz": 150}
    written = tmp_path / "s.yaml"
    written.write_text(yaml.safe_dump({"system": "heteroreason", "draft": {"device": inline}}, sort_keys=False))
    line = written.read_text().splitlines().index("      clock_mhz: 150") + 1
    with pytest.warns(DeprecationWarning) as caught:
        scn = cosim.load_scenario(written)
    assert [str(w.message) for w in caught.list] == [
        f"{written}:{line}: draft.device.profile.clock_mhz: deprecated name; write measured_clock_mhz (the clock "
        f"the profile was measured at)"]
    assert [w.filename for w in caught.list] == [__file__]
    assert scn.draft.device.profile.measured_clock_mhz == 150.0
