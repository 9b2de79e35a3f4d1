"""The tornado figure of a sensitivity analysis: for the factors ranked first, the figure
with each one alone at the low and at the high end of its range (the others nominal),
as bars about the nominal value, beside the band the sampled points give."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..uncertainty._factors import describe_range


def tornado(analysis: Any, path: Path, top: int) -> Path:
    from ..report._plots import save, plt  # lazy: matplotlib, loaded only when a figure is drawn

    ranked = analysis.ranking[:top][::-1]  # the first at the top
    by_name = {f.name: f for f in analysis.factors}
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.42 * len(ranked)))
    nominal = analysis.nominal
    ax.axvspan(*analysis.band, color="0.94", label="band over the ranges (2.5-97.5% of the sampled points)")
    for y, r in enumerate(ranked):
        for value, color, label in ((r.low_value, "tab:blue", "factor at its low end"),
                                    (r.high_value, "tab:orange", "factor at its high end")):
            ax.barh(y, value - nominal, left=nominal, color=color, height=0.6, label=label if y == 0 else None)
    ax.axvline(nominal, color="black", linewidth=1, label=f"nominal {nominal:.4g}")
    ax.set_yticks(range(len(ranked)), [f"{r.name}\n[{describe_range(by_name[r.name])}]" for r in ranked],
                  fontsize=7)
    figure = analysis.metric + (f" over {analysis.notes['baseline']}" if analysis.notes.get("baseline") else "")
    ax.set_xlabel(figure)
    index = "mu*" if analysis.method == "morris" else "total-order index"
    ax.set_title(f"{analysis.notes.get('scenario', '')}: {figure}, factors ranked by {analysis.method} {index}",
                 fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    return save(fig, path)
