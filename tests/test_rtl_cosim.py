"""The KVMU's RTL in the loop (fpga.kvmu: rtl): the Verilated block in the behavioural
model's place gives the same runs, shows its pins in the VCD, and a wrong block stops
the run at the operation where it parts from the model."""

from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cosim
from cosim import _native, standalone
from test_waveforms import read_vcd, value_at

pytestmark = pytest.mark.skipif("rtl" not in _native.kvmu_implementations,
                                reason="this build has no Verilated KVMU (Verilator was not found at build time)")

OPS = st.one_of(
    st.tuples(st.just("initialize"), st.integers(min_value=-2, max_value=70)),
    st.tuples(st.sampled_from(["begin_speculation", "speculate", "sync", "end_step", "accept", "rollback", "clear"])),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(OPS, min_size=1, max_size=150), st.integers(min_value=0, max_value=2))
def test_the_rtl_answers_every_operation_as_the_model_does(ops, depth):
    # Pointers, modes, marks and the words of every refusal, operation by operation.
    tlm = standalone.kvmu_replay(ops, capacity_tokens=64, depth=depth)
    rtl = standalone.kvmu_replay(ops, capacity_tokens=64, depth=depth, kvmu="rtl")
    assert [dict(r) for r in rtl] == [dict(r) for r in tlm]


def test_a_block_whose_accept_keeps_valid_stops_at_its_first_accept():
    ops = [("initialize", 100), ("begin_speculation",), ("speculate",), ("speculate",), ("end_step",),
           ("accept",), ("speculate",)]
    with pytest.raises(cosim.SimulationError) as caught:
        standalone.kvmu_replay(ops, kvmu="rtl-faulty")
    message = str(caught.value)
    # Rising edges: reset, the depth, initialize, begin_speculation, two tokens, end_step, accept.
    assert "disagree after accept at RTL cycle 8" in message
    assert "valid rtl=100 tlm=102" in message and "mode rtl=accept tlm=accept" in message
    assert "\n" not in message


def test_a_wrong_block_stops_a_workflow_run_where_it_parts_from_the_model():
    # The engine takes the broken build of the block (the configuration offers only tlm
    # and rtl): the run stops at the first accept with a one-line SimulationError.
    from cosim.engine._engine_run import run_engine
    from cosim.engine._workflow import system_dict

    scn = cosim.load_scenario("heteroreason-u280-300")
    trace = cosim.trace.generate("math500", 3, seed=0)
    system = system_dict(scn)
    system["draft"]["fpga"]["kvmu"] = "rtl-faulty"
    with pytest.raises(cosim.SimulationError) as caught:
        run_engine(scn, trace, system)
    message = str(caught.value)
    assert re.search(r"disagree after accept at RTL cycle \d+: valid rtl=(\d+) tlm=(?!\1)\d+; "
                     r"mode rtl=accept tlm=accept$", message), message
    assert "\n" not in message


@pytest.fixture(scope="module")
def math500_runs():
    scn = cosim.load_scenario("heteroreason-u280-300")
    trace = cosim.trace.generate("math500", 50, seed=0)
    tlm = cosim.simulate(scn, trace)
    rtl_scn = scn.with_value("fpga.kvmu", "rtl")
    rtl = cosim.simulate(rtl_scn, trace)
    return scn, rtl_scn, tlm, rtl


def test_fifty_math500_problems_give_identical_results_on_either_kvmu(math500_runs):
    scn, rtl_scn, tlm, rtl = math500_runs
    assert scn.draft.device.accelerator.kvmu == "tlm" and rtl_scn.draft.device.accelerator.kvmu == "rtl"
    assert len(tlm.per_problem) == len(rtl.per_problem) == 50
    assert [dict(r) for r in rtl.per_problem] == [dict(r) for r in tlm.per_problem]
    assert rtl.summary == tlm.summary
    assert rtl.scenario == tlm.scenario


def test_the_vcd_of_an_rtl_run_shows_the_blocks_pins_tracking_the_model(tmp_path):
    scn = cosim.load_scenario("heteroreason-u280-300").with_value("fpga.kvmu", "rtl")
    cosim.simulate(scn, cosim.trace.generate("math500", 2, seed=3), vcd=tmp_path / "run.vcd", vcd_detail="token")
    changes = read_vcd(tmp_path / "run.vcd")
    pins = {"valid": "kvmu_rtl.valid_ptr", "curr": "kvmu_rtl.curr_ptr", "ahead": "kvmu_rtl.ahead_ptr",
            "mode": "kvmu_rtl.mode", "mux_pcie": "kvmu_rtl.mux_pcie"}
    assert set(pins.values()) <= set(changes)
    # In token detail the model's signals move with every operation: at each of their
    # changes the RTL's pins read the same (from the first problem's set-up on; before
    # it the probe's signals hold their zero start values, the block its reset state).
    times = sorted({t for name in pins for t, _ in changes[f"kvmu.{name}"] if t > 0})
    assert len(times) > 100
    for t in times:
        for name, pin in pins.items():
            assert number(value_at(changes, pin, t)) == number(value_at(changes, f"kvmu.{name}", t)), (t, name)
    # A clock cycle at least for every move of ahead (a token written, or a set-up).
    cycles = number(changes["kvmu_rtl.cycles"][-1][1])
    assert cycles >= len([t for t, _ in changes["kvmu.ahead"] if t > 0])
    assert "KVMU RTL pins" in (tmp_path / "run.gtkw").read_text()


def number(value):
    """A VCD value as read: an int for a vector, a '0'/'1' string for a scalar."""
    return int(value, 2) if isinstance(value, str) else int(value)


BAD_KVMU = """name: hr
system: heteroreason
draft:
  device: u280
  model: qwen2.5-0.5b
  overrides:
    accelerator.kvmu: {value}
"""


def test_an_unknown_kvmu_is_named_with_its_file_and_line(tmp_path):
    (tmp_path / "s.yaml").write_text(BAD_KVMU.format(value="vhdl"))
    with pytest.raises(cosim.ConfigError) as caught:
        cosim.load_scenario(tmp_path / "s.yaml")
    assert re.fullmatch(r".*s\.yaml:7: draft\.overrides\.accelerator\.kvmu: one of tlm, rtl, got 'vhdl'",
                        str(caught.value))


def test_rtl_without_the_verilated_block_is_refused_at_load(tmp_path, monkeypatch):
    # A build made without Verilator lists only the behavioural KVMU.
    monkeypatch.setattr(_native, "kvmu_implementations", ["tlm"])
    (tmp_path / "s.yaml").write_text(BAD_KVMU.format(value="rtl"))
    with pytest.raises(cosim.ConfigError) as caught:
        cosim.load_scenario(tmp_path / "s.yaml")
    message = str(caught.value)
    assert re.match(r".*s\.yaml:7: draft\.overrides\.accelerator\.kvmu: rtl needs the Verilated KVMU", message)
    assert "Verilator was not found" in message and "\n" not in message
    with pytest.raises(cosim.ConfigError, match=r"fpga\.kvmu: .*rtl needs the Verilated KVMU"):
        cosim.load_scenario("heteroreason-u280-300").with_value("fpga.kvmu", "rtl")


def test_the_kvmu_is_a_declared_parameter_of_the_fpga(tmp_path):
    fields = {f.name: f for f in dataclasses.fields(cosim.hardware.FpgaAcceleratorConfig)}
    assert fields["kvmu"].default == "tlm" and fields["kvmu"].metadata["choices"] == ("tlm", "rtl")
    assert ("kvmu", "std::string", "any") in _native.param_declarations()["fpga"]
