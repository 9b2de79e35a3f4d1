"""The GPU load model (docs/hardware.md): its power worked again by hand, `cosim fit power`
recovering coefficients from a series written by an independent model, the shipped H100
series and its fit, and bad inputs named in one line."""

import dataclasses
import math
import re

import pytest

import cosim
from cosim import ConfigError, load_device, load_model, standalone
from cosim.fit._power import POWER_PARAMS, PowerPoint, fit_power, group_watts, load_power_points
from cosim.validation import _mlenergy
from conftest import one_line_error, run_cli
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem
from test_parallel_groups import Group

H100 = load_device("h100-sxm")


def hand_watts(power, gpu, flops, nbytes, seconds):
    """One GPU's power over an interval, from docs/hardware.md."""
    load = power.busy_load + power.compute_load * flops / (gpu.peak_tflops * 1e12 * seconds) + \
        power.memory_load * nbytes / (gpu.memory_bandwidth_gbps * 1e9 * seconds)
    return power.idle_w + (power.limit_w - power.idle_w) * (1 - math.exp(-load))


def decode_work(model, tp, decodes, context):
    """FLOPs and bytes of one GPU of a tensor-parallel group over a step of decodes."""
    group = Group("h100-sxm", model, tp)
    m, dense = group.m, group.dense_params()
    att = 2 * m.layers * m.heads * m.head_dim
    flops = 2 * decodes * (dense + att * context) / tp
    nbytes = dense / tp * H100.gpu.weight_bytes_per_param + decodes * context * group.kv_bytes()
    return flops, nbytes


SERIES = [("llama-3.1-8b", 1, 8, 600, 0.008), ("llama-3.1-8b", 1, 64, 600, 0.012), ("llama-3.1-8b", 1, 256, 600, 0.03),
          ("qwen3-8b", 1, 16, 5000, 0.011), ("qwen3-8b", 1, 128, 800, 0.02), ("llama-3.1-70b", 4, 32, 550, 0.021),
          ("llama-3.1-70b", 4, 384, 590, 0.07)]


def test_a_series_from_known_coefficients_gives_them_back():
    # The series is written by hand from coefficients of our choosing; the fit starts from
    # the H100's and must land on them.
    truth = {"busy_load": 0.3, "compute_load": 6.0, "memory_load": 0.9}
    power = dataclasses.replace(H100.power, **truth)
    points = []
    for model, tp, decodes, context, seconds in SERIES:
        flops, nbytes = decode_work(model, tp, decodes, context)
        watts = tp * hand_watts(power, H100.gpu, flops, nbytes, seconds)
        points.append(PowerPoint(model, tp, 1, decodes, context, 0, seconds, watts))
    fit = fit_power(points, "h100-sxm")
    for name, value in truth.items():
        assert fit.values[name] == pytest.approx(value, rel=1e-4)
    assert fit.rms < 1e-6
    # Each point's power is its group's: four GPUs' for the 70B.
    assert group_watts(H100, points[-1:], power)[0] == pytest.approx(points[-1].watts, rel=1e-9)


