"""The autoregressive system's vLLM engine on a tiny cluster, worked by hand: KV blocks of
4 tokens, every step 1 ms (the GPU's fixed cost per forward pass; its memory and compute are
so fast that nothing else shows), so each request's times follow from the scheduling rules
of vLLM V1 (models/vllm_scheduler.hpp) step by step."""

import pytest

import cosim
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem

MS = 1e-3

TINY_GPU = """kind: gpu
name: tiny
gpu:
  memory_bytes: 1.0e9
  memory_bandwidth_gbps: 1.0e9
  memory_efficiency: 1.0
  peak_tflops: 1.0e9
  compute_efficiency: 1.0
  request_overhead_ns: 0
  forward_overhead_ns: 1.0e6
  layer_overhead_ns: 0
  weight_bytes_per_param: 2
  kv_bytes_per_element: 2
power: {idle_w: 10, prefill_w: 100, decode_w: 50, transfer_w: 10}
"""
TINY_MODEL = """kind: model
name: tiny
layers: 1
hidden: 8
heads: 1
kv_heads: 1
head_dim: 8
ffn: 8
vocab: 16
params: 1000
context_window: 64
"""


@pytest.fixture
def tiny(tmp_path):
    (tmp_path / "gpu.yaml").write_text(TINY_GPU)
    (tmp_path / "model.yaml").write_text(TINY_MODEL)

    def scenario(blocks, prefix_caching=True, max_batch=4, budget=16):
        return cosim.config.scenario.build_scenario({
            "system": "autoregressive",
            "target": {"device": str(tmp_path / "gpu.yaml"), "model": str(tmp_path / "model.yaml")},
            "batching": {"enabled": True, "max_batch": max_batch, "token_budget": budget, "block_size": 4,
                         "num_gpu_blocks": blocks, "prefix_caching": prefix_caching}})
    return scenario


def requests(*shapes):
    """Plain requests arriving at 0, in order: (prompt, output) each."""
    return Trace(plain_header("test"), [plain_problem(f"r{i}", p, o, 0.0) for i, (p, o) in enumerate(shapes)])


def rows(result):
    per = result.per_request
    order = sorted(range(len(per)), key=lambda i: per.column("request")[i])
    return [{name: per.column(name)[i] for name in ("ttft_s", "latency_s")} for i in order]


def test_a_request_waits_until_the_blocks_of_its_whole_prompt_are_free(tiny):
    # 5 blocks (4 usable beside vLLM's null block). A: 12 prompt tokens, 2 out; B: 8 and 2.
    # Step 1: A is admitted (3 blocks for its 12 tokens); B's 8 tokens need 2 blocks, 1 is
    #   free: B waits although its first chunk would fit (scheduler_reserve_full_isl). A
    #   samples its first token at 1 ms.
    # Step 2: A decodes (13 tokens: a 4th block, none left), B still waits; A ends at 2 ms
    #   and frees its 4 blocks.
    # Step 3: B is admitted and prefilled: first token at 3 ms. Step 4: B's last token, 4 ms.
    result = cosim.serve.run(tiny(blocks=5), requests((12, 2), (8, 2)))
    a, b = rows(result)
    assert (a["ttft_s"], a["latency_s"]) == pytest.approx((1 * MS, 2 * MS))
    assert (b["ttft_s"], b["latency_s"]) == pytest.approx((3 * MS, 4 * MS))
    device = result.devices[0]
    assert device["kv_limited_iterations"] == 2 and device["preemptions"] == 0 and device["iterations"] == 4


def test_the_newest_request_is_preempted_and_recomputed_from_what_its_cache_kept(tiny):
    # 6 blocks (5 usable, ids 1-5 in the free queue). A: 8 prompt tokens, 6 out; B: 4 and 8.
    # Step 1: A takes blocks 1, 2 and B block 3; both prefill, first tokens at 1 ms.
    # Step 2: A (9 tokens) takes block 4, B (5 tokens) block 5: none free. Steps 3-5 fit.
    # Step 6: A reaches 13 tokens and needs a 4th block: B, the newest, is preempted (its
    #   blocks 5 and 3 freed, last first) and A takes block 5, evicting B's second block;
    #   nothing is admitted in a step that preempted. A's 6th token ends it at 6 ms.
    # Step 7: B is readmitted with its 4 prompt and 5 output tokens: its first block (3) is
    #   still cached, so it recomputes the other 5 tokens in one chunk and samples its 6th
    #   token. Steps 8 and 9: its 7th and 8th tokens, ending at 9 ms (8 ms had it never
    #   been preempted).
    result = cosim.serve.run(tiny(blocks=6), requests((8, 6), (4, 8)))
    a, b = rows(result)
    assert (a["ttft_s"], a["latency_s"]) == pytest.approx((1 * MS, 6 * MS))
    assert (b["ttft_s"], b["latency_s"]) == pytest.approx((1 * MS, 9 * MS))
    per = result.per_request
    by_request = dict(zip(per.column("request"), zip(per.column("preemptions"), per.column("recomputed_tokens"))))
    assert by_request == {0: (0, 0), 1: (1, 5)}
    assert result.devices[0]["preemptions"] == 1 and result.devices[0]["iterations"] == 9
    # Without prefix caching B recomputes all 9 tokens; the chunk still fits one step.
    plain = cosim.serve.run(tiny(blocks=6, prefix_caching=False), requests((8, 6), (4, 8)))
    assert [r["latency_s"] for r in rows(plain)] == pytest.approx([6 * MS, 9 * MS])
    assert sorted(plain.per_request.column("recomputed_tokens")) == [0, 9]
    # With room for both, nobody is preempted and B ends at 8 ms.
    roomy = cosim.serve.run(tiny(blocks=16), requests((8, 6), (4, 8)))
    assert [r["latency_s"] for r in rows(roomy)] == pytest.approx([6 * MS, 8 * MS])


