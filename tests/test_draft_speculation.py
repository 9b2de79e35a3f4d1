"""A step-level system's draft model on a GPU decoding its drafted steps speculatively
(toggles.draft_speculation): a drafted step's time worked by hand from its rounds (an EAGLE
head of the draft model on the draft's GPU, a verification by the draft model of each
round's drafts), the draws apart from the target's and replayed exactly, and the settings
that would mean nothing refused with their place."""

import pytest

import cosim
from cosim import ConfigError, load_model
from cosim.config._speculation import eagle_head
from cosim.config.scenario import build_scenario, load_scenario
from cosim.trace import Trace, TraceHeader, TrajectoryBuilder

from test_spec_decode import hand_pass

PROMPT, GPU, DRAFT = 100, "rtx3090", "qwen2.5-0.5b"


def scenario(tmp_path, rate, system="gpu-baseline", **toggles):
    (tmp_path / "acc.yaml").write_text(f"kind: acceptance\nname: fixed\nper_draft: {rate}\ndrafts: 8\n")
    return build_scenario({"system": system, "toggles": {"draft_speculation": True, **toggles},
                           "draft": {"device": GPU, "model": DRAFT},
                           "speculation": {"draft_tokens": 4, "acceptance": "acc.yaml"}},
                          source=str(tmp_path / "s.yaml"))


def drafted_ns(scn):
    # The first step, 40 tokens drafted right after the prompt, is kept.
    problem = TrajectoryBuilder("p", PROMPT).accept(40).accept(10).build()
    run = cosim.simulate(scn, Trace(TraceHeader(), [problem]), activities=True)
    draft = [a for a in run.activities if a.kind == "draft" and a.step == 1]
    assert len(draft) == 1 and draft[0].tokens == 40
    return draft[0].end_ns - draft[0].start_ns


M64 = (1 << 64) - 1
SALT = 0x9E3779B97F4A7C15  # mixed into the request's key for its draft's draws


def mix(x):
    """splitmix64's finaliser, as the engine's keyed draws use it."""
    x = (x + 0x9E3779B97F4A7C15) & M64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def drawn_ns(rate, key, tokens=40, k=4, seed=0):
    """A drafted step's rounds when a pass keeps the drafts its draw u in [0, 1) allows: the
    first i while rate^i > u, u keyed by (seed, key, the round's first position)."""
    model, head = load_model(DRAFT), eagle_head(load_model(DRAFT))
    ns, pos, fresh = 0.0, 0, 1
    while pos < tokens:
        ctx = PROMPT + pos
        drafts = min(k, tokens - pos - 1)
        if drafts == 0:
            ns += hand_pass(model, 1, ctx, False, device=GPU)  # the last token: a plain decode
            kept = 1
        else:
            ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False, device=GPU)
            ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False, device=GPU) for j in range(1, drafts))
            ns += hand_pass(model, drafts + 1, ctx, True, device=GPU)
            u = (mix(mix(mix(seed) ^ key) ^ ctx) >> 11) * 2.0 ** -53
            accepted = 0
            while accepted < drafts and u < rate ** (accepted + 1):
                accepted += 1
            kept = accepted + 1
        pos += kept
        fresh = kept
    return ns


def plain_ns():
    # Decoded plainly: one pass a token at the growing context.
    return sum(hand_pass(load_model(DRAFT), 1, PROMPT + i, False, device=GPU) for i in range(40))


@pytest.mark.parametrize("system", ["gpu-baseline", "gpu-stepahead"])
def test_a_drafted_step_is_its_rounds_when_every_draft_is_kept(tmp_path, system):
    # Eight rounds of four drafts, every one kept (u < 1 always): 5 tokens a round.
    assert drafted_ns(scenario(tmp_path, 1.0, system)) == pytest.approx(drawn_ns(1.0, SALT), rel=1e-9)


def test_without_the_toggle_the_step_decodes_token_by_token(tmp_path):
    plain = build_scenario({"system": "gpu-baseline", "draft": {"device": GPU, "model": DRAFT}})
    assert drafted_ns(plain) == pytest.approx(plain_ns(), rel=1e-9)
    # Drafts nobody keeps cost more than decoding plainly; kept ones less.
    assert drafted_ns(scenario(tmp_path, 0.0)) > plain_ns() > drafted_ns(scenario(tmp_path, 1.0))


