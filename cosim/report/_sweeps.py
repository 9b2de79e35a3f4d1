"""The report's two sweeps of one design, heteroreason-u280-200 on math500 (Config 1): the
PCIe bandwidth of the FPGA link (powers of two, drawn on a log2 axis) and the FPGA clock.
Every point replays the same problems as the design as built, so each point's mean
latency is compared with the as-built one's by a paired interval (a BCa bootstrap of the
ratio, the problems resampled together); a point whose interval holds a ratio of 1 is
within noise, and the figure and the report say which points are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import _intervals
from .. import trace as traces
from ..engine._workflow import simulate
from ..config.scenario import Scenario, load_scenario
from ..errors import CosimError
from ..result import METRICS
from ..schema._rows import RATIOS
from ._systems import color

SYSTEM = "heteroreason-u280-200"  # the design both sweeps change, as the clock sweep always had
DATASET, CONFIG = "math500", 1
SPEEDUP = next(r for r in RATIOS if r.name == "speedup")
BASELINE = SPEEDUP.baseline  # each point's speedup is over it, on the same problems


@dataclass(frozen=True)
class Sweep:
    """One sweep: its report.json key, the parameter's path, its values and unit, what the axis
    says of it, and the axis's log base (None: linear)."""

    key: str
    path: str
    values: tuple[float, ...]
    what: str
    unit: str
    note: str = ""
    log_base: int | None = None

    @property
    def axis(self) -> str:
        return f"{self.what} ({self.unit}{self.note})"


SWEEPS = (
    Sweep("pcie_bandwidth_gbps", "pcie.bandwidth_gbps", (0.5, 1, 2, 4, 8, 16, 32), "PCIe bandwidth of the FPGA link",
          "GB/s", " raw, per direction", log_base=2),
    Sweep("fpga_clock_mhz", "fpga.clock_mhz", (150, 200, 250, 300, 350, 400), "FPGA clock", "MHz"),
)
STEPS = sum(len(sw.values) for sw in SWEEPS) + len(SWEEPS)  # the points, and each as built
REFERENCE = "as built"


def as_built(scn: Scenario, path: str) -> float:
    """The value of ``path`` in ``scn`` as it loads (``pcie.bandwidth_gbps`` of the U280's link)."""
    value: Any = scn
    for part in scn.canonical_path(path).split("."):
        value = getattr(value, part)
    return float(value)


def sweeps(problems: int, seed: int, tick: Callable[[str], None]) -> dict[str, Any]:
    workload = traces.generate(DATASET, problems, seed).in_memory()
    base = simulate(load_scenario(BASELINE, CONFIG), workload)
    scn = load_scenario(SYSTEM, CONFIG)
    out: dict[str, Any] = {}
    for sw in SWEEPS:
        path, values = sw.path, sw.values
        results = {BASELINE: base, REFERENCE: simulate(scn, workload)}
        tick(f"sweep {path} as built")
        failed = {}
        for value in values:
            try:  # a point that fails is reported in its row; the others go on
                results[str(value)] = simulate(scn.with_value(path, value), workload)
            except CosimError as exc:
                failed[value] = f"{type(exc).__name__}: {exc}"
            tick(f"sweep {path}={value}")
        points = [name for name in results if name != BASELINE]
        # One resampling for every point: the speedups over the baseline and the ratios to the
        # design as built are all paired.
        found = _intervals.compare(results, BASELINE, metrics=("latency_s", "comm_share"),
                                   pairs=[(name, REFERENCE) for name in points])

        def row(name: str, value: float) -> dict[str, Any]:
            result = results[name]
            ratio = found.ratios[(name, REFERENCE)]
            return {"value": value, "status": "ok", "error": None,
                    **{m: result.summary[m] for m in METRICS if m != SPEEDUP.name},
                    SPEEDUP.name: SPEEDUP.value(base.summary[SPEEDUP.of], result.summary[SPEEDUP.of]),
                    "latency_ratio": ratio.estimate,
                    "intervals": {**{m: iv.to_list() for m, iv in found.metrics[name].items()},
                                  "latency_ratio": ratio.to_list()}}

        rows = [row(str(v), v) if v not in failed else {"value": v, "status": "error", "error": failed[v]}
                for v in values]
        out[sw.key] = {"system": SYSTEM, "dataset": DATASET, "config": CONFIG, "parameter": path,
                       "reference": row(REFERENCE, as_built(scn, path)), "rows": rows}
    return out


def _ratio_ends(row: dict[str, Any]) -> tuple[float, float] | None:
    """A point's paired interval of its latency ratio to the design as built; None without one."""
    found = row.get("intervals", {}).get("latency_ratio")
    return None if not found or None in found else (found[0], found[1])


def within_noise(row: dict[str, Any]) -> bool:
    """Whether a point's paired interval of its latency ratio to the design as built holds 1."""
    found = _ratio_ends(row)
    return found is not None and found[0] <= 1 <= found[1]


def _compared(sweep: dict[str, Any]) -> list[dict[str, Any]]:
    """The points that ran, less the one that is the design as built itself."""
    return [r for r in sweep["rows"] if r["status"] == "ok" and r["value"] != sweep["reference"]["value"]]


