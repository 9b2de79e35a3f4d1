"""A step-level system's target decoding speculatively (toggles.target_speculation): a
refinement's time worked by hand from its rounds (an EAGLE head of the target drafting on
its GPU, a verification of each round's drafts), the draws keyed so that a replay is
exact, and the settings that would mean nothing refused with their place."""

import pytest

import cosim
from cosim import ConfigError, load_model
from cosim.config._speculation import eagle_head
from cosim.config.scenario import build_scenario, load_scenario
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from conftest import one_line_error, run_cli

from test_spec_decode import hand_pass

PROMPT, GPU, TARGET = 100, "rtx3090", "qwen2.5-math-7b"


def scenario(tmp_path, rate, system="heteroreason", **roles):
    (tmp_path / "acc.yaml").write_text(f"kind: acceptance\nname: fixed\nper_draft: {rate}\ndrafts: 8\n")
    toggles = {"target_speculation": True}
    if system == "heteroreason":
        toggles.update(step_ahead=False, prefetch_cache=False)
    return build_scenario({"system": system, "toggles": toggles, **roles,
                           "speculation": {"draft_tokens": 4, "acceptance": "acc.yaml"}},
                          source=str(tmp_path / "s.yaml"))


def refinement_ns(scn, header=TraceHeader()):
    # Step 1 is rejected and the target writes it again, 30 tokens after the prompt.
    problem = TrajectoryBuilder("p", PROMPT, header=header).reject(40).refine(30).accept(10).build()
    run = cosim.simulate(scn, Trace(header, [problem]), activities=True)
    refine = [a for a in run.activities if a.kind == "refine"]
    assert len(refine) == 1 and refine[0].tokens == 30
    return refine[0].end_ns - refine[0].start_ns


def all_kept_ns():
    # Six rounds of four drafts, every one kept: 5 tokens a round from the prompt's end.
    target, head = load_model(TARGET), eagle_head(load_model(TARGET))
    ns, fresh = 0.0, 1
    for r in range(6):
        ctx = PROMPT + 5 * r
        ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False, device=GPU)
        ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False, device=GPU) for j in (1, 2, 3))
        ns += hand_pass(target, 5, ctx, True, device=GPU)
        fresh = 5
    return ns


def test_a_refinement_is_its_rounds_when_every_draft_is_kept(tmp_path):
    assert refinement_ns(scenario(tmp_path, 1.0)) == pytest.approx(all_kept_ns(), rel=1e-9)


@pytest.mark.parametrize("system, header", [("gpu-baseline", TraceHeader()),
                                            ("specreason", TraceHeader(backtracking=False))])
def test_a_strictly_sequential_systems_target_decodes_in_the_same_rounds(tmp_path, system, header):
    # How the target decodes is no overlap: a sequential system may draft in its target too
    # (SpecReason with speculative decoding inside, as its paper combines them).
    scn = scenario(tmp_path, 1.0, system, draft={"device": GPU, "model": "qwen2.5-0.5b"})
    assert scn.toggles.target_speculation and not scn.toggles.step_ahead
    assert refinement_ns(scn, header) == pytest.approx(all_kept_ns(), rel=1e-9)


def test_drafts_nobody_keeps_cost_more_than_decoding_plainly(tmp_path):
    plain = build_scenario({"system": "heteroreason", "toggles": {"step_ahead": False, "prefetch_cache": False}})
    assert refinement_ns(scenario(tmp_path, 0.0)) > refinement_ns(plain) > refinement_ns(scenario(tmp_path, 1.0))


@pytest.mark.parametrize("name, backtracking", [("heteroreason-u280-200", True), ("specreason-u280", False)])
def test_speculation_in_the_target_speeds_a_step_level_system_up_and_replays_exactly(name, backtracking):
    trace = cosim.trace.generate("math500", 8, seed=3, backtracking=backtracking)
    on = load_scenario(name).with_values({"toggles.target_speculation": True})
    off = cosim.simulate(load_scenario(name), trace).per_problem.column("latency_s")
    first = cosim.simulate(on, trace).per_problem.column("latency_s")
    again = cosim.simulate(on, trace).per_problem.column("latency_s")
    assert list(first) == list(again)
    assert sum(first) < sum(off)


def test_settings_without_effect_are_refused(tmp_path):
    (tmp_path / "s.yaml").write_text("name: s\nsystem: heteroreason\nspeculation: {draft_tokens: 2}\n")
    line = one_line_error(run_cli("run", str(tmp_path / "s.yaml"), cwd=tmp_path))
    assert ("s.yaml:3: speculation: the heteroreason system decodes speculatively only with "
            "toggles.target_speculation (or, with a GPU draft, toggles.draft_speculation) on") in line
    with pytest.raises(ConfigError, match=r"batching\.enabled: the target decodes speculatively at batch 1"):
        build_scenario({"system": "heteroreason", "toggles": {"target_speculation": True},
                        "batching": {"enabled": True}})
    # An overlap stays refused on a sequential system, with the target drafting or not.
    with pytest.raises(ConfigError, match=r"gpu-baseline is strictly sequential; its toggles stay off"):
        build_scenario({"system": "gpu-baseline", "toggles": {"target_speculation": True, "shadow_sync": True}})
