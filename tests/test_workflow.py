"""The workflow engine against timelines worked by hand from the model formulas."""

import pytest

import cosim
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from handmodel import FAST_FPGA, TOKEN_BYTES, Fpga, Gpu, Link, all_accept_timeline
from conftest import drawn_power

PROMPT = 100
GEN3, GEN4 = Link("pcie_gen3_x16"), Link("pcie_gen4_x16")  # U280's link; RTX 3090s' links
NS = 1e-9


def one(problem, backtracking=True):
    return Trace(TraceHeader(backtracking=backtracking), [problem])


def all_accept_latency_ns(steps, step_ahead, fpga_overrides):
    timeline = all_accept_timeline(PROMPT, steps, step_ahead, fpga_overrides)
    return timeline["verdicts"][-1], timeline["stall"]


@pytest.mark.parametrize("fpga", [None, FAST_FPGA], ids=["u280", "fast"])
@pytest.mark.parametrize("step_ahead", [True, False])
def test_all_accept_steps_take_the_max_with_step_ahead_and_the_sum_without(step_ahead, fpga):
    steps = [40, 30, 50, 20, 64]
    b = TrajectoryBuilder("accept", PROMPT)
    for n in steps:
        b.accept(n)
    scn = cosim.scenario("heteroreason", 1, toggles={"step_ahead": step_ahead}, draft={"overrides": fpga or {}})
    result = cosim.simulate(scn, one(b.build()), activities=True)
    latency_ns, stall_ns = all_accept_latency_ns(steps, step_ahead, fpga)
    row = result.per_problem[0]
    assert row["latency_s"] == pytest.approx(latency_ns * NS, abs=10 * NS)
    assert row["stall_ratio"] * row["latency_s"] == pytest.approx(stall_ns * NS, abs=10 * NS)
    assert row["final_tokens"] == sum(steps)
    # Nothing drafted is discarded, so no step-ahead energy is wasted; what never reaches
    # the chain is the target's step-ahead refinement, interrupted at every accept.
    assert row["wasted_energy_share"] == 0.0
    prefetch = [a for a in result.activities if a.device == "target" and a.kind == "refine"]
    decode_w = cosim.load_device("rtx3090").power.decode_w
    prefetch_j = sum(decode_w * (a.end_ns - a.start_ns) * NS for a in prefetch)
    assert row["offchain_energy_share"] * row["energy_j"] == pytest.approx(prefetch_j, rel=1e-9, abs=1e-12)
    if step_ahead and fpga:
        assert stall_ns > 0  # this decoder drafts faster than the PRM scores: it waits
    if step_ahead:
        assert prefetch_j > 0
    else:
        assert stall_ns == 0 and not prefetch


def refine_problem():
    rsd = TraceHeader(backtracking=False)
    return TrajectoryBuilder("refine", PROMPT, header=rsd).accept(40).reject(30).refine(50).accept(20).build()


def activities(result, device, kind, step):
    return [a for a in result.activities if a.device == device and a.kind == kind and a.step == step]


def test_shadow_sync_has_the_fpga_ready_when_the_target_finishes():
    result = cosim.simulate(cosim.scenario("heteroreason", 1), one(refine_problem(), backtracking=False),
                            activities=True)
    target_end = max(a.end_ns for a in activities(result, "target", "refine", 2))
    syncs = activities(result, "draft", "shadow_sync", 2)
    assert len(syncs) == 50
    fpga = Fpga()
    last_token = GEN4.ns(TOKEN_BYTES) + GEN3.ns(TOKEN_BYTES) + fpga.token(PROMPT + 40 + 49)
    lag = max(a.end_ns for a in syncs) - target_end
    assert 0 <= lag <= last_token + 1e-3  # one forward pass after the last token lands, no more


def test_vanilla_adds_the_local_prefill_after_the_target():
    scn = cosim.scenario("heteroreason", 1, toggles={"shadow_sync": False})
    vanilla = cosim.simulate(scn, one(refine_problem(), backtracking=False), activities=True)
    target_end = max(a.end_ns for a in activities(vanilla, "target", "refine", 2))
    [prefill] = activities(vanilla, "draft", "draft_prefill", 2)
    arrive = target_end + GEN4.ns(TOKEN_BYTES * 50) + GEN3.ns(TOKEN_BYTES * 50)
    assert prefill.start_ns == pytest.approx(arrive, abs=1e-3)
    assert prefill.end_ns - prefill.start_ns == pytest.approx(Fpga().prefill(50, PROMPT + 40), abs=1e-3)
    assert not activities(vanilla, "draft", "shadow_sync", 2)


