"""Global sensitivity of one figure to the factors' ranges, with SALib: Sobol indices
(Saltelli's sampling, total-order indices ranked) or Morris screening (elementary effects,
mu* ranked) when there are many factors; one-at-a-time swings at each range's ends for
the tornado figure; and the figure's band over the sampled points. The points are
evaluated by a function given the list of factor values, so the same analysis runs on
simulations (cosim.uncertainty._sensitivity) or on any function of the factors."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .._stats._bootstrap import too_few
from .._sweep import MAX_POINTS
from ..errors import ConfigError
from ._factors import Factor

METHODS = ("auto", "morris", "sobol")
SOBOL_UP_TO = 10  # auto: Sobol indices up to this many factors, Morris screening beyond
SAMPLES = {"morris": 10, "sobol": 64}  # Morris trajectories; Sobol base samples (a power of 2)
MIN_SAMPLES = {"morris": 4, "sobol": 16}
LEVELS = 4  # Morris grid levels
BAND = (2.5, 97.5)  # percentiles of the sampled figure that make its band

Evaluate = Callable[[list[dict[str, float]]], list[float]]


@dataclass(frozen=True)
class Ranked:
    """One factor's index with its confidence half-width, and the swing its range alone gives."""

    name: str
    index: float      # Sobol ST or Morris mu*
    conf: float | None  # half-width of its 95% interval (SALib's bootstrap); None from too few samples
    first: float      # Sobol S1, or Morris sigma
    low_value: float  # the figure with this factor at the low end of its range, the others nominal
    high_value: float


@dataclass(frozen=True)
class Analysis:
    metric: str
    method: str
    samples: int
    seed: int
    factors: list[Factor]
    ranking: list[Ranked]
    nominal: float
    band: tuple[float, float]
    extremes: tuple[float, float]
    points: int
    notes: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        index = {"morris": "mu_star", "sobol": "ST"}[self.method]
        return {
            "metric": self.metric, "method": self.method, "samples": self.samples, "seed": self.seed,
            "points": self.points, "nominal": self.nominal, "band": list(self.band), "band_percentiles": list(BAND),
            "extremes": list(self.extremes), "index": index,
            "ranking": [{"name": r.name, index: r.index, f"{index}_conf": r.conf,
                         ("sigma" if self.method == "morris" else "S1"): r.first,
                         "at_low": r.low_value, "at_high": r.high_value,
                         **_factor_json(next(f for f in self.factors if f.name == r.name))} for r in self.ranking],
            **self.notes,
        }


def _factor_json(f: Factor) -> dict[str, Any]:
    return {"low": f.low, "high": f.high, "nominal": f.nominal, "kind": f.kind, "declared": f.where}


def choose_method(method: str, count: int) -> str:
    if method not in METHODS:
        raise ConfigError(f"--method {method}: one of {', '.join(METHODS)}")
    if method == "auto":
        return "sobol" if count <= SOBOL_UP_TO else "morris"
    return method


def points_of(method: str, samples: int, count: int) -> int:
    """Points an analysis of ``count`` factors simulates: SALib's design (a Morris trajectory
    is count + 1 points, a Sobol base sample count + 2 without second-order indices), then
    the nominal point and each factor at both ends of its range."""
    return samples * (count + (1 if method == "morris" else 2)) + 1 + 2 * count


def most_samples(method: str, count: int) -> int:
    """The most samples whose points stay within MAX_POINTS (a power of 2 for Sobol)."""
    most = (MAX_POINTS - 1 - 2 * count) // (count + (1 if method == "morris" else 2))
    return 1 << (most.bit_length() - 1) if method == "sobol" and most > 0 else max(most, 0)


def check_samples(method: str, samples: int, count: int) -> None:
    """``samples`` that ``method`` takes, whose points on ``count`` factors are at most
    MAX_POINTS (the bound of a sweep: each point is a simulation of its own), checked
    before any point is drawn."""
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < MIN_SAMPLES[method]:
        what = "trajectories" if method == "morris" else "base samples"
        raise ConfigError(f"--samples {samples}: {method} needs at least {MIN_SAMPLES[method]} {what} "
                          f"(default {SAMPLES[method]})")
    if method == "sobol" and samples & (samples - 1):
        raise ConfigError(f"--samples {samples}: Sobol sampling takes a power of 2 base samples (e.g. 32, 64, 128)")
    points = points_of(method, samples, count)
    if points > MAX_POINTS:
        most = most_samples(method, count)
        fix = (f"give at most {most}" if most >= MIN_SAMPLES[method] else
               "keep fewer factors (--only)")
        raise ConfigError(f"--samples {samples}: {method} on {count} factors makes {points} points, more than the "
                          f"{MAX_POINTS} one analysis takes (each point is a simulation); {fix}")


