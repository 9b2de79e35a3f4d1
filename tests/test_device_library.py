"""The GPU device library and the imported models: datasheet figures restated here,
parameter counts worked out by hand from the published config.json shapes."""

import pytest

from cosim import hardware, load_device, load_link, load_model, standalone

# Datasheet figures, restated independently of the YAML files: (memory GB/s, dense BF16 TFLOPS,
# memory GiB, host link).
DATASHEETS = {
    "rtx4090": (1008.0, 165.2, 24, "pcie_gen4_x16"),   # NVIDIA Ada whitepaper, appendix A
    "a100-80gb": (2039.0, 312.0, 80, "pcie_gen4_x16"),  # NVIDIA A100 datasheet, 80 GB SXM
    "h100-sxm": (3350.0, 989.5, 80, "pcie_gen5_x16"),   # NVIDIA H100 datasheet, SXM
    "l40s": (864.0, 362.05, 48, "pcie_gen4_x16"),       # NVIDIA L40S datasheet
    "h100-pcie": (2000.0, 756.5, 80, "pcie_gen5_x16"),  # NVIDIA H100 datasheet (2022-23), PCIe
    "h200": (4800.0, 989.5, 141e9 / 2**30, "pcie_gen5_x16"),  # NVIDIA H200 datasheet, SXM: 141 GB
    "b200": (7700.0, 2250.0, 180e9 / 2**30, "pcie_gen5_x16"),  # NVIDIA Blackwell datasheet, HGX B200
    "l4": (300.0, 121.0, 24e9 / 2**30, "pcie_gen4_x16"),  # NVIDIA L4 datasheet: 24 GB
    "rtx-pro-6000-ws": (1792.0, 503.8, 96e9 / 2**30, "pcie_gen5_x16"),  # RTX PRO Blackwell whitepaper, table 4
}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_each_gpu_carries_its_datasheet(name):
    bandwidth, tflops, gib, link = DATASHEETS[name]
    device = load_device(name)
    assert device.kind == "gpu"
    assert device.gpu.memory_bandwidth_gbps == bandwidth
    assert device.gpu.peak_tflops == tflops
    assert device.gpu.memory_bytes == pytest.approx(gib * 1024**3, rel=1e-12)
    assert device.host_link == link
    assert link in hardware.builtin_names("link")
    if device.power.limit_w > 0:  # the load model: busy power from idle up to the limit
        assert device.power.idle_w < device.power.limit_w and device.power.decode_w == device.power.prefill_w == 0
    else:
        assert device.power.idle_w < device.power.decode_w < device.power.prefill_w


def test_nvlink_peers_carry_their_datasheet_rate_per_direction():
    # NVIDIA datasheets print NVLink both directions together: 900 GB/s for the H100 SXM,
    # 1.8 TB/s for the B200; a link's bandwidth is one direction's.
    for device, both_ways in (("h100-sxm", 900.0), ("h200", 900.0), ("b200", 1800.0)):
        link = load_link(load_device(device).peer_link)
        assert link.bandwidth_gbps == both_ways / 2


def test_gen5_link_is_the_lane_arithmetic():
    link = load_link("pcie_gen5_x16")
    assert link.bandwidth_gbps == pytest.approx(32 * 16 * 128 / 130 / 8, rel=1e-3)


def decoder_params(layers, hidden, heads, kv_heads, head_dim, ffn, vocab, tied, qkv_bias=False):
    """Stored weights of a gated-MLP decoder: embedding, per layer q/k/v/o (+ q/k/v biases),
    gate/up/down and two RMSNorms, the final norm, and the output head unless tied."""
    q, kv = heads * head_dim, kv_heads * head_dim
    attention = hidden * q + 2 * hidden * kv + q * hidden + ((q + 2 * kv) if qkv_bias else 0)
    layer = attention + 3 * hidden * ffn + 2 * hidden
    return vocab * hidden * (1 if tied else 2) + layers * layer + hidden


def test_llama_3_1_8b_is_its_config():
    m = load_model("llama-3.1-8b")
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab) == \
        (32, 4096, 32, 8, 128, 14336, 128256)
    assert m.context_window == 131072 and m.lm_head
    assert m.params == decoder_params(32, 4096, 32, 8, 128, 14336, 128256, tied=False)
    assert m.params == pytest.approx(8.03e9, rel=1e-3)  # model card: 8.03B


def test_qwen2_5_7b_instruct_is_its_config():
    m = load_model("qwen2.5-7b-instruct")
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab) == \
        (28, 3584, 28, 4, 128, 18944, 152064)
    assert m.context_window == 32768 and m.lm_head
    assert m.params == decoder_params(28, 3584, 28, 4, 128, 18944, 152064, tied=False, qkv_bias=True)
    assert m.params == pytest.approx(7.61e9, rel=2e-3)  # model card: 7.61B


def test_the_small_models_are_their_configs():
    llama = load_model("llama-3.2-1b")  # head_dim 64 given in the config, tied head
    assert (llama.layers, llama.hidden, llama.heads, llama.kv_heads, llama.head_dim, llama.ffn) == \
        (16, 2048, 32, 8, 64, 8192)
    assert llama.params == decoder_params(16, 2048, 32, 8, 64, 8192, 128256, tied=True)
    assert llama.params == pytest.approx(1.24e9, rel=5e-3)  # model card: 1.24B
    qwen = load_model("qwen2.5-1.5b-instruct")
    assert qwen.params == decoder_params(28, 1536, 12, 2, 128, 8960, 151936, tied=True, qkv_bias=True)
    assert qwen.params == pytest.approx(1.54e9, rel=5e-3)  # model card: 1.54B
    assert qwen.context_window == 32768


def test_llama_decodes_on_the_4090_at_its_streaming_rate():
    gpu = load_device("rtx4090").gpu
    # Weights streamed per token: every linear layer and the output head, BF16.
    linear = 32 * (4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336) + 4096 * 128256
    expected_ns = gpu.forward_overhead_ns + 32 * gpu.layer_overhead_ns + \
        2 * linear / (gpu.memory_bandwidth_gbps * gpu.memory_efficiency)
    got = standalone.gpu_timing("rtx4090", "llama-3.1-8b", [("decode", 1, 0)])["ns"][0]
    assert got == pytest.approx(expected_ns, rel=1e-3)
    assert 20 < 1e9 / got < 60  # a memory-bound 8B model on a 1 TB/s card: tens of tokens a second
