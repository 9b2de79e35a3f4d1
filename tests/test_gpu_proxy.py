import pytest

from cosim import ConfigError, load_latency_profile, standalone
from conftest import TARGET_ATTN_MACS_PER_CTX, TARGET_KV_ELEMENTS, TARGET_MACS

# RTX 3090 datasheet (GA102 whitepaper) and the shipped values: the efficiencies and the
# roofline exponent fitted to its measured layer times, the overheads estimated.
BW_GBPS, BW_EFF = 936.0, 0.710
PEAK_TFLOPS, COMPUTE_EFF = 71.0, 0.817
EXPONENT = 2.35
FORWARD_OVERHEAD_NS, LAYER_OVERHEAD_NS = 1.5e6, 150e3
TARGET_LAYERS = 28
TARGET_HEAD_MACS = 3584 * 152064  # the output head: hidden x vocabulary
BF16 = 2


def overhead_ns():
    return FORWARD_OVERHEAD_NS + TARGET_LAYERS * LAYER_OVERHEAD_NS


def smooth(compute, memory, p=EXPONENT):
    return (compute**p + memory**p) ** (1 / p)


def compute_ns(macs):
    return 2 * macs / (PEAK_TFLOPS * COMPUTE_EFF * 1e3)  # 1 TFLOP/s = 1e3 FLOP/ns


def decode_ns(context):
    compute = compute_ns(TARGET_MACS + TARGET_ATTN_MACS_PER_CTX * context)
    memory = (TARGET_MACS * BF16 + context * TARGET_KV_ELEMENTS * BF16) / (BW_GBPS * BW_EFF)
    return overhead_ns() + smooth(compute, memory)


def test_target_decode_on_rtx3090_equals_the_formula():
    result = standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", tokens=6, context=250, record_tokens=True)
    ends = [0.0] + result.token_end_ns
    for i, (a, b) in enumerate(zip(ends, ends[1:])):
        assert b - a == pytest.approx(decode_ns(250 + i), abs=1.0)
    assert result.time_ns == pytest.approx(sum(decode_ns(250 + i) for i in range(6)), abs=6.0)
    assert result.tokens_decoded == 6
    # Decoding at 220 W throughout.
    assert result.energy_j == pytest.approx(220.0 * result.time_ns * 1e-9, rel=1e-9)


def prefill_parts(n, c):
    # Every token through the layers, the output head once (logits where the engine samples).
    macs = n * (TARGET_MACS - TARGET_HEAD_MACS) + TARGET_HEAD_MACS + TARGET_ATTN_MACS_PER_CTX * (n * c + n * (n - 1) / 2)
    memory = (TARGET_MACS * BF16 + (c + n) * TARGET_KV_ELEMENTS * BF16) / (BW_GBPS * BW_EFF)
    return compute_ns(macs), memory


def test_prefill_of_many_tokens_is_compute_bound_and_of_one_token_memory_bound():
    many = standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", tokens=512, context=100)
    compute, memory = prefill_parts(512, 100)
    assert compute > memory and many.bound == "compute"
    assert many.time_ns == pytest.approx(overhead_ns() + smooth(compute, memory), abs=1.0)
    one = standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", tokens=1, context=100)
    compute, memory = prefill_parts(1, 100)
    assert memory > compute and one.bound == "memory"
    assert one.time_ns == pytest.approx(overhead_ns() + smooth(compute, memory), abs=1.0)


