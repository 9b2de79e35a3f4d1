"""A model's activation precision (docs/hardware.md "Weight precision"): W8A8 and W4A4
GEMMs at the GPU's rate for that type, worked again here from the datasheet rates; a GPU
without tensor cores for the type runs them at its BF16 rate; and the settings that would
mean nothing refused, naming the file and line."""

import dataclasses
import math

import pytest

from cosim import ConfigError, load_device, load_model
from cosim._extension import native
from cosim.config.scenario import build_scenario
from cosim.schema import _params
from conftest import one_line_error, run_cli

from handmodel import attention_macs_per_position, head_macs, kv_elements, linear_macs, roofline


def fp8(name="llama-3.1-8b", precision="fp8", weight_bytes=1.0):
    return dataclasses.replace(load_model(name), weight_bytes_per_param=weight_bytes,
                               activation_precision=precision)


def hand_prefill(device, model, n, ctx, rate):
    """A prefill of n tokens after ctx: the weight GEMMs at `rate`, attention at the BF16 peak."""
    g = device.gpu
    linear = n * (linear_macs(model) - head_macs(model)) + head_macs(model)
    attention = attention_macs_per_position(model) * (n * ctx + n * (n - 1) / 2)
    compute = 2 * (linear / rate + attention / g.peak_tflops) / (g.compute_efficiency * 1e3)
    memory = (linear_macs(model) * model.weight_bytes_per_param + (ctx + n) * kv_elements(model)
              * g.kv_bytes_per_element) / (g.memory_bandwidth_gbps * g.memory_efficiency)
    overhead = g.forward_overhead_ns + model.layers * g.layer_overhead_ns
    return overhead + roofline(compute, memory, g.roofline_exponent)


def timed(device, model, points):
    return native().gpu_timing(_params.native(device.gpu), _params.native(model), None, points, None, None)


@pytest.mark.parametrize("device,precision,rate", [("h100-sxm", "fp8", 1979), ("h100-sxm", "int8", 1979),
                                                   ("rtx4090", "fp8", 330.3), ("b200", "fp8", 4500)])
@pytest.mark.parametrize("n,ctx", [(1, 300), (2048, 0), (512, 4000)])
def test_w8a8_gemms_run_at_the_datasheet_rate_for_the_type(device, precision, rate, n, ctx):
    d, m = load_device(device), fp8(precision=precision)
    got = timed(d, m, [("prefill", n, ctx)])["ns"][0]
    assert got == pytest.approx(hand_prefill(d, m, n, ctx, rate), rel=1e-9)


def test_a_compute_bound_prefill_is_faster_in_fp8_by_at_most_the_rate_ratio():
    d = load_device("h100-sxm")
    bf16 = timed(d, fp8(precision="bf16"), [("prefill", 8192, 0)])
    w8a8 = timed(d, fp8(), [("prefill", 8192, 0)])
    assert bf16["bound"] == ["compute"]
    ratio = bf16["compute_ns"][0] / w8a8["compute_ns"][0]
    # Attention stays BF16, so the gain is below the rates' 2x, and above 1.
    assert 1.5 < ratio < 1979 / 989.5


def test_a_gpu_without_tensor_cores_for_the_type_runs_it_at_its_bf16_rate():
    # The A100 has INT8 tensor cores but no FP8 ones: FP8 weights are widened (W8A16).
    a100 = load_device("a100-80gb")
    assert a100.gpu.fp8_tflops == 0
    widened = timed(a100, fp8(), [("prefill", 4096, 0)])["ns"][0]
    assert widened == pytest.approx(hand_prefill(a100, fp8(), 4096, 0, a100.gpu.peak_tflops), rel=1e-9)
    int8 = timed(a100, fp8(precision="int8"), [("prefill", 4096, 0)])["ns"][0]
    assert int8 == pytest.approx(hand_prefill(a100, fp8(), 4096, 0, a100.gpu.int8_tflops), rel=1e-9)
    assert int8 < widened


