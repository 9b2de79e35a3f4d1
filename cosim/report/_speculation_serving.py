"""The report's "Speculation compared at load": each kind of speculation as a serving
cluster with two target RTX 3090s batching, under Poisson arrivals at rising rates, beside
the target alone on the same two GPUs served by vLLM's engine: the p50 and p99 latency,
the requests a second served and the energy per token. Step-level systems hold a request's
draft context on their draft devices; token-level speculative decoding batches the drafts
of every request in flight inside the engine, so the two saturate differently."""

from __future__ import annotations

from typing import Any, Callable

from . import _intervals
from .. import trace as traces
from ..config.scenario import load_scenario
from ..serve import run
from .._stats._serving import BLOCKS, serve_intervals
from ._speculation import same_gpu_scenario

DATASET = "math500"
RATES = (0.5, 1.0, 1.5, 2.0)  # requests per second
REQUESTS = 600
TARGETS = {"cluster.target.devices": 2, "batching.enabled": True}  # what every cluster shares
# label -> (built-in scenario, or None for the token-level one; values set on it; the run it
# replays: brsd, the backtracking run's requests, or rsd, the forward-only run's).
SYSTEMS: dict[str, tuple[str | None, dict[str, Any], str]] = {
    "the target alone": ("target-alone", TARGETS, "brsd"),
    "token level, draft model on each target GPU": (None, TARGETS, "brsd"),
    "token level, drafts on a U280 beside each target GPU (split)": ("split-decoding-u280", TARGETS, "brsd"),
    "HeteroReason, 8 U280 @ 200 MHz and 2 PRM GPUs": ("cluster-heteroreason-u280-200", {}, "brsd"),
    "the target alone, forward-only run": ("target-alone", TARGETS, "rsd"),
    "SpecReason, 2 draft GPUs (4 contexts each)": (
        "specreason", {**TARGETS, "cluster.draft.devices": 2, "cluster.draft.contexts_per_device": 4}, "rsd"),
    "SpecReason, 8 U280 @ 200 MHz": ("specreason-u280", {**TARGETS, "cluster.draft.devices": 8}, "rsd"),
    "Lookahead Reasoning, 2 draft GPUs (4 contexts each), 1 judge GPU": (
        "lookahead", {**TARGETS, "cluster.draft.devices": 2, "cluster.draft.contexts_per_device": 4}, "rsd"),
}
STEPS = len(RATES) * len(SYSTEMS)
METRICS = ("latency_p50_s", "latency_p99_s", "throughput_req_s", "energy_j_per_token")


def scenario(name: str | None, values: dict[str, Any]) -> Any:
    scn = same_gpu_scenario() if name is None else load_scenario(name)
    return scn.with_values(values) if values else scn


def serving(seed: int, tick: Callable[[str], None], requests: int = REQUESTS) -> dict[str, Any]:
    runs = {"brsd": traces.generate(DATASET, requests, seed).in_memory(),
            "rsd": traces.generate(DATASET, requests, seed, backtracking=False).in_memory()}
    rows = []
    for label, (name, values, replays) in SYSTEMS.items():
        scn = scenario(name, values)
        for rate in RATES:
            served = run(scn, runs[replays], rate=rate, seed=seed)
            found = serve_intervals(served, percentiles=("latency_p99_s",))
            rows.append({"system": label, "cluster": scn.description, "run": replays, "rate": rate,
                         **{m: getattr(served.summary, m) for m in METRICS},
                         "intervals": {"latency_p99_s": found["latency_p99_s"].to_list()}})
            tick(f"speculation at load {label} at {rate}/s")
    return {"dataset": DATASET, "requests": requests, "rates": list(RATES), "rows": rows}


def markdown(served: dict[str, Any]) -> list[str]:
    lines = [f"## Speculation compared at load ({served['dataset']}, {served['requests']} requests, "
             "Poisson arrivals)", "",
             "Each cluster has two target RTX 3090s that batch its requests' work; the target alone and "
             "token-level speculative decoding (Qwen2.5-0.5B drafting on each target GPU, k = 4, or on a U280 "
             "at 200 MHz beside each, whose one decoder drafts for the batch's requests in turn) are served by "
             "vLLM's engine, which batches every request in flight; the step-level systems hold one request "
             "per draft context. HeteroReason adds eight U280 boards and two PRM GPUs; SpecReason's target "
             "scores the steps itself. SpecReason replays the forward-only run of the same requests, beside "
             "the target alone on that run. Brackets: the 95% interval of the p99 latency, a bootstrap over "
             f"{BLOCKS} blocks of consecutive requests.", "",
             "| system | rate /s | p50 s | p99 s | req/s | J/token |", "|---|---|---|---|---|---|"]
    for r in served["rows"]:
        lines.append(f"| {r['system']} | {r['rate']:g} | {r['latency_p50_s']:.2f} | "
                     f"{_intervals.cell(r, 'latency_p99_s', '{:.1f}')} | {r['throughput_req_s']:.3f} | "
                     f"{r['energy_j_per_token']:.2f} |")
    return lines
