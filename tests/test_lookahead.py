"""lookahead: Lookahead Reasoning. The draft writes steps ahead, the target writes its own
version of each at once in one batching engine, a judge compares the pairs; checked against
a timeline worked by hand from the timing formulas of tests/handmodel.py and against the
algorithm's rules."""

import pytest
import yaml

import cosim
from cosim.config.scenario import build_scenario
from cosim.live import TracePolicy
from cosim.report._speculation import LOOKAHEAD, combined_scenario
from cosim.systems import by_name
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder
from cosim.uncertainty._factors import factors
from conftest import one_line_error, run_cli
from handmodel import CONTROL_BYTES, TOKEN_BYTES, Gpu, Link
from test_target_speculation import all_kept_ns

PROMPT = 100
RSD = TraceHeader(backtracking=False)
# The judge's template besides the two steps (serving.equivalence_prompt_tokens' default).
EQUIVALENCE = 190
REQUEST_NS = 40e6  # the RTX 3090's request overhead (cosim/data/devices/rtx3090.yaml)


def four_steps():
    # Steps 1 and 2 equivalent; step 3's draft judged different, the target's 50 tokens kept; step 4 equivalent.
    return TrajectoryBuilder("p", PROMPT, header=RSD).accept(40).accept(30).reject(30).refine(50).accept(20).build()


def run(problem, name="lookahead", **values):
    scn = cosim.load_scenario(name)
    if values:
        scn = scn.with_values(values)
    return cosim.simulate(scn, Trace(RSD, [problem]), activities=True)


def of(result, kind, device=None):
    return [a for a in result.activities if a.kind == kind and (device is None or a.device == device)]


def test_one_step_is_the_slower_of_draft_and_target_then_the_judge():
    one = TrajectoryBuilder("one", PROMPT, header=RSD).accept(40).build()
    scn = cosim.load_scenario("lookahead")
    assert scn.prm.model == cosim.load_model("qwen2.5-7b-instruct")
    assert scn.serving.equivalence_prompt_tokens == EQUIVALENCE
    link = Link("pcie_gen4_x16")
    draft, target = Gpu("rtx3090", "qwen2.5-0.5b"), Gpu("rtx3090", "qwen2.5-math-7b")
    judge = Gpu("rtx3090", "qwen2.5-7b-instruct")
    # The target writes step 1 from the prompt it prefills itself; the draft prefills the
    # prompt and drafts step 1. A batch of one is timed as the lone operation.
    target_end = REQUEST_NS + target.prefill(PROMPT, 0) + sum(target.decode(PROMPT + j) for j in range(40))
    draft_end = 2 * REQUEST_NS + draft.prefill(PROMPT, 0) + sum(draft.decode(PROMPT + j) for j in range(40))
    assert draft_end < target_end
    # Both versions cross to the judge (two legs each); it prefills its template and both, one
    # answer token; the verdict returns to the host.
    t = target_end + 2 * link.ns(TOKEN_BYTES * 40) + REQUEST_NS + judge.prefill(EQUIVALENCE + 80, 0) + \
        link.ns(CONTROL_BYTES)
    result = run(one)
    assert result.per_problem[0]["latency_s"] * 1e9 == pytest.approx(t, abs=1e-3)
    assert [(a.device, a.tokens) for a in of(result, "verify")] == [("prm", EQUIVALENCE + 80)]