def test_w4a4_on_blackwell_needs_four_bit_weights():
    d = load_device("b200")
    m = fp8(precision="fp4", weight_bytes=0.5625)  # NVFP4: 4-bit elements and an 8-bit scale per 16
    got = timed(d, m, [("prefill", 4096, 0)])["ns"][0]
    assert got == pytest.approx(hand_prefill(d, m, 4096, 0, 9000), rel=1e-9)
    with pytest.raises(ConfigError, match=r"activation_precision fp4 multiplies weights of at most 4 bits, but "
                                          r"they are stored at 1 bytes"):
        timed(d, fp8(precision="fp4", weight_bytes=1.0), [])


def test_the_power_load_counts_the_tensor_cores_busy_share():
    # A step's FLOPs at twice the rate keep the tensor cores half as long: the load's compute
    # term at FP8 is half the BF16 one for the same weight GEMMs.
    d = load_device("h100-sxm")
    steps = [(0, 0, 8192, 0)]
    bf16, w8a8 = (native().gpu_batch_power(_params.native(d.gpu), _params.native(m), None, None,
                                           _params.native(d.power), steps, False, [1e9])
                  for m in (fp8(precision="bf16"), fp8()))
    m = fp8()
    linear = 8192 * (linear_macs(m) - head_macs(m)) + head_macs(m)
    attention = attention_macs_per_position(m) * 8192 * 8191 / 2
    nbytes = linear_macs(m) + 8192 * kv_elements(m) * d.gpu.kv_bytes_per_element
    p, g = d.power, d.gpu

    def watts(flops):
        load = p.busy_load + p.compute_load * flops / (g.peak_tflops * 1e3 * 1e9) + \
            p.memory_load * nbytes / (g.memory_bandwidth_gbps * 1e9)
        return p.idle_w + (p.limit_w - p.idle_w) * (1 - math.exp(-load))

    assert w8a8["watts"][0] == pytest.approx(watts(2 * (linear * 989.5 / 1979 + attention)), rel=1e-9)
    assert w8a8["watts"][0] < bf16["watts"][0]


def test_a_scenario_takes_the_precision_from_its_model_file_and_set_changes_it(tmp_path):
    model = tmp_path / "m.yaml"
    model.write_text("kind: model\nname: fp8 8B\nlayers: 32\nhidden: 4096\nheads: 32\nkv_heads: 8\nhead_dim: 128\n"
                     "ffn: 14336\nvocab: 128256\nparams: 8.03e9\ncontext_window: 131072\n"
                     "weight_bytes_per_param: 1\nactivation_precision: fp8\n")
    scn = build_scenario({"name": "w8a8", "system": "autoregressive",
                          "target": {"device": "h100-sxm", "model": str(model)}})
    assert scn.target.model.activation_precision == "fp8"
    bf16 = scn.with_values({"target.model.activation_precision": "bf16"})
    assert bf16.target.model.activation_precision == "bf16"


def test_settings_that_mean_nothing_are_refused_with_their_place(tmp_path):
    model = tmp_path / "m.yaml"
    model.write_text("kind: model\nname: wide\nlayers: 2\nhidden: 64\nheads: 4\nkv_heads: 4\nhead_dim: 16\n"
                     "ffn: 128\nvocab: 100\nparams: 1e5\ncontext_window: 4096\nactivation_precision: fp8\n")
    # BF16 weights (the device's) under FP8 activations: W8A8 takes 8-bit weights.
    with pytest.raises(ConfigError, match=rf"^{model}:12: activation_precision: fp8 multiplies weights of at most 8 "
                                          r"bits, but they are stored at 2 bytes"):
        build_scenario({"name": "s", "system": "autoregressive", "target": {"device": "h100-sxm",
                                                                             "model": str(model)}})
    # On an FPGA the design's precision is its own.
    with pytest.raises(ConfigError, match=r"activation_precision: fp8 on an FPGA, whose design sets its own precision"):
        build_scenario({"name": "s", "system": "heteroreason", "draft": {"device": "u280", "model": str(model)}})
    line = one_line_error(run_cli("run", "target-alone", "--set", "target.model.activation_precision=fp8",
                                  cwd=tmp_path))
    assert "--set target.model.activation_precision=fp8: target.model.activation_precision: fp8 multiplies " \
           "weights of at most 8 bits" in line
    line = one_line_error(run_cli("run", "target-alone", "--set", "target.model.activation_precision=fp9",
                                  cwd=tmp_path))
    assert "--set target.model.activation_precision=fp9: activation_precision: one of bf16, fp8, int8, fp4, " \
           "got 'fp9'" in line
