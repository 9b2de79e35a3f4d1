"""Per-layer kernel times (LLMServingSim's layers.csv) summed into forward passes by hand,
fitted by `cosim fit gpu`, and refused with file, line and field when malformed."""

import pytest

from cosim import ConfigError, load_model
from cosim.fit import fit_gpu, load_layer_times
from cosim.fit._layer_times import LAYER_OPS, POINTS
from conftest import ROOT, run_cli

HEADER = "layer_name,input,kv_cache,tp_size,latency(ns)\n"
SHIPPED = ROOT / "cosim" / "data" / "validation" / "rtx3090-llama-3.1-8b" / "layers.csv"
ONCE = ("embedding", "final_layernorm", "lm_head")


def write_layers(path, times):
    """times: (op, tokens) -> ns."""
    path.write_text(HEADER + "".join(f"{op},{n},0,1,{ns!r}\n" for (op, n), ns in times.items()))
    return path


def uniform(tokens, per_op=10.0, head=1000.0):
    """Every op 10 ns per token, the head 1000 ns per token: easy sums."""
    times = {}
    for n in tokens:
        for op in (*LAYER_OPS, "embedding", "final_layernorm"):
            times[op, n] = per_op * n
        times["lm_head", n] = head * n
    return times


def test_a_forward_pass_sums_the_layers_at_n_and_the_head_at_one_token(tmp_path):
    layers = load_layer_times(write_layers(tmp_path / "layers.csv", uniform([1, 16])))
    # 16 tokens through 3 layers: 12 ops x 160 ns x 3 + embedding 160 + final norm 160 + head at 1: 1000.
    assert layers.forward_ns(3, 16) == 12 * 160 * 3 + 160 + 160 + 1000
    assert layers.forward_ns(3, 1) == 12 * 10 * 3 + 10 + 10 + 1000
    with pytest.raises(ConfigError, match=r"layers\.csv: input_layernorm at 32 input tokens: not measured"):
        layers.forward_ns(3, 32)


def test_the_profile_is_decode_at_one_token_and_prefills_after(tmp_path):
    layers = load_layer_times(write_layers(tmp_path / "layers.csv", uniform(POINTS)))
    rows = layers.profile(2).rows
    assert [r[:3] for r in rows] == [("decode", 1, 0)] + [("prefill", n, 0) for n in POINTS[1:]]
    assert rows[2][3] == pytest.approx((12 * 10 * 32 * 2 + 2 * 320 + 1000) * 1e-9)


def test_the_profile_takes_the_points_the_file_measured(tmp_path):
    layers = load_layer_times(write_layers(tmp_path / "layers.csv", uniform((1, 16, 64, 256, 300))))
    assert [r[1] for r in layers.profile(2).rows] == [1, 16, 64, 256]  # 300 is not on the grid
    few = load_layer_times(write_layers(tmp_path / "few.csv", uniform((1, 16, 32))))
    with pytest.raises(ConfigError, match=r"few\.csv: input: .* found 3 such points, a fit needs at least 4"):
        few.profile(2)


def kernel_ns(model, n, memory_efficiency, compute_efficiency, p):
    """The RTX 3090's kernels for a forward pass of n tokens, written out from docs/hardware.md."""
    m = load_model(model)
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    layer_macs = m.layers * (m.hidden * q + 2 * m.hidden * kv + q * m.hidden + 3 * m.hidden * m.ffn)
    head = m.hidden * m.vocab
    attention = 2 * m.layers * m.heads * m.head_dim * n * (n - 1) / 2
    compute = 2 * (n * layer_macs + head + attention) / (71e3 * compute_efficiency)
    memory = ((layer_macs + head) * 2 + n * 2 * m.layers * kv * 2) / (936 * memory_efficiency)
    return (compute**p + memory**p) ** (1 / p)


