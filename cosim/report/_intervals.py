"""The report's sampling intervals: every mean of every record with its 95% interval (a
BCa bootstrap over the problems, paired between the systems that replay one trace), the
table cells that print them, which differences the report's problem count resolves, and
how many problems a given precision needs (the half-width shrinks as 1/sqrt(N))."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..schema._rows import RATIOS
from ..uncertainty import compare
from .._stats._bootstrap import LEVEL, MIN_UNITS, RESAMPLES, SEED, bootstrap, unavailable_text

HEADLINE = "heteroreason-u280-200"  # the system whose speedup the report leads with
BASELINE = next(r.baseline for r in RATIOS if r.name == "speedup")  # every speedup is over it
PRECISIONS = (0.01, 0.005)  # relative half-widths of the headline speedup the report says N for
NEGLIGIBLE = 0.01  # latency ratios whose whole interval lies within 1 +/- this are called equal


def method_note() -> str:
    return (f"Brackets: the {LEVEL:.0%} interval of a mean over the problems, a BCa bootstrap "
            f"({RESAMPLES} resamples, seed {SEED}), paired between systems that replay the same problems; "
            f"{unavailable_text()} below {MIN_UNITS} problems (docs/metrics.md).")


def power_note() -> str:
    return ("Brackets: the sampling interval, as above. Braces: the power model's band, every power parameter "
            "with a declared range at its low end, then all at their high end, on the same problems (energy "
            "rises with each, so no combination of the ranges leaves the band; docs/uncertainty.md).")


def power_cell(record: dict[str, Any], metric: str, fmt: str) -> str:
    """`` {4.06, 6.03}``: the power model's band of a metric; nothing where no power
    parameter of the system declares a range."""
    found = record.get("power_band", {}).get(metric)
    return "" if not found else f" {{{fmt.format(found[0])}, {fmt.format(found[1])}}}"


def method_record() -> dict[str, Any]:
    """How report.json's intervals were made."""
    return {"level": LEVEL, "method": "BCa bootstrap over problems, paired between systems", "resamples": RESAMPLES,
            "seed": SEED, "min_problems": MIN_UNITS}


def attach(records: list[dict[str, Any]], results: dict[str, Any], baseline: str = BASELINE) -> list[dict[str, Any]]:
    """Puts each record's intervals in it (``intervals``: metric -> [low, high]) and returns the
    latency ratio of every pair of systems: {"a", "b", "ratio", "low", "high"} (the ends None
    without an interval)."""
    pairs = list(itertools.combinations(results, 2))
    found = compare(results, baseline, pairs=pairs)
    for record in records:
        record["intervals"] = {m: iv.to_list() for m, iv in found.metrics[record["system"]].items()}
    return [{"a": a, "b": b, "ratio": iv.estimate, **dict(zip(("low", "high"), iv.to_list() or [None, None]))}
            for (a, b), iv in found.ratios.items()]


def busy_shares(result: Any) -> dict[str, list[float] | None]:
    """Each device's share of the summed busy time, with intervals (``busy_share_<role>``)."""
    rows = result.per_problem
    busy = {r: np.asarray(rows.column(f"breakdown_{r}")) * np.asarray(rows.column("latency_s"))
            for r in ("draft", "prm", "target")}
    total = sum(busy.values())
    return {f"busy_share_{r}": ratio_interval(b, total) for r, b in busy.items()}


def ends(record: dict[str, Any], metric: str) -> tuple[float, float] | None:
    """A record's interval of ``metric`` as (low, high); None where it has none (too few
    problems, or an end not defined)."""
    found = record.get("intervals", {}).get(metric)
    if not found or found[0] is None or found[1] is None:
        return None
    return found[0], found[1]


def cell(record: dict[str, Any], metric: str, fmt: str, scale: float = 1.0, unit: str = "") -> str:
    """``1.17 [1.14, 1.20]``; the value alone where it has no spread (the baseline's own speedup);
    ``1.17 [n/a (N < 10)]`` where too few problems give an interval."""
    value = record[metric]
    text = fmt.format(value * scale) + unit
    if metric in record.get("intervals", {}) and record["intervals"][metric] is None:
        return f"{text} [{unavailable_text()}]"
    found = ends(record, metric)
    if found is None or found[0] == found[1]:
        return text
    return f"{text} [{fmt.format(found[0] * scale)}, {fmt.format(found[1] * scale)}]"


def error_bar(record: dict[str, Any], metric: str, scale: float = 1.0) -> tuple[float, float]:
    """The distances from a value down and up to its interval's ends (0, 0 without one), for matplotlib."""
    found = ends(record, metric)
    if found is None:
        return 0.0, 0.0
    value = record[metric]
    return max(0.0, (value - found[0]) * scale), max(0.0, (found[1] - value) * scale)


def error_bars(records: list[dict[str, Any]], metric: str, scale: float = 1.0) -> list[list[float]]:
    """matplotlib's yerr (or xerr) for a series of records: [[downs], [ups]]."""
    bars = [error_bar(r, metric, scale) for r in records]
    return [[b[0] for b in bars], [b[1] for b in bars]]


def _first(columns: np.ndarray, statistic: Any) -> list[float | None] | None:
    """[low, high] of the statistic's first value (None for an end not defined); None
    without an interval (too few problems)."""
    out = bootstrap(columns, statistic)
    if not out.available:
        return None
    return [float(v) if math.isfinite(v) else None for v in (out.low[0], out.high[0])]


def mean_interval(values: np.ndarray) -> list[float | None] | None:
    """[low, high] of the mean of per-problem values."""
    return _first(np.column_stack([values, np.ones(len(values))]), lambda s: s[..., :1] / s[..., 1:])