def test_the_target_writes_the_drafted_steps_at_once_and_the_judge_compares_each_pair():
    result = run(four_steps())
    refine = of(result, "refine", "target")
    starts = {a.step: a.start_ns for a in refine}
    ends = {a.step: a.end_ns for a in refine}
    # The run on drafted step 1 (writing step 2) starts before the target's step 1 ends: they overlap.
    assert starts[2] < ends[1] and starts[3] < ends[1]
    # Each run builds on a draft: it prefills that draft's tokens, after the prompt's own prefill.
    assert [(a.step, a.tokens) for a in of(result, "target_prefill")][:4] == [(1, PROMPT), (2, 40), (3, 30), (4, 30)]
    # The judge reads its template and both versions: the target's version of a kept step is
    # as long as the draft (the trace has no other), of step 3 the target's own 50 tokens.
    assert [a.tokens for a in of(result, "verify")] == [EQUIVALENCE + 80, EQUIVALENCE + 60, EQUIVALENCE + 80,
                                                        EQUIVALENCE + 40]
    row = result.per_problem[0]
    assert row["final_tokens"] == 40 + 30 + 50 + 20 and row["verdicts"] == 4
    # Step 3's draft was judged different: the draft device prefills the target's 50 tokens
    # before drafting step 4 again from the context that holds them.
    prefill = [a for a in of(result, "draft_prefill") if a.step == 4]
    assert [a.tokens for a in prefill] == [50]
    verdict3 = sorted(a.end_ns for a in of(result, "verify"))[2]
    assert prefill[0].start_ns > verdict3
    # The run built on the rejected draft (a step 4 started before the verdict) is wasted work.
    step4_runs = [a for a in refine if a.step == 4]
    assert len(step4_runs) == 2 and step4_runs[0].start_ns < verdict3 < step4_runs[1].start_ns


def test_a_kept_draft_needs_no_target_step_of_its_own_and_the_target_keeps_going():
    result = run(four_steps())
    # Kept: the chain takes the draft; the next comparison's target run was already under way
    # before the verdict on the step before it.
    verify = sorted(of(result, "verify"), key=lambda a: a.start_ns)
    refine2 = next(a for a in of(result, "refine", "target") if a.step == 2)
    assert refine2.start_ns < verify[0].end_ns
    # Without drafting ahead (depth 0) the draft device never holds a step beyond the one judged.
    shallow = run(four_steps(), **{"toggles.step_ahead_depth": 0})
    assert shallow.per_problem[0]["discarded_step_ahead_tokens"] == 0
    assert result.per_problem[0]["latency_s"] < shallow.per_problem[0]["latency_s"]


def test_an_fpga_draft_rolls_back_through_its_kvmu():
    result = run(four_steps(), "lookahead-u280")
    ops = [(r.op, r.valid) for r in result.kvmu]
    # The reject of step 3 rolls the KVMU back to the last kept step (100 + 40 + 30); the
    # target's step is prefilled and accepted before step 4 is drafted.
    assert ("rollback", PROMPT + 70) in ops and ("accept", PROMPT + 120) in ops
    assert [a.device for a in of(result, "migrate")] == ["target"]


def test_a_live_run_replays_its_trace_and_serving_pools_every_role(tmp_path):
    scn = cosim.load_scenario("lookahead")
    trace = cosim.trace.generate("math500", 8, seed=5, backtracking=False).in_memory()
    replay = cosim.simulate(scn, trace, vcd=tmp_path / "run")
    live = cosim.cosimulate(scn, TracePolicy(trace), trace)
    assert live.result.per_problem == replay.per_problem
    served = cosim.serve.run(cosim.scenario("lookahead", 1, cluster={"draft": {"devices": 2},
                                                                     "target": {"devices": 2}},
                                            batching={"enabled": True}), trace, rate=4.0, seed=1)
    assert set(served.summary.pools) == {"draft", "prm", "target"} and served.summary.requests == 8
    # Several runs of a request share the target's iterations.
    assert served.summary.pools["target"].mean_batch > 1.0


def test_the_judge_prompt_is_a_factor_and_only_lookahead_reads_it():
    scn = cosim.load_scenario("lookahead")
    assert by_name("lookahead").lookahead and not by_name("specreason").lookahead
    names = {f.name: (f.low, f.high) for f in factors(scn)}
    assert names["serving.equivalence_prompt_tokens"] == (155, 215)
    assert "serving.judge_prompt_tokens" not in names and "serving.prm_prefix_cache" not in names
    for other in ("gpu-baseline", "specreason"):
        with pytest.raises(cosim.ConfigError, match=rf"the {other} system does not read "
                                                    r"serving\.equivalence_prompt_tokens"):
            cosim.load_scenario(other).with_values({"serving.equivalence_prompt_tokens": 150})
    longer = run(TrajectoryBuilder("one", PROMPT, header=RSD).accept(40).build(),
                 **{"serving.equivalence_prompt_tokens": 150})
    assert [a.tokens for a in of(longer, "verify")] == [150 + 80]


