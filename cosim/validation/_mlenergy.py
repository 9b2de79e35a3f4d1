"""Case mlenergy-h100: the ML.ENERGY benchmark's vLLM runs on H100 SXM GPUs against the
roofline of the engine's steady state (docs/validation.md). Each configuration of a model
and task (cosim/data/validation/mlenergy-h100, Chung et al., "The ML.ENERGY Benchmark",
NeurIPS Datasets and Benchmarks 2025) ran every request at once against vLLM with
``max_num_seqs`` sequences, so the engine stays full: a request that ends is replaced at
once by one waiting. The prediction is the step that the median inter-token latency
samples, timed by the GPU model (GpuTiming::step_ns, asynchronous scheduling as the
benchmark's vLLM settings give it), with nothing taken from the measured latencies:

- the batch: the configuration's measured mean batch (``avg_batch_size``), each sequence at
  the mean context of a running sequence, the prompt plus E[L^2] / (2 E[L]) of its output
  (a running sequence is a length-biased draw, part way through its output; L from the
  configuration's output-length histogram);
- the prefills beside it: B / E[L] requests end per step, each replaced by a prompt of P
  tokens prefilled in one step; the median step holds one when at least half the steps do
  (B / E[L] >= 1/2), and then P * max(1, B / E[L]) prompt tokens;
- the GPUs: the configuration's tensor and expert parallel group over NVLink
  (cosim/data/links/nvlink4_h100.yaml);
- the sampler: the benchmark's requests sample with top-p, which its vLLM does by sorting
  every sampled sequence's logits (``benchmark_device`` below says with what cost).

Power and energy per token are predicted on the mean step rather than the median one: the
same batch, with the prompt tokens of the requests that end in an average step prefilled
beside it (P * B / E[L] of them, however few), timed by the same model. The group draws the
device's load model (docs/hardware.md) at that step's utilisation over its predicted time;
energy per token is that power times the step's time over its batch. The load model's
coefficients were fitted to the even-numbered configurations of each file (the first, the
third, ...; power_series.csv beside them, measured step times), so the odd-numbered ones are
held out: each power row says which it is.

The same reader takes a user's own ML.ENERGY model JSON (``cosim validate --data``)."""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from .._files import read_text
from .._inputs import MAX_YAML_BYTES
from ..config.hardware import ParallelConfig, load_device, load_link, load_model
from .._extension import native
from ..errors import ConfigError
from ..fit._power import HEADER, PowerPoint, group_steps
from ..schema import _params

CASE = "mlenergy-h100"
DEVICE = "h100-sxm"

# The sampler. The benchmark's client asks every request for top_p 0.95 at temperature 0.8
# with a repetition penalty of 1.1 (ml-energy/benchmark, mlenergy/benchmark/llm/benchmark.py)
# of a vLLM 0.11.1 server (its README's image). That vLLM applies top-p by sorting each
# sampled row's whole vocabulary with PyTorch: FlashInfer's sampler was off by default from
# vLLM PR 26859 until PR 40376. PR 40376 timed that sort (its "topp_whole" row, PyTorch
# column) at 6.150 ms for 512 rows of 131,072 logits on the B200 its tests name: 91.6 ps a
# logit. A sort streams the logits and their indices through memory several times, so
# another GPU is taken to sort at the B200's rate scaled by its memory bandwidth (an
# estimate: 211 ps a logit on the H100; plausible range the same PR's per-logit rates at 128
# rows, 138 ps on the B200, and between its 128 and 512 rows, 76 ps, so scaled: 175 to
# 317 ps on the H100).
SORT_MS, SORT_ROWS, SORT_LOGITS, SORT_DEVICE = 6.150, 512, 131072, "b200"


def benchmark_device(device: Any) -> Any:
    """``device`` as the benchmark ran it: its sampler sorting each sampled row's logits at the
    measured rate scaled by memory bandwidth (above), unless the device sets its own."""
    if device.gpu.sampler_logit_ns > 0.0:
        return device
    b200 = load_device(SORT_DEVICE).gpu.memory_bandwidth_gbps
    per_logit = SORT_MS * 1e6 / (SORT_ROWS * SORT_LOGITS) * b200 / device.gpu.memory_bandwidth_gbps
    return dataclasses.replace(device, gpu=_params.replaced(device.gpu, sampler_logit_ns=per_logit))

