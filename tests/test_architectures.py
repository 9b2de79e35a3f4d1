"""GPU architectures: a GPU takes its architecture's kernel efficiencies where its own file
gives none; each architecture's values are the fit the carry-over case makes; leaving a
GPU out gives it the mean of the others' fits. Bytes and bandwidths worked by hand here."""

import statistics
from importlib import resources

import pytest
import yaml

from cosim import ConfigError, hardware, load_device
from cosim.validation import _carry_over as carry
from conftest import one_line_error, run_cli

EFFICIENCIES = ("memory_efficiency", "compute_efficiency", "roofline_exponent")
ARCHITECTURES = resources.files("cosim") / "data" / "architectures"
# Each GPU of the library and its architecture (NVIDIA's whitepapers and datasheets).
FAMILY = {"rtx3090": "ampere", "a100-80gb": "ampere", "rtx4090": "ada", "l4": "ada", "l40s": "ada",
          "h100-sxm": "hopper", "h100-pcie": "hopper", "h200": "hopper", "b200": "blackwell",
          "rtx-pro-6000": "blackwell", "rtx-pro-6000-ws": "blackwell"}


def architecture(name):
    return yaml.safe_load((ARCHITECTURES / f"{name}.yaml").read_text())


@pytest.mark.parametrize("device", sorted(FAMILY))
def test_each_gpu_takes_its_architectures_efficiencies(device):
    data = yaml.safe_load(hardware.builtin_path("device", device).read_text())
    assert data["architecture"] == FAMILY[device]
    assert not set(EFFICIENCIES) & set(data["gpu"])  # the architecture's, not its own
    gpu = load_device(device).gpu
    for name, entry in architecture(FAMILY[device])["gpu"].items():
        assert getattr(gpu, name) == entry["value"]
        low, high = entry["range"]
        assert low <= entry["value"] <= high
        note = entry.get("source") or entry.get("estimate")
        assert len(note) > 20


def test_a_value_the_gpu_gives_wins_over_its_architectures(tmp_path):
    data = yaml.safe_load(hardware.builtin_path("device", "l4").read_text())
    data["gpu"]["memory_efficiency"] = {"value": 0.5, "estimate": "a user's own. Range: 0.4-0.6", "range": [0.4, 0.6]}
    path = tmp_path / "l4-own.yaml"
    path.write_text(yaml.safe_dump(data))
    gpu = load_device(path).gpu
    assert gpu.memory_efficiency == 0.5
    assert gpu.compute_efficiency == architecture("ada")["gpu"]["compute_efficiency"]["value"]


def test_an_unknown_architecture_or_a_foreign_key_is_refused_with_its_place(tmp_path):
    data = yaml.safe_load(hardware.builtin_path("device", "l4").read_text())
    path = tmp_path / "gpu.yaml"
    path.write_text(yaml.safe_dump({**data, "architecture": "volta"}, sort_keys=False))
    with pytest.raises(ConfigError, match=r"gpu\.yaml:\d+: architecture: unknown architecture 'volta'"):
        load_device(path)
    arch = tmp_path / "mine.yaml"
    arch.write_text("kind: architecture\nname: Mine\ngpu:\n  memory_efficiency: 0.8\n  peak_tflops: 100\n")
    path.write_text(yaml.safe_dump({**data, "architecture": "mine.yaml"}, sort_keys=False))
    with pytest.raises(ConfigError, match=r"mine\.yaml:5: gpu\.peak_tflops: an architecture sets only"):
        load_device(path)
    # A user's own architecture beside the device file, given by path, is taken.
    arch.write_text("kind: architecture\nname: Mine\ngpu:\n  memory_efficiency: 0.8\n")
    with pytest.raises(ConfigError, match=r"gpu\.yaml:\d+: gpu: missing parameter 'compute_efficiency'"):
        load_device(path)  # neither the file nor its architecture gives it
    arch.write_text("kind: architecture\nname: Mine\ngpu:\n  memory_efficiency: 0.8\n  compute_efficiency: 0.6\n"
                    "  roofline_exponent: 2\n")
    gpu = load_device(path).gpu
    assert (gpu.memory_efficiency, gpu.compute_efficiency, gpu.roofline_exponent) == (0.8, 0.6, 2)
    line = one_line_error(run_cli("builtins", "--sources", "volta", cwd=tmp_path))
    assert "volta" in line