def ratio_interval(numerator: np.ndarray, denominator: np.ndarray) -> list[float | None] | None:
    """[low, high] of sum(numerator) / sum(denominator) over the problems."""
    return _first(np.column_stack([numerator, denominator]), lambda s: s[..., :1] / s[..., 1:])


def difference_interval(a: np.ndarray, b: np.ndarray) -> list[float | None] | None:
    """[low, high] of mean(a) - mean(b), the problems paired."""
    return _first(np.column_stack([a, b, np.ones(len(a))]), lambda s: (s[..., :1] - s[..., 1:2]) / s[..., 2:])


def problems_for(half_width: float, value: float, problems: int, precision: float) -> int:
    """Problems that bring the relative half-width to ``precision``: it shrinks as 1/sqrt(N).
    Never fewer than were run: an interval that already meets it says nothing about fewer."""
    relative = half_width / value
    return max(problems, math.ceil(problems * (relative / precision) ** 2))


def _problems_cell(half_width: float, value: float, problems: int, precision: float) -> str:
    need = problems_for(half_width, value, problems, precision)
    return f"{need:,} (reached)" if need == problems else f"{need:,}"


def significance(report: dict[str, Any], datasets: tuple[str, ...]) -> list[str]:
    """Which differences the report's problem count resolves, and what a precision costs."""
    n = report["problems"]
    records = report["records"]
    lines = [f"## What {n} problems resolve", "",
             f"Every figure above comes from {n} drawn problems per dataset; another draw moves it. "
             + method_note() + " A difference is resolved when its interval leaves out no difference "
             "(a ratio of 1, a gain of 0).", ""]
    if n < MIN_UNITS:
        return lines + [f"At {n} problems no figure has an interval ({unavailable_text()}): no difference is resolved, "
                        f"and how many problems a precision needs cannot be told from them. Run {MIN_UNITS} or more."]
    lines += ["### The headline speedup and the problems a precision needs", "",
              f"{HEADLINE} over {BASELINE}; the half-width shrinks as 1/sqrt(N), so N problems for a relative "
              "half-width p is N x (half-width / p)^2.", "",
              "| dataset | config | speedup | half-width | " + " | ".join(f"N for +/-{p:.1%}" for p in PRECISIONS)
              + " |", "|---|---|---|---|" + "---|" * len(PRECISIONS)]
    for d in datasets:
        for c in (1, 2):
            r = next(r for r in records if (r["system"], r["dataset"], r["config"]) == (HEADLINE, d, c))
            found = ends(r, "speedup")
            if found is None:
                missing = unavailable_text()
                lines.append(f"| {d} | {c} | {cell(r, 'speedup', '{:.3f}')} | {missing} | "
                             + " | ".join(missing for _ in PRECISIONS) + " |")
                continue
            half = (found[1] - found[0]) / 2
            need = " | ".join(_problems_cell(half, r["speedup"], n, p) for p in PRECISIONS)
            lines.append(f"| {d} | {c} | {cell(r, 'speedup', '{:.3f}')} | +/-{half / r['speedup']:.2%} | {need} |")
    lines += ["", "### Speedups and latency differences not resolved", ""]
    open_speedups = [f"{r['system']} on {r['dataset']} C{r['config']} ({cell(r, 'speedup', '{:.3f}')})"
                     for r in records if r["system"] != BASELINE and ends(r, "speedup") is not None
                     and ends(r, "speedup")[0] <= 1 <= ends(r, "speedup")[1]]
    lines.append("- Speedups whose interval holds 1: " + ("; ".join(open_speedups) if open_speedups else "none")
                 + ".")
    unresolved: dict[tuple[str, str], list[str]] = {}
    tiny: dict[tuple[str, str], int] = {}
    for group in report["pairs"]:
        for p in group["pairs"]:
            key = (p["a"], p["b"])
            if p["low"] is None or p["high"] is None:
                continue
            if 1 - NEGLIGIBLE <= p["low"] and p["high"] <= 1 + NEGLIGIBLE:
                tiny[key] = tiny.get(key, 0) + 1
            elif p["low"] <= 1 <= p["high"]:
                unresolved.setdefault(key, []).append(
                    f"{group['dataset']} C{group['config']} ({p['ratio']:.3f} [{p['low']:.3f}, {p['high']:.3f}])")
    for (a, b), where in unresolved.items():
        lines.append(f"- {a} vs {b}, mean latency ratio: {'; '.join(where)}")
    if not unresolved:
        lines.append("- Every pair of systems differs in mean latency beyond its interval, on every dataset and "
                     "config.")
    for (a, b), count in tiny.items():
        lines.append(f"- {a} and {b}: their mean latencies lie within {NEGLIGIBLE:.0%} of each other, interval "
                     f"included, on {count} of the {len(report['pairs'])} dataset-config traces.")
    lines += ["", "### BRSD's accuracy gain over RSD", ""]
    gains = []
    for r in report["accuracy_gains"]:
        if r["interval"] is None or None in r["interval"]:
            gains.append(f"{r['dataset']} C{r['config']}: {100 * r['gain']:+.1f} points [{unavailable_text()}]")
            continue
        low, high = r["interval"]
        verdict = "resolved" if low > 0 or high < 0 else "not resolved"
        gains.append(f"{r['dataset']} C{r['config']}: {100 * r['gain']:+.1f} [{100 * low:+.1f}, {100 * high:+.1f}] "
                     f"points, {verdict}")
    lines.append("; ".join(gains) + ".")
    return lines
