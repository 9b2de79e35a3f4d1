"""A serving run's waveform: the request slot it follows, and a window of time."""

import re

import pytest

import cosim
from cosim import _native
from conftest import run_cli
from test_waveforms import read_vcd

PS_PER_S = 1e12


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wave")
    scn = cosim.load_scenario("cluster-heteroreason-u280-200").with_value("cluster.draft.devices", 3)
    trace = cosim.trace.generate("gsm8k", 24, seed=2).in_memory()
    whole = cosim.serve.run(scn, trace, rate=1.0, seed=3, vcd=folder / "whole.vcd")
    return scn, trace, folder, whole


def change_times(changes):
    return sorted({t for values in changes.values() for t, _ in values})


def test_a_window_keeps_only_the_changes_inside_it_and_opens_on_the_state_then(served):
    scn, trace, folder, whole = served
    start_s, end_s = 8.0, 14.0
    cosim.serve.run(scn, trace, rate=1.0, seed=3, vcd=folder / "window.vcd", vcd_window_s=(start_s, end_s))
    full, window = read_vcd(folder / "whole.vcd"), read_vcd(folder / "window.vcd")
    times = change_times(window)
    inside = [t for t in times if t != 0]
    assert inside and min(inside) == start_s * PS_PER_S and max(inside) <= end_s * PS_PER_S
    # Every signal reads as in the whole waveform at the window's start and at each change in it.
    for name, values in window.items():
        for t in [start_s * PS_PER_S] + [t for t, _ in values if t > start_s * PS_PER_S]:
            assert value_at(values, t) == value_at(full[name], t), (name, t)
    assert len(times) < len(change_times(full)) / 2
    gtkw = (folder / "window.gtkw").read_text()
    assert f"[timestart] {int(start_s * PS_PER_S)}" in gtkw


def value_at(values, t):
    current = None
    for when, value in values:
        if when > t:
            break
        current = value
    return current


def test_the_waveform_follows_the_slot_it_is_given(served):
    scn, trace, folder, whole = served
    run = cosim.serve.run(scn, trace, rate=1.0, seed=3, vcd=folder / "slot2.vcd", vcd_slot=2)
    served_by_slot = {row["request"] for row in run.per_request if row["slot"] == 2}
    shown = {int(v) for t, v in read_vcd(folder / "slot2.vcd")["run.problem"] if t > 0}
    assert shown and shown == served_by_slot
    assert 0 not in served_by_slot  # the first request went to slot 0
    # Its save file opens on the slot's first request, marked A and B, as the waveform shows it.
    first = min((row for row in run.per_request if row["slot"] == 2), key=lambda row: row["start_s"])
    start, end = round(first["start_s"] * PS_PER_S), round(first["end_s"] * PS_PER_S)
    shown_at = next(t for t, v in read_vcd(folder / "slot2.vcd")["run.problem"] if v == first["request"])
    assert start <= shown_at < end
    markers = re.search(r"^\*\S+ (.*)$", (folder / "slot2.gtkw").read_text(), re.M).group(1).split()
    assert [int(m) for m in markers[1:3]] == [start, end]


@pytest.mark.parametrize("args,error", [
    (["--vcd-window", "5:10"], "--vcd-window: it chooses what --vcd writes; give --vcd too"),
    (["--vcd", "w.vcd", "--vcd-window", "5"], "--vcd-window: give START:END in seconds"),
    (["--vcd", "w.vcd", "--vcd-window", "10:5"], "error: --vcd-window: the end (5 s) must come after the start (10 s)"),
    (["--vcd", "w.vcd", "--vcd-slot", "3"], "error: --vcd-slot: 3, but cluster-heteroreason-u280-200 has request slots 0 to 2"),
])
def test_bad_waveform_options_are_refused_before_any_work(tmp_path, args, error):
    proc = run_cli("serve", "cluster-heteroreason-u280-200", "--set", "cluster.draft.devices=3", "--requests", "4",
                   "--rate", "1", "--quiet", *args, cwd=tmp_path)
    assert proc.returncode == 2 and error in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "w.vcd").exists()


def test_the_cli_writes_the_window_and_its_save_file(tmp_path):
    proc = run_cli("serve", "cluster-heteroreason-u280-200", "--requests", "6", "--rate", "2", "--quiet",
                   "--vcd", "w.vcd", "--vcd-window", "2:", "--vcd-slot", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    times = [t for t in change_times(read_vcd(tmp_path / "w.vcd")) if t != 0]
    assert min(times) == 2 * PS_PER_S
    assert "[timestart] 2000000000000" in (tmp_path / "w.gtkw").read_text()


def test_a_window_after_the_run_is_said_so(tmp_path):
    proc = run_cli("serve", "cluster-heteroreason-u280-200", "--requests", "3", "--rate", "2", "--quiet",
                   "--vcd", "w.vcd", "--vcd-window", "100000:", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "--vcd-window opens at 100000 s, after the run ended" in proc.stderr
    assert [t for t in change_times(read_vcd(tmp_path / "w.vcd")) if t != 0] == []


@pytest.mark.skipif("rtl" not in _native.kvmu_implementations, reason="this build has no Verilated KVMU")
def test_a_window_bounds_the_kvmu_rtls_own_pins_too(tmp_path):
    # The RTL's pins are traced by the block itself, not by the probe: they too change only
    # within the window, and read there as in the whole waveform.
    scn = cosim.load_scenario("cluster-heteroreason-u280-200").with_value("cluster.draft.devices", 3) \
        .with_value("fpga.kvmu", "rtl")
    trace = cosim.trace.generate("gsm8k", 24, seed=2).in_memory()
    start_s, end_s = 8.0, 14.0
    cosim.serve.run(scn, trace, rate=1.0, seed=3, vcd=tmp_path / "whole.vcd")
    cosim.serve.run(scn, trace, rate=1.0, seed=3, vcd=tmp_path / "window.vcd", vcd_window_s=(start_s, end_s))
    full, window = read_vcd(tmp_path / "whole.vcd"), read_vcd(tmp_path / "window.vcd")
    pins = [name for name in window if name.startswith("kvmu_rtl.")]
    assert "kvmu_rtl.ahead_ptr" in pins and "kvmu_rtl.cycles" in pins
    outside = [(name, t) for name in pins for t, _ in window[name]
               if t != 0 and not start_s * PS_PER_S <= t <= end_s * PS_PER_S]
    assert not outside, outside[:5]
    assert any(t > 0 for t, _ in window["kvmu_rtl.ahead_ptr"])  # the block moved within the window
    for name in pins:
        for t in [start_s * PS_PER_S] + [t for t, _ in window[name] if t > start_s * PS_PER_S]:
            assert value_at(window[name], t) == value_at(full[name], t), (name, t)
    # Outside the window the whole run's pins change far more often than the window's do.
    assert sum(len(full[n]) for n in pins) > 2 * sum(len(window[n]) for n in pins)
