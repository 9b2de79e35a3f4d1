"""Validation rows: a measured and a predicted value of one quantity; their error, the
table, the per-case summary and the CSV (the figure is cosim/validation/_figure.py)."""

from __future__ import annotations

import csv
import io
import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from ..errors import ConfigError
from ._units import shown

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
    """The table the command prints: case, quantity, measured, predicted, error, each value
    in its panel's readable unit (cosim/validation/_units.py); then each case's median and
    worst absolute error."""
    header = ("case", "quantity", "measured", "predicted", "error")
    cells = [(r.case, r.quantity, f"{_number(s.measured)} {s.unit}", f"{_number(s.predicted)} {s.unit}",
              f"{r.error:+.1%}") for r, s in zip(rows, shown(rows))]
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
