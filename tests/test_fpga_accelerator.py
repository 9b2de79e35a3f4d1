import pytest

from cosim import CapacityError, standalone
from conftest import (
    DRAFT_ATTN_MACS_PER_CTX,
    DRAFT_KV_ELEMENTS,
    DRAFT_MACS,
    U280_HBM_BYTES,
    U280_HBM_PEAK_GBPS,
)

U280_HBM_EFFICIENCY = 0.92  # shipped estimate (Shuhai measurement)


def token_times(overrides, context=0, tokens=8):
    result = standalone.fpga_decode("u280", "qwen2.5-0.5b", context, tokens, overrides=overrides, record_tokens=True)
    ends = [0.0] + result.token_end_ns
    return [b - a for a, b in zip(ends, ends[1:])], result


def hand_token_ns(context, clock_mhz, macs_per_cycle, pipeline_cycles):
    ns_per_cycle = 1e3 / clock_mhz
    compute = (DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * context) / macs_per_cycle * ns_per_cycle
    memory = (DRAFT_MACS * 1 + context * DRAFT_KV_ELEMENTS * 1) / (U280_HBM_PEAK_GBPS * U280_HBM_EFFICIENCY)
    return max(compute, memory) + pipeline_cycles * ns_per_cycle


def test_compute_bound_token_time_scales_as_one_over_clock():
    # 256 MACs/cycle: compute (~9.6 ms at 200 MHz) dwarfs the ~1.2 ms weight stream.
    base = {"accelerator.macs_per_cycle": 256}
    t200, _ = token_times({**base, "accelerator.clock_mhz": 200})
    t300, _ = token_times({**base, "accelerator.clock_mhz": 300})
    for i, (a, b) in enumerate(zip(t200, t300)):
        assert a == pytest.approx(hand_token_ns(i, 200, 256, 9600), abs=1.0)
        assert a / b == pytest.approx(300 / 200, rel=1e-6)


def test_hbm_bound_token_time_does_not_follow_the_clock():
    # A million MACs/cycle and no pipeline cost: only the HBM stream is left.
    base = {"accelerator.macs_per_cycle": 1e6, "accelerator.pipeline_cycles": 0}
    t200, _ = token_times({**base, "accelerator.clock_mhz": 200})
    t300, _ = token_times({**base, "accelerator.clock_mhz": 300})
    for i, (a, b) in enumerate(zip(t200, t300)):
        assert a == pytest.approx(hand_token_ns(i, 200, 1e6, 0), abs=1.0)
        assert a == pytest.approx(b, abs=1.0)


def test_token_time_grows_with_context_by_the_kv_read():
    base = {"accelerator.macs_per_cycle": 1e6, "accelerator.pipeline_cycles": 0}
    times, result = token_times(base, context=1000, tokens=50)
    per_token_kv_ns = DRAFT_KV_ELEMENTS / (U280_HBM_PEAK_GBPS * U280_HBM_EFFICIENCY)
    for a, b in zip(times, times[1:]):
        assert b - a == pytest.approx(per_token_kv_ns, abs=0.01)
    assert result.kv_used_bytes == 1050 * DRAFT_KV_ELEMENTS
    assert result.ops[-1]["ahead"] == 1050


def test_default_u280_decode_matches_the_formula():
    times, result = token_times(None, context=300, tokens=4)
    for i, t in enumerate(times):
        assert t == pytest.approx(hand_token_ns(300 + i, 200, 2048, 9600), abs=1.0)
    # Energy: decoding at 50 W for the whole run (no idle time in a decode-only script).
    assert result.energy_j == pytest.approx(50.0 * sum(times) * 1e-9, rel=1e-9)


def test_weights_and_kv_beyond_u280_hbm_raise_and_fit_on_v80(tmp_path):
    # Qwen2.5-Math-7B with its window stretched to 64k tokens (e.g. YaRN): W8A8 weights
    # 7.616 GB + INT8 KV 65536 x 28672 B = 9.49 GB > 8 GiB.
    model = tmp_path / "math7b_64k.yaml"
    model.write_text(
        "kind: model\nname: Math-7B-64k\nlayers: 28\nhidden: 3584\nheads: 28\nkv_heads: 4\nhead_dim: 128\n"
        "ffn: 18944\nvocab: 152064\nparams: 7616000000\ncontext_window: 65536\n"
    )
    weights = 7_616_000_000
    kv = 65536 * 2 * 28 * 4 * 128
    assert weights + kv > U280_HBM_BYTES
    with pytest.raises(CapacityError) as info:
        standalone.fpga_decode("u280", str(model), 0, 1)
    message = str(info.value)
    assert str(U280_HBM_BYTES) in message  # the capacity
    assert str(weights + kv) in message  # what weights + KV need
    assert "kv_cache" in message
    fits = standalone.fpga_decode("v80", str(model), 0, 1)
    assert fits.hbm_used_bytes == weights + kv


def test_shadow_sync_and_local_prefill_write_the_kv_cache():
    result = standalone.fpga_run(
        "u280", "qwen2.5-0.5b",
        [("load", 100), ("decode", 10), ("rollback",), ("sync", 12), ("accept",), ("decode", 5), ("rollback",),
         ("prefill", 20)],
    )
    load, decode, rollback, sync, accept, decode2, rollback2, prefill = result.ops
    assert (decode["valid"], decode["curr"], decode["ahead"]) == (100, 110, 110)
    assert (rollback["valid"], rollback["curr"], rollback["ahead"]) == (100, 100, 100)
    assert (sync["valid"], sync["curr"], sync["ahead"]) == (100, 112, 112)
    assert (accept["valid"], accept["curr"], accept["ahead"]) == (112, 112, 112)
    # A shadow-synced token costs one forward pass at its context.
    sync_ns = sum(hand_token_ns(100 + i, 200, 2048, 9600) for i in range(12))
    assert sync["end_ns"] - sync["start_ns"] == pytest.approx(sync_ns, abs=12.0)
    assert (decode2["valid"], decode2["curr"], decode2["ahead"]) == (112, 117, 117)
    assert (rollback2["valid"], rollback2["curr"], rollback2["ahead"]) == (112, 112, 112)
    # Vanilla: the refined step's 20 tokens prefilled locally after 112: one weight stream shared by the batch.
    n, c = 20, 112
    compute = (n * DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * (n * c + n * (n - 1) / 2)) / 2048 * 5.0
    memory = (DRAFT_MACS + (c + n) * DRAFT_KV_ELEMENTS) / (U280_HBM_PEAK_GBPS * U280_HBM_EFFICIENCY)
    assert prefill["end_ns"] - prefill["start_ns"] == pytest.approx(max(compute, memory) + 9600 * 5.0, abs=1.0)
    assert prefill["ahead"] == 132
    assert result.tokens_drafted == 15 and result.tokens_synced == 12 and result.tokens_prefilled == 20
