"""Validation rows: a measured and a predicted value of one quantity; their error, the
table, the per-case summary, the CSV and the figure of predicted against measured."""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Iterable

from ..errors import ConfigError
from ..outputs._atomic import write_atomically

KEYS = ("case", "quantity", "unit", "measured", "predicted")


@dataclass(frozen=True)
class Row:
    case: str
    quantity: str
    unit: str
    measured: float
    predicted: float

    @property
    def error(self) -> float:
        """Signed relative error of the prediction: predicted / measured - 1."""
        return self.predicted / self.measured - 1.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "error": self.error}


def check_row(raw: Any, where: str) -> Row:
    """A case module's row (a dict of KEYS) as a Row; ConfigError naming ``where`` if it
    lacks a key or has a value that is not a finite positive number."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a row is a dict of {', '.join(KEYS)}, got {type(raw).__name__}")
    missing = [k for k in KEYS if k not in raw]
    if missing:
        raise ConfigError(f"{where}: the row lacks {', '.join(missing)}")
    for key in ("measured", "predicted"):
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
            raise ConfigError(f"{where} ({raw['quantity']}): {key} must be a finite number > 0, got {value!r}")
    return Row(str(raw["case"]), str(raw["quantity"]), str(raw["unit"]), float(raw["measured"]),
               float(raw["predicted"]))


def summary(rows: Iterable[Row]) -> dict[str, dict[str, float]]:
    """Per case: rows, median and worst absolute error."""
    by_case: dict[str, list[float]] = {}
    for row in rows:
        by_case.setdefault(row.case, []).append(abs(row.error))
    return {case: {"rows": len(errors), "median_abs_error": statistics.median(errors),
                   "worst_abs_error": max(errors)} for case, errors in by_case.items()}


def _number(value: float) -> str:
    return f"{value:.4g}" if abs(value) < 1e5 else f"{value:.4e}"


def format_table(rows: list[Row]) -> str:
    """The table the command prints: case, quantity, measured, predicted, error; then each
    case's median and worst absolute error."""
    header = ("case", "quantity", "measured", "predicted", "error")
    cells = [(r.case, r.quantity, f"{_number(r.measured)} {r.unit}", f"{_number(r.predicted)} {r.unit}",
              f"{r.error:+.1%}") for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(header)]
    right = (False, False, True, True, True)

    def line(values: tuple[str, ...]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)] + [line(c) for c in cells] + [""]
    for case, s in summary(rows).items():
        out.append(f"{case}: {s['rows']} rows, median |error| {s['median_abs_error']:.1%}, "
                   f"worst {s['worst_abs_error']:.1%}")
    return "\n".join(out)


def csv_text(rows: list[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow((*KEYS, "error"))
    for r in rows:
        writer.writerow((r.case, r.quantity, r.unit, repr(r.measured), repr(r.predicted), f"{r.error:.6f}"))
    return buffer.getvalue()


def write_figure(rows: list[Row], path: Path) -> Path:
    """The figure (figure_png) written to ``path`` whole or not at all; a link is written through."""
    write_atomically(path, figure_png(rows))
    return path


def figure_png(rows: list[Row]) -> bytes:
    """Predicted against measured as a PNG image, one panel per unit (log axes), each case its
    own marker; the diagonal is a perfect prediction, the band +-10%."""
    import matplotlib  # lazy: matplotlib, loaded only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy: matplotlib, loaded only when a figure is drawn

    from matplotlib.ticker import FuncFormatter  # lazy: matplotlib, loaded only when a figure is drawn

    # One panel per case (its variants together) and unit: cases live at scales decades apart;
    # a case whose quantities span more than three decades (TTFT against TPOT) gets one per quantity.
    def family(r: Row) -> str:
        return r.case.split(" (")[0]

    def panel(r: Row) -> tuple[str, str]:
        same = [s for s in rows if family(s) == family(r) and s.unit == r.unit]
        values = [v for s in same for v in (s.measured, s.predicted)]
        wide = max(values) / min(values) > 1000
        return (f"{family(r)}: {r.quantity.split()[0]}" if wide else family(r)), r.unit

    panels = list(dict.fromkeys(panel(r) for r in rows))
    columns = min(3, len(panels))
    lines = -(-len(panels) // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.4 * columns, 4.2 * lines), squeeze=False)
    markers = "osD^vP*X"
    cases = list(dict.fromkeys(r.case for r in rows))
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, (title, unit) in zip(axes.flat, panels):
        mine = [r for r in rows if panel(r) == (title, unit)]
        lo = min(min(r.measured, r.predicted) for r in mine) / 1.3
        hi = max(max(r.measured, r.predicted) for r in mine) * 1.3
        ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.8)
        ax.fill_between([lo, hi], [lo / 1.1, hi / 1.1], [lo * 1.1, hi * 1.1], color="0.85", linewidth=0)
        for i, case in enumerate(cases):
            points = [r for r in mine if r.case == case]
            if points:  # hollow markers, so variants on top of each other stay visible
                ax.scatter([r.measured for r in points], [r.predicted for r in points], s=26,
                           marker=markers[i % len(markers)], facecolors="none", edgecolors=f"C{i % 10}",
                           label=case)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        narrow = hi / lo < 100  # minor ticks labelled only where they do not crowd
        for axis in (ax.xaxis, ax.yaxis):  # plain numbers at 1, 2 and 5 of each decade
            axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axis.set_minor_formatter(FuncFormatter(
                lambda v, _, narrow=narrow: f"{v:g}" if narrow and f"{v:g}"[0] in "25" else ""))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"measured ({unit})")
        ax.set_ylabel(f"predicted ({unit})")
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle("cosim validate: predicted against measured (grey: within 10%)", fontsize=10)
    fig.tight_layout()
    image = io.BytesIO()
    try:
        fig.savefig(image, format="png", dpi=120)
    finally:
        plt.close(fig)
    return image.getvalue()
