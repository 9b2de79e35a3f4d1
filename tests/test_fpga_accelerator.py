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
U280_CHANNEL_GBPS = 14.375 * U280_HBM_EFFICIENCY  # what one pseudo-channel sustains
LAYERS = 24  # Qwen2.5-0.5B


def design(macs, ports=16, width_bits=512, port_efficiency=0.9, pipeline_per_layer=0, clock_mhz=200):
    """A decoder design as accelerator overrides of the U280."""
    return {"accelerator.macs_per_cycle": macs, "accelerator.hbm_ports": ports,
            "accelerator.port_width_bits": width_bits, "accelerator.port_efficiency": port_efficiency,
            "accelerator.pipeline_cycles_per_layer": pipeline_per_layer, "accelerator.clock_mhz": clock_mhz}


def token_times(overrides, context=0, tokens=8, device="u280"):
    result = standalone.fpga_decode(device, "qwen2.5-0.5b", context, tokens, overrides=overrides,
                                    record_tokens=True)
    ends = [0.0] + result.token_end_ns
    return [b - a for a, b in zip(ends, ends[1:])], result


def hand_token_ns(context, clock_mhz, macs_per_cycle, pipeline_per_layer, ports=16, width_bits=512,
                  port_efficiency=0.9):
    ns_per_cycle = 1e3 / clock_mhz
    compute = (DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * context) / macs_per_cycle * ns_per_cycle
    port_gbps = min(width_bits / 8 * clock_mhz / 1e3 * port_efficiency, U280_CHANNEL_GBPS)
    memory = (DRAFT_MACS * 1 + context * DRAFT_KV_ELEMENTS * 1) / (ports * port_gbps)
    return max(compute, memory) + LAYERS * pipeline_per_layer * ns_per_cycle


def test_mac_bound_token_time_scales_as_one_over_clock():
    # 256 MACs/cycle: ~9.6 ms of compute at 200 MHz dwarfs the ~2.7 ms weight stream.
    t200, r200 = token_times(design(256, clock_mhz=200))
    t300, r300 = token_times(design(256, clock_mhz=300))
    for i, (a, b) in enumerate(zip(t200, t300)):
        assert a == pytest.approx(hand_token_ns(i, 200, 256, 0), abs=1.0)
        assert a / b == pytest.approx(300 / 200, rel=1e-6)
    assert r200.bound == r300.bound == "macs"


def test_port_bound_token_time_follows_the_clock_until_the_channels_bind():
    # 16 ports of 512 bits at 90%: 64 B x 200 MHz x 0.9 = 11.52 GB/s a port, under the
    # 13.2 GB/s a pseudo-channel sustains, so the ports bind and the clock moves the time.
    t150, r150 = token_times(design(1e6, clock_mhz=150))
    t200, r200 = token_times(design(1e6, clock_mhz=200))
    assert t200[0] == pytest.approx(DRAFT_MACS / (16 * 11.52), rel=1e-9)
    for i, (a, b) in enumerate(zip(t150, t200)):
        assert b == pytest.approx(hand_token_ns(i, 200, 1e6, 0), abs=1.0)
        assert a / b == pytest.approx(200 / 150, rel=1e-6)
    assert r150.bound == r200.bound == "ports"
    # At 300 MHz a port could move 17.28 GB/s: its pseudo-channel (13.2 GB/s) binds, and
    # a faster clock changes nothing.
    t300, r300 = token_times(design(1e6, clock_mhz=300))
    t400, r400 = token_times(design(1e6, clock_mhz=400))
    for i, (a, b) in enumerate(zip(t300, t400)):
        assert a == pytest.approx(hand_token_ns(i, 300, 1e6, 0), abs=1.0)
        assert a == pytest.approx(DRAFT_MACS / (16 * U280_CHANNEL_GBPS) + i * DRAFT_KV_ELEMENTS
                                  / (16 * U280_CHANNEL_GBPS), rel=1e-9)
        assert a == pytest.approx(b, abs=1e-6)
    assert r300.bound == r400.bound == "hbm"


def test_pipeline_bound_token_time_adds_the_layers_cycles():
    # 100,000 non-overlapped cycles per layer x 24 layers at 200 MHz = 12 ms, more than the
    # ~1.4 ms stream over 32 ports or the compute of a huge MAC array.
    overrides = design(1e6, ports=32, pipeline_per_layer=100_000)
    times, result = token_times(overrides, context=50, tokens=4)
    for i, t in enumerate(times):
        memory = (DRAFT_MACS + (50 + i) * DRAFT_KV_ELEMENTS) / (32 * 11.52)
        assert t == pytest.approx(memory + 24 * 100_000 * 5.0, abs=1.0)
    assert result.bound == "pipeline"
    assert result.pipeline_ns == pytest.approx(12e6)


