"""The report's accuracy-latency figure: RSD and BRSD on each system as the
acceptance threshold moves, one panel per config.

Every system replays the same draws at a threshold, so its points there share their
accuracy: each threshold is named once per curve family, in a column beside the panel at
that accuracy (cosim/report/_labels.py keeps the names from overlapping). The systems
are compared on those same problems, so a point's latency whisker is paired: the 95%
interval of its speedup over the first system (gpu-baseline), drawn on its latency."""

from __future__ import annotations

from typing import Any

from ._accuracy import SWEEP_SYSTEMS
from ._intervals import error_bars
from ._labels import column
from ._plots import plt
from ._systems import color

_STYLE = {"brsd": ("-", "o", "BRSD"), "rsd": ("--", "s", "RSD")}
LABEL_GID = "threshold"  # the threshold labels' gid, by which they can be found in the figure


def paired_latency_bar(point: dict[str, Any]) -> tuple[float, float]:
    """The distances down and up from a point's latency to the ends of its speedup's paired
    interval drawn on the latency axis (the baseline's latency held): latency x speedup /
    speedup's end. None for the baseline itself (its speedup has no spread)."""
    ends = point.get("intervals", {}).get("speedup")
    if not ends or None in ends or ends[0] == ends[1]:
        return 0.0, 0.0
    latency, speedup = point["latency_s"], point["speedup"]
    return max(0.0, latency - latency * speedup / ends[1]), max(0.0, latency * speedup / ends[0] - latency)


def accuracy_latency(report: dict[str, Any]) -> Any:
    sweep = report["threshold_sweep"]
    points = sweep["points"]
    systems = [s for s in SWEEP_SYSTEMS if any(p["system"] == s for p in points)]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.6), sharey=True)
    # A fixed layout: the threshold column right of each panel and the legend below are placed
    # by hand, and the column's spacing needs the panels' final size.
    fig.subplots_adjust(left=0.06, right=0.93, top=0.86, bottom=0.25, wspace=0.22)
    panel_labels: dict[int, list[tuple[float, str]]] = {}
    for ax, config in zip(axes, (1, 2)):
        labels = []
        for system in systems:
            for mode, (line, marker, label) in _STYLE.items():
                curve = sorted((p for p in points if (p["config"], p["system"], p["mode"]) == (config, system, mode)),
                               key=lambda p: p["threshold"])
                xs, ys = [p["latency_s"] for p in curve], [100 * p["accuracy"] for p in curve]
                bars = [paired_latency_bar(p) for p in curve]
                # The accuracy's interval is the same for every system: drawn once, on the baseline.
                yerr = error_bars(curve, "accuracy", 100) if system == systems[0] else None
                ax.errorbar(xs, ys, xerr=[[b[0] for b in bars], [b[1] for b in bars]], yerr=yerr, linestyle=line,
                            marker=marker, color=color(system), markersize=5, capsize=2, elinewidth=0.7,
                            label=f"{system} {label}")
                if system == systems[0]:
                    labels += [(y, f"{label} {p['threshold']:g}") for p, y in zip(curve, ys)]
        ax.set_xlabel("mean latency per problem (s)")
        ax.set_title(f"Config {config} ({'7B' if config == 1 else '1.5B'} target)")
        ax.grid(alpha=0.3)
        ax.margins(y=0.08)
        ax.set_ylim(*ax.get_ylim())  # fixed before the column is placed against it
        panel_labels[config] = labels
    axes[0].set_ylabel("expected accuracy (%)")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, loc="lower center", ncol=len(systems), bbox_to_anchor=(0.5, 0.0))
    for ax, config in zip(axes, (1, 2)):
        column(ax, panel_labels[config], gid=LABEL_GID)
    fig.suptitle(f"Accuracy vs latency, acceptance threshold {min(sweep['thresholds']):g} to "
                 f"{max(sweep['thresholds']):g} ({sweep['dataset']}); right of each panel: the threshold at each "
                 "accuracy")
    fig.text(0.5, 0.1, f"Latency whiskers: the paired 95% interval of each system's speedup over {systems[0]} on the "
             f"same problems (none on {systems[0]}).\nAccuracy whiskers, on {systems[0]}: the 95% interval of the "
             "accuracy, the same for every system at a threshold.", ha="center", va="bottom", fontsize=8)
    return fig