def test_the_shipped_series_is_the_benchmark_files_and_fits_the_h100s_coefficients():
    shipped = _mlenergy.folder() / "power_series.csv"
    assert shipped.read_text() == _mlenergy.power_series_text()
    points = load_power_points(shipped)
    # The even-numbered configurations of each file: the first, third, ...
    per_file = [len(_mlenergy.read(p)[1]) for p in sorted(_mlenergy.folder().glob("*.json"))]
    assert len(points) == sum((n + 1) // 2 for n in per_file)
    fit = fit_power(shipped, "h100-sxm")
    for name in POWER_PARAMS:
        assert fit.values[name] == pytest.approx(getattr(H100.power, name), rel=2e-3)


def test_power_rises_with_the_batch_and_stays_under_the_limit():
    model = load_model("llama-3.1-8b")
    points = [PowerPoint("llama-3.1-8b", 1, 1, b, 600, 0, 1.0, 1.0) for b in (1, 16, 256)]
    watts = group_watts(H100, points, H100.power, measured_time=False, model=model)
    assert H100.power.idle_w < watts[0] < watts[1] < watts[2] < H100.power.limit_w


def test_the_cli_fits_and_writes_a_device(tmp_path):
    series = _mlenergy.folder() / "power_series.csv"
    out = tmp_path / "h100-fitted.yaml"
    result = run_cli("fit", "power", series, "--device", "h100-sxm", "--out", out, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "compute_load" in result.stdout and "rms residual" in result.stdout
    fitted = load_device(out)
    assert fitted.power.compute_load == pytest.approx(H100.power.compute_load, rel=2e-3)
    assert fitted.power.limit_w == H100.power.limit_w


@pytest.mark.parametrize("text,message", [
    ("model,tp\n", r"bad\.csv:1: the header must be model,tensor_parallel"),
    ("model,tensor_parallel,expert_parallel,decodes,context,prefill,step_seconds,watts\n"
     "llama-3.1-8b,1,1,8,600,0,0.01,-5\n", r"bad\.csv:2: watts: -5 is out of range"),
    ("model,tensor_parallel,expert_parallel,decodes,context,prefill,step_seconds,watts\n"
     "llama-3.1-8b,1,1,x,600,0,0.01,500\n", r"bad\.csv:2: decodes: not an int: 'x'"),
    ("model,tensor_parallel,expert_parallel,decodes,context,prefill,step_seconds,watts\n"
     ",1,1,8,600,0,0.01,500\n", r"bad\.csv:2: model: empty, and no --model given"),
])
def test_a_bad_series_is_named_on_the_command_line(tmp_path, text, message):
    (tmp_path / "bad.csv").write_text(text)
    result = run_cli("fit", "power", "bad.csv", cwd=tmp_path)
    one_line_error(result)
    assert result.returncode == 2
    assert re.search(message, result.stderr), result.stderr


def test_a_gpu_of_state_powers_cannot_fit_the_load_model():
    with pytest.raises(ConfigError, match="power.limit: give the GPU's power limit"):
        fit_power([PowerPoint("llama-3.1-8b", 1, 1, 8, 600, 0, 0.01, 400.0)] * 5, "rtx4090")


def test_an_fpga_board_refuses_the_load_model():
    scn = cosim.scenario("heteroreason", 1, draft={"overrides": {"power.limit_w": 100.0, "power.busy_load": 1.0}})
    with pytest.raises(ConfigError, match="the load model is a GPU's"):
        cosim.simulate(scn, Trace(plain_header("t"), [plain_problem("r0", 50, 20)]))


def test_a_power_timeline_of_a_load_model_gpu_is_refused():
    with pytest.raises(ConfigError, match="h100-sxm|H100 SXM"):
        standalone.power_timeline("h100-sxm", [("decode", 1e6)])


@pytest.mark.parametrize("device,model", [("l4", "qwen2.5-1.5b-instruct"), ("h200", "llama-3.1-8b")])
def test_a_library_gpu_of_the_load_model_draws_between_idle_and_its_limit(device, model):
    scn = cosim.scenario("autoregressive", 1, target={"device": device, "model": model})
    per = cosim.simulate(scn, Trace(plain_header("t"), [plain_problem("r0", 300, 100)])).per_problem
    power, seconds, joules = load_device(device).power, per.column("latency_s")[0], per.column("energy_j")[0]
    # A lone request keeps the GPU busy for all but its serving overhead: above idle, below the limit.
    assert power.idle_w * seconds < joules < power.limit_w * seconds


def test_state_powers_beside_the_load_model_are_refused():
    scn = cosim.scenario("autoregressive", 1, target={"device": "h200", "model": "llama-3.1-8b",
                                                      "overrides": {"power.decode_w": 400.0}})
    with pytest.raises(ConfigError, match=r"power: prefill_w and decode_w are state powers; with limit_w"):
        cosim.simulate(scn, Trace(plain_header("t"), [plain_problem("r0", 50, 20)]))
