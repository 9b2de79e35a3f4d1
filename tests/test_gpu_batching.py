"""Iteration-level batching on one GPU, worked by hand from the device sheet and the
model's shape: the weights are read once per iteration, whoever is in the batch."""

import pytest

import cosim
from conftest import TARGET_ATTN_MACS_PER_CTX, TARGET_KV_ELEMENTS, TARGET_MACS

# RTX 3090 (cosim/data/devices/rtx3090.yaml) restated: 936 GB/s at 0.710, 71 TFLOPS at 0.817,
# the smooth roofline's exponent 2.35, 1.5 ms + 28 layers x 150 us of launches, BF16 weights and KV.
BW_BYTES_PER_NS = 936 * 0.710
FLOPS_PER_NS = 71e3 * 0.817
EXPONENT = 2.35
OVERHEAD_NS = 1.5e6 + 28 * 150e3
WEIGHTS = TARGET_MACS * 2
KV = TARGET_KV_ELEMENTS * 2
HEAD_MACS = 3584 * 152064  # once per sequence: logits only where the engine samples


def iteration_ns(decode_contexts=(), prefills=()):
    """One forward pass: weights once, each sequence's KV, the batch's FLOPs."""
    kv_tokens = sum(decode_contexts) + sum(c + n for n, c in prefills)
    tokens = [(1, c) for c in decode_contexts] + list(prefills)
    macs = sum(n * (TARGET_MACS - HEAD_MACS) + HEAD_MACS + TARGET_ATTN_MACS_PER_CTX * (n * c + n * (n - 1) / 2)
               for n, c in tokens)
    compute, memory = 2 * macs / FLOPS_PER_NS, (WEIGHTS + kv_tokens * KV) / BW_BYTES_PER_NS
    return OVERHEAD_NS + (compute**EXPONENT + memory**EXPONENT) ** (1 / EXPONENT)


def alone_decode_ns(context, tokens):
    return sum(iteration_ns(decode_contexts=(context + i,)) for i in range(tokens))


def batch(sequences, **kw):
    return cosim.standalone.gpu_batch("rtx3090", "qwen2.5-math-7b", sequences, **kw)


def test_two_sequences_decoding_together_read_the_weights_once_per_iteration():
    r = batch([("decode", 3, 100, 0.0), ("decode", 3, 200, 0.0)])
    expected = sum(iteration_ns(decode_contexts=(100 + i, 200 + i)) for i in range(3))
    assert r["iterations"] == 3 and r["batched_sequences"] == 6
    for seq in r["sequences"]:
        assert seq["end_ns"] == pytest.approx(expected, rel=1e-9)
    one_by_one = alone_decode_ns(100, 3) + alone_decode_ns(200, 3)
    # Two weight reads per token one by one, one together: 14.1 GB each, against 17 MB of KV.
    assert expected < 0.51 * one_by_one


def test_a_batch_of_one_is_timed_as_the_lone_operation():
    r = batch([("decode", 4, 300, 0.0)])
    alone = cosim.standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", 4, 300)
    assert r["sequences"][0]["end_ns"] == pytest.approx(alone["time_ns"], rel=1e-12)
    assert r["sequences"][0]["end_ns"] == pytest.approx(alone_decode_ns(300, 4), rel=1e-9)


def test_max_batch_one_serves_in_arrival_order():
    r = batch([("decode", 2, 100, 0.0), ("decode", 2, 500, 0.0)], max_batch=1)
    first, second = (s["end_ns"] for s in r["sequences"])
    assert first == pytest.approx(alone_decode_ns(100, 2), rel=1e-9)
    assert second == pytest.approx(first + alone_decode_ns(500, 2), rel=1e-9)
    assert r["iterations"] == 4 and r["batched_sequences"] == 4


def test_a_long_prefill_is_chunked_by_the_token_budget():
    r = batch([("prefill", 2500, 0, 0.0)], token_budget=1024)
    chunks = [(1024, 0), (1024, 1024), (452, 2048)]
    assert r["iterations"] == 3
    assert r["sequences"][0]["end_ns"] == pytest.approx(sum(iteration_ns(prefills=[c]) for c in chunks), rel=1e-9)


def test_a_decode_shares_the_budget_with_a_prefill_chunk():
    # Budget 600: the decode's token and 599 prompt tokens, then the last 1 with the next token.
    r = batch([("decode", 2, 50, 0.0), ("prefill", 600, 0, 0.0)], token_budget=600)
    t1 = iteration_ns(decode_contexts=(50,), prefills=[(599, 0)])
    t2 = iteration_ns(decode_contexts=(51,), prefills=[(1, 599)])
    decode, prefill = r["sequences"]
    assert decode["end_ns"] == pytest.approx(t1 + t2, rel=1e-9)
    assert prefill["end_ns"] == pytest.approx(t1 + t2, rel=1e-9)


