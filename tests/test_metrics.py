"""Each metric on trajectories built by hand, against counts and times worked out from
the workflow and the timing formulas."""

import pytest

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import CONTROL_BYTES, FAST_FPGA, TOKEN_BYTES, Fpga, Gpu, Link
from conftest import drawn_power

NS = 1e-9
PROMPT = 100


def run(problem, backtracking=True, **sections):
    trace = Trace(TraceHeader(backtracking=backtracking), [problem])
    return cosim.simulate(cosim.scenario("heteroreason", 1, **sections), trace, activities=True)


def test_stall_step_share_counts_verdicts_a_finished_step_ahead_step_waited_for():
    problem = (TrajectoryBuilder("s", PROMPT).accept(64).reject(10).refine(20).reject(10).refine(20).accept(10)
               .build())
    # Six PRM verdicts: drafts of steps 1-4 and the refinements of steps 2 and 3. While each
    # of the first five is under way the draft device drafts the next step's 10 tokens,
    # which takes less than the PRM's serving overhead alone; the last has no next step.
    fast, prm = Fpga(overrides=FAST_FPGA), Gpu("rtx3090", "qwen2.5-math-prm-7b")
    assert fast.step(PROMPT + 64 + 20 + 20, 10) < prm.request
    row = run(problem, draft={"overrides": FAST_FPGA}).per_problem[0]
    assert row["stall_step_share"] == pytest.approx(5 / 6)
    # The shipped U280 drafts 10 tokens more slowly than the PRM answers a short step: fewer
    # verdicts wait, and the share stays a share.
    slow = run(problem).per_problem[0]["stall_step_share"]
    assert 0 <= slow < 5 / 6


def test_comm_share_includes_the_prompt_kv_migration():
    problem = TrajectoryBuilder("one", PROMPT).accept(20).build()
    slow_bw = 0.01  # GB/s on the draft device's link
    row = run(problem, draft={"link": "pcie_gen3_x16"}).per_problem[0]
    slow = cosim.simulate(cosim.scenario("heteroreason", 1).with_value("pcie.bandwidth_gbps", slow_bw),
                          Trace(TraceHeader(), [problem])).per_problem[0]
    gen3, gen4 = Link("pcie_gen3_x16", slow_bw), Link("pcie_gen4_x16")
    kv = PROMPT * Fpga().kv_bytes()
    # The critical path: KV leg target -> host, KV leg host -> FPGA (the FPGA's kv_load),
    # the step to the PRM (FPGA -> host, host -> PRM), the verdict PRM -> host.
    comm_ns = gen4.ns(kv) + gen3.ns(kv) + gen3.ns(20 * TOKEN_BYTES) + gen4.ns(20 * TOKEN_BYTES) + \
        gen4.ns(CONTROL_BYTES)
    assert slow["comm_share"] * slow["latency_s"] == pytest.approx(comm_ns * NS, rel=1e-6)
    # The slow link adds its extra transfer time to the latency, all on the critical path.
    fast3 = Link("pcie_gen3_x16")
    extra_ns = gen3.ns(kv) - fast3.ns(kv) + gen3.ns(20 * TOKEN_BYTES) - fast3.ns(20 * TOKEN_BYTES)
    assert slow["latency_s"] - row["latency_s"] == pytest.approx(extra_ns * NS, rel=1e-6)


def test_wasted_energy_is_the_discarded_step_ahead_draft_above_idle():
    rsd = TraceHeader(backtracking=False)
    problem = TrajectoryBuilder("w", PROMPT, header=rsd).accept(40).reject(30).refine(50).accept(20).build()
    result = run(problem, backtracking=False, draft={"overrides": FAST_FPGA})
    row = result.per_problem[0]
    # While step 2 is verified the FPGA drafts step 3 (20 tokens after 170) in full; the
    # reject drops it. Its energy above idle is (decode - idle) power over its time.
    fast = Fpga(overrides=FAST_FPGA)
    power = drawn_power("u280", overrides=FAST_FPGA)
    assert fast.step(PROMPT + 70, 20) < Gpu("rtx3090", "qwen2.5-math-prm-7b").request
    assert row["discarded_step_ahead_tokens"] == 20
    expected_j = (power.decode_w - power.idle_w) * fast.step(PROMPT + 70, 20) * NS
    assert row["wasted_energy_share"] * row["energy_j"] == pytest.approx(expected_j, rel=1e-6)
    # The broad quantity also holds the rejected draft, the discarded step-ahead draft at
    # full power, and the target's unused step-ahead runs.
    assert row["offchain_energy_share"] > row["wasted_energy_share"]