def test_kvmu_pointer_sequence_of_reject_refine_matches_the_hand_worked_one():
    scn = cosim.scenario("heteroreason", 1, draft={"overrides": FAST_FPGA})
    result = cosim.simulate(scn, one(refine_problem(), backtracking=False), activities=True)
    seq = [(r.op, r.valid, r.curr, r.ahead, r.mode) for r in result.kvmu]
    assert seq == [
        ("clear", 0, 0, 0, "initialization"),
        ("initialize", 100, 100, 100, "initialization"),  # prompt KV migrated
        ("begin_speculation", 100, 100, 100, "speculation"),
        ("end_step", 100, 140, 140, "speculation"),        # y1 drafted: curr followed it
        ("end_step", 100, 140, 170, "speculation"),        # y2 drafted step-ahead, then the FPGA stalls
        ("accept", 140, 170, 170, "accept"),               # y1 accepted: y2 is under verification
        ("end_step", 140, 170, 190, "accept"),             # y3 drafted step-ahead
        ("rollback", 140, 140, 140, "rollback"),           # y2 rejected: y2 and y3 dropped
        ("accept", 190, 190, 190, "accept"),               # the 50 refined tokens synced and kept (RSD)
        ("end_step", 190, 210, 210, "accept"),             # y3 drafted again
        ("accept", 210, 210, 210, "accept"),
    ]


def backtrack_problem():
    return (TrajectoryBuilder("bt", PROMPT).accept(40).accept(30).reject(25).refine_fails(35).backtrack()
            .refine(30).accept(20).build())


def test_backtrack_reverts_the_pointers_and_reuse_saves_decode_minus_prefill():
    trace = one(backtrack_problem())
    # A draft device fast enough that shadow sync keeps pace with the 1.5B target, so the
    # target's saving is the problem's saving.
    fast = {"overrides": FAST_FPGA}
    on = cosim.simulate(cosim.scenario("heteroreason", 2, draft=fast), trace, activities=True)
    off = cosim.simulate(cosim.scenario("heteroreason", 2, toggles={"prefetch_cache": False}, draft=fast), trace)
    reused = on.per_problem[0]["reused_tokens"]
    assert 0 < reused < 30 and off.per_problem[0]["reused_tokens"] == 0
    # Step 2's alternative starts from context 140 either way; with the cache the target
    # prefills the `reused` tokens of its interrupted run instead of decoding them.
    target = Gpu("rtx3090", "qwen2.5-math-1.5b")
    saved = sum(target.decode(140 + j) for j in range(reused)) - target.prefill(reused, 140)
    assert off.per_problem[0]["latency_s"] - on.per_problem[0]["latency_s"] == pytest.approx(saved * NS, abs=10 * NS)
    ops = [(r.op, r.valid, r.curr, r.ahead) for r in on.kvmu]
    assert ("initialize", 140, 140, 140) in ops  # reverted to the start of step 2
    assert on.per_problem[0]["backtracks_per_problem"] == 1


SYSTEMS = [("gpu-baseline", {}), ("gpu-stepahead", {}), ("heteroreason", {}),
           ("heteroreason", {"toggles": {"shadow_sync": False}}), ("heteroreason", {"draft": {"device": "v80"}}),
           ("heteroreason", {"draft": {"device": "jetson_orin_nano"}})]


@pytest.mark.parametrize("system,extra", SYSTEMS)
@pytest.mark.parametrize("backtracking", [True, False])
def test_conservation_of_tokens_and_energy(system, extra, backtracking):
    trace = cosim.trace.generate("olympiadbench", 12, seed=4, backtracking=backtracking)
    result = cosim.simulate(cosim.scenario(system, 1, **extra), trace, activities=True)
    for problem, row in zip(trace.problems, result.per_problem):
        s = cosim.trace.summarize(problem, trace.header)
        assert row["final_tokens"] == s.final_tokens
        assert row["drafted_tokens"] == s.accepted_draft_tokens + s.discarded_draft_tokens \
            + row["discarded_step_ahead_tokens"]
        assert row["energy_j"] == pytest.approx(sum(row[f"energy_j_{r}"] for r in ("draft", "prm", "target")))
        if system == "gpu-baseline":
            assert row["target_tokens"] == s.target_tokens and row["discarded_step_ahead_tokens"] == 0
    # Energy rebuilt from the activity log (idle power all the time, plus each activity's excess)
    # equals the power meters' integral.
    devices = {"draft": result_device(system, extra), "prm": "rtx3090", "target": "rtx3090"}
    by_problem = {}
    for a in result.activities:
        by_problem.setdefault(a.problem, []).append(a)
    for i, row in enumerate(result.per_problem):
        start, end = row["start_s"] / NS, row["end_s"] / NS
        for role, device in devices.items():
            power = POWER[device]
            # Work still running when the answer settled counts up to that instant.
            extra_j = sum((getattr(power, f"{state_of(a)}_w") - power.idle_w) * (min(a.end_ns, end) - a.start_ns)
                          * NS for a in by_problem[i] if a.device == role and a.kind != "stall" and a.start_ns < end)
            assert row[f"energy_j_{role}"] == pytest.approx(power.idle_w * (end - start) * NS + extra_j, rel=1e-6)


