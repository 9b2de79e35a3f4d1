"""The GTKWave save file written beside every VCD, checked against the VCD itself and
against GTKWave's own tools."""

import re
import shutil
import subprocess

import pytest

import cosim
from cosim import standalone
from cosim.outputs._gtkwave import filter_file
from test_waveforms import read_vcd


@pytest.fixture(scope="module")
def run_vcd(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gtkw")
    trace = cosim.trace.generate("math500", 3, seed=1)
    result = cosim.simulate(cosim.scenario("heteroreason", 1), trace, vcd=folder / "run.vcd")
    return folder / "run.vcd", folder / "run.gtkw", result


def declared_widths(vcd):
    """{scope.name: width} from the VCD header, below SystemC's top scope."""
    widths, scopes = {}, []
    for line in vcd.read_text().split("$enddefinitions")[0].splitlines():
        words = line.split()
        if words[:2] == ["$scope", "module"]:
            scopes.append(words[2])
        elif words[:1] == ["$upscope"]:
            scopes.pop()
        elif words[:1] == ["$var"]:
            widths[".".join(scopes[1:] + [words[4]])] = int(words[2])
    return widths


def test_the_save_file_names_only_signals_the_vcd_has(run_vcd):
    vcd, gtkw, _ = run_vcd
    text = gtkw.read_text()
    assert f'[dumpfile] "{vcd.resolve()}"' in text
    widths = declared_widths(vcd)
    shown = re.findall(r"^SystemC\.([\w.]+)(?:\[(\d+):0\])?$", text, re.M)
    assert {name for name, _ in shown} == set(widths)  # every signal, each once, none invented
    for name, msb in shown:
        assert (int(msb) + 1 if msb else 1) == widths[name] or (not msb and name.endswith("power_w"))
    assert set(read_vcd(vcd)) == set(widths)


def test_modes_and_states_are_shown_by_their_names(run_vcd):
    _, gtkw, _ = run_vcd
    text = gtkw.read_text()
    for signal, table in (("kvmu.mode", "kvmu_mode"), ("draft.state", "device_state")):
        assert re.search(rf"^@2024\n\^\d+ {re.escape(str(filter_file(table)))}\nSystemC\.{signal}\[31:0\]$", text,
                         re.M)
    # The filters name the values the models use: KVMU modes as the KVMU reports them,
    # device states as the power model's states (and the shadow-sync summary, 4).
    modes = dict(line.split() for line in filter_file("kvmu_mode").read_text().splitlines())
    ops = standalone.kvmu_replay([("initialize", 10), ("begin_speculation",), ("speculate",), ("end_step",),
                                  ("speculate",), ("end_step",), ("accept",), ("rollback",)])
    assert {r["mode"] for r in ops} == {name.lower() for name in modes.values()}
    assert [modes[str(i)].lower() for i in range(4)] == ["initialization", "speculation", "accept", "rollback"]
    states = dict(line.split() for line in filter_file("device_state").read_text().splitlines())
    timeline = standalone.power_timeline("u280", [(s, 1.0) for s in ("idle", "prefill", "decode", "transfer")])
    assert [states[str(i)] for i in range(4)] == list(timeline["state_time_ns"])
    assert states["4"] == "shadow_sync"


def test_power_is_an_analog_trace_in_watts(run_vcd):
    vcd, gtkw, _ = run_vcd
    assert re.search(r"^@8020\nSystemC\.draft\.power_w$", gtkw.read_text(), re.M)
    idle = cosim.load_device("u280").power.idle_w
    assert read_vcd(vcd)["draft.power_w"][0] == (0, idle)


def test_the_save_file_opens_on_the_whole_run(run_vcd):
    _, gtkw, result = run_vcd
    end_ps = result.per_problem.column("end_s")[-1] * 1e12
    zoom = float(re.search(r"^\*(-?[\d.]+) ", gtkw.read_text(), re.M).group(1))
    # 2^(-zoom - 7.6) time units per pixel over an 830-pixel pane span the run.
    assert 2 ** (-zoom - 7.6) * 830 == pytest.approx(end_ps, rel=1e-5)


@pytest.mark.skipif(shutil.which("vcd2fst") is None, reason="GTKWave's vcd2fst is not installed (Debian: gtkwave)")
def test_gtkwaves_own_converter_accepts_the_vcd(run_vcd, tmp_path):
    vcd, _, _ = run_vcd
    fst = tmp_path / "run.fst"
    done = subprocess.run(["vcd2fst", str(vcd), str(fst)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert fst.stat().st_size > 0
