"""specreason: the target scores each drafted step itself (SpecReason), against a timeline
worked by hand from the timing formulas of tests/handmodel.py."""

import math

import pytest
import yaml

import cosim
from cosim.live import TracePolicy
from cosim.systems import by_name
from cosim.uncertainty._factors import factors
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from conftest import one_line_error, run_cli
from handmodel import CONTROL_BYTES, TOKEN_BYTES, Gpu, Link

PROMPT = 100
RSD = TraceHeader(backtracking=False)
# SpecReason v2, section 4.1: the scoring pass prefills about 70 new tokens besides the step.
JUDGE = 70
REQUEST_NS = 40e6  # the RTX 3090's request overhead (cosim/data/devices/rtx3090.yaml)


def problem():
    # Step 1 kept; step 2 judged below the threshold and written again by the target; step 3 kept.
    return TrajectoryBuilder("p", PROMPT, header=RSD).accept(40).reject(30).refine(50).accept(20).build()


def run(name="specreason", **kw):
    return cosim.simulate(cosim.load_scenario(name), Trace(RSD, [problem()]), activities=True, **kw)


def test_the_judge_prompt_is_the_papers_and_a_factor_of_its_own():
    scn = cosim.load_scenario("specreason")
    assert scn.serving.judge_prompt_tokens == JUDGE and by_name("specreason").verifier_is_target
    names = {f.name: (f.low, f.high) for f in factors(scn)}
    assert names["serving.judge_prompt_tokens"] == (40, 120)
    assert "serving.prm_prefix_cache" not in names
    # A system with a PRM reads no scoring prompt: no factor, and refused where given.
    assert "serving.judge_prompt_tokens" not in {f.name for f in factors(cosim.load_scenario("gpu-baseline"))}
    with pytest.raises(cosim.ConfigError, match=r"serving\.judge_prompt_tokens=90: the gpu-baseline system does "
                                                 r"not read serving\.judge_prompt_tokens"):
        cosim.load_scenario("gpu-baseline").with_values({"serving.judge_prompt_tokens": 90},
                                                        given_as={"serving.judge_prompt_tokens":
                                                                  "serving.judge_prompt_tokens=90"})


def test_a_longer_scoring_prompt_is_prefilled_at_each_score():
    scn = cosim.load_scenario("specreason").with_values({"serving.judge_prompt_tokens": 100})
    result = cosim.simulate(scn, Trace(RSD, [problem()]), activities=True)
    assert [a.tokens for a in result.activities if a.kind == "verify"] == [PROMPT + 40 + 100, 130, 120]


def test_a_step_is_scored_by_the_target_over_its_own_kv_cache():
    result = run()
    verify = [a for a in result.activities if a.kind == "verify"]
    # First score: the prompt, step 1 and the scoring prompt (nothing cached yet). Step 2 after
    # the kept step 1; step 3 after the target's own step 2, which its KV cache already holds.
    assert [(a.device, a.tokens) for a in verify] == [("target", PROMPT + 40 + JUDGE), ("target", 30 + JUDGE),
                                                      ("target", 20 + JUDGE)]
    # A kept or regenerated step is in the target's KV cache: it never prefills to catch up.
    assert not [a for a in result.activities if a.kind == "target_prefill"]
    assert not [a for a in result.activities if a.device in ("prm", "pcie_prm")]


def test_the_latency_is_the_hand_worked_sequential_timeline():
    scn = cosim.load_scenario("specreason")
    assert scn.draft.link == scn.target.link == cosim.load_link("pcie_gen4_x16")
    link = Link("pcie_gen4_x16")
    draft, target = Gpu("rtx3090", "qwen2.5-0.5b"), Gpu("rtx3090", "qwen2.5-math-7b")
    assert draft.request == target.request == REQUEST_NS

    def drafted(context, n):  # a step decoded on the draft GPU
        return REQUEST_NS + sum(draft.decode(context + j) for j in range(n))

    def scored(n, context, at):  # to the host and on to the target, its scoring pass, the verdict back
        return 2 * link.ns(TOKEN_BYTES * n) + REQUEST_NS + target.prefill(context - at + n + JUDGE, at) + \
            link.ns(CONTROL_BYTES)

    t = REQUEST_NS + draft.prefill(PROMPT, 0)
    t += drafted(PROMPT, 40) + scored(40, PROMPT, 0) + link.ns(CONTROL_BYTES)  # the command to the draft
    t += drafted(140, 30) + scored(30, 140, 140) + link.ns(CONTROL_BYTES)
    # The target writes step 2 from its cached context; the draft prefills it before step 3.
    t += REQUEST_NS + sum(target.decode(140 + j) for j in range(50)) + draft.prefill(50, 140)
    t += drafted(190, 20) + scored(20, 190, 190)  # the problem ends with the last verdict at the host
    assert run().per_problem[0]["latency_s"] * 1e9 == pytest.approx(t, abs=1e-3)


