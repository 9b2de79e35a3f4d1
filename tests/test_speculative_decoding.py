"""The speculative-decoding system (docs/system.md, "Token-level speculative decoding"): a
lone request's latency worked by hand from its passes, what its rows report, and the
settings that would mean nothing or could not be, refused with their place."""

import pytest
import yaml

import cosim
from cosim import ConfigError, load_device, load_model
from cosim.config._speculation import eagle_head
from cosim.config.scenario import build_scenario, load_scenario
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from conftest import one_line_error, run_cli

from test_spec_decode import hand_pass
from test_vllm_scheduler import TINY_GPU, TINY_MODEL

DEVICE, MODEL = "h100-sxm", "llama-3.1-8b"


def profile(tmp_path, text):
    path = tmp_path / "acceptance.yaml"
    path.write_text("kind: acceptance\nname: mine\n" + text)
    return path


def scenario(tmp_path, **speculation):
    return build_scenario({"system": "speculative-decoding", "target": {"device": DEVICE, "model": MODEL},
                           "speculation": speculation}, source=str(tmp_path / "s.yaml"))


def test_a_lone_request_is_its_prefill_and_its_rounds(tmp_path):
    # Every draft kept (a rate of 1 a draft): 1 + 4 x 5 tokens are the prefill's and five
    # rounds of three drafts and a verification of four positions.
    profile(tmp_path, "per_draft: 1.0\ndrafts: 3\n")
    scn = scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=3)
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 21)])
    per = cosim.simulate(scn, trace).per_problem
    target, head = load_model(MODEL), eagle_head(load_model(MODEL))
    ns, ctx, fresh = 0.0, 300, 300
    for _ in range(5):
        ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False)
        ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False) for j in (1, 2))
        ns += hand_pass(target, 4, ctx, True)
        ctx, fresh = ctx + 4, 4
    first = load_device(DEVICE).gpu.request_overhead_ns + hand_pass(target, 300, 0, False)
    assert per.column("ttft_s")[0] == pytest.approx(first * 1e-9, rel=1e-9)
    assert per.column("latency_s")[0] == pytest.approx((first + ns) * 1e-9, rel=1e-9)
    assert per.column("drafted_tokens")[0] == 15


def test_serving_reports_each_requests_passes_and_kept_drafts(tmp_path):
    scn = scenario(tmp_path, acceptance="eagle3-gpt-oss-k5", draft_tokens=5)
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 200, 400, 0.5 * i) for i in range(6)])
    per = cosim.serve.run(scn, trace).per_request
    for i in range(6):
        passes, drafted, kept = (int(per.column(k)[i]) for k in ("verify_passes", "drafted_tokens",
                                                                  "kept_draft_tokens"))
        # Each pass keeps its accepted drafts and one token of the target's: 399 in all.
        assert passes + kept == 399
        assert drafted <= 5 * passes and kept <= drafted
    # gpt-oss's EAGLE-3 keeps 1.36 drafts a pass of five: about 2.36 tokens a pass.
    mean = 399 * 6 / sum(per.column("verify_passes"))
    assert mean == pytest.approx(1 + 0.622 + 0.356 + 0.203 + 0.119 + 0.060, rel=0.1)


def test_speculation_beats_the_target_alone_at_eagle3s_acceptance(tmp_path):
    trace = Trace(plain_header("test"), [plain_problem("r0", 300, 600)])
    alone = build_scenario({"system": "autoregressive", "target": {"device": DEVICE, "model": MODEL}})
    spec = scenario(tmp_path)
    t_alone = cosim.simulate(alone, trace).per_problem.column("latency_s")[0]
    t_spec = cosim.simulate(spec, trace).per_problem.column("latency_s")[0]
    # A pass keeps 1 + 0.743 + 0.552 + 0.410 = 2.7 tokens for a little more than a decode's time.
    assert 1.8 < t_alone / t_spec < 2.7


def test_a_written_scenario_reloads_its_speculation(tmp_path):
    profile(tmp_path, "proposer: ngram\nrates: [0.8, 0.6]\n")
    scn = scenario(tmp_path, proposer="ngram", draft_tokens=2, acceptance="acceptance.yaml", lookup_ns="80 us")
    written = tmp_path / "w.yaml"
    written.write_text(yaml.safe_dump(scn.reloadable()))
    again = load_scenario(str(written))
    assert again.speculation == scn.speculation


