"""Sampling intervals of a run's metrics: every whole-run metric (docs/metrics.md) is a
ratio of sums over problems, so its interval is the bootstrap of that ratio over the
run's problems (cosim._stats._bootstrap). Runs of several systems on the same
trace are resampled together, problem by problem, so a speedup (the baseline's latency
sum over a system's) and a ratio between any two systems are paired: both sides see the
same resampled problems.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import ConfigError
from ..schema._rows import RATIOS, TOTALS, Parts
from . import _bootstrap as bs
from ._bootstrap import LEVEL, RESAMPLES, SEED


def _column(c: Mapping[str, np.ndarray], name: str) -> np.ndarray:
    return np.asarray(c[name], dtype=np.float64)


def _part_functions(parts: Parts) -> tuple[Callable, Callable]:
    """The numerator and denominator of one problem, from its row, as ``parts`` declares them."""

    def num(c: Mapping[str, np.ndarray]) -> np.ndarray:
        value = _column(c, parts.num[0])
        for name in parts.num[1:]:
            value = value * _column(c, name)
        return np.nan_to_num(value, nan=0.0) if parts.known else value

    def den(c: Mapping[str, np.ndarray]) -> np.ndarray:
        if parts.known:
            return np.isfinite(_column(c, parts.known)).astype(np.float64)
        if not parts.den:
            return np.ones(len(c[parts.num[0]]))
        value = _column(c, parts.den[0])
        for name in parts.den[1:]:
            value = value + _column(c, name)
        return value

    return num, den


# Each whole-run metric as (numerator, denominator), each summed over the problems: the
# summary's own definition, declared with it (cosim/schema/_rows.py, TOTALS' parts).
PARTS: dict[str, tuple[Callable, Callable]] = {t.name: _part_functions(t.parts) for t in TOTALS
                                               if t.parts is not None}
# A ratio's two sides are means over problems: their ratio is a ratio of sums.
assert all(r.of in PARTS and next(t.parts for t in TOTALS if t.name == r.of).den == () for r in RATIOS)
# The metrics with an interval, in the summary's order (the per-device energies are totals, not means).
METRICS = tuple(PARTS)
# The row columns they read.
_NEEDED = tuple(dict.fromkeys(name for t in TOTALS if t.parts is not None
                              for name in (*t.parts.num, *t.parts.den, *((t.parts.known,) if t.parts.known else ()))))
@dataclass(frozen=True)
class Interval:
    """A value and its confidence interval; without ends (``available`` False) when too few
    problems were run for one (bs.MIN_UNITS)."""

    estimate: float
    low: float
    high: float
    level: float = LEVEL
    available: bool = True

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def spread(self, spec: str = ".2f") -> str:
        """``[1.14, 1.20]``, or what stands for it when too few problems give none."""
        if not self.available:
            return f"[{bs.unavailable_text()}]"
        return f"[{self.low:{spec}}, {self.high:{spec}}]"

    def format(self, spec: str = ".2f") -> str:
        """``1.17 [1.14, 1.20]``; ``1.17 [n/a (N < 10)]`` with too few problems."""
        if not math.isfinite(self.estimate):
            return "n/a"
        return f"{self.estimate:{spec}} {self.spread(spec)}"

    def to_list(self) -> list[float | None] | None:
        """[low, high], None where an end is not defined (JSON has no NaN); None for the whole
        interval when too few problems give one."""
        if not self.available:
            return None
        return [v if math.isfinite(v) else None for v in (self.low, self.high)]


def _parts(columns: Mapping[str, np.ndarray], metrics: Sequence[str]) -> np.ndarray:
    """The numerator and denominator columns of each metric: problems x (2 x metrics)."""
    out = []
    for m in metrics:
        num, den = PARTS[m]
        out += [num(columns), den(columns)]
    return np.stack(out, axis=1)


def _unit_sums(result: Any, metrics: Sequence[str]) -> np.ndarray:
    """The metrics' parts summed per resampling unit: per problem, or per block of consecutive
    problems for a long run, read a record batch at a time (a run on disk stays on disk)."""
    n = len(result.per_problem)
    if n <= bs.MAX_UNITS:
        return _parts({name: result.per_problem.column(name) for name in _NEEDED}, metrics)
    size = math.ceil(n / bs.MAX_UNITS)
    sums = np.zeros((math.ceil(n / size), 2 * len(metrics)))
    offset = 0
    for batch in result.per_problem.batches(_NEEDED):
        rows = _parts(batch, metrics)
        unit = (offset + np.arange(len(rows))) // size
        for j in range(rows.shape[1]):
            sums[:, j] += np.bincount(unit, weights=rows[:, j], minlength=len(sums))
        offset += len(rows)
    return sums


def _check_paired(results: Mapping[str, Any]) -> None:
    ids = None
    for name, result in results.items():
        these = result.per_problem.column("id")
        if ids is None:
            ids, first = these, name
        elif these != ids:
            raise ConfigError(f"paired intervals need every run on the same trace: {name} and {first} ran other "
                              f"problems (their ids differ)")


@dataclass(frozen=True)
class Comparison:
    """Intervals of several runs on one trace, resampled together."""

    metrics: dict[str, dict[str, Interval]]  # run -> metric -> interval (speedup too, with a baseline)
    ratios: dict[tuple[str, str], Interval]  # (a, b) -> a's mean latency / b's, paired
    problems: int
    method: str
    resamples: int
    seed: int


def compare(results: Mapping[str, Any], baseline: str | None = None, *, metrics: Sequence[str] = METRICS,
            pairs: Sequence[tuple[str, str]] = (), level: float = LEVEL, resamples: int = RESAMPLES,
            seed: int = SEED, method: str = "bca") -> Comparison:
    """Intervals of ``metrics`` for every run in ``results`` (name -> Result, all on the same
    trace), each ratio against ``baseline`` (a name in ``results``; the speedup: RATIOS,
    cosim/schema/_rows.py) of each run, and the latency ratio of each pair (a, b) in
    ``pairs``: every one from the same resamples of the problems."""
    if not results:
        raise ConfigError("compare: give at least one result")
    unknown = [m for m in metrics if m not in PARTS]
    if unknown:
        raise ConfigError(f"{unknown[0]!r}: no interval for this metric (metrics with one: {', '.join(METRICS)})")
    names = list(results)
    for name in [baseline, *(n for p in pairs for n in p)]:
        if name is not None and name not in results:
            raise ConfigError(f"{name!r}: not one of the results compared ({', '.join(names)})")
    _check_paired(results)
    # The means the ratios compare, and latency for the pairs.
    metrics = list(dict.fromkeys([*metrics, *(r.of for r in RATIOS), "latency_s"]))
    width = 2 * len(metrics)
    blocks = [_unit_sums(results[name], metrics) for name in names]
    columns = np.concatenate(blocks, axis=1)
    stats: list[tuple[int, int]] = []
    for i in range(len(names)):
        stats += [(i * width + 2 * k, i * width + 2 * k + 1) for k in range(len(metrics))]
    count = len(stats)

    def total(name: str, metric: str) -> int:
        """The column of ``name``'s sum of the mean ``metric`` (a ratio of two means is a ratio
        of their sums: the problem counts cancel)."""
        return names.index(name) * width + 2 * metrics.index(metric)

    if baseline:
        stats += [(total(baseline, r.of), total(name, r.of)) for r in RATIOS for name in names]
    stats += [(total(a, "latency_s"), total(b, "latency_s")) for a, b in pairs]
    out = bs.bootstrap(columns, bs.ratios(stats), level=level, resamples=resamples, seed=seed, method=method)

    def interval(j: int) -> Interval:
        return Interval(float(out.estimate[j]), float(out.low[j]), float(out.high[j]), level, out.available)

    per_run = {name: {m: interval(i * len(metrics) + k) for k, m in enumerate(metrics)} for i, name in enumerate(names)}
    j = count
    if baseline:
        for r in RATIOS:
            for name in names:
                per_run[name][r.name] = interval(j)
                j += 1
    ratios = {}
    for pair in pairs:
        ratios[tuple(pair)] = interval(j)
        j += 1
    return Comparison(per_run, ratios, len(results[names[0]].per_problem), method, resamples, seed)


def intervals(result: Any, baseline: Any = None, **options: Any) -> dict[str, Interval]:
    """The interval of every metric of one run (``speedup`` too, paired, given the baseline's
    Result on the same trace)."""
    runs = {"run": result, **({"baseline": baseline} if baseline is not None else {})}
    out = compare(runs, "baseline" if baseline is not None else None, **options).metrics["run"]
    return out


def to_json(found: Mapping[str, Interval], method: str = "bca", resamples: int = RESAMPLES,
            seed: int = SEED) -> dict[str, Any]:
    """Intervals as summary.json holds them: how they were made, then metric -> [low, high]
    (null below ``min_problems``)."""
    level = next(iter(found.values())).level if found else LEVEL
    return {"level": level, "method": f"{method} bootstrap over problems", "resamples": resamples, "seed": seed,
            "min_problems": bs.MIN_UNITS, **{m: iv.to_list() for m, iv in found.items()}}
