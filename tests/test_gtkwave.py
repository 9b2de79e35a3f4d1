"""The GTKWave save file written beside every VCD, checked against the VCD itself and
against GTKWave's own tools."""

import csv
import re
import shutil
import subprocess

import numpy as np
import pytest

import cosim
from cosim import standalone
from cosim.outputs._gtkwave import filter_file
from conftest import run_cli
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
    # Named relative to the save file beside it, so the pair can be moved together.
    assert '[dumpfile] "run.vcd"\n[savefile] "run.gtkw"\n' in text
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
    timeline = standalone.power_timeline("rtx3090", [(s, 1.0) for s in ("idle", "prefill", "decode", "transfer")])
    assert [states[str(i)] for i in range(4)] == list(timeline["state_time_ns"])
    assert states["4"] == "shadow_sync"


def test_power_is_an_analog_trace_in_watts(run_vcd):
    vcd, gtkw, _ = run_vcd
    assert re.search(r"^@8020\nSystemC\.draft\.power_w$", gtkw.read_text(), re.M)
    idle = cosim.load_device("u280").power.idle_w
    assert read_vcd(vcd)["draft.power_w"][0] == (0, idle)


def first_problem_ps(vcd, result):
    """When the first problem starts and ends (its row's start_s and end_s), checked against
    the waveform itself: run.problem holds 0 from the start until the next problem begins,
    which the host does once the first one's answer is settled."""
    rows = result.per_problem
    first = int(np.argmin(rows.column("start_s")))
    start, end = rows.column("start_s")[first] * 1e12, rows.column("end_s")[first] * 1e12
    changes = read_vcd(vcd)["run.problem"]
    assert changes[0] == (0, 0) and start == 0 and rows.column("id")[first].endswith("00000")
    next_start = next(t for t, value in changes if value != 0)
    assert end <= next_start <= end * 1.05
    return round(start), round(end)


def visible(text):
    """The times the window shows when GTKWave opens the save file: from [timestart], over
    830 pixels of 2^(-zoom - 7.6) time units each (measured with GTKWave 3.3)."""
    start = int(re.search(r"^\[timestart\] (\d+)$", text, re.M).group(1))
    zoom = float(re.search(r"^\*(-?[\d.]+) ", text, re.M).group(1))
    return start, start + 2 ** (-zoom - 7.6) * 830


def test_the_save_file_opens_on_the_first_problem_between_markers(run_vcd):
    vcd, gtkw, result = run_vcd
    start, end = first_problem_ps(vcd, result)
    assert end < result.last_end_s * 1e12 / 2  # a run of several problems: the first is a part of it
    text = gtkw.read_text()
    shown = visible(text)
    # The first problem fills the view: all of it, and little else.
    assert shown[0] <= start and shown[1] >= end
    assert shown[1] - shown[0] <= 1.2 * (end - start)
    markers = [int(v) for v in re.search(r"^\*\S+ (.*)$", text, re.M).group(1).split()]
    assert len(markers) == 27 and markers[1:3] == [start, end] and set(markers[3:]) == {-1}


def test_a_run_of_one_problem_opens_on_the_whole_of_it(tmp_path):
    trace = cosim.trace.generate("math500", 1, seed=4)
    result = cosim.simulate(cosim.scenario("heteroreason", 1), trace, vcd=tmp_path / "one.vcd")
    shown = visible((tmp_path / "one.gtkw").read_text())
    end_ps = result.last_end_s * 1e12
    assert shown[0] == 0 and end_ps <= shown[1] <= 1.2 * end_ps


@pytest.mark.skipif(shutil.which("gtkwave") is None or shutil.which("xvfb-run") is None,
                    reason="GTKWave and Xvfb are not installed (Debian: gtkwave xvfb)")
def test_gtkwave_opens_the_pair_moved_elsewhere_on_the_first_problem(run_vcd, tmp_path):
    vcd, gtkw, result = run_vcd
    moved = tmp_path / "moved" / "deeper"
    moved.mkdir(parents=True)
    for f in (vcd, gtkw):
        shutil.copy(f, moved / f.name)
    script = tmp_path / "ask.tcl"
    script.write_text('puts "dumpfile=[gtkwave::getDumpFileName]"\n'
                      'puts "signals=[gtkwave::getNumFacs]"\n'
                      'puts "markers=[gtkwave::getNamedMarker A] [gtkwave::getNamedMarker B]"\n'
                      'puts "window=[gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]"\n'
                      "gtkwave::/File/Quit\n")
    # Only the save file is given, from another folder: GTKWave finds the waveform beside it.
    done = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "gtkwave", "-S", str(script),
                           str(moved / "run.gtkw")], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    said = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert said.get("dumpfile") == str(moved / "run.vcd"), done.stdout + done.stderr
    assert int(said["signals"]) == len(declared_widths(vcd))
    start, end = first_problem_ps(vcd, result)
    assert [int(v) for v in said["markers"].split()] == [start, end]
    low, high = (int(v) for v in said["window"].split())
    assert low <= start and end <= high <= start + 1.5 * (end - start)


@pytest.mark.skipif(shutil.which("vcd2fst") is None, reason="GTKWave's vcd2fst is not installed (Debian: gtkwave)")
def test_gtkwaves_own_converter_accepts_the_vcd(run_vcd, tmp_path):
    vcd, _, _ = run_vcd
    fst = tmp_path / "run.fst"
    done = subprocess.run(["vcd2fst", str(vcd), str(fst)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert fst.stat().st_size > 0


def test_cosim_run_names_the_published_waveform_and_opens_on_its_first_problem(tmp_path):
    proc = run_cli("run", "heteroreason-u280-300", "--problems", "4", "--seed", "2", "--quiet",
                   "--vcd", "waves/w.vcd", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "waves" / "w.gtkw").read_text()
    assert '[dumpfile] "w.vcd"\n[savefile] "w.gtkw"\n' in text  # not the name it was staged under
    with open(tmp_path / "out" / "per_problem.csv", newline="") as f:
        first = min(csv.DictReader(f), key=lambda row: float(row["start_s"]))
    start, end = float(first["start_s"]) * 1e12, float(first["end_s"]) * 1e12
    markers = [int(v) for v in re.search(r"^\*\S+ (.*)$", text, re.M).group(1).split()]
    assert markers[1:3] == [round(start), round(end)]
    shown = visible(text)
    assert shown[0] <= start and end <= shown[1] <= start + 1.2 * (end - start)