def check_design(factors: Sequence[Factor], method: str = "auto", samples: int | None = None) -> tuple[str, int]:
    """The method and samples an analysis of ``factors`` takes, checked before any point is
    drawn or run: at least 2 factors, samples the method takes, within MAX_POINTS."""
    if len(factors) < 2:
        raise ConfigError(f"sensitivity needs at least 2 factors with a range, got {len(factors)} "
                          f"({', '.join(f.name for f in factors) or 'none'}); add --range NAME=LOW:HIGH")
    method = choose_method(method, len(factors))
    samples = SAMPLES[method] if samples is None else samples
    check_samples(method, samples, len(factors))
    return method, samples


def _problem(factors: Sequence[Factor]) -> dict[str, Any]:
    return {"num_vars": len(factors), "names": [f.name for f in factors], "bounds": [[f.low, f.high] for f in factors]}


def design(factors: Sequence[Factor], method: str, samples: int, seed: int) -> np.ndarray:
    """The points SALib samples: one row per point, one column per factor."""
    if method == "morris":
        from SALib.sample import morris  # lazy: SALib (scipy), for an analysis only

        return morris.sample(_problem(factors), samples, num_levels=LEVELS, seed=seed)
    from SALib.sample import sobol  # lazy: SALib (scipy), for an analysis only

    return sobol.sample(_problem(factors), samples, calc_second_order=False, seed=seed)


def one_at_a_time(factors: Sequence[Factor]) -> list[dict[str, float]]:
    """The nominal point, then each factor at its low and at its high end, the others nominal."""
    nominal = {f.name: f.nominal for f in factors}
    points = [nominal]
    for f in factors:
        points += [{**nominal, f.name: f.low}, {**nominal, f.name: f.high}]
    return points


def analyse(metric: str, factors: Sequence[Factor], evaluate: Evaluate, method: str = "auto",
            samples: int | None = None, seed: int = 0) -> Analysis:
    """The factors ranked by their index for the figure ``evaluate`` returns at each point."""
    method, samples = check_design(factors, method, samples)
    x = design(factors, method, samples, seed)
    rows = [{f.name: float(v) for f, v in zip(factors, row)} for row in x]
    oat = one_at_a_time(factors)
    values = np.asarray(evaluate(rows + oat), dtype=float)
    y, swings = values[:len(rows)], values[len(rows):]
    if not np.all(np.isfinite(values)):
        raise ConfigError(f"{metric}: not defined at {int(np.sum(~np.isfinite(values)))} of the points (e.g. a "
                          f"speedup without a baseline); choose another --metric")
    problem = _problem(factors)
    if method == "morris":
        from SALib.analyze import morris as analyser  # lazy: SALib (scipy), for an analysis only

        found = analyser.analyze(problem, x, y, num_levels=LEVELS, seed=seed, print_to_console=False)
        # mu*'s confidence is a bootstrap over the trajectories: too few of them give none.
        index, first = found["mu_star"], found["sigma"]
        conf = [None] * len(factors) if too_few(samples) else found["mu_star_conf"]
    else:
        from SALib.analyze import sobol as analyser  # lazy: SALib (scipy), for an analysis only

        found = analyser.analyze(problem, y, calc_second_order=False, seed=seed, print_to_console=False)
        index, conf, first = found["ST"], found["ST_conf"], found["S1"]
    ranking = [Ranked(f.name, float(index[i]), None if conf[i] is None else float(conf[i]), float(first[i]),
                      float(swings[1 + 2 * i]),
                      float(swings[2 + 2 * i])) for i, f in enumerate(factors)]
    ranking.sort(key=lambda r: (-abs(r.index), r.name))
    low, high = np.percentile(y, BAND)
    return Analysis(metric, method, samples, seed, list(factors), ranking, float(swings[0]), (float(low), float(high)),
                    (float(y.min()), float(y.max())), len(rows) + len(oat))