def test_builtins_lists_architectures_and_a_gpus_inherited_sources(tmp_path):
    done = run_cli("builtins", cwd=tmp_path)
    assert "GPU architectures: ada, ampere, blackwell, hopper" in done.stdout
    done = run_cli("builtins", "--sources", "h200", cwd=tmp_path)
    hopper = architecture("hopper")["gpu"]["memory_efficiency"]
    assert f"  gpu.memory_efficiency = {hopper['value']}  [source] (from the hopper architecture) " \
           f"{hopper['source']}" in done.stdout.splitlines()
    assert run_cli("builtins", "--sources", "hopper", cwd=tmp_path).stdout.startswith(
        "architecture hopper: 1 value cites a source, 2 are estimates")


@pytest.mark.parametrize("profiled", carry.PROFILED, ids=lambda p: p.device)
def test_each_architecture_holds_its_gpus_fit(profiled):
    """The files state the fit (rounded as written), and two standard errors as the range."""
    fit = carry.fits()[profiled.device]
    entries = architecture(profiled.architecture)["gpu"]
    for name in profiled.fits:
        value, sigma = fit.values[name], fit.sigmas[name]
        assert entries[name]["value"] == pytest.approx(value, rel=5e-3)
        low, high = entries[name]["range"]
        assert low == pytest.approx(value - 2 * sigma, abs=2e-2 * value)
        assert high == pytest.approx(min(value + 2 * sigma, 1.0) if name != "roofline_exponent"
                                     else value + 2 * sigma, abs=2e-2 * value)


def test_hoppers_unfitted_values_are_the_mean_of_the_other_architectures():
    fitted = [architecture(a)["gpu"] for a in ("ampere", "ada", "blackwell")]
    hopper = architecture("hopper")["gpu"]
    for name in ("compute_efficiency", "roofline_exponent"):
        values = [f[name]["value"] for f in fitted]
        assert hopper[name]["value"] == pytest.approx(statistics.fmean(values), abs=6e-3)
        assert hopper[name]["range"] == [min(values), max(values)]


@pytest.mark.parametrize("device,bandwidth", [("rtx4090", 1008e9), ("rtx3090", 936e9)])
def test_a_memory_efficiency_is_the_weights_over_bandwidth_of_a_lone_decode(device, bandwidth):
    # Llama-3.1-8B reads its weights but the embedding table (one row of it) at BF16 in a
    # lone decode at a short context: (8,030,261,248 - 525,336,576) x 2 bytes.
    weights = (8_030_261_248 - 525_336_576) * 2
    problem = carry.problems()[device]
    seconds = problem.measured[problem.labels.index(next(l for l in problem.labels if l.startswith("decode")))]
    by_hand = weights / (bandwidth * seconds)
    assert carry.fits()[device].values["memory_efficiency"] == pytest.approx(by_hand, rel=0.04)


def test_a_gpu_left_out_takes_the_mean_of_the_others_and_a_decode_scales_by_it():
    fits = {d: f.values for d, f in carry.fits().items()}
    out = carry.left_out_values("rtx4090")
    others = [fits[d]["memory_efficiency"] for d in fits if d != "rtx4090"]
    assert out["memory_efficiency"] == pytest.approx(statistics.fmean(others), rel=1e-12)
    assert len(others) == 3
    # A lone decode is bound by memory: its time scales as 1 / memory efficiency.
    rows = [r for r in carry.rows() if r["case"] == "gpu-carry-over (RTX 4090 left out)"]
    decode = next(r for r in rows if r["quantity"] == "decode 1 token at context 16")
    own = carry.problems()["rtx4090"].predict(carry.own_values("rtx4090"))[0] * 1e3
    assert decode["predicted"] == pytest.approx(own * fits["rtx4090"]["memory_efficiency"]
                                                / out["memory_efficiency"], rel=0.02)
    assert len(rows) == 19