def result_device(system, extra):
    return extra.get("draft", {}).get("device", "u280" if system == "heteroreason" else "rtx3090")


POWER = {d: drawn_power(d) for d in ("u280", "v80", "rtx3090", "jetson_orin_nano")}
STATE = {"draft": "decode", "shadow_sync": "decode", "refine": "decode", "draft_prefill": "prefill",
         "verify": "prefill", "target_prefill": "prefill", "prompt_prefill": "prefill", "migrate": "prefill",
         "request": "idle"}


def state_of(activity):
    # "kv_load" is the FPGA taking in the prompt's KV: transfer power.
    return "transfer" if activity.kind == "kv_load" else STATE[activity.kind]


def test_gpu_baseline_never_overlaps_draft_prm_and_target_work():
    trace = cosim.trace.generate("math500", 30, seed=9)
    result = cosim.simulate(cosim.scenario("gpu-baseline", 1), trace, activities=True)
    for i in range(len(trace)):
        spans = sorted((a.start_ns, a.end_ns) for a in result.activities
                       if a.problem == i and a.device in ("draft", "prm", "target") and a.end_ns > a.start_ns)
        for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
            assert s1 >= e0 - 1e-3
        assert result.per_problem[i]["stall_ratio"] == 0.0


def test_same_trace_and_scenario_give_identical_results():
    trace = cosim.trace.generate("gaokao2023en", 20, seed=2)
    scn = cosim.scenario("heteroreason", 1)
    assert cosim.simulate(scn, trace).per_problem == cosim.simulate(scn, trace).per_problem


def test_bad_inputs_are_named():
    long_step = one(TrajectoryBuilder("long", PROMPT).accept(4500).build())
    with pytest.raises(cosim.ConfigError, match=r"problem 'long', events\[0\] .*4600 tokens, beyond the "
                                                r"4096-token window of the prm model"):
        cosim.simulate(cosim.scenario("heteroreason", 1), long_step)
    ok = one(TrajectoryBuilder("ok", PROMPT).accept(10).build())
    small = {"device": "rtx3090", "overrides": {"gpu.memory": "12 GB"}}
    with pytest.raises(cosim.CapacityError, match=r"target\.memory: region 'weights' needs 15232000000 bytes .* "
                                                  r"holds 12000000000 bytes"):
        cosim.simulate(cosim.scenario("heteroreason", 1, target=small), ok)
    with pytest.raises(cosim.ConfigError, match=r"system must be one of gpu-baseline, gpu-stepahead, "
                                                r"heteroreason, fpga-baseline, autoregressive, speculative-decoding, "
                                                r"split-decoding, specreason, lookahead, got 'fpga-only'"):
        cosim.scenario("fpga-only")
    with pytest.raises(cosim.ConfigError, match=r"unknown device 'u290'"):
        cosim.scenario("heteroreason", draft={"device": "u290"})
    with pytest.raises(cosim.ConfigError, match=r"the prm runs on a GPU, not on U280"):
        cosim.scenario("heteroreason", prm={"device": "u280"})


@pytest.mark.parametrize("profile", ["gsm8k", "math500", "gaokao2023en", "olympiadbench"])
def test_calibration_baseline_latency_shares_fall_in_the_published_ranges(profile):
    # The paper's 3-GPU baseline, Config 1: step-level shares across the four datasets.
    result = cosim.simulate(cosim.scenario("gpu-baseline", 1), cosim.trace.generate(profile, 500, seed=3))
    s = result.summary
    total = s["breakdown_draft"] + s["breakdown_prm"] + s["breakdown_target"]
    assert 34.6 <= 100 * s["breakdown_draft"] / total <= 55.4
    assert 22.4 <= 100 * s["breakdown_target"] / total <= 47.5
    assert 16.1 <= 100 * s["breakdown_prm"] / total <= 22.2
