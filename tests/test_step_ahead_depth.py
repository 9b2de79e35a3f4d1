"""Step-ahead depth 0, 1 and 2: the KVMU's extra step boundary, timelines worked by hand,
what a reject discards, and live replay at every depth."""

import pytest

import cosim
from cosim import standalone
from cosim.live import TracePolicy
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import FAST_FPGA, Fpga, Gpu, all_accept_timeline
from conftest import drawn_power

PROMPT = 100
NS = 1e-9
STEPS = [40, 30, 50, 20, 64]


def pointers(records):
    return [(r["valid"], r["curr"], r["ahead"], list(r["marks"])) for r in records]


def test_at_depth_two_the_kvmu_keeps_the_first_step_ahead_boundary_as_a_mark():
    ops = [("initialize", 100), ("begin_speculation",),
           ("speculate",), ("speculate",), ("end_step",),   # y1 = [100, 102) under verification
           ("speculate",), ("speculate",), ("end_step",),   # y2 = [102, 104) ahead: its end is a mark
           ("speculate",),                                  # y3 ahead, still being drafted
           ("accept",),                                     # y1 kept: curr to the mark, y3 goes on
           ("speculate",), ("end_step",),                   # y3 = [104, 106) ends: a mark again
           ("accept",),                                     # y2 kept: y3 under verification
           ("speculate",), ("end_step",),                   # y4 = [106, 107)
           ("speculate",), ("end_step",),                   # y5 = [107, 108): two steps ahead again
           ("rollback",)]                                   # y3 rejected: y4 and y5 go with it
    records = standalone.kvmu_replay(ops, depth=2)
    assert [r["error"] for r in records] == [None] * len(ops)
    assert pointers(records) == [
        (100, 100, 100, []), (100, 100, 100, []),
        (100, 101, 101, []), (100, 102, 102, []), (100, 102, 102, []),
        (100, 102, 103, []), (100, 102, 104, []), (100, 102, 104, [104]),
        (100, 102, 105, [104]),
        (102, 104, 105, []),
        (102, 104, 106, []), (102, 104, 106, [106]),
        (104, 106, 106, []),
        (104, 106, 107, []), (104, 106, 107, [107]),
        (104, 106, 108, [107]), (104, 106, 108, [107, 108]),
        (104, 104, 104, []),
    ]
    # With y1 under verification and y2, y3 drafted, a third step ahead is refused.
    third = ops[:9] + [("speculate",), ("end_step",), ("speculate",)]
    last = standalone.kvmu_replay(third, depth=2)[-1]
    assert "two steps deep" in last["error"] and (last["curr"], last["ahead"]) == (102, 106)


def test_at_depth_zero_the_kvmu_refuses_any_step_ahead_step():
    ops = [("initialize", 10), ("begin_speculation",), ("speculate",), ("end_step",), ("speculate",)]
    zero = standalone.kvmu_replay(ops, depth=0)
    assert "off (depth 0)" in zero[-1]["error"]
    assert standalone.kvmu_replay(ops, depth=1)[-1]["error"] is None
    with pytest.raises(cosim.ConfigError, match="depth: must be 0, 1 or 2"):
        standalone.kvmu_replay(ops, depth=3)


def simulate(depth, fpga=None, step_ahead=True, problem=None, backtracking=True):
    if problem is None:
        b = TrajectoryBuilder("accept", PROMPT)
        for n in STEPS:
            b.accept(n)
        problem = b.build()
    scn = cosim.scenario("heteroreason", 1, toggles={"step_ahead": step_ahead, "step_ahead_depth": depth},
                         draft={"overrides": fpga or {}})
    return cosim.simulate(scn, Trace(TraceHeader(backtracking=backtracking), [problem]), activities=True)