def test_the_drafts_draws_are_keyed_apart_from_the_targets(tmp_path):
    # At 0.6 a draft, the first request's drafted step keeps what draws keyed by its index
    # mixed with the salt allow; keyed as its target's runs are (the index alone), the
    # rounds would differ.
    measured = drafted_ns(scenario(tmp_path, 0.6))
    assert measured == pytest.approx(drawn_ns(0.6, 0 ^ SALT), rel=1e-9)
    assert measured != pytest.approx(drawn_ns(0.6, 0), rel=1e-6)


def test_both_roles_speculating_replay_exactly(tmp_path):
    trace = cosim.trace.generate("math500", 6, seed=5)
    both = scenario(tmp_path, 0.6, target_speculation=True)
    first = cosim.simulate(both, trace).per_problem.column("latency_s")
    assert list(first) == list(cosim.simulate(both, trace).per_problem.column("latency_s"))
    off = cosim.simulate(load_scenario("gpu-baseline"), trace).per_problem.column("latency_s")
    assert sum(first) < sum(off)


def test_settings_without_effect_are_refused(tmp_path):
    with pytest.raises(ConfigError, match=r"toggles\.draft_speculation: the draft runs on U280, an FPGA, whose "
                                          r"decoder writes one token"):
        build_scenario({"system": "heteroreason", "toggles": {"draft_speculation": True}})
    with pytest.raises(ConfigError, match=r"batching\.enabled: the draft decodes speculatively at batch 1"):
        build_scenario({"system": "gpu-stepahead", "toggles": {"draft_speculation": True},
                        "batching": {"enabled": True}})
    # An acceptance profile of another proposer is refused for the draft as for the target.
    with pytest.raises(ConfigError, match=r"was measured with proposer eagle, not ngram"):
        build_scenario({"system": "gpu-baseline", "toggles": {"draft_speculation": True},
                        "speculation": {"proposer": "ngram", "acceptance": "eagle3-llama-3.1-8b-mtbench"}})


def test_a_draft_with_a_measured_profile_is_refused_naming_the_draft(tmp_path):
    (tmp_path / "draft.csv").write_text("phase,tokens,context,seconds\nprefill,1,0,0.01\ndecode,1,10,0.01\n")
    with pytest.raises(ConfigError, match=r"the draft has a measured profile; speculative decoding times its "
                                          r"verifications .* by the roofline"):
        build_scenario({"system": "gpu-baseline", "toggles": {"draft_speculation": True},
                        "draft": {"device": GPU, "model": DRAFT, "profile": str(tmp_path / "draft.csv")}})


def test_a_draft_models_proposer_is_a_smaller_model(tmp_path):
    (tmp_path / "acc.yaml").write_text("kind: acceptance\nname: fixed\nper_draft: 0.5\ndrafts: 8\n"
                                       "proposer: draft_model\n")
    with pytest.raises(ConfigError, match=r"speculation\.draft_model: Qwen2\.5-Math-7B.* would propose for the draft "
                                          r"model .*0\.5B.*; a draft model's proposer is a smaller model"):
        build_scenario({"system": "gpu-baseline", "toggles": {"draft_speculation": True},
                        "draft": {"device": GPU, "model": DRAFT},
                        "speculation": {"proposer": "draft_model", "draft_model": "qwen2.5-math-7b",
                                        "acceptance": "acc.yaml"}}, source=str(tmp_path / "s.yaml"))


def test_the_drafts_proposer_takes_the_draft_gpus_memory(tmp_path):
    # Room for the 0.5B draft model and its window of KV, not for its EAGLE head besides.
    from cosim import CapacityError
    scn = scenario(tmp_path, 1.0)
    m, gpu = scn.draft.model, scn.draft.device.gpu
    kv = m.context_window * 2 * m.layers * m.kv_heads * m.head_dim * gpu.kv_bytes_per_element
    tight = scn.with_values({"draft.device.gpu.memory_bytes": m.params * gpu.weight_bytes_per_param + kv + 1e6})
    with pytest.raises(CapacityError, match=r"draft_gpu\.memory: region 'proposer_weights' needs"):
        drafted_ns(tight)
