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
from . import _bootstrap as bs
from ._bootstrap import LEVEL, RESAMPLES, SEED


def _col(name: str) -> Callable[[Mapping[str, np.ndarray]], np.ndarray]:
    return lambda c: np.asarray(c[name], dtype=np.float64)


def _times(share: str, weight: str) -> Callable[[Mapping[str, np.ndarray]], np.ndarray]:
    return lambda c: np.asarray(c[share], dtype=np.float64) * np.asarray(c[weight], dtype=np.float64)


def _ones(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.ones(len(c["latency_s"]))


def _labelled(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.isfinite(np.asarray(c["accuracy"], dtype=np.float64)).astype(np.float64)


def _right(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.nan_to_num(np.asarray(c["accuracy"], dtype=np.float64), nan=0.0)


def _accepted_plus_target(c: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.asarray(c["accepted_draft_tokens"], dtype=np.float64) + np.asarray(c["target_trace_tokens"],
                                                                                 dtype=np.float64)


# Each whole-run metric as (numerator, denominator), each summed over the problems: the
# summary's own definition (cosim._rows.Totals.summary). A share per problem times its
# weight gives back the problem's part of the numerator.
PARTS: dict[str, tuple[Callable, Callable]] = {
    "latency_s": (_col("latency_s"), _ones),
    "goodput_tok_s": (_col("final_tokens"), _col("latency_s")),
    "energy_j_per_token": (_col("energy_j"), _col("final_tokens")),
    "energy_j_per_generated_token": (_col("energy_j"), _col("generated_tokens")),
    "stall_ratio": (_times("stall_ratio", "latency_s"), _col("latency_s")),
    "stall_step_share": (_times("stall_step_share", "verdicts"), _col("verdicts")),
    "comm_share": (_times("comm_share", "latency_s"), _col("latency_s")),
    "wasted_energy_share": (_times("wasted_energy_share", "energy_j"), _col("energy_j")),
    "offchain_energy_share": (_times("offchain_energy_share", "energy_j"), _col("energy_j")),
    **{f"breakdown_{r}": (_times(f"breakdown_{r}", "latency_s"), _col("latency_s")) for r in ("draft", "prm",
                                                                                                "target")},
    "acceptance_rate": (_col("accepted_draft_tokens"), _accepted_plus_target),
    "steps_per_problem": (_col("steps_per_problem"), _ones),
    "backtracks_per_problem": (_col("backtracks_per_problem"), _ones),
    "accuracy": (_right, _labelled),
}
# The metrics with an interval, in the summary's order (the per-device energies are totals, not means).
METRICS = tuple(PARTS)
_NEEDED = ("latency_s", "final_tokens", "energy_j", "generated_tokens", "stall_ratio", "stall_step_share",
           "verdicts", "comm_share", "wasted_energy_share", "offchain_energy_share", "breakdown_draft",
           "breakdown_prm", "breakdown_target", "accepted_draft_tokens", "target_trace_tokens", "steps_per_problem",
           "backtracks_per_problem", "accuracy")


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
    trace), the speedup of each over ``baseline`` (a name in ``results``), and the latency ratio
    of each pair (a, b) in ``pairs``: every one from the same resamples of the problems."""
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
    metrics = list(dict.fromkeys([*metrics, "latency_s"]))  # latency makes the speedups and ratios
    width = 2 * len(metrics)
    blocks = [_unit_sums(results[name], metrics) for name in names]
    columns = np.concatenate(blocks, axis=1)
    latency = metrics.index("latency_s")
    stats: list[tuple[int, int]] = []
    for i in range(len(names)):
        stats += [(i * width + 2 * k, i * width + 2 * k + 1) for k in range(len(metrics))]
    count = len(stats)
    # A ratio of mean latencies is a ratio of latency sums (the problem counts cancel).
    lat = {name: i * width + 2 * latency for i, name in enumerate(names)}
    ratio_pairs = ([(baseline, name) for name in names] if baseline else []) + list(pairs)
    stats += [(lat[a], lat[b]) for a, b in ratio_pairs]
    out = bs.bootstrap(columns, bs.ratios(stats), level=level, resamples=resamples, seed=seed, method=method)

    def interval(j: int) -> Interval:
        return Interval(float(out.estimate[j]), float(out.low[j]), float(out.high[j]), level, out.available)

    per_run = {name: {m: interval(i * len(metrics) + k) for k, m in enumerate(metrics)} for i, name in enumerate(names)}
    j = count
    if baseline:
        for name in names:
            per_run[name]["speedup"] = interval(j)
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