@pytest.mark.parametrize("policy,verify_first", [("fcfs", False), ("verify_first", True)])
def test_verify_first_puts_a_verification_ahead_of_earlier_work(policy, verify_first):
    # One token per iteration: whoever is scheduled first has the GPU to itself.
    r = batch([("prefill", 3, 0, 0.0), ("verify", 2, 0, 0.0)], token_budget=1, policy=policy)
    prefill, verify = (s["end_ns"] for s in r["sequences"])
    assert (verify < prefill) == verify_first


def test_energy_shares_add_up_to_the_gpu_busy_energy():
    r = batch([("decode", 3, 100, 0.0), ("prefill", 200, 0, 0.0), ("decode", 5, 400, 0.0)])
    idle_w, span_ns = 25.0, max(s["end_ns"] for s in r["sequences"])
    busy_j = r["energy_j"] - idle_w * (span_ns - r["busy_ns"]) * 1e-9
    assert sum(s["energy_j"] for s in r["sequences"]) == pytest.approx(busy_j, rel=1e-6)


def test_a_sequence_that_arrives_later_joins_the_running_batch():
    alone = alone_decode_ns(100, 1)
    r = batch([("decode", 3, 100, 0.0), ("decode", 1, 100, alone * 0.5e-9)])
    # It waits for the iteration in flight, then rides in the second.
    late = r["sequences"][1]
    assert late["end_ns"] == pytest.approx(alone + iteration_ns(decode_contexts=(101, 100)), rel=1e-9)


def test_work_whose_kv_cache_does_not_fit_waits_for_a_later_iteration():
    # Room for one sequence's 1,003 tokens of KV, not two: the second waits for the first.
    budget_gb = 1.5 * 1003 * KV / 1e9
    r = batch([("decode", 3, 1000, 0.0), ("decode", 3, 1000, 0.0)], kv_budget_gb=budget_gb)
    first, second = (s["end_ns"] for s in r["sequences"])
    assert first == pytest.approx(alone_decode_ns(1000, 3), rel=1e-9)
    assert second == pytest.approx(first + alone_decode_ns(1000, 3), rel=1e-9)
    assert r["iterations"] == 6 and r["kv_limited_iterations"] == 3
    # With room for both, they share every iteration.
    both = batch([("decode", 3, 1000, 0.0), ("decode", 3, 1000, 0.0)], kv_budget_gb=2.5 * 1003 * KV / 1e9)
    assert both["iterations"] == 3 and both["kv_limited_iterations"] == 0


def test_a_sequence_larger_than_the_kv_memory_is_an_error_not_a_wait():
    with pytest.raises(cosim.SimulationError, match=r"one sequence's KV cache \(1001 tokens"):
        batch([("decode", 3, 1000, 0.0)], kv_budget_gb=500 * KV / 1e9)


@pytest.mark.parametrize("max_batch", [64, 2])
def test_promised_decodes_run_unchanged_iterations_in_one_wait(max_batch):
    # Decodes that promise their tokens run the iterations nothing changes in one wait; an
    # arrival (a decode, a prefill) ends that wait after the iteration under way, so every
    # sequence ends when it would one iteration at a time, with the same energy.
    # (Arrivals at distinct instants: two at once join in whichever order the kernel wakes them.)
    sequences = [("decode", 30, 100, 0.0), ("decode", 20, 300, 0.05), ("prefill", 200, 0, 0.2),
                 ("decode", 12, 50, 0.3), ("decode", 25, 700, 0.31)]
    each = batch(sequences, max_batch=max_batch)
    bulk = batch(sequences, max_batch=max_batch, promised=True)
    for a, b in zip(each["sequences"], bulk["sequences"]):
        assert (b["start_ns"], b["end_ns"]) == (a["start_ns"], a["end_ns"])
        assert b["energy_j"] == pytest.approx(a["energy_j"], rel=1e-12)
    for key in ("iterations", "batched_sequences", "kv_limited_iterations"):
        assert bulk[key] == each[key]
    assert bulk["busy_ns"] == pytest.approx(each["busy_ns"], rel=1e-12)
    assert bulk["energy_j"] == pytest.approx(each["energy_j"], rel=1e-12)
    assert bulk["kernel_deltas"] < each["kernel_deltas"] / (2 if max_batch > 2 else 1)


def test_promised_decodes_fill_the_kv_memory_as_one_at_a_time_does():
    # 0.2 GB of KV holds about 3,500 tokens of this model: the second decode waits for the first.
    sequences = [("decode", 40, 2000, 0.0), ("decode", 30, 1500, 0.01)]
    each = batch(sequences, kv_budget_gb=0.2)
    bulk = batch(sequences, kv_budget_gb=0.2, promised=True)
    assert each["kv_limited_iterations"] > 0
    assert [s["end_ns"] for s in bulk["sequences"]] == [s["end_ns"] for s in each["sequences"]]
    assert bulk["kv_limited_iterations"] == each["kv_limited_iterations"]