@pytest.mark.parametrize("speculation,message", [
    ({"proposer": "draft_model"}, r"draft_model: a draft model goes with proposer draft_model"),
    ({"draft_model": "llama-3.2-1b"}, r"draft_model: a draft model goes with proposer draft_model"),
    ({"proposer": "draft_model", "draft_model": "llama-3.2-1b"},
     r"was measured with proposer eagle, not draft_model"),
    ({"draft_tokens": 9}, r"9 drafts a pass, but acceptance profile .* gives rates for 8 positions"),
    ({"proposer": "ngram"}, r"was measured with proposer eagle, not ngram"),
    ({"lookup_ns": "20 us"}, r"lookup_ns: the host looks n-grams up for proposer ngram alone"),
    ({"acceptance": "medusa"}, r"unknown acceptance profile 'medusa'"),
    ({"proposer": "medusa"}, r"proposer: one of eagle, mtp, draft_model, ngram"),
    ({"acceptance": "deepseek-v3-mtp", "draft_tokens": 1}, r"was measured with proposer mtp, not eagle"),
])
def test_settings_that_cannot_be_are_refused(tmp_path, speculation, message):
    with pytest.raises(ConfigError, match=message):
        scenario(tmp_path, **speculation)


def test_a_profile_file_is_checked_line_by_line(tmp_path):
    path = profile(tmp_path, "rates: [0.5, 0.7]\n")
    with pytest.raises(ConfigError, match=rf"{path}:3: rates: rate 2 \(0.7\) exceeds rate 1 \(0.5\)"):
        scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=2)
    path = profile(tmp_path, "rates: [0.5, 1.2]\n")
    with pytest.raises(ConfigError, match=r"a rate within \[0, 1\], got 1.2"):
        scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=2)


def test_other_systems_refuse_the_section(tmp_path):
    (tmp_path / "s.yaml").write_text("name: s\nsystem: autoregressive\nspeculation: {draft_tokens: 2}\n")
    line = one_line_error(run_cli("run", str(tmp_path / "s.yaml"), cwd=tmp_path))
    assert ("s.yaml:3: speculation: the autoregressive system runs the target alone; it has no speculation (drop "
            "it, or choose the speculative-decoding or split-decoding system)") in line
    line = one_line_error(run_cli("run", "target-alone", "--set", "speculation.draft_tokens=2", cwd=tmp_path))
    assert "--set speculation.draft_tokens=2: the autoregressive system does not decode token by token" in line


def test_the_vllm_engine_schedules_drafts_within_the_token_budget(tmp_path):
    # vLLM's scheduler on a GPU whose every step takes its 1 ms forward overhead (the tiny
    # GPU of tests/test_vllm_scheduler.py), two drafts a pass, every draft kept, a budget of
    # 4 tokens. A and B (2 prompt tokens, 7 out) prefill together in step 1. Step 2: A's
    # verification takes 3 tokens (its token and 2 drafts); B gets the 1 left, its drafts
    # dropped: a plain decode. Step 3: A again, 7 tokens, done; B a decode. Step 4: B
    # verifies 2 drafts (6 tokens); step 5: one token left, nothing to draft, a decode.
    (tmp_path / "gpu.yaml").write_text(TINY_GPU)
    (tmp_path / "model.yaml").write_text(TINY_MODEL)
    profile(tmp_path, "per_draft: 1.0\ndrafts: 2\n")
    scn = build_scenario({"system": "speculative-decoding",
                          "target": {"device": "gpu.yaml", "model": "model.yaml"},
                          "batching": {"enabled": True, "max_batch": 2, "token_budget": 4, "block_size": 4,
                                       "num_gpu_blocks": 32},
                          "speculation": {"draft_tokens": 2, "acceptance": "acceptance.yaml"}},
                         source=str(tmp_path / "s.yaml"))
    trace = Trace(plain_header("test"), [plain_problem("a", 2, 7, 0.0), plain_problem("b", 2, 7, 0.0)])
    per = cosim.serve.run(scn, trace).per_request
    ms = 1e-3
    got = {k: [float(v) for v in per.column(k)] for k in ("ttft_s", "latency_s")}
    assert got["ttft_s"] == pytest.approx([1 * ms, 1 * ms], rel=1e-6)
    assert got["latency_s"] == pytest.approx([3 * ms, 5 * ms], rel=1e-6)
    assert [int(v) for v in per.column("verify_passes")] == [2, 4]
    assert [int(v) for v in per.column("kept_draft_tokens")] == [4, 2]
    assert [int(v) for v in per.column("drafted_tokens")] == [4, 2]


def _tiny_speculative(tmp_path, blocks, proposer="eagle"):
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "gpu.yaml").write_text(TINY_GPU)
    (tmp_path / "model.yaml").write_text(TINY_MODEL)
    profile(tmp_path, ("proposer: ngram\n" if proposer == "ngram" else "") + "per_draft: 1.0\ndrafts: 2\n")
    return build_scenario({"system": "speculative-decoding",
                           "target": {"device": "gpu.yaml", "model": "model.yaml"},
                           "batching": {"enabled": True, "max_batch": 2, "token_budget": 4, "block_size": 4,
                                        "num_gpu_blocks": blocks},
                           "speculation": {"draft_tokens": 2, "acceptance": "acceptance.yaml",
                                           "proposer": proposer, **({"lookup_ns": 0} if proposer == "ngram" else {})}},
                          source=str(tmp_path / "s.yaml"))