def verdict(sweep: dict[str, Any]) -> str:
    """Which points differ from the design as built beyond noise, and by how much, set against
    the sampling noise of the mean itself."""
    ok = _compared(sweep)
    unit = _declared(sweep["parameter"]).unit
    ref = sweep["reference"]
    if not ok:
        return "No point ran."
    if all(_ratio_ends(r) is None for r in ok):
        return (f"Too few problems for intervals: no point can be told from the design as built "
                f"({ref['value']:g} {unit}).")
    own = _intervals.error_bar(ref, "latency_s")
    noise = f", known to +/-{max(own) / ref['latency_s']:.0%}" if max(own) > 0 else ""
    largest = max(ok, key=lambda r: abs(r["latency_ratio"] - 1))
    quiet = [f"{r['value']:g}" for r in ok if within_noise(r)]
    text = (f"Against the design as built ({ref['value']:g} {unit}: mean latency {ref['latency_s']:.3g} s{noise} "
            f"over these problems), the largest change is {largest['latency_ratio'] - 1:+.2%} at "
            f"{largest['value']:g} {unit}. ")
    if len(quiet) == len(ok):
        text += "Every point is within noise: its paired 95% interval holds no change."
    elif quiet:
        text += (f"Within noise (paired 95% interval holds no change) at {', '.join(quiet)} {unit}; "
                 "beyond it elsewhere.")
    else:
        text += "Every point differs beyond noise (paired 95% intervals, the same problems replayed)."
    if all(abs(r["latency_ratio"] - 1) < _intervals.NEGLIGIBLE for r in ok):
        text += f" Every change is under {_intervals.NEGLIGIBLE:.0%}, far inside the mean's own noise: negligible."
    return text


def _declared(path: str) -> Sweep:
    return next(sw for sw in SWEEPS if sw.path == path)


def markdown(report_sweeps: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for sw in report_sweeps.values():
        lines += ["", f"## Sweep of {sw['parameter']} ({sw['system']}, {sw['dataset']}, Config {sw['config']})", "",
                  "Each point replays the same problems as the design as built; its latency ratio to it carries "
                  "a paired 95% interval. " + verdict(sw), "",
                  "| value | latency s | ratio to as built | speedup | comm share | status |",
                  "|---|---|---|---|---|---|"]
        for row in sw["rows"]:
            if row["status"] == "ok":
                lines.append(f"| {row['value']:g} | {_intervals.cell(row, 'latency_s', '{:.3f}')} | "
                             f"{_intervals.cell(row, 'latency_ratio', '{:.4f}')} | "
                             f"{_intervals.cell(row, 'speedup', '{:.3f}')} | "
                             f"{_intervals.cell(row, 'comm_share', '{:.4f}')} | ok |")
            else:
                lines.append(f"| {row['value']:g} | | | | | {row['error']} |")
    return lines


def figure(sweep: dict[str, Any]) -> Any:
    """Mean latency relative to the design as built against the swept value, with paired
    95% whiskers (seconds on the right axis); the verdict under the axes."""
    from ._plots import plt  # lazy: matplotlib, loaded only when a figure is drawn
    from matplotlib.ticker import FuncFormatter  # lazy: matplotlib, as above

    declared = _declared(sweep["parameter"])
    ok = [r for r in sweep["rows"] if r["status"] == "ok"]
    ref = sweep["reference"]
    fig, ax = plt.subplots(figsize=(7, 4.8))
    percent = [100 * (r["latency_ratio"] - 1) for r in ok]
    ax.errorbar([r["value"] for r in ok], percent, yerr=_intervals.error_bars(ok, "latency_ratio", 100), marker="o",
                capsize=3, color=color(sweep["system"]), label=f"{sweep['system']}: mean latency, paired 95% interval")
    ax.plot([ref["value"]], [0.0], marker="*", markersize=13, linestyle="none", color=color(sweep["system"]),
            markeredgecolor="black", label=f"{sweep['system']} as built ({ref['value']:g})")
    ax.axhline(0.0, color="0.5", linewidth=0.8)
    if declared.log_base:
        ax.set_xscale("log", base=declared.log_base)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    # A change under NEGLIGIBLE is drawn as the flat line it is, not stretched to fill the axes.
    low, high = ax.get_ylim()
    ax.set_ylim(min(low, -100 * _intervals.NEGLIGIBLE), max(high, 100 * _intervals.NEGLIGIBLE))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+.3g}%" if v else "0"))
    seconds = ax.secondary_yaxis("right", functions=(lambda p: (1 + p / 100) * ref["latency_s"],
                                                     lambda s: 100 * (s / ref["latency_s"] - 1)))
    seconds.set_ylabel("mean latency per problem (s)")
    ax.set_xlabel(declared.axis)
    ax.set_ylabel("change in mean latency from as built")
    ax.set_title(f"{sweep['system']}, {sweep['dataset']}, Config {sweep['config']}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="best")
    fig.text(0.02, 0.02, verdict(sweep), fontsize=8, wrap=True, va="bottom")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig
