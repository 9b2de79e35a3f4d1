"""Where a draft accelerator starts to pay off: heteroreason's latency and energy per
token against the draft device's decode rate, the rate swept through the MAC array of the
U280 design, beside the GPU systems and the named FPGA designs."""

from __future__ import annotations

from typing import Any, Callable

from . import _intervals
from .. import trace as traces
from ..engine._workflow import simulate
from ..config.scenario import Scenario, load_scenario
from ..standalone import fpga_timing
from ._intervals import error_bars
from ._systems import NOT_A_SYSTEM, color

# MACs per cycle of the swept design: from a few lanes to more than its 16 HBM ports can feed.
MACS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384)
RATE_CONTEXT = 512  # tokens of context at which a design's decode rate is quoted
DATASET, CONFIG = "math500", 1
# The designs marked on the curve: label -> built-in scenario.
DESIGNS = {
    "u280 @ 200 MHz (measured design)": "heteroreason-u280-200",
    "u280 @ 300 MHz (its projection)": "heteroreason-u280-300",
    "u280-flexllm @ 300 MHz": "heteroreason-u280-flexllm",
    "v80": "heteroreason-v80",
}
SWEPT = "heteroreason-u280-300"  # the design whose MAC array the curve sweeps


def decode_rate(scn: Scenario) -> float:
    """Tokens per second of a scenario's draft design at RATE_CONTEXT."""
    return 1e9 / fpga_timing(scn.draft.device, scn.draft.model, [RATE_CONTEXT])["ns"][0]


_SHOWN = ("latency_s", "energy_j_per_token")


def _measured(scn: Scenario, workload: Any) -> dict[str, Any]:
    result = simulate(scn, workload)
    found = _intervals.compare({"run": result}, metrics=_SHOWN).metrics["run"]
    return {**{m: result.summary[m] for m in _SHOWN}, "intervals": {m: found[m].to_list() for m in _SHOWN}}


def _point(scn: Scenario, workload: Any) -> dict[str, Any]:
    return {"decode_tok_s": decode_rate(scn), **_measured(scn, workload)}


def design_space(problems: int, seed: int, tick: Callable[[str], None]) -> dict[str, Any]:
    workload = traces.generate(DATASET, problems, seed).in_memory()
    references = {}
    for system in ("gpu-baseline", "gpu-stepahead"):
        references[system] = _measured(load_scenario(system, CONFIG), workload)
        tick(f"design space {system}")
    curve = []
    swept = load_scenario(SWEPT, CONFIG)
    for macs in MACS:
        curve.append({"macs_per_cycle": macs, **_point(swept.with_value("fpga.macs_per_cycle", macs), workload)})
        tick(f"design space macs={macs}")
    marks = {}
    for label, name in DESIGNS.items():
        marks[label] = _point(load_scenario(name, CONFIG), workload)
        tick(f"design space {label}")
    return {"dataset": DATASET, "config": CONFIG, "swept": SWEPT,
            "clock_mhz": swept.draft.device.accelerator.clock_mhz, "rate_context": RATE_CONTEXT,
            "references": references, "curve": curve, "designs": marks}


STEPS = 2 + len(MACS) + len(DESIGNS)


def markdown(space: dict[str, Any]) -> list[str]:
    lines = [f"## Design space: draft decode rate ({space['dataset']}, Config {space['config']})", "",
             f"heteroreason with the U280 design's MAC array swept at {space['clock_mhz']} MHz (decode rate at a "
             f"{space['rate_context']}-token context), against the GPU systems on the same trace.", "",
             "| draft design | decode tok/s | latency s | J per token |", "|---|---|---|---|"]
    def cells(p: dict[str, Any]) -> str:
        return f"{_intervals.cell(p, 'latency_s', '{:.3f}')} | {_intervals.cell(p, 'energy_j_per_token', '{:.2f}')}"

    for name, ref in space["references"].items():
        lines.append(f"| {name} (reference) | | {cells(ref)} |")
    for p in space["curve"]:
        lines.append(f"| {p['macs_per_cycle']} MACs/cycle | {p['decode_tok_s']:.1f} | {cells(p)} |")
    for label, p in space["designs"].items():
        lines.append(f"| **{label}** | {p['decode_tok_s']:.1f} | {cells(p)} |")
    return lines


def figure(space: dict[str, Any]) -> Any:
    from ._plots import plain_log_ticks, plt  # lazy: matplotlib, loaded only when a figure is drawn

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.4))
    rates = [p["decode_tok_s"] for p in space["curve"]]
    for ax, metric, label in ((axes[0], "latency_s", "mean latency per problem (s)"),
                              (axes[1], "energy_j_per_token", "J per final-chain token")):
        ax.errorbar(rates, [p[metric] for p in space["curve"]], yerr=error_bars(space["curve"], metric), marker="o",
                    color=NOT_A_SYSTEM, markersize=4, linewidth=1, capsize=2,
                    label=f"heteroreason, the U280 design's MAC array swept at {space['clock_mhz']:g} MHz")
        for (name, ref), style in zip(space["references"].items(), ("--", ":")):
            ax.axhline(ref[metric], color=color(name), linestyle=style, linewidth=1.5, label=name)
        for (design, p), marker in zip(space["designs"].items(), ("s", "D", "^", "v")):
            ax.errorbar([p["decode_tok_s"]], [p[metric]], yerr=error_bars([p], metric), marker=marker, linestyle="none",
                        markersize=8, capsize=3, color=color(DESIGNS[design]), label=f"{DESIGNS[design]}: {design}")
        ax.set_xscale("log")
        ax.set_yscale("log")  # the slow end is an order of magnitude above the region that matters
        for axis in (ax.xaxis, ax.yaxis):
            plain_log_ticks(axis)
        ax.set_xlabel(f"draft decode rate (tokens/s at a {space['rate_context']}-token context)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3, which="both")
    axes[1].legend(fontsize=8, loc="upper right")
    fig.suptitle(f"Where a draft accelerator pays off ({space['dataset']}, Config {space['config']})")
    fig.tight_layout()
    return fig
