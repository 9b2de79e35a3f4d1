"""The report's accuracy-latency figure: RSD and BRSD on each system as the
acceptance threshold moves, one panel per config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._intervals import error_bars
from ._plots import save, plt

_STYLE = {"brsd": ("-", "o", "BRSD"), "rsd": ("--", "s", "RSD")}


def accuracy_latency(report: dict[str, Any], path: Path) -> Path:
    sweep = report["threshold_sweep"]
    points = sweep["points"]
    systems = list(dict.fromkeys(p["system"] for p in points))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, config in zip(axes, (1, 2)):
        for i, system in enumerate(systems):
            for mode, (line, marker, label) in _STYLE.items():
                curve = sorted((p for p in points if (p["config"], p["system"], p["mode"]) == (config, system, mode)),
                               key=lambda p: p["threshold"])
                xs, ys = [p["latency_s"] for p in curve], [100 * p["accuracy"] for p in curve]
                ax.errorbar(xs, ys, xerr=error_bars(curve, "latency_s"), yerr=error_bars(curve, "accuracy", 100),
                            linestyle=line, marker=marker, color=colors[i % len(colors)], markersize=5, capsize=2,
                            elinewidth=0.7, label=f"{system} {label}")
                if i == len(systems) - 1:  # thresholds written once per curve family, on the last system
                    for p, x, y in zip(curve, xs, ys):
                        ax.annotate(f"{p['threshold']:g}", (x, y), textcoords="offset points", xytext=(6, -3),
                                    fontsize=8, color="0.3")
        ax.set_xlabel("mean latency per problem (s)")
        ax.set_title(f"Config {config} ({'7B' if config == 1 else '1.5B'} target)")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("expected accuracy (%)")
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle(f"Accuracy vs latency, acceptance threshold {min(sweep['thresholds']):g} to "
                 f"{max(sweep['thresholds']):g} (labels at points; {sweep['dataset']})")
    fig.tight_layout()
    return save(fig, path)


def write_accuracy_figures(report: dict[str, Any], folder: Path) -> list[Path]:
    return [accuracy_latency(report, folder / "accuracy_latency.png")]
