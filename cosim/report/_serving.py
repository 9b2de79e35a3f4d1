"""Serving at scale in the report: the built-in clusters (and the HeteroReason cluster
with its boards at 300 MHz) serving Poisson arrivals at rising rates: p99 latency and
throughput against the rate (the latency-throughput knee), and energy per token."""

from __future__ import annotations

from typing import Any, Callable

from . import _intervals
from .. import trace as traces
from ..config.scenario import load_scenario
from ..serve import run
from .._stats._serving import BLOCKS, serve_intervals
from ._systems import color

DATASET = "math500"
RATES = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5)  # requests per second
REQUESTS = 600
# The curves: label -> (built-in scenario, values set on it, the report's system whose design
# each board or GPU runs: the curve takes its colour).
SYSTEMS: dict[str, tuple[str, dict[str, Any], str]] = {
    "heteroreason, 8 U280 @ 200 MHz": ("cluster-heteroreason-u280-200", {}, "heteroreason-u280-200"),
    "heteroreason, 8 U280 @ 300 MHz": ("cluster-heteroreason-u280-200", {"fpga.clock_mhz": 300},
                                       "heteroreason-u280-300"),
    "gpu-stepahead, 2 draft GPUs": ("cluster-gpu-stepahead", {}, "gpu-stepahead"),
}
STEPS = len(RATES) * len(SYSTEMS)


def serving(seed: int, tick: Callable[[str], None], requests: int = REQUESTS) -> dict[str, Any]:
    trace = traces.generate(DATASET, requests, seed).in_memory()
    curves: dict[str, list[dict[str, Any]]] = {}
    clusters: dict[str, str] = {}
    for label, (name, values, _) in SYSTEMS.items():
        scn = load_scenario(name)
        for path, value in values.items():
            scn = scn.with_value(path, value)
        clusters[label] = scn.description + "".join(f"; {path} = {value}" for path, value in values.items())
        points = []
        for rate in RATES:
            served = run(scn, trace, rate=rate, seed=seed)
            s = served.summary
            found = serve_intervals(served, percentiles=("latency_p99_s",))
            points.append({"rate": rate, "latency_p50_s": s.latency_p50_s, "latency_p99_s": s.latency_p99_s,
                           "intervals": {m: found[m].to_list() for m in ("latency_p99_s", "latency_mean_s")},
                           "throughput_req_s": s.throughput_req_s, "energy_j_per_token": s.energy_j_per_token,
                           "queueing_mean_s": s.queueing_mean_s,
                           "mean_batch_target": s.pools["target"].mean_batch,
                           "utilisation_target": s.pools["target"].utilisation})
            tick(f"serving {label} at {rate}/s")
        curves[label] = points
    return {"dataset": DATASET, "requests": requests, "rates": list(RATES), "clusters": clusters,
            "curves": curves}


def markdown(serve: dict[str, Any]) -> list[str]:
    lines = [f"## Serving at scale ({serve['dataset']}, {serve['requests']} requests, Poisson arrivals)", "",
             "Each cluster holds eight requests in flight; its PRM and target GPUs batch them "
             f"(`cosim serve`, docs/serving.md). Brackets: the 95% interval of the p99 latency, a bootstrap over "
             f"{BLOCKS} blocks of consecutive requests (requests that queue together are not independent).", ""]
    lines += [f"- {label}: {description}" for label, description in serve["clusters"].items()]
    lines += ["", "| rate /s | " + " | ".join(f"{label}: p99 s, req/s, J/token" for label in serve["curves"]) + " |",
              "|---|" + "---|" * len(serve["curves"])]
    for i, rate in enumerate(serve["rates"]):
        cells = []
        for points in serve["curves"].values():
            p = points[i]
            cells.append(f"{_intervals.cell(p, 'latency_p99_s', '{:.1f}')}, {p['throughput_req_s']:.3f}, "
                         f"{p['energy_j_per_token']:.2f}")
        lines.append(f"| {rate:g} | " + " | ".join(cells) + " |")
    knees = [f"{label} {max(p['throughput_req_s'] for p in points):.2f}" for label, points in serve["curves"].items()]
    lines += ["", "Most requests per second served: " + "; ".join(knees) + "."]
    return lines


def figure(serve: dict[str, Any]) -> Any:
    from ._plots import plain_log_ticks, plt  # lazy: matplotlib, loaded only when a figure is drawn

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4))
    for (label, points), marker in zip(serve["curves"].items(), ("o", "s", "^")):
        rates = [p["rate"] for p in points]
        style = {"marker": marker, "label": label, "color": color(SYSTEMS[label][2])}
        axes[0].errorbar(rates, [p["latency_p99_s"] for p in points],
                         yerr=_intervals.error_bars(points, "latency_p99_s"), capsize=2, **style)
        axes[1].plot(rates, [p["throughput_req_s"] for p in points], **style)
        axes[2].plot(rates, [p["energy_j_per_token"] for p in points], **style)
    axes[1].plot(serve["rates"], serve["rates"], color="black", linestyle=":", linewidth=1, label="served = offered")

    axes[0].set_yscale("log")  # the knee: a few seconds below it, minutes of queueing above
    plain_log_ticks(axes[0].yaxis)
    for ax, ylabel in zip(axes, ("p99 latency (s)", "requests served per second", "J per final-chain token "
                                                                                   "(idle included)")):
        ax.set_xlabel("offered rate (requests/s)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    axes[1].legend(fontsize=8, loc="upper left")
    fig.suptitle(f"Serving at scale: the latency-throughput knee ({serve['dataset']})")
    fig.tight_layout()
    return fig