def test_the_fit_recovers_the_kernels_that_made_the_times(tmp_path):
    truth = (0.62, 0.88, 3.0)
    times = {}
    for n in POINTS:
        forward = kernel_ns("llama-3.1-8b", n, *truth)
        for op in (*LAYER_OPS, *ONCE):
            times[op, n] = 1.0
        # All the time in q_proj, so that the sum is the forward pass: 32 layers + embedding,
        # final norm and the head at one token (1 ns each).
        times["q_proj", n] = (forward - 11 * 32 - 3) / 32
    result = fit_gpu(write_layers(tmp_path / "layers.csv", times), "rtx3090", "llama-3.1-8b")
    assert result.kernels_only
    for name, value in zip(("memory_efficiency", "compute_efficiency", "roofline_exponent"), truth):
        assert result.values[name] == pytest.approx(value, rel=1e-3)
    # The fitted device keeps its own overheads: kernel times hold none.
    assert result.device.gpu.forward_overhead_ns == 1.5e6
    with pytest.raises(ConfigError, match="forward_overhead_ns: kernel times hold no host overhead"):
        fit_gpu(tmp_path / "layers.csv", "rtx3090", "llama-3.1-8b", params="forward_overhead_ns,memory_efficiency")


def test_the_shipped_rtx3090_values_are_the_fit_of_the_shipped_layer_times():
    from cosim import load_device

    result = fit_gpu(SHIPPED, "rtx3090", "llama-3.1-8b")
    gpu = load_device("rtx3090").gpu
    assert result.values["memory_efficiency"] == pytest.approx(gpu.memory_efficiency, abs=5e-4)
    assert result.values["compute_efficiency"] == pytest.approx(gpu.compute_efficiency, abs=5e-4)
    assert result.values["roofline_exponent"] == pytest.approx(gpu.roofline_exponent, abs=5e-3)
    errors = sorted(abs(r) for r in result.residuals)
    assert errors[len(errors) // 2] < 0.05 and errors[-1] < 0.12


def test_the_cli_fits_the_layer_file_and_writes_a_device(tmp_path):
    out = tmp_path / "my_3090.yaml"
    done = run_cli("fit", "gpu", SHIPPED, "--model", "llama-3.1-8b", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "roofline_exponent" in done.stdout and "kernel times" in done.stdout
    assert "of kernel times" in out.read_text()


@pytest.mark.parametrize("body,message", [
    ("layer,input,kv,tp,ns\n", r":1: header must be layer_name,input"),
    (HEADER + "q_proj,1,0,1\n", r":2: expected 5 fields"),
    (HEADER + "q_proj,one,0,1,5\n", r":2: input: not a whole number"),
    (HEADER + "q_proj,1,0,1,nan\n", r":2: latency\(ns\): must be a finite number > 0"),
    (HEADER + "q_proj,1,0,1,-4\n", r":2: latency\(ns\): must be a finite number > 0"),
    (HEADER + "q_proj,0,0,1,4\n", r":2: input: must be >= 1"),
    (HEADER + "q_proj,1,0,1,4\nq_proj,1,0,1,5\n", r":3: q_proj at 1 input tokens is measured on line 2"),
    (HEADER + "q_proj,1,0,1,4\n", r"layer_name: no rows for act_fn"),
    (HEADER + "q_proj,1,5,1,4\n", r"no layer times at kv_cache 0"),
])
def test_bad_layer_files_name_file_line_and_field(tmp_path, body, message):
    path = tmp_path / "layers.csv"
    path.write_text(body)
    with pytest.raises(ConfigError, match=message):
        load_layer_times(path)


def test_a_nan_layer_file_fails_the_cli_in_one_line(tmp_path):
    path = write_layers(tmp_path / "layers.csv", uniform(POINTS))
    path.write_text(path.read_text().replace("q_proj,16,0,1,160.0", "q_proj,16,0,1,nan"))
    done = run_cli("fit", "gpu", path, "--model", "llama-3.1-8b", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "layers.csv:" in done.stderr and "latency(ns)" in done.stderr
