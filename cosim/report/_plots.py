"""The report's figures (matplotlib, written as PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ._intervals import error_bars
from ._systems import PART_COLORS, color

DPI = 120


def save(fig: Any, path: Path) -> Path:
    """Writes the figure whole or not at all."""
    tmp = path.with_name(f".{path.name}.tmp.png")
    try:
        fig.savefig(tmp, dpi=DPI)
        tmp.replace(path)
    finally:
        plt.close(fig)
        tmp.unlink(missing_ok=True)
    return path


def plain_log_ticks(axis: Any) -> None:
    """A log axis labelled in plain numbers, the minor ticks at 1, 2, 3 and 5 of a decade."""
    from matplotlib.ticker import FuncFormatter  # lazy: matplotlib, loaded only when a figure is drawn

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:g}"[0] in "1235" else ""))


def _grouped(ax: Any, records: list[dict], config: int, metric: str, systems: list[str], datasets: list[str],
             ylabel: str) -> None:
    width = 0.8 / len(systems)
    for i, system in enumerate(systems):
        shown = [next(r for r in records if r["system"] == system and r["dataset"] == d and r["config"] == config)
                 for d in datasets]
        xs = [j + i * width for j in range(len(datasets))]
        ax.bar(xs, [r[metric] for r in shown], width, label=system,
               color=color(system), yerr=error_bars(shown, metric),
               error_kw={"elinewidth": 0.8, "capsize": 1.5, "ecolor": "0.2", "zorder": 3})
        bands = [(x, r[metric], r.get("power_band", {}).get(metric)) for x, r in zip(xs, shown)]
        bands = [(x, v, b) for x, v, b in bands if b]
        if bands:
            # The power model's band: a thick pale bar behind the sampling whisker.
            ax.errorbar([x for x, _, _ in bands], [v for _, v, _ in bands],
                        yerr=[[v - b[0] for _, v, b in bands], [b[1] - v for _, v, b in bands]],
                        fmt="none", ecolor="0.45", elinewidth=width * 40, alpha=0.45, capsize=0, zorder=2)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(datasets))], datasets)
    if config == 1:
        ax.set_ylabel(ylabel)
    ax.tick_params(labelleft=True)  # both panels keep their scale, though they share it
    ax.set_title(f"Config {config}")
    ax.grid(axis="y", alpha=0.3)


def _per_config(report: dict, metric: str, ylabel: str, title: str, skip: tuple[str, ...] = (),
                reference: float | None = None) -> Any:
    records = report["records"]
    systems = [s for s in dict.fromkeys(r["system"] for r in records) if s not in skip]
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.2), sharey=True)
    for ax, config in zip(axes, (1, 2)):
        _grouped(ax, records, config, metric, systems, datasets, ylabel)
        if reference is not None:
            ax.axhline(reference, color="black", linewidth=0.8)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(title + (f" ({', '.join(skip)}: left out, an order of magnitude off the scale)" if skip else "")
                 + ("; whiskers: paired 95% interval (each system and gpu-baseline on the same problems)"
                    if metric == "speedup" else "; whiskers: each system's own 95% interval over the problems")
                 + ("\ngrey bands: the power model's band (every ranged power parameter at its low, then high end)"
                    if any(r.get("power_band", {}).get(metric) for r in records) else ""))
    fig.tight_layout()
    return fig


def _breakdown(report: dict) -> Any:
    """Stacked shares per dataset, Config 1 and 2 side by side; each share printed in its bar."""
    rows = [r for r in report["records"] if r["system"] == "gpu-baseline"]
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    fig, ax = plt.subplots(figsize=(11, 4.4))
    width, positions, labels = 0.38, [], []
    for j, dataset in enumerate(datasets):
        for k, config in enumerate((1, 2)):
            positions.append(j + (k - 0.5) * (width + 0.04))
            labels.append(f"C{config}")
    bottom = [0.0] * len(rows)
    ordered = [next(r for r in rows if r["dataset"] == d and r["config"] == c) for d in datasets for c in (1, 2)]
    for part in ("draft", "prm", "target"):
        shares = [r[f"breakdown_{part}"] / sum(r[f"breakdown_{p}"] for p in ("draft", "prm", "target"))
                  for r in ordered]
        ax.bar(positions, shares, width, bottom=bottom, label=part, color=PART_COLORS[part])
        for x, b, v in zip(positions, bottom, shares):
            ax.text(x, b + v / 2, f"{v:.0%}", ha="center", va="center", fontsize=7,
                    color="black" if part == "target" else "white")
        bottom = [b + v for b, v in zip(bottom, shares)]
    ax.set_xticks(positions, labels, fontsize=8)
    for j, dataset in enumerate(datasets):  # the dataset under its two bars
        ax.text(j, -0.12, dataset, ha="center", va="top", transform=ax.get_xaxis_transform())
    ax.set_ylabel("share of busy time")
    ax.set_title("gpu-baseline latency breakdown (C1: 7B target, C2: 1.5B target)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


_SLOW = ("heteroreason-jetson",)  # an order of magnitude slower: it would flatten every other bar

# The per-dataset figures and the baseline's breakdown: file stem -> how it is drawn from the report.
FIGURES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "speedup": lambda r: _per_config(r, "speedup", "speedup over gpu-baseline", "Speedup per dataset", reference=1.0),
    "latency": lambda r: _per_config(r, "latency_s", "mean latency per problem (s)", "Latency per problem",
                                     skip=_SLOW),
    "energy_per_token": lambda r: _per_config(r, "energy_j_per_token", "J per final-chain token", "Energy per token",
                                              skip=_SLOW),
    "goodput": lambda r: _per_config(r, "goodput_tok_s", "final-chain tokens/s", "Goodput"),
    "baseline_breakdown": _breakdown,
    "stall_ratio": lambda r: _per_config(r, "stall_ratio", "share of time the draft device stalls", "Stall ratio"),
}