def test_a_model_proposer_keeps_kv_slots_for_its_drafts(tmp_path):
    # The schedule of the test above with 4 usable blocks of 4 tokens. An EAGLE head writes
    # its 2 drafts' KV beside the target's, so a running request's blocks cover its computed
    # and scheduled tokens and 2 more. Step 1: both prefill 2 tokens (admitted from waiting:
    # no lookahead), a block each. Step 2: A verifies 2 drafts, 2 + 3 + 2 = 7 slots, 2 blocks;
    # B decodes 1 token, 2 + 1 + 2 = 5 slots, 2 blocks: none free. Step 3: A needs 5 + 3 + 2
    # = 10 slots, 3 blocks: B, the newest, is preempted and A finishes. Step 4: B recomputes
    # its 4 tokens (prompt and 2 out) and samples its third; step 5 verifies 2 drafts, 3
    # blocks; step 6, one token left: a decode.
    scn = _tiny_speculative(tmp_path, 5)
    trace = Trace(plain_header("test"), [plain_problem("a", 2, 7, 0.0), plain_problem("b", 2, 7, 0.0)])
    per = cosim.serve.run(scn, trace).per_request
    ms = 1e-3
    assert [float(v) for v in per.column("ttft_s")] == pytest.approx([1 * ms, 1 * ms], rel=1e-6)
    assert [float(v) for v in per.column("latency_s")] == pytest.approx([3 * ms, 6 * ms], rel=1e-6)
    assert [int(v) for v in per.column("kept_draft_tokens")] == [4, 2]


def test_a_request_whose_lookahead_could_never_fit_is_refused(tmp_path):
    # 2 + 7 tokens keep at most 8 in the cache, 2 blocks of 4; with an EAGLE head's 2
    # lookahead slots, 10: 3 blocks, past the 2 usable. An n-gram lookup keeps none.
    trace = Trace(plain_header("test"), [plain_problem("a", 2, 7, 0.0)])
    with pytest.raises(ConfigError, match=r"needs 3 KV blocks of 4 tokens .*2 lookahead slots"):
        cosim.serve.run(_tiny_speculative(tmp_path, 3), trace)
    per = cosim.serve.run(_tiny_speculative(tmp_path / "ngram", 3, proposer="ngram"), trace).per_request
    assert [int(v) for v in per.column("kept_draft_tokens")] == [4]


def test_derived_blocks_count_the_proposers_weights_and_kv(tmp_path):
    # vLLM loads the EAGLE head beside the target: its weights leave less memory, and its
    # one layer's K and V sit in every block beside the target's 32 layers'.
    from cosim.config._cluster import gpu_blocks
    scn = build_scenario({"system": "speculative-decoding", "target": {"device": DEVICE, "model": MODEL},
                          "batching": {"enabled": True},
                          "speculation": {"acceptance": "eagle3-gpt-oss-k5", "draft_tokens": 5}})
    device, target, head = load_device(DEVICE), load_model(MODEL), eagle_head(load_model(MODEL))
    b, g = scn.batching, device.gpu

    def kv(m):
        return 2 * m.layers * m.kv_heads * m.head_dim * g.kv_bytes_per_element

    available = (b.gpu_memory_utilization * g.memory_bytes - (target.params + head.params) * g.weight_bytes_per_param
                 - b.runtime_memory_bytes)
    assert gpu_blocks(scn) == int(available // (b.block_size * (kv(target) + kv(head))))


def test_batched_serving_keeps_the_profiles_tokens_a_pass(tmp_path):
    scn = build_scenario({"system": "speculative-decoding", "target": {"device": DEVICE, "model": MODEL},
                          "batching": {"enabled": True},
                          "speculation": {"acceptance": "eagle3-gpt-oss-k5", "draft_tokens": 5}})
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 200, 400, 0.01 * i) for i in range(32)])
    per = cosim.serve.run(scn, trace).per_request
    passes, kept = per.column("verify_passes"), per.column("kept_draft_tokens")
    assert all(int(p) + int(k) == 399 for p, k in zip(passes, kept))
    assert 399 * 32 / sum(passes) == pytest.approx(1 + 0.622 + 0.356 + 0.203 + 0.119 + 0.060, rel=0.1)


def test_builtins_lists_the_acceptance_profiles(tmp_path):
    done = run_cli("builtins", cwd=tmp_path)
    assert done.returncode == 0
    assert ("acceptance profiles: deepseek-v3-mtp, deepseek-v3-mtp-k7, eagle3-gpt-oss-k5, "
            "eagle3-llama-3.1-8b-mtbench, leviathan-t5-small-xxl, ngram-code-edit-k5") in done.stdout


