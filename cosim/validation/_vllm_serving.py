"""Case rtx4090-vllm: a real vLLM 0.19 serving run replayed by the autoregressive system's
vLLM engine (docs/validation.md). 300 ShareGPT requests arrived at about 10 a second at one
RTX 4090 serving Llama-3.1-8B in BF16 (LLMServingSim's published run: its request log, the
engine's resolved settings and its operator profile of the same GPU and model, shipped in
cosim/data/validation/rtx4090-llama-3.1-8b with LLMServingSim's MIT license). The replay
takes vLLM's settings from the run's meta.json (max_num_seqs, max_num_batched_tokens,
block_size, the 2,588 KV blocks vLLM reported, prefix caching, asynchronous scheduling) and
the requests at their queued_ts (vLLM's own origin of TTFT); it is timed three ways:

- profile: LLMServingSim's measured operator times (the role's ``profile:`` folder);
- roofline: the shipped rtx4090 device, its datasheet with the Ada Lovelace architecture's
  efficiencies (cosim/data/architectures/ada.yaml: fitted to this GPU's operator profile,
  kernel times, overheads aside);
- roofline-ampere: the same datasheet with the Ampere architecture's efficiencies (fitted
  to the RTX 3090's layer times): what carrying efficiencies across architectures costs.

Measured: TTFT, TPOT and end-to-end latency as vLLM's benchmark computes them from the log's
timestamps (cosim.serve.token_latency)."""

from __future__ import annotations

import functools
import json
from importlib import resources
from pathlib import Path
from typing import Any

from ..config.hardware import builtin_path, load_device
from ..schema._yamlio import load_yaml
from ..config.scenario import build_scenario
from ..serve import run
from ..trace._vllm_log import read_request_log

CASE = "rtx4090-vllm"
DEVICE, MODEL = "rtx4090", "llama-3.1-8b"
# The quantities of the table: per statistic, TTFT and TPOT, and end-to-end latency's mean and p99.
QUANTITIES = (*((q, s) for q in ("ttft", "tpot") for s in ("mean", "median", "p90", "p95", "p99")),
              ("e2el", "mean"), ("e2el", "p99"))
VARIANTS = ("profile", "roofline", "roofline-ampere")


def folder() -> Path:
    return Path(str(resources.files("cosim") / "data" / "validation" / "rtx4090-llama-3.1-8b"))


def vllm_settings() -> dict[str, Any]:
    """The batching section from the run's meta.json: vLLM's resolved settings."""
    meta = json.loads((folder() / "vllm" / "meta.json").read_text(encoding="utf-8"))
    resolved = meta["resolved_config"]
    cache, scheduler = resolved["cache_config"], resolved["scheduler_config"]
    return {"enabled": True, "max_batch": scheduler["max_num_seqs"], "token_budget": scheduler["max_num_batched_tokens"],
            "block_size": cache["block_size"], "num_gpu_blocks": cache["num_gpu_blocks"],
            "gpu_memory_utilization": cache["gpu_memory_utilization"],
            "prefix_caching": cache["enable_prefix_caching"], "async_scheduling": scheduler["async_scheduling"]}


def ampere_device() -> Any:
    """The RTX 4090's datasheet with the Ampere architecture's kernel efficiencies."""
    return load_device({**load_yaml(builtin_path("device", DEVICE)), "architecture": "ampere"})


def scenario(variant: str) -> Any:
    target: dict[str, Any] = {"device": DEVICE, "model": MODEL}
    if variant == "profile":
        target["profile"] = str(folder() / "profile")
    elif variant == "roofline-ampere":
        target["device"] = ampere_device()
    return build_scenario({"system": "autoregressive", "name": f"{CASE}-{variant}", "target": target,
                           "batching": vllm_settings()})


@functools.lru_cache(maxsize=1)
def measured_and_predicted() -> tuple[Any, dict[str, Any]]:
    log = read_request_log(folder() / "vllm" / "requests.jsonl")
    trace = log.to_trace("engine")
    return log.measured(), {variant: run(scenario(variant), trace) for variant in VARIANTS}


def rows() -> list[dict[str, Any]]:
    measured, runs = measured_and_predicted()
    out = []
    for variant in VARIANTS:
        tokens = runs[variant].summary.tokens
        for quantity, statistic in QUANTITIES:
            out.append({"case": f"{CASE} ({variant})", "quantity": f"{quantity.upper()} {statistic}", "unit": "ms",
                        "measured": measured.value(quantity, statistic) * 1e3,
                        "predicted": tokens.value(quantity, statistic) * 1e3})
    return out


def figure_points() -> list[tuple[float, float]]:
    """(measured, predicted) of every row, ms."""
    return [(r["measured"], r["predicted"]) for r in rows()]
