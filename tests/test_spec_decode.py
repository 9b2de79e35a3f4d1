"""Token-level speculative decoding on one GPU (models/spec_decode.hpp): the passes, drafts
and acceptances against Leviathan et al.'s closed form, and a timeline worked by hand from
the roofline of docs/hardware.md (the verification samples at every position)."""

import math

import pytest

from cosim import ConfigError, load_device, load_model
from cosim.config._speculation import eagle_head, mtp_head
from cosim.standalone import gpu_speculate

from handmodel import attention_macs_per_position, head_macs, kv_elements, linear_macs, roofline

DEVICE, MODEL = "h100-sxm", "llama-3.1-8b"


def hand_pass(model, n, ctx, verify, overhead=True, device=DEVICE):
    """A forward pass of n tokens after ctx on the GPU (the H100): every token through the
    layers, the output head at every position when verifying (else once), the weights and KV
    read once."""
    g = load_device(device).gpu
    heads = n if verify else 1
    macs = n * (linear_macs(model) - head_macs(model)) + heads * head_macs(model) + \
        attention_macs_per_position(model) * (n * ctx + n * (n - 1) / 2)
    compute = 2 * macs / (g.peak_tflops * g.compute_efficiency * 1e3)
    kv = ctx if (n == 1 and not verify) else ctx + n
    memory = (linear_macs(model) * g.weight_bytes_per_param + kv * kv_elements(model) * g.kv_bytes_per_element) \
        / (g.memory_bandwidth_gbps * g.memory_efficiency)
    fixed = (g.forward_overhead_ns if overhead else 0.0) + model.layers * g.layer_overhead_ns
    return fixed + roofline(compute, memory, g.roofline_exponent)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_every_draft_accepted_yields_k_plus_one_tokens_a_pass(k):
    output = 1 + (k + 1) * 7 + 2  # seven full passes, then one of a single draft
    r = gpu_speculate(DEVICE, MODEL, 300, output, draft_tokens=k, acceptance=1.0)
    assert r.passes == 8
    assert r.drafted == r.accepted == 7 * k + 1


def test_no_draft_accepted_is_one_token_a_pass():
    r = gpu_speculate(DEVICE, MODEL, 300, 41, draft_tokens=4, acceptance=0.0)
    # Each pass keeps only the target's own token; the last verifies no draft at all.
    assert (r.passes, r.accepted) == (40, 0)
    assert r.drafted == 4 * 36 + 3 + 2 + 1


@pytest.mark.parametrize("a,k", [(0.6, 4), (0.85, 3)])
def test_tokens_a_pass_follow_the_closed_form(a, k):
    # Leviathan et al., Eq. 1: with a per-draft acceptance a and k drafts, a pass yields
    # (1 - a^(k+1)) / (1 - a) tokens on average. Its spread, from the distribution of the
    # accepted count (a^j (1 - a) for j < k, a^k for k), bounds the sample mean.
    output = 40001
    r = gpu_speculate(DEVICE, MODEL, 100, output, draft_tokens=k, acceptance=a, seed=7)
    mean = (1 - a ** (k + 1)) / (1 - a)
    probs = [a ** j * (1 - a) for j in range(k)] + [a ** k]
    var = sum(p * (j + 1) ** 2 for j, p in enumerate(probs)) - mean ** 2
    passes = r.passes
    assert abs((output - 1) / passes - mean) < 5 * math.sqrt(var / passes)
    # Accepted over drafted: the mean accepted count over k.
    assert r.accepted / r.drafted == pytest.approx((mean - 1) / k, abs=5 * math.sqrt(var / passes) / k + 0.01)


def test_a_request_draws_the_same_whatever_the_run():
    one = gpu_speculate(DEVICE, MODEL, 100, 500, acceptance=0.7, seed=3, request=11)
    two = gpu_speculate(DEVICE, MODEL, 100, 500, acceptance=0.7, seed=3, request=11)
    other = gpu_speculate(DEVICE, MODEL, 100, 500, acceptance=0.7, seed=3, request=12)
    assert (one.passes, one.accepted) == (two.passes, two.accepted)
    assert (one.passes, one.accepted) != (other.passes, other.accepted)


def test_an_eagle_timeline_by_hand():
    # k = 3, every draft accepted, 1 + 4 x 3 tokens: after the prefill, the head drafts over
    # the prompt (its first pass), then over the 4 tokens each verification kept; two
    # single-token passes follow each first pass; each verification reads 4 positions.
    prompt, k = 200, 3
    target, head = load_model(MODEL), eagle_head(load_model(MODEL))
    r = gpu_speculate(DEVICE, MODEL, prompt, 13, draft_tokens=k, acceptance=1.0)
    ns, ctx, fresh = 0.0, prompt, prompt
    for _ in range(3):
        ns += hand_pass(head, fresh, ctx - fresh, False, overhead=False)
        ns += sum(hand_pass(head, 1, ctx + j - 1, False, overhead=False) for j in range(1, k))
        ns += hand_pass(target, k + 1, ctx, True)
        ctx, fresh = ctx + k + 1, k + 1
    assert r.decode_ns == pytest.approx(ns, rel=1e-9)
    g = load_device(DEVICE).gpu
    prefill = hand_pass(target, prompt, 0, False)
    assert r.first_token_ns == pytest.approx(g.request_overhead_ns + prefill, rel=1e-9)
    assert r.end_ns == pytest.approx(r.first_token_ns + ns, rel=1e-6)


def test_an_ngram_lookup_costs_the_host_its_time_per_pass():
    r = gpu_speculate(DEVICE, MODEL, 200, 9, draft_tokens=3, acceptance=1.0, proposer="ngram", lookup_us=80)
    target = load_model(MODEL)
    expected = 2 * 80e3 + hand_pass(target, 4, 200, True) + hand_pass(target, 4, 204, True)
    assert r.decode_ns == pytest.approx(expected, rel=1e-9)
    assert r.gpu_ns == pytest.approx(expected - 160e3, rel=1e-9)


def test_a_draft_model_on_the_same_gpu_drafts_with_its_own_shape():
    fast = gpu_speculate(DEVICE, MODEL, 200, 101, acceptance=0.8, proposer="draft_model", draft_model="llama-3.2-1b")
    head = gpu_speculate(DEVICE, MODEL, 200, 101, acceptance=0.8)
    # The same draws, so the same passes; a 1B model is slower to draft with than one layer.
    assert (fast.passes, fast.accepted) == (head.passes, head.accepted)
    assert fast.decode_ns > head.decode_ns


@pytest.mark.parametrize("kwargs,message", [
    ({"acceptance": [0.5, 0.7, 0.2]}, r"acceptance\[1\]: 0\.7.* must be within \[0, 0\.5"),
    ({"acceptance": [0.5, 0.3]}, r"acceptance: 2 rates for 3 draft tokens"),
    ({"acceptance": 1.5}, r"acceptance: a rate within \[0, 1\], got 1\.5"),
    ({"proposer": "medusa"}, r"proposer: one of eagle, mtp, draft_model, ngram, got 'medusa'"),
    ({"draft_model": "llama-3.2-1b"}, r"draft_model: give it with proposer draft_model"),
    ({"draft_tokens": 0}, r"draft_tokens: must be >= 1"),
])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        gpu_speculate(DEVICE, MODEL, 100, 50, **kwargs)


def test_an_mtp_module_is_one_layer_as_the_targets_moe_layers_with_its_experts():
    m = load_model("qwen3-30b-a3b")
    head = mtp_head(m)
    assert (head.layers, head.dense_layers, head.experts, head.experts_per_token) == (1, 0, 128, 8)
    routed = 128 * 3 * m.hidden * m.expert_ffn
    assert head.params == pytest.approx((m.params - 48 * routed - m.hidden * m.vocab) / 48 + routed
                                        + m.hidden * m.vocab + 2 * m.hidden ** 2)
    # Its drafts read the experts they touch, which an EAGLE head's dense layer does not.
    mtp = gpu_speculate("h200", "qwen3-30b-a3b", 200, 60, draft_tokens=3, acceptance=0.8, proposer="mtp")
    eagle = gpu_speculate("h200", "qwen3-30b-a3b", 200, 60, draft_tokens=3, acceptance=0.8)
    assert (mtp.passes, mtp.accepted) == (eagle.passes, eagle.accepted)
    assert mtp.decode_ns != eagle.decode_ns