@pytest.mark.parametrize("text,message", [
    ("algorithm: brsd\n", r"the lookahead system replays rsd traces"),
    ("toggles: {shadow_sync: true}\n", r"the lookahead system keeps toggles\.shadow_sync false"),
    ("toggles: {step_ahead: false}\n", r"the lookahead system keeps toggles\.step_ahead true"),
    ("serving: {prm_prefix_cache: true}\n", r"the judge reads two versions of a step in a prompt of its own"),
    ("serving: {judge_prompt_tokens: 50}\n", r"does not read serving\.judge_prompt_tokens"),
])
def test_what_it_would_ignore_is_refused_with_its_line(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text("system: lookahead\ndraft: {device: rtx3090, model: qwen2.5-0.5b}\n"
                    "prm: {device: rtx3090, model: qwen2.5-7b-instruct}\ntarget: {device: rtx3090}\n" + text)
    with pytest.raises(cosim.ConfigError, match=message) as err:
        cosim.load_scenario(path)
    assert f"{path}:5" in str(err.value)


def test_a_fixed_toggle_on_the_command_line_is_refused(tmp_path):
    line = one_line_error(run_cli("run", "lookahead", "--problems", "2", "--set", "toggles.prefetch_cache=true",
                                  "--out", tmp_path / "out", cwd=tmp_path))
    assert "toggles.prefetch_cache=true" in line and "keeps toggles.prefetch_cache false" in line
    assert not (tmp_path / "out").exists()


def test_a_written_scenario_reloads(tmp_path):
    scn = cosim.scenario("lookahead", 1, cluster={"draft": {"devices": 2}}, batching={"enabled": True})
    path = tmp_path / "written.yaml"
    path.write_text(yaml.safe_dump(scn.reloadable(), sort_keys=False))
    text = path.read_text()
    assert "prm_prefix_cache" not in text and "judge_prompt_tokens" not in text
    assert cosim.load_scenario(path).reloadable() == scn.reloadable()


def test_the_judge_reads_two_steps_not_the_context_and_a_pair_too_long_for_it_is_refused():
    # Qwen2.5-Math-7B holds 4,096 tokens: a judge of that window compares two 1,900-token
    # versions and its 190-token prompt (3,990) but not two of 1,960 (4,110); the context,
    # which the target holds, is not the judge's.
    scn = cosim.scenario("lookahead", 1, prm={"device": "rtx3090", "model": "qwen2.5-math-7b"})
    fits = TrajectoryBuilder("fits", 300, header=RSD).accept(1900).build()
    assert cosim.simulate(scn, Trace(RSD, [fits])).summary["problems"] == 1
    long = TrajectoryBuilder("long", 100, header=RSD).accept(100).reject(1960).refine(1960).build()
    with pytest.raises(cosim.ConfigError, match=r"problem 'long', events\[1\] .*reaches 4110 tokens \(its prompt "
                                                 r"and both versions of the step\), beyond the 4096-token window "
                                                 r"of the prm model"):
        cosim.simulate(scn, Trace(RSD, [long]))


def test_the_targets_engine_batches_its_runs_even_where_the_other_gpus_do_not():
    trace = cosim.trace.generate("math500", 6, seed=4, backtracking=False).in_memory()
    cluster = {"draft": {"devices": 2}, "prm": {"devices": 1}, "target": {"devices": 1}}
    served = cosim.serve.run(cosim.scenario("lookahead", 1, cluster=cluster), trace, rate=2.0, seed=1)
    pools = served.summary.pools
    assert pools["target"].iterations > 0 and pools["target"].mean_batch > 1.0
    assert pools["draft"].iterations == 0 and pools["prm"].iterations == 0


def lookahead_speculating(tmp_path, rate, **values):
    (tmp_path / "acc.yaml").write_text(f"kind: acceptance\nname: fixed\nper_draft: {rate}\ndrafts: 8\n")
    scn = build_scenario({"system": "lookahead", "toggles": {"target_speculation": True},
                          "draft": {"device": "rtx3090", "model": "qwen2.5-0.5b"},
                          "prm": {"device": "rtx3090", "model": "qwen2.5-7b-instruct"},
                          "target": {"device": "rtx3090"},
                          "speculation": {"draft_tokens": 4, "acceptance": "acc.yaml"}, **values},
                         source=str(tmp_path / "s.yaml"))
    return scn


def test_the_targets_runs_decode_speculatively_in_its_iterations(tmp_path):
    # Lookahead Reasoning with token-level speculation inside the target's runs (LR+SD): an
    # EAGLE head drafts four tokens a round, every one kept, so the run of the 30-token step
    # is six rounds of a head's passes and a verification of five positions, each round one
    # iteration of the target's engine (tests/test_target_speculation.py works them by hand).
    one = TrajectoryBuilder("one", PROMPT, header=RSD).accept(30).build()
    scn = lookahead_speculating(tmp_path, 1.0)
    link = Link("pcie_gen4_x16")
    target, judge = Gpu("rtx3090", "qwen2.5-math-7b"), Gpu("rtx3090", "qwen2.5-7b-instruct")
    target_end = REQUEST_NS + target.prefill(PROMPT, 0) + all_kept_ns()
    t = target_end + 2 * link.ns(TOKEN_BYTES * 30) + REQUEST_NS + judge.prefill(EQUIVALENCE + 60, 0) + \
        link.ns(CONTROL_BYTES)
    result = cosim.simulate(scn, Trace(RSD, [one]), activities=True)
    assert result.per_problem[0]["latency_s"] * 1e9 == pytest.approx(t, rel=1e-9)
    # Served with batching too: the runs of requests in flight verify their drafts together.
    trace = cosim.trace.generate("math500", 6, seed=4, backtracking=False).in_memory()
    served = cosim.serve.run(scn.with_values({"batching.enabled": True, "cluster.draft.devices": 2}), trace,
                             rate=2.0, seed=1)
    alone = cosim.serve.run(cosim.scenario("lookahead", 1, cluster={"draft": {"devices": 2}},
                                           batching={"enabled": True}), trace, rate=2.0, seed=1)
    assert served.summary.requests == 6
    assert served.summary.pools["target"].iterations < alone.summary.pools["target"].iterations


def test_fewer_kept_drafts_mean_more_rounds(tmp_path):
    one = TrajectoryBuilder("one", PROMPT, header=RSD).accept(60).build()
    latency = {rate: cosim.simulate(lookahead_speculating(tmp_path, rate), Trace(RSD, [one]))
               .per_problem[0]["latency_s"] for rate in (1.0, 0.6, 0.0)}
    assert latency[1.0] < latency[0.6] < latency[0.0]


def test_the_target_gpus_memory_holds_its_runs_proposer_too():
    # LR+SD: the draft model of the target's runs sits on the target's GPU. With 0.61 of the
    # RTX 3090's memory, the 7B target's weights fit and the KV cache has room; with the
    # proposer's weights beside them, none is left.
    trace = cosim.trace.generate("math500", 1, seed=1, backtracking=False)
    tight = {"batching.enabled": True, "batching.gpu_memory_utilization": 0.61}
    cosim.simulate(cosim.load_scenario("lookahead").with_values(tight), trace)
    scn = combined_scenario(LOOKAHEAD[0]).with_values(tight)
    wb = scn.target.device.gpu.weight_bytes_per_param
    weights = (scn.target.model.params + cosim.load_model(scn.speculation.draft_model).params) * wb
    assert 0.61 * scn.target.device.gpu.memory_bytes < weights
    with pytest.raises(cosim.ConfigError, match=rf"leaves no room for KV cache beside {weights / 1e9:.2f} GB"):
        cosim.simulate(scn, trace)