# Prompt tokens of a request, by task: estimates (the benchmark ships no prompt lengths).
# lm-arena-chat: LMSYS-Chat-1M (Zheng et al. 2023, Table 1) averages 69.5 tokens a prompt
# and 214.5 a response over 2.0 turns; a later turn carries the turns before it, so a
# request averages about 69.5 + (69.5 + 214.5) / 2 = 211. Range 70-600.
# gpqa: a GPQA Diamond question with its four choices, about 150-300 words, about 250 tokens
# with the chat template. Range 150-500.
PROMPT_TOKENS = {"lm-arena-chat": 211, "gpqa": 250}
PROMPT_RANGE = {"lm-arena-chat": (70, 600), "gpqa": (150, 500)}

# The shipped model descriptions of the benchmark's models (an Instruct or Thinking
# checkpoint has its base model's shapes).
MODELS = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "Qwen/Qwen3-8B": "qwen3-8b",
    "Qwen/Qwen3-30B-A3B-Instruct-2507": "qwen3-30b-a3b",
    "Qwen/Qwen3-30B-A3B-Thinking-2507": "qwen3-30b-a3b",
    "openai/gpt-oss-20b": "gpt-oss-20b",
}


def folder() -> Path:
    return Path(str(resources.files("cosim") / "data" / "validation" / "mlenergy-h100"))


@dataclass(frozen=True)
class Configuration:
    """One measured configuration, as the prediction needs it."""

    max_num_seqs: int
    batch: float
    tensor_parallel: int
    expert_parallel: int
    gpus: int
    mean_output: float        # E[L] of the histogram
    running_output: float     # E[L^2] / (2 E[L]): tokens a running sequence has produced, on average
    median_itl_ms: float
    power_w: float
    energy_per_token_j: float


def _histogram_moments(dist: Any, where: str) -> tuple[float, float]:
    """E[L] and E[L^2] of an output-length histogram (bin centres)."""
    try:
        bins, counts = [float(b) for b in dist["bins"]], [float(c) for c in dist["counts"]]
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"{where}: output_length_distribution: expected bins and counts") from None
    if len(bins) != len(counts) + 1 or sum(counts) <= 0 or any(c < 0 for c in counts):
        raise ConfigError(f"{where}: output_length_distribution: one more bin edge than counts, counts >= 0")
    centres = [(a + b) / 2 for a, b in zip(bins, bins[1:])]
    total = sum(counts)
    return (sum(c * x for c, x in zip(counts, centres)) / total,
            sum(c * x * x for c, x in zip(counts, centres)) / total)


def _number(config: dict[str, Any], key: str, where: str) -> float:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{where}: {key}: must be a number > 0, got {value!r}")
    return float(value)


def read(path: Path) -> tuple[dict[str, Any], list[Configuration]]:
    """A benchmark model JSON: its header and its configurations (ConfigError naming the
    file, the configuration and the field)."""
    try:
        data = json.loads(read_text(path, MAX_YAML_BYTES))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("configurations"), list):
        raise ConfigError(f"{path}: an ML.ENERGY model JSON has a list of configurations")
    out = []
    for i, c in enumerate(data["configurations"]):
        where = f"{path}: configurations[{i}]"
        if not isinstance(c, dict):
            raise ConfigError(f"{where}: expected a mapping")
        par = c.get("parallelization") or {}
        tp, ep, dp = (int(par.get(k, 1)) for k in ("tensor_parallel", "expert_parallel", "data_parallel"))
        gpus = int(_number(c, "num_gpus", where))
        if dp != 1:
            raise ConfigError(f"{where}: parallelization.data_parallel: {dp}; only data_parallel 1 is predicted")
        # vLLM's expert parallel spans the GPUs it is given (tensor_parallel_size x data
        # parallel), and its attention runs tensor parallel over them.
        group = max(tp, ep)
        if group != gpus:
            raise ConfigError(f"{where}: num_gpus {gpus} is not the parallel group's {group}")
        mean, square = _histogram_moments(c.get("output_length_distribution") or data.get(
            "output_length_distribution"), where)
        out.append(Configuration(int(_number(c, "max_num_seqs", where)), _number(c, "avg_batch_size", where),
                                 group, ep, gpus, mean, square / (2 * mean), _number(c, "median_itl_ms", where),
                                 _number(c, "avg_power_watts", where), _number(c, "energy_per_token_joules", where)))
    return data, out


def mean_step(config: Configuration, prompt: int) -> tuple[int, int, int, int]:
    """The engine's average step: the batch at its running context, and the prompt tokens of
    the B / E[L] requests that end in a step prefilled beside it."""
    batch = max(1, round(config.batch))
    return (batch, round(prompt + config.running_output), round(prompt * batch / config.mean_output), 0)


def fitted(index: int) -> bool:
    """Whether a configuration (its place in its file) is one the H100's load model was fitted to."""
    return index % 2 == 0