def test_ports_beyond_the_pseudo_channels_share_them():
    # 64 ports of 11.52 GB/s on the U280's 32 pseudo-channels: the channels' 32 x 13.2 GB/s
    # bind, as with one port on each; 16 ports on one channel get its 13.2 GB/s between them.
    times, result = token_times(design(1e6, ports=64))
    assert times[0] == pytest.approx(DRAFT_MACS / (32 * U280_CHANNEL_GBPS), rel=1e-9)
    assert result.bound == "hbm"
    one_channel = standalone.fpga_timing("u280", contexts=[0], overrides={
        **design(1e6), "hbm.pseudo_channels": 1, "hbm.capacity_bytes": 8 * 2**30})
    assert one_channel["decoder_gbps"] == pytest.approx(U280_CHANNEL_GBPS, rel=1e-12)
    assert one_channel["port_gbps"] == pytest.approx(U280_CHANNEL_GBPS / 16, rel=1e-12)
    assert one_channel["ns"][0] == pytest.approx(DRAFT_MACS / U280_CHANNEL_GBPS, rel=1e-9)


def test_shipped_designs_bind_where_their_sources_say():
    # The paper's U280 design: its 300 MHz results are the 200 MHz ones scaled by the clock,
    # so it must be compute-bound at both clocks.
    for clock in (200, 300):
        assert set(standalone.fpga_timing("u280", contexts=[0, 2000], overrides={
            "accelerator.clock_mhz": clock})["bound"]) == {"macs"}
    # FlexLLM's 16 x 512-bit ports: port-bound at 200 MHz, channel-bound at its 300 MHz target.
    assert standalone.fpga_timing("u280-flexllm", contexts=[500], overrides={
        "accelerator.clock_mhz": 200})["bound"] == ["ports"]
    flex = standalone.fpga_timing("u280-flexllm", contexts=[500])
    assert flex["bound"] == ["hbm"]
    assert flex["decoder_gbps"] == pytest.approx(16 * U280_CHANNEL_GBPS)
    assert flex["decoder_gbps"] / U280_HBM_PEAK_GBPS == pytest.approx(0.46, abs=0.005)


def test_token_time_grows_with_context_by_the_kv_read():
    times, result = token_times(design(1e6, clock_mhz=300), context=1000, tokens=50)
    per_token_kv_ns = DRAFT_KV_ELEMENTS / (16 * U280_CHANNEL_GBPS)
    for a, b in zip(times, times[1:]):
        assert b - a == pytest.approx(per_token_kv_ns, abs=0.01)
    assert result.kv_used_bytes == 1050 * DRAFT_KV_ELEMENTS
    assert result.ops[-1]["ahead"] == 1050


def test_decode_energy_is_decode_power_times_time():
    overrides = design(300, pipeline_per_layer=400)
    times, result = token_times(overrides, context=300, tokens=4)
    for i, t in enumerate(times):
        assert t == pytest.approx(hand_token_ns(300 + i, 200, 300, 400), abs=1.0)
    # Energy: decoding for the whole run (no idle time in a decode-only script) at the design
    # model's decode power, a token's at context 0: 37 W idle plus 5 pJ a MAC and 7 pJ a bit of
    # its W8 weights over its time (u280.yaml).
    watts = 37.0 + (5.0 * DRAFT_MACS + 7.0 * 8 * DRAFT_MACS) / hand_token_ns(0, 200, 300, 400) * 1e-3
    assert result.energy_j == pytest.approx(watts * sum(times) * 1e-9, rel=1e-9)


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
    overrides = design(2048, pipeline_per_layer=400)
    result = standalone.fpga_run(
        "u280", "qwen2.5-0.5b",
        [("load", 100), ("decode", 10), ("rollback",), ("sync", 12), ("accept",), ("decode", 5), ("rollback",),
         ("prefill", 20)], overrides,
    )
    load, decode, rollback, sync, accept, decode2, rollback2, prefill = result.ops
    assert (decode["valid"], decode["curr"], decode["ahead"]) == (100, 110, 110)
    assert (rollback["valid"], rollback["curr"], rollback["ahead"]) == (100, 100, 100)
    assert (sync["valid"], sync["curr"], sync["ahead"]) == (100, 112, 112)
    assert (accept["valid"], accept["curr"], accept["ahead"]) == (112, 112, 112)
    # A shadow-synced token costs one forward pass at its context.
    sync_ns = sum(hand_token_ns(100 + i, 200, 2048, 400) for i in range(12))
    assert sync["end_ns"] - sync["start_ns"] == pytest.approx(sync_ns, abs=12.0)
    assert (decode2["valid"], decode2["curr"], decode2["ahead"]) == (112, 117, 117)
    assert (rollback2["valid"], rollback2["curr"], rollback2["ahead"]) == (112, 112, 112)
    # Vanilla: the refined step's 20 tokens prefilled locally after 112: one weight stream shared by the batch.
    n, c = 20, 112
    compute = (n * DRAFT_MACS + DRAFT_ATTN_MACS_PER_CTX * (n * c + n * (n - 1) / 2)) / 2048 * 5.0
    memory = (DRAFT_MACS + (c + n) * DRAFT_KV_ELEMENTS) / (16 * 11.52)
    assert prefill["end_ns"] - prefill["start_ns"] == pytest.approx(max(compute, memory) + 24 * 400 * 5.0, abs=1.0)
    assert prefill["ahead"] == 132
    assert result.tokens_drafted == 15 and result.tokens_synced == 12 and result.tokens_prefilled == 20
