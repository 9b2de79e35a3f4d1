"""`cosim validate --data`: a user's ML.ENERGY JSON and bench folder through the table,
the ML.ENERGY prediction worked again from its rule (docs/validation.md), and bad inputs
named in one line."""

import json
import math
import shutil

import pytest

from cosim import ConfigError, load_device, load_model
from cosim.validation import _mlenergy as mlenergy
from cosim.validation._user_data import rows_for
from conftest import run_cli
from test_parallel_groups import Group, roofline

CONFIG = {"avg_batch_size": 8.0, "avg_output_len": 3000.0, "avg_power_watts": 500.0, "energy_per_token_joules": 0.5,
          "gpu_model": "H100", "max_num_seqs": 8, "median_itl_ms": 10.0, "num_gpus": 2,
          "output_throughput_tokens_per_sec": 800.0,
          "parallelization": {"data_parallel": 1, "expert_parallel": 1, "tensor_parallel": 2},
          # Outputs of 1,000 and 5,000 tokens, as many of each: E[L] = 3,000, E[L^2] = 13e6.
          "output_length_distribution": {"bins": [0, 2000, 4000, 6000], "counts": [5, 0, 5]}}


def write(tmp_path, configs, model_id="Qwen/Qwen3-8B", task="gpqa", name="run.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"model_id": model_id, "task": task, "configurations": configs}))
    return path


def test_a_configuration_is_predicted_by_its_rule(tmp_path):
    rows, notes = rows_for(write(tmp_path, [CONFIG]))
    itl, power, energy = rows
    assert notes == [] and itl["measured"] == 10.0 and power["measured"] == 500.0
    # A running sequence is part way through a length-biased output: E[L^2] / (2 E[L]) =
    # 13e6 / 6000 = 2166.7 tokens after its 250-token GPQA prompt. B / E[L] = 8 / 3000 of a
    # request ends a step, far below one in two: the median step holds no prefill.
    # Each of the 8 sequences' top-p sampling sorts its vocabulary: vLLM PR 40376's 6.150 ms
    # for 512 x 131,072 logits on a B200, at the H100's bandwidth.
    bandwidth = {d: load_device(d).gpu.memory_bandwidth_gbps for d in ("b200", "h100-sxm")}
    sort = 8 * load_model("qwen3-8b").vocab * 6.150e6 / (512 * 131072) * bandwidth["b200"] / bandwidth["h100-sxm"]
    hand = Group("h100-sxm", "qwen3-8b", 2).decode_batch(8, round(250 + 13e6 / 6000)) + sort
    overhead = load_device("h100-sxm").gpu.forward_overhead_ns
    assert itl["predicted"] == pytest.approx(max(overhead, hand - overhead) / 1e6, rel=1e-9)
    # Power and energy: the mean step, B / E[L] x P = 8 / 3000 x 250 = 0.67, so one prompt
    # token prefilled beside the 8 decodes, over its own time, on the H100's load model.
    group = Group("h100-sxm", "qwen3-8b", 2)
    m, g = group.m, group.g
    att = 2 * m.layers * m.heads * m.head_dim
    flops = 2 * (9 * group.dense_params() + 8 * att * 2417) / 2  # one GPU's half
    nbytes = group.dense_params() / 2 * g.weight_bytes_per_param + (8 * 2417 + 1) * group.kv_bytes()
    compute = flops / (g.peak_tflops * g.compute_efficiency * 1e3)
    memory = nbytes / (g.memory_bandwidth_gbps * g.memory_efficiency)
    ns = overhead + roofline(compute, memory, g.roofline_exponent) + 2 * m.layers * group.all_reduce(9 * m.hidden * 2) \
        + sort
    ns = max(overhead, ns - overhead)
    p = load_device("h100-sxm").power
    load = p.busy_load + p.compute_load * flops / (g.peak_tflops * 1e3 * ns) + \
        p.memory_load * nbytes / (g.memory_bandwidth_gbps * ns)
    watts = 2 * (p.idle_w + (p.limit_w - p.idle_w) * (1 - math.exp(-load)))
    assert power["predicted"] == pytest.approx(watts, rel=1e-9)
    assert energy["predicted"] == pytest.approx(watts * ns / 1e9 / 8, rel=1e-9)
    assert itl["case"] == "data run (ITL)" and "tp2" in itl["quantity"]


def test_histogram_moments_are_the_bin_centres():
    assert mlenergy._histogram_moments({"bins": [0, 2, 4], "counts": [1, 1]}, "x") == (2.0, 5.0)


@pytest.mark.parametrize("change,message", [
    ({"num_gpus": 4}, r"run\.json: configurations\[0\]: num_gpus 4 is not the parallel group's 2"),
    ({"median_itl_ms": -1}, r"configurations\[0\]: median_itl_ms: must be a number > 0, got -1"),
    ({"parallelization": {"data_parallel": 2, "tensor_parallel": 2}},
     r"configurations\[0\]: parallelization\.data_parallel: 2; only data_parallel 1 is predicted"),
    ({"output_length_distribution": {"bins": [0, 1], "counts": [1, 1]}},
     r"output_length_distribution: one more bin edge than counts"),
])
def test_a_bad_configuration_is_named(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message):
        rows_for(write(tmp_path, [{**CONFIG, **change}]))


def test_what_the_files_do_not_say_is_asked_for_by_flag(tmp_path):
    with pytest.raises(ConfigError, match=r"model_id 'me/mine' has no shipped model; give one \(--model\)"):
        rows_for(write(tmp_path, [CONFIG], model_id="me/mine"))
    assert rows_for(write(tmp_path, [CONFIG], model_id="me/mine"), model="qwen3-8b")[0]
    with pytest.raises(ConfigError, match=r"measured on A100; give the device \(--device\)"):
        rows_for(write(tmp_path, [{**CONFIG, "gpu_model": "A100"}]))
    with pytest.raises(ConfigError, match=r"task 'poetry': prompt lengths are known for lm-arena-chat, gpqa"):
        rows_for(write(tmp_path, [CONFIG], task="poetry"))


def test_a_bench_folder_replays_with_its_files_and_notes_what_it_leaves_out(tmp_path):
    folder = tmp_path / "bench"
    shutil.copytree(mlenergy.folder().parent / "rtxpro6000-qwen3-30b-a3b", folder)
    shutil.rmtree(folder / "profile")
    done = run_cli("validate", "--data", "bench", "--device", "rtx-pro-6000", "--out", "o", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "data bench (roofline)" in done.stdout and "(profile)" not in done.stdout
    assert "note: data_parallel_size 2 with expert parallel: the ranks' MoE layers are taken as equally loaded" \
        in done.stdout
    table = (tmp_path / "o" / "validation.csv").read_text().splitlines()
    assert len(table) == 1 + 7
    (folder / "vllm" / "meta.json").write_text("{}")
    done = run_cli("validate", "--data", "bench", "--device", "rtx-pro-6000", "--out", "o2", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("cosim: error: ") and "max_num_seqs: missing" in done.stderr
    assert not (tmp_path / "o2" / "validation.csv").exists()
    done = run_cli("validate", "--data", "bench", "--out", "o3", cwd=tmp_path)
    assert done.returncode == 2 and "give one (--device)" in done.stderr
    done = run_cli("validate", "--model", "qwen3-8b", "--out", "o4", cwd=tmp_path)
    assert done.returncode == 2 and "--model: only with --data" in done.stderr


def _bench_with_cluster(tmp_path, bw, latency):
    folder = tmp_path / "bench"
    shutil.copytree(mlenergy.folder().parent / "rtxpro6000-qwen3-30b-a3b", folder)
    cluster = json.loads((folder / "llmservingsim_cluster.json").read_text())
    cluster.update(link_bw=bw, link_latency=latency)
    (folder / "llmservingsim_cluster.json").write_text(json.dumps(cluster))
    rows, notes = rows_for(folder, "rtx-pro-6000")
    by = {}
    for r in rows:
        by.setdefault(r["case"].split("(", 1)[1].rstrip(")"), {})[r["quantity"]] = r["predicted"]
    return by


def test_the_cluster_files_link_carries_the_engines_exchange(tmp_path):
    # The device's own PCIe Gen5 x16 link moves 63 GB/s x 0.8 with 1 us a transfer: given as
    # the cluster file's link (the last figure of a list: the data-parallel dimension), it
    # predicts exactly what the device's link does.
    same = _bench_with_cluster(tmp_path, [900, 63 * 0.8], [0, 1000])
    assert same["profile, cluster link"] == pytest.approx(same["profile"], rel=1e-9)
    # A slower link makes every step's exchange longer.
    slow = _bench_with_cluster(tmp_path / "slow", 10, 30000)
    assert slow["profile, cluster link"]["TPOT mean"] > 1.05 * slow["profile"]["TPOT mean"]


@pytest.mark.parametrize("bw,latency,message", [
    ("fast", 20000, r"llmservingsim_cluster.json: link_bw: must be a number, got 'fast'"),
    (16, -1, r"llmservingsim_cluster.json: link_latency: must be >= 0.0, got -1.0"),
    (0, 20000, r"llmservingsim_cluster.json: link_bw: must be > 0, got 0.0")])
def test_a_bad_cluster_link_is_named(tmp_path, bw, latency, message):
    with pytest.raises(ConfigError, match=message):
        _bench_with_cluster(tmp_path, bw, latency)