def test_the_acceptance_scale_multiplies_each_drafts_conditional_rate(tmp_path):
    from cosim.config._acceptance import load
    # One rate a draft: a becomes scale x a. Rates given per position: each draft's rate
    # given the drafts before it kept (0.74 / 0.81 ...) is scaled, and capped at 1.
    assert load("leviathan-t5-small-xxl").scaled(0.8).rates[:3] == pytest.approx((0.6, 0.36, 0.216), rel=1e-12)
    rates = load("ngram-code-edit-k5").scaled(1.2).rates
    assert rates[0] == pytest.approx(0.972, rel=1e-12)
    assert rates[1] == pytest.approx(0.972 * min(1.0, 1.2 * 0.74 / 0.81), rel=1e-12)
    assert all(0.0 <= b <= a <= 1.0 for a, b in zip(rates, rates[1:]))
    # A run at a scale is the run of the scaled profile written out by hand.
    profile(tmp_path, "proposer: eagle\nper_draft: 0.5944\ndrafts: 8\n")  # 0.8 x EAGLE-3's 0.743
    trace = Trace(plain_header("test"), [plain_problem(f"r{i}", 200, 300) for i in range(3)])
    scaled = scenario(tmp_path, acceptance="eagle3-llama-3.1-8b-mtbench", acceptance_scale=0.8, draft_tokens=4)
    written = scenario(tmp_path, acceptance="acceptance.yaml", draft_tokens=4)
    runs = [cosim.simulate(s, trace).per_problem for s in (scaled, written)]
    assert list(runs[0].column("latency_s")) == pytest.approx(list(runs[1].column("latency_s")), rel=1e-12)
    assert list(runs[0].column("drafted_tokens")) == list(runs[1].column("drafted_tokens"))
    # Fewer drafts kept than at the measured rate: more passes, a longer run.
    measured = cosim.simulate(scenario(tmp_path, draft_tokens=4), trace).per_problem
    assert sum(runs[0].column("latency_s")) > sum(measured.column("latency_s"))


def test_the_acceptance_scale_is_a_factor_of_the_sensitivity_analysis(tmp_path):
    from cosim.uncertainty._factors import factors
    names = {f.name: (f.low, f.high) for f in factors(scenario(tmp_path))}
    assert names["speculation.acceptance_scale"] == (0.8, 1.2)
    assert names["speculation.draft_tokens"] == (2, 5)  # the default profile has rates for eight
    assert "speculation.lookup_ns" not in names        # read by the n-gram proposer only
    ngram = scenario(tmp_path, proposer="ngram", acceptance="ngram-code-edit-k5")
    assert "speculation.lookup_ns" in {f.name for f in factors(ngram)}
    # A step-level system reads the section only while its target drafts.
    plain = load_scenario("heteroreason-u280-200")
    assert not [f for f in factors(plain) if f.name.startswith("speculation.")]
    drafting = plain.with_values({"toggles.target_speculation": True})
    assert "speculation.acceptance_scale" in {f.name for f in factors(drafting)}


def test_a_proposer_model_takes_gpu_memory_beside_its_target():
    # Qwen2.5-Math-7B on a GPU of just its weights, a window of KV and half its EAGLE head:
    # the head does not fit, and the run stops naming its region. With room for the head
    # and the head's own window of KV too, it runs.
    from cosim import CapacityError
    base = build_scenario({"system": "speculative-decoding", "target": {"device": "rtx3090",
                                                                        "model": "qwen2.5-math-7b"}})
    m, gpu = base.target.model, base.target.device.gpu
    kv_token = 2 * m.layers * m.kv_heads * m.head_dim * gpu.kv_bytes_per_element
    weights, kv = m.params * gpu.weight_bytes_per_param, m.context_window * kv_token
    head = eagle_head(m)
    head_bytes = head.params * gpu.weight_bytes_per_param
    head_kv = m.context_window * 2 * head.layers * m.kv_heads * m.head_dim * gpu.kv_bytes_per_element
    trace = Trace(plain_header("test"), [plain_problem("r0", 100, 20)])
    tight = base.with_values({"target.device.gpu.memory_bytes": weights + kv + head_bytes / 2})
    with pytest.raises(CapacityError, match=r"region 'proposer_weights' needs"):
        cosim.simulate(tight, trace)
    roomy = base.with_values({"target.device.gpu.memory_bytes": weights + kv + head_bytes + head_kv + 1e6})
    assert cosim.simulate(roomy, trace).per_problem.column("latency_s")[0] > 0
    short = base.with_values({"target.device.gpu.memory_bytes": weights + kv + head_bytes + head_kv / 2})
    with pytest.raises(CapacityError, match=r"region 'proposer_kv_cache' needs"):
        cosim.simulate(short, trace)