def test_the_smooth_roofline_worked_by_hand_at_the_ridge_and_as_the_hard_max():
    # 64 tokens of the 7B target after 0: weights 15.23 GB and 64 tokens of KV streamed, and
    # 64 x 6.55 GMACs of layers + 0.545 GMACs of head + 2,016 attention spans x 200,704 MACs.
    n = 64
    layers_macs = TARGET_MACS - TARGET_HEAD_MACS
    macs = n * layers_macs + TARGET_HEAD_MACS + TARGET_ATTN_MACS_PER_CTX * n * (n - 1) / 2
    memory_ns = (TARGET_MACS * BF16 + n * TARGET_KV_ELEMENTS * BF16) / (BW_GBPS * BW_EFF)
    # The tensor peak at which compute takes exactly as long as memory: the ridge.
    ridge_tflops = 2 * macs / (memory_ns * COMPUTE_EFF * 1e3)
    no_overheads = {"gpu.forward_overhead": "0 ms", "gpu.layer_overhead": "0 us", "gpu.peak_tflops": ridge_tflops}
    for p, factor in ((2.0, 2**0.5), (EXPONENT, 2 ** (1 / EXPONENT)), (0.0, 1.0)):
        got = standalone.gpu_timing("rtx3090", "qwen2.5-math-7b", [("prefill", n, 0)],
                                    overrides={**no_overheads, "gpu.roofline_exponent": p})
        assert got["compute_ns"][0] == pytest.approx(memory_ns, rel=1e-9)
        assert got["ns"][0] == pytest.approx(factor * memory_ns, rel=1e-9)
    # Far from the ridge both forms agree: a token of decode is its weight stream.
    decode = standalone.gpu_timing("rtx3090", "qwen2.5-math-7b", [("decode", 1, 0)], overrides=no_overheads)
    assert decode["ns"][0] == pytest.approx(TARGET_MACS * BF16 / (BW_GBPS * BW_EFF), rel=1e-3)
    assert decode["bound"] == ["memory"]


def test_profile_table_overrides_the_formula(tmp_path):
    csv = tmp_path / "rtx3090_math7b.csv"
    csv.write_text(
        "phase,tokens,context,seconds\n"
        "decode,1,0,0.020\n"
        "decode,1,1000,0.030\n"
        "prefill,100,0,0.050\n"
        "prefill,300,0,0.110\n"
        "prefill,100,1000,0.070\n"
        "prefill,300,1000,0.150\n"
    )
    profile = load_latency_profile(csv)
    decode = standalone.gpu_decode("rtx3090", "qwen2.5-math-7b", 3, 500, profile=profile, record_tokens=True)
    ends = [0.0] + decode.token_end_ns
    for i, (a, b) in enumerate(zip(ends, ends[1:])):
        # linear between (0, 20 ms) and (1000, 30 ms)
        assert b - a == pytest.approx((0.020 + 0.010 * (500 + i) / 1000) * 1e9, abs=1.0)
    prefill = standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", 200, 500, profile=csv)
    # at context 0: 80 ms; at context 1000: 110 ms; halfway: 95 ms
    assert prefill.time_ns == pytest.approx(0.095e9, abs=1.0)
    assert prefill.bound == "profile"
    formula = standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", 200, 500)
    assert formula.time_ns != pytest.approx(prefill.time_ns, rel=0.01)


@pytest.mark.parametrize(
    "body,message",
    [
        ("phase,tokens,context,secs\n", ":1: header"),
        ("phase,tokens,context,seconds\nverify,1,0,0.1\n", ":2: phase"),
        ("phase,tokens,context,seconds\ndecode,1,0,0.1\ndecode,2,0,0.1\n", ":3: tokens"),
        ("phase,tokens,context,seconds\nprefill,10,-1,0.1\n", ":2: context"),
        ("phase,tokens,context,seconds\nprefill,10,0,abc\n", ":2: seconds"),
        ("phase,tokens,context,seconds\nprefill,10,0,-0.1\n", ":2: seconds"),
        ("phase,tokens,context,seconds\nprefill,10,0\n", ":2: expected 4 fields"),
        ("phase,tokens,context,seconds\nprefill,10,0,0.1\nprefill,10,0,0.2\n", ":3: the same point"),
    ],
)
def test_bad_profile_rows_name_file_line_and_field(tmp_path, body, message):
    csv = tmp_path / "bad.csv"
    csv.write_text(body)
    with pytest.raises(ConfigError, match=message):
        load_latency_profile(csv)


@pytest.mark.coroutine_unwind
def test_profile_extrapolating_below_zero_is_an_error_not_a_clamp(tmp_path):
    csv = tmp_path / "steep.csv"
    csv.write_text("phase,tokens,context,seconds\nprefill,100,0,0.010\nprefill,200,0,0.100\n")
    from cosim import SimulationError

    with pytest.raises(SimulationError, match="extrapolates"):
        standalone.gpu_prefill("rtx3090", "qwen2.5-math-7b", 10, 0, profile=csv)