def test_the_scoring_passes_are_the_targets_energy():
    row = run().per_problem[0]
    assert row["energy_j_prm"] == 0.0 and row["breakdown_prm"] == 0.0
    assert math.isclose(row["energy_j"], row["energy_j_draft"] + row["energy_j_target"], rel_tol=1e-12)


def test_an_fpga_draft_is_scored_the_same_way():
    result = run("specreason-u280")
    verify = [a.tokens for a in result.activities if a.kind == "verify"]
    assert verify == [PROMPT + 40 + JUDGE, 30 + JUDGE, 20 + JUDGE]
    # The prompt's KV for the draft model is made on the target GPU and migrates to the board.
    assert [a.device for a in result.activities if a.kind == "migrate"] == ["target"]


def test_a_live_run_replays_its_trace_and_serving_has_no_prm_pool(tmp_path):
    scn = cosim.load_scenario("specreason")
    trace = cosim.trace.generate("math500", 8, seed=5, backtracking=False).in_memory()
    replay = cosim.simulate(scn, trace, vcd=tmp_path / "run")
    live = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert live.result.per_problem == replay.per_problem
    assert "$scope module prm" not in (tmp_path / "run.vcd").read_text()
    assert "PRM" not in (tmp_path / "run.gtkw").read_text()
    served = cosim.serve.run(cosim.scenario("specreason", 1, cluster={"draft": {"devices": 2},
                                                                      "target": {"devices": 2}},
                                            batching={"enabled": True}), trace, rate=4.0, seed=1)
    assert set(served.summary.pools) == {"draft", "target"} and served.summary.requests == 8
    assert math.isclose(served.summary.energy_j, sum(p.energy_j for p in served.summary.pools.values()))


@pytest.mark.parametrize("text,where,message", [
    ("prm: {device: rtx3090}\n", ":3", r"target scores each drafted step itself; it has no PRM"),
    ("algorithm: brsd\n", ":3", r"the specreason system replays rsd traces"),
    ("cluster: {prm: {devices: 2}}\n", ":3", r"no PRM; its scoring passes run on the target GPUs"),
    ("toggles: {step_ahead: true}\n", ":3", r"specreason is strictly sequential"),
    ("serving: {prm_prefix_cache: true}\n", ":3", r"no PRM; the target scores over its own KV cache"),
])
def test_what_it_would_ignore_is_refused_with_its_line(tmp_path, text, where, message):
    path = tmp_path / "s.yaml"
    path.write_text("system: specreason\ntarget: {device: rtx3090}\n" + text)
    with pytest.raises(cosim.ConfigError, match=message) as err:
        cosim.load_scenario(path)
    assert f"{path}{where}" in str(err.value)


def test_a_prm_parameter_on_the_command_line_is_refused(tmp_path):
    line = one_line_error(run_cli("run", "specreason", "--problems", "2", "--set",
                                  "prm.link.bandwidth_gbps=16", "--out", tmp_path / "out", cwd=tmp_path))
    assert "--set prm.link.bandwidth_gbps" in line and "no PRM" in line
    assert not (tmp_path / "out").exists()


def test_a_step_whose_scoring_prompt_overflows_the_targets_window_is_refused_before_it_runs():
    # Qwen2.5-Math-7B holds 4,096 tokens: 100 + 3,950 fit, the 70-token scoring prompt does not.
    long = TrajectoryBuilder("long", PROMPT, header=RSD).accept(3950).build()
    with pytest.raises(cosim.ConfigError, match=r"problem 'long', events\[0\] .*reaches 4120 tokens with its "
                                                 r"70-token scoring prompt, beyond the 4096-token window of the "
                                                 r"target model"):
        cosim.simulate(cosim.load_scenario("specreason"), Trace(RSD, [long]))
    fits = TrajectoryBuilder("fits", PROMPT, header=RSD).accept(4096 - PROMPT - JUDGE).build()
    assert cosim.simulate(cosim.load_scenario("specreason"), Trace(RSD, [fits])).summary["problems"] == 1


def test_a_written_scenario_reloads_and_serving_names_no_prm_device(tmp_path):
    scn = cosim.scenario("specreason", 1, cluster={"draft": {"devices": 2}, "target": {"devices": 2}},
                         batching={"enabled": True})
    path = tmp_path / "written.yaml"
    path.write_text(yaml.safe_dump(scn.reloadable(), sort_keys=False))
    assert "prm_prefix_cache" not in path.read_text()
    assert cosim.load_scenario(path).reloadable() == scn.reloadable()
    trace = cosim.trace.generate("math500", 4, seed=2, backtracking=False).in_memory()
    per = cosim.serve.run(scn, trace, rate=2.0, seed=1).per_request
    assert list(per.column("prm_device")) == [-1] * 4
    assert sorted(set(per.column("target_device"))) == [0, 1]
