"""`cosim validate`'s figure: predicted against measured, one panel per case and unit (a
panel per quantity where they span decades), each in its readable unit
(cosim/validation/_units.py), each titled once: the panel's own name, which no other
panel has, and a legend only where a panel holds several variants of its case."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Sequence

from ..outputs._atomic import write_atomically
from ._units import panels

_MARKERS = "osD^vP*X"


def _variant(case: str) -> str:
    """What tells a case's variants apart (``rtx4090-vllm (profile)``: ``profile``)."""
    return case[len(case.split(" (")[0]):].strip(" ()") or case


def draw(rows: Sequence[Any]) -> Any:
    """The figure as a matplotlib Figure (close it with matplotlib.pyplot.close)."""
    import matplotlib  # lazy: matplotlib, loaded only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib, loaded only when a figure is drawn

    from matplotlib.ticker import FuncFormatter  # lazy: matplotlib, loaded only when a figure is drawn

    shown = panels(rows)
    columns = min(3, len(shown))
    lines = -(-len(shown) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.4 * columns, 4.2 * lines), squeeze=False)
    cases = list(dict.fromkeys(r.case for r in rows))
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, shown):
        mine = panel.rows
        lo = min(min(r.measured, r.predicted) for r in mine) / 1.3
        hi = max(max(r.measured, r.predicted) for r in mine) * 1.3
        ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
        ax.fill_between([lo, hi], [lo / 1.1, hi / 1.1], [lo * 1.1, hi * 1.1], color="0.85", linewidth=0)
        here = [c for c in cases if any(r.case == c for r in mine)]
        for case in here:  # hollow markers, so variants on top of each other stay visible
            i = cases.index(case)
            points = [r for r in mine if r.case == case]
            ax.scatter([r.measured for r in points], [r.predicted for r in points], s=26,
                       marker=_MARKERS[i % len(_MARKERS)], facecolors="none", edgecolors=f"C{i % 10}",
                       label=_variant(case))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        narrow = hi / lo < 100  # minor ticks labelled only where they do not crowd
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2 and 5 of each decade
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(FuncFormatter(
                lambda v, _, narrow=narrow: f"{v:g}" if narrow and f"{v:g}"[0] in "25" else ""))
        ax.set_title(panel.title, fontsize=9)
        ax.set_xlabel(f"measured ({panel.unit})")
        ax.set_ylabel(f"predicted ({panel.unit})")
        if len(here) > 1:  # one case alone is named by the title; its variants need a legend
            ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("cosim validate: predicted against measured (grey: within 10%)", fontsize=10)
    fig.tight_layout()
    return fig


def figure_png(rows: Sequence[Any]) -> bytes:
    """The figure as a PNG image."""
    import matplotlib.pyplot as plt  # lazy: matplotlib, loaded only when a figure is drawn

    fig = draw(rows)
    image = io.BytesIO()
    try:
        fig.savefig(image, format="png", dpi=120)
    finally:
        plt.close(fig)
    return image.getvalue()


def write_figure(rows: Sequence[Any], path: Path) -> Path:
    """The figure written to ``path`` whole or not at all; a link is written through."""
    write_atomically(path, figure_png(rows))
    return path