def power_points(path: Path, only_fitted: bool = True) -> list[PowerPoint]:
    """A benchmark JSON's configurations as a power series (cosim fit power): each its mean
    step, measured taking avg_batch_size / output throughput, at its average power."""
    data, configs = read(path)
    model, prompt = MODELS.get(data.get("model_id")), PROMPT_TOKENS.get(data.get("task"))
    if model is None or prompt is None:
        raise ConfigError(f"{path}: model_id {data.get('model_id')!r} or task {data.get('task')!r} is not one "
                          f"this reader knows")
    out = []
    for i, (raw, config) in enumerate(zip(data["configurations"], configs)):
        if only_fitted and not fitted(i):
            continue
        decodes, context, prefill, _ = mean_step(config, prompt)
        seconds = config.batch / _number(raw, "output_throughput_tokens_per_sec", f"{path}: configurations[{i}]")
        out.append(PowerPoint(model, config.tensor_parallel, config.expert_parallel, decodes, context, prefill,
                              seconds, config.power_w))
    return out


def power_series_text() -> str:
    """The power series the H100's load model was fitted to (power_series.csv): the fitted
    configurations of every file, as `cosim fit power` reads them."""
    lines = [",".join(HEADER)]
    for path in sorted(folder().glob("*.json")):
        for p in power_points(path):
            lines.append(f"{p.model},{p.tensor_parallel},{p.expert_parallel},{p.decodes},{p.context},{p.prefill},"
                         f"{p.step_s:.6g},{p.watts:.6g}")
    return "\n".join(lines) + "\n"


def predicted_step_ns(device: Any, model: Any, link: Any, config: Configuration, prompt: int) -> float:
    """The time of the step the median inter-token latency samples (the module's docstring)."""
    batch = max(1, round(config.batch))
    context = round(prompt + config.running_output)
    ends_per_step = batch / config.mean_output
    prefill = round(prompt * max(1.0, ends_per_step)) if ends_per_step >= 0.5 else 0
    parallel = _params.replaced(ParallelConfig(), tensor_parallel=config.tensor_parallel,
                                expert_parallel=config.expert_parallel)
    step = (batch, context, prefill, 0)
    return native().gpu_batch_ns(_params.native(device.gpu), _params.native(model), _params.native(parallel),
                                 _params.native(link), [step], True)[0]


def rows_of(path: Path, device_ref: Any = DEVICE, model_ref: Any = None, label: str = CASE) -> list[dict[str, Any]]:
    """Rows of one benchmark JSON on a device (a name, YAML or config): median ITL, power and
    energy per token of every configuration."""
    data, configs = read(path)
    model_id, task = data.get("model_id"), data.get("task")
    if model_ref is None:
        if model_id not in MODELS:
            raise ConfigError(f"{path}: model_id {model_id!r} has no shipped model; give one (--model)")
        model_ref = MODELS[model_id]
    if task not in PROMPT_TOKENS:
        raise ConfigError(f"{path}: task {task!r}: prompt lengths are known for {', '.join(PROMPT_TOKENS)}")
    device, model = benchmark_device(load_device(device_ref)), load_model(model_ref)
    link = load_link(device.peer_link or device.host_link)  # the GPUs' own, as a role's group takes it
    short = str(model_id).split("/")[-1]
    points = [PowerPoint(str(model_ref), c.tensor_parallel,
                         c.expert_parallel, *mean_step(c, PROMPT_TOKENS[task])[:3], 1.0, c.power_w)
              for c in configs]
    # Each configuration's mean step over the time the model gives it, on the device's power.
    powers, mean_step_ns = group_steps(device, points, device.power, measured_time=False, model=model)
    out = []
    for i, (config, point, power, mean_ns) in enumerate(zip(configs, points, powers, mean_step_ns)):
        ns = predicted_step_ns(device, model, link, config, PROMPT_TOKENS[task])
        group = f"tp{config.tensor_parallel}" + (f" ep{config.expert_parallel}" if config.expert_parallel > 1 else "")
        name = f"{short} {task} {group}, {config.max_num_seqs} seqs"
        held = "" if label != CASE else (" (fitted)" if fitted(i) else " (held out)")
        out += [
            {"case": f"{label} (ITL)", "quantity": f"median ITL {name}", "unit": "ms",
             "measured": config.median_itl_ms, "predicted": ns / 1e6},
            {"case": f"{label} (power)", "quantity": f"GPU power {name}{held}", "unit": "W",
             "measured": config.power_w, "predicted": float(power)},
            {"case": f"{label} (energy)", "quantity": f"J/token {name}{held}", "unit": "J",
             "measured": config.energy_per_token_j, "predicted": power * mean_ns / 1e9 / point.decodes},
        ]
    return out


def rows() -> list[dict[str, Any]]:
    return [row for path in sorted(folder().glob("*.json")) for row in rows_of(path)]