def test_nothing_discarded_wastes_nothing():
    row = run(TrajectoryBuilder("a", PROMPT).accept(20).build()).per_problem[0]
    assert row["wasted_energy_share"] == 0.0
    assert row["discarded_step_ahead_tokens"] == 0
    baseline = cosim.simulate(cosim.scenario("gpu-baseline", 1), cosim.trace.generate("math500", 5, seed=2))
    assert baseline.summary["wasted_energy_share"] == 0.0  # no step-ahead drafts at all


def test_summary_carries_each_devices_energy():
    result = cosim.simulate(cosim.scenario("heteroreason", 1), cosim.trace.generate("gsm8k", 6, seed=3))
    for role in ("draft", "prm", "target"):
        assert result.summary[f"energy_j_{role}"] == pytest.approx(sum(result.per_problem.column(f"energy_j_{role}")))
    assert result.summary["energy_j"] == pytest.approx(sum(result.summary[f"energy_j_{r}"]
                                                           for r in ("draft", "prm", "target")))


def refine_then_reject():
    return TrajectoryBuilder("t", PROMPT).accept(40).reject(30).refine(50).reject(25).refine(35).accept(20).build()


def target_requests(result, step):
    return [a for a in result.activities if a.device == "target" and a.kind == "request" and a.step == step]


def refine_verdict_end(result, step):
    """When the verdict on `step`'s refinement reaches the host: the leg after its second verify."""
    verifies = [a for a in result.activities if a.device == "prm" and a.kind == "verify" and a.step == step]
    legs = [a for a in result.activities if a.device == "pcie_prm" and a.kind == "transfer_d2h" and a.step == step]
    return min(leg.end_ns for leg in legs if leg.start_ns >= verifies[1].end_ns - 1e-3)


def test_target_starts_the_next_step_when_its_refinement_ends():
    on = run(refine_then_reject())
    refined = max(a.end_ns for a in on.activities if a.device == "target" and a.kind == "refine" and a.step == 2)
    [request] = target_requests(on, 3)
    assert request.start_ns == pytest.approx(refined, abs=1e-3)
    assert request.start_ns < refine_verdict_end(on, 2)


def test_target_waits_for_the_refinements_verdict_when_toggled_off():
    off = run(refine_then_reject(), toggles={"target_ahead_after_refine": False})
    on = run(refine_then_reject())
    [request] = target_requests(off, 3)
    assert request.start_ns == pytest.approx(refine_verdict_end(off, 2), abs=1e-3)
    assert on.per_problem[0]["latency_s"] < off.per_problem[0]["latency_s"]


def test_a_failed_refinement_stops_the_run_started_ahead_of_its_verdict():
    problem = (TrajectoryBuilder("bt", PROMPT).accept(40).accept(30).reject(25).refine_fails(35).backtrack()
               .refine(30).accept(20).accept(15).build())
    result = run(problem)
    # The target went on to step 4 when step 3's refinement ended; the failing verdict
    # stops that run at once, before the backtrack's alternative for step 2 begins.
    alternative = min(a.start_ns for a in target_requests(result, 2)[1:])
    ahead = [a for a in result.activities if a.device == "target" and a.step == 4 and a.start_ns < alternative]
    assert ahead
    assert max(a.end_ns for a in ahead) == pytest.approx(refine_verdict_end(result, 3), abs=1e-3)
    assert result.per_problem[0]["final_tokens"] == 40 + 30 + 20 + 15