@pytest.mark.parametrize("fpga", [None, FAST_FPGA], ids=["u280", "fast"])
@pytest.mark.parametrize("depth", [0, 1, 2])
def test_all_accept_latency_and_stall_follow_the_hand_worked_timeline_at_each_depth(depth, fpga):
    result = simulate(depth, fpga)
    timeline = all_accept_timeline(PROMPT, STEPS, True, fpga, depth=depth)
    row = result.per_problem[0]
    assert row["latency_s"] == pytest.approx(timeline["verdicts"][-1] * NS, abs=10 * NS)
    assert row["stall_ratio"] * row["latency_s"] == pytest.approx(timeline["stall"] * NS, abs=10 * NS)
    if depth == 0:
        # Nothing drafted ahead: the draft timeline of the sequential draft, while the
        # target still starts each next step ahead (its runs are interrupted at each accept).
        off = all_accept_timeline(PROMPT, STEPS, False, fpga)
        assert timeline["verdicts"] == off["verdicts"] and timeline["stall"] == 0
        assert any(a.device == "target" and a.kind == "refine" for a in result.activities)


@pytest.mark.parametrize("fpga", [None, FAST_FPGA], ids=["u280", "fast"])
def test_a_second_step_ahead_fills_the_idle_time_before_a_long_step(fpga):
    # Short steps verify while the draft device would idle at depth 1; at depth 2 it
    # drafts the long step already. (Drafting that is slower than verification throughout
    # keeps the device busy at depth 1, and depth 2 gains nothing there.)
    steps = [10, 10, 200, 10, 10, 200]
    problem = TrajectoryBuilder("mixed", PROMPT)
    for n in steps:
        problem.accept(n)
    hand = {d: all_accept_timeline(PROMPT, steps, True, fpga, depth=d) for d in (1, 2)}
    assert hand[2]["verdicts"][-1] < hand[1]["verdicts"][-1] and hand[2]["stall"] < hand[1]["stall"]
    for depth in (1, 2):
        row = simulate(depth, fpga, problem=problem.build()).per_problem[0]
        assert row["latency_s"] == pytest.approx(hand[depth]["verdicts"][-1] * NS, abs=10 * NS)
        assert row["stall_ratio"] * row["latency_s"] == pytest.approx(hand[depth]["stall"] * NS, abs=10 * NS)


def reject_problem():
    rsd = TraceHeader(backtracking=False)
    return TrajectoryBuilder("r", PROMPT, header=rsd).accept(40).reject(30).refine(50).accept(20).accept(25).build()


def test_a_reject_at_depth_two_discards_both_steps_drafted_ahead():
    result = simulate(2, FAST_FPGA, problem=reject_problem(), backtracking=False)
    row = result.per_problem[0]
    fast, prm = Fpga(overrides=FAST_FPGA), Gpu("rtx3090", "qwen2.5-math-prm-7b")
    # While y1 is verified the FPGA drafts y2 and y3 (20 tokens at 170), both done before
    # y1's verdict; when y2 goes to the PRM it drafts y4 (25 tokens at 190, the length the
    # trace drafts next), done before y2's verdict, which rejects: y3 and y4 are dropped.
    assert fast.step(PROMPT + 40, 30) + fast.step(PROMPT + 70, 20) < prm.request + prm.prefill(PROMPT + 40, 0)
    assert fast.step(PROMPT + 90, 25) < prm.request + prm.prefill(PROMPT + 70, 0)
    assert row["discarded_step_ahead_tokens"] == 20 + 25
    power = drawn_power("u280", overrides=FAST_FPGA)
    expected_j = (power.decode_w - power.idle_w) * (fast.step(PROMPT + 70, 20) + fast.step(PROMPT + 90, 25)) * NS
    assert row["wasted_energy_share"] * row["energy_j"] == pytest.approx(expected_j, rel=1e-6)
    seq = [(r.op, r.valid, r.curr, r.ahead) for r in result.kvmu]
    assert seq == [
        ("clear", 0, 0, 0),
        ("initialize", 100, 100, 100),
        ("begin_speculation", 100, 100, 100),
        ("end_step", 100, 140, 140),   # y1 drafted: curr followed it
        ("end_step", 100, 140, 170),   # y2 ahead: a mark at 170
        ("end_step", 100, 140, 190),   # y3 ahead: two steps deep, the FPGA stalls
        ("accept", 140, 170, 190),     # y1 kept: curr moves to the mark, y2 under verification
        ("end_step", 140, 170, 215),   # y4 ahead
        ("rollback", 140, 140, 140),   # y2 rejected: y2, y3 and y4 dropped
        ("accept", 190, 190, 190),     # the 50 refined tokens synced and kept (RSD)
        ("end_step", 190, 210, 210),   # y3 drafted again
        ("end_step", 190, 210, 235),   # y4 ahead
        ("accept", 210, 235, 235),     # y3 kept: y4 under verification
        ("accept", 235, 235, 235),
    ]
    # At depth 1 only y3 was drafted ahead of y2's verdict.
    assert simulate(1, FAST_FPGA, problem=reject_problem(), backtracking=False).per_problem[0][
        "discarded_step_ahead_tokens"] == 20