def test_chunked_prefill_and_the_sequence_cap(tiny):
    # A budget of 8 tokens a step: A's 12-token prompt takes two steps (8, then 4 with its
    # first token at 2 ms). With max_batch 1, B (4 tokens) waits for A's end (A: 3 tokens
    # out, ending at 4 ms), then prefills at 5 ms and ends at 6 ms.
    result = cosim.serve.run(tiny(blocks=32, max_batch=1, budget=8), requests((12, 3), (4, 2)))
    a, b = rows(result)
    assert (a["ttft_s"], a["latency_s"]) == pytest.approx((2 * MS, 4 * MS))
    assert (b["ttft_s"], b["latency_s"]) == pytest.approx((5 * MS, 6 * MS))


def test_a_request_that_could_never_fit_is_refused_with_its_sizes(tiny):
    with pytest.raises(cosim.ConfigError, match=r"needs 4 KV blocks of 4 tokens; the GPU holds 2"):
        cosim.serve.run(tiny(blocks=3), requests((12, 2)))


def test_asynchronous_scheduling_hides_the_host_work_behind_the_gpu(tmp_path, tiny):
    # A GPU whose 1152 bytes of weights take 1 ms to stream (0.001152 GB/s, bytes per ns)
    # beside a 1 ms forward overhead, its KV too small to count: a step is 2 ms when the host
    # and the GPU take turns, 1 ms when the host prepares each step during the one before.
    slow = tmp_path / "slow.yaml"
    slow.write_text(TINY_GPU.replace("memory_bandwidth_gbps: 1.0e9", "memory_bandwidth_gbps: 0.001152")
                    .replace("kv_bytes_per_element: 2", "kv_bytes_per_element: 1.0e-9"))
    for asynchronous, step in ((True, MS), (False, 2 * MS)):
        scn = cosim.config.scenario.build_scenario({
            "system": "autoregressive", "target": {"device": str(slow), "model": str(tmp_path / "model.yaml")},
            "batching": {"enabled": True, "max_batch": 4, "token_budget": 16, "block_size": 4,
                         "num_gpu_blocks": 16, "async_scheduling": asynchronous}})
        (row,) = rows(cosim.serve.run(scn, requests((4, 3))))
        assert (row["ttft_s"], row["latency_s"]) == pytest.approx((step, 3 * step), rel=1e-6)


def test_a_shared_prefix_is_computed_once_and_lets_a_request_in_sooner(tiny):
    # 6 blocks (5 usable). A: 12 prompt tokens (the first 8 shared by every request), 2 out,
    # at 0; B: the same prompt shape, 1 out, at 0.5 ms.
    # Step 1: A takes 3 blocks (2 free), first token at 1 ms.
    # Step 2: A's 13th token takes a 4th block (1 free). B finds its first two blocks (the
    #   shared prefix) in A's cache: it needs one block more, which is free, and computes its
    #   last 4 prompt tokens: its only token at 2 ms, 1.5 ms after it arrived. A ends too.
    # Without the shared prefix B needs 3 blocks, waits for A's end and prefills at step 3.
    def two(shared):
        trace = Trace(plain_header("test", shared_prefix_tokens=shared),
                      [plain_problem("a", 12, 2, 0.0), plain_problem("b", 12, 1, 0.0005)])
        return rows(cosim.serve.run(tiny(blocks=6), trace))

    a, b = two(8)
    assert (a["latency_s"], b["ttft_s"], b["latency_s"]) == pytest.approx((2 * MS, 1.5 * MS, 1.5 * MS))
    a, b = two(0)
    assert (a["latency_s"], b["ttft_s"], b["latency_s"]) == pytest.approx((2 * MS, 2.5 * MS, 2.5 * MS))


def test_the_blocks_are_derived_from_the_memory_share_when_not_given():
    from cosim.config._cluster import gpu_blocks

    scn = cosim.config.scenario.build_scenario({
        "system": "autoregressive", "target": {"device": "rtx4090", "model": "llama-3.1-8b"},
        "batching": {"enabled": True, "gpu_memory_utilization": 0.9}})
    # 0.9 x 24 GiB, less 8,030,261,248 BF16 weights and 1.24 GB of runtime memory, in blocks
    # of 16 tokens x 32 layers x 2 (K, V) x 8 heads x 128 x 2 bytes = 2 MiB.
    available = 0.9 * 24 * 2**30 - 8030261248 * 2 - 1.24e9
    assert gpu_blocks(scn) == int(available // (16 * 32 * 2 * 8 * 128 * 2)) == 2809
    assert gpu_blocks(scn.with_value("batching.num_gpu_blocks", 2588)) == 2588
    with pytest.raises(cosim.ConfigError, match=r"batching\.gpu_memory_utilization: 0\.5 of RTX 4090's .* leaves no "
                                                r"KV-cache block"):
        gpu_blocks(scn.with_value("batching.gpu_memory_utilization", 0.5))