@pytest.mark.parametrize("depth", [0, 2])
@pytest.mark.parametrize("name", ["gpu-stepahead", "heteroreason-u280-300", "heteroreason-vanilla"])
def test_a_trace_policy_replays_its_trace_exactly_at_every_depth(name, depth):
    scn = cosim.load_scenario(name).with_value("toggles.step_ahead_depth", depth)
    trace = cosim.trace.generate("olympiadbench", 25, seed=5, backtracking=scn.backtracking).in_memory()
    replay = cosim.simulate(scn, trace)
    live = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert live.result.per_problem == replay.per_problem
    assert live.result.summary == replay.summary


def test_the_depth_is_checked_where_it_is_given(tmp_yaml):
    with pytest.raises(cosim.ConfigError, match=r"step_ahead_depth: must be 0, 1 or 2, got 3"):
        cosim.scenario("heteroreason", 1, toggles={"step_ahead_depth": 3})
    with pytest.raises(cosim.ConfigError, match="gpu-baseline is strictly sequential"):
        cosim.load_scenario("gpu-baseline").with_value("toggles.step_ahead_depth", 1)
    # A depth with step-ahead off would be ignored: refused where it is given.
    both = tmp_yaml("both.yaml", "system: heteroreason\ntoggles:\n  step_ahead: false\n  step_ahead_depth: 2\n")
    with pytest.raises(cosim.ConfigError, match=r"both.yaml:4: toggles.step_ahead_depth: 2 steps ahead, but "
                                                r"step_ahead is off"):
        cosim.load_scenario(both)
    off = cosim.scenario("heteroreason", 1, toggles={"step_ahead": False})
    with pytest.raises(cosim.ConfigError, match="2 steps ahead, but step_ahead is off"):
        off.with_value("toggles.step_ahead_depth", 2)
    assert off.with_value("toggles.step_ahead_depth", 0).toggles.step_ahead_depth == 0


def test_the_waveform_shows_the_mark_and_the_steps_drafted_ahead(tmp_path):
    from test_waveforms import read_vcd

    path = tmp_path / "depth2.vcd"
    scn = cosim.scenario("heteroreason", 1, toggles={"step_ahead_depth": 2}, draft={"overrides": FAST_FPGA})
    cosim.simulate(scn, Trace(TraceHeader(backtracking=False), [reject_problem()]), vcd=path)
    changes = read_vcd(path)
    # The pointer states of the hand-worked sequence above, in order (repeats collapsed).
    series = []
    for name in ("kvmu.curr", "kvmu.mark", "kvmu.ahead", "kvmu.steps_ahead"):
        series.append({t: int(v) for t, v in changes[name]})
    times = sorted(set().union(*series))
    state, seen = [0, 0, 0, 0], []
    for t in times:
        state = [s.get(t, state[i]) for i, s in enumerate(series)]
        if not seen or seen[-1] != tuple(state):
            seen.append(tuple(state))
    # (curr, mark, ahead, steps ahead) after y1, y2 and y3 are drafted, at y1's accept,
    # after y4, and at the rollback of y2.
    expected = [(140, 140, 140, 0), (140, 170, 170, 1), (140, 170, 190, 2), (170, 190, 190, 1),
                (170, 190, 215, 2), (140, 140, 140, 0)]
    rest = iter(seen)
    assert all(any(s == e for s in rest) for e in expected), seen  # in this order
    assert max(state[3] for state in seen) == 2
