"""The bootstrap over problems: confidence intervals of statistics that are smooth
functions of per-problem sums (a mean, a ratio of sums, a ratio of two systems' sums).

Problems are resampled with replacement ``resamples`` times; each resample is a row of
counts (how often each problem was drawn), so the sums of every column under every
resample are one matrix product, and every statistic of every system is computed from
the same resamples: intervals of ratios and differences between systems replaying the
same problems are paired. The BCa interval (Efron 1987) corrects the percentile interval
for the statistic's median bias (z0, from the share of resamples below the estimate) and
its skewness (the acceleration a, from the jackknife); for a function of sums the
jackknife is exact and costs one subtraction per problem (leave-one-out sums are the
totals minus that problem's row).

Below MIN_UNITS problems (or blocks) no interval is made: the ends are NaN and the
Intervals say so. With so few the bootstrap cannot stand in for the sampling distribution:
a resample that redraws each problem once lands on the estimate itself with probability
N!/N^N (half the resamples at 2 problems), which drags z0; the jackknife's skewness,
which gives the acceleration, cannot exceed (N - 2)/sqrt(N - 1) whatever the values (it
is zero at 2); and the spread of a resampled mean is sqrt((N - 1)/N) of the mean's own,
read against normal quantiles where Student's t applies (docs/metrics.md has the figures).

Units larger than MAX_UNITS (a run of a million problems) are first summed in
consecutive blocks of equal size, and the blocks are resampled: the problems of a run
are independent draws, so blocks of them are too, and a statistic of sums is the same
whether it is summed by problem or by block.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Iterator

import numpy as np

from ..errors import ConfigError

LEVEL = 0.95
RESAMPLES = 2000
SEED = 0  # the resampling's own seed (the trace's seed draws the problems, not this)
METHODS = ("bca", "percentile")
MIN_UNITS = 10  # fewer problems (or blocks) than this give no interval (module docstring)
MAX_UNITS = 20_000  # more problems than this are resampled as blocks of consecutive problems
_CHUNK_CELLS = 4_000_000  # resample counts held at once (32 MB)

Statistic = Callable[[np.ndarray], np.ndarray]  # sums (..., columns) -> values (..., statistics)
_NORMAL = NormalDist()


@dataclass(frozen=True)
class Intervals:
    """Estimates and their interval ends, one per statistic (NaN where a statistic is not defined)."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    method: str
    resamples: int
    seed: int
    units: int  # problems (or blocks of them) resampled
    available: bool = True  # False below MIN_UNITS: every end is NaN


def too_few(units: int) -> bool:
    """Whether ``units`` problems (or blocks) are too few for an interval."""
    return units < MIN_UNITS


def unavailable_text() -> str:
    """What a table prints in place of an interval that too few problems cannot give."""
    return f"n/a (N < {MIN_UNITS})"


def check_options(level: float, resamples: int, method: str) -> None:
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0.5 <= level < 1:
        raise ConfigError(f"level: a confidence level in [0.5, 1), got {level!r}")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 100:
        raise ConfigError(f"resamples: a whole number >= 100 (an interval's ends are its tail quantiles), "
                          f"got {resamples!r}")
    if method not in METHODS:
        raise ConfigError(f"method: one of {', '.join(METHODS)}, got {method!r}")


def blocks(columns: np.ndarray, units: int | None = None) -> np.ndarray:
    """Rows summed in consecutive blocks of equal size so that at most ``units`` (MAX_UNITS)
    remain (the last block takes the remainder); the rows themselves when they are few enough."""
    units = MAX_UNITS if units is None else units
    n = len(columns)
    if n <= units:
        return columns
    size = math.ceil(n / units)
    edges = np.arange(0, n, size)
    return np.add.reduceat(columns, edges, axis=0)


def resample_counts(n: int, resamples: int, seed: int = SEED) -> Iterator[np.ndarray]:
    """The resampling matrix in chunks of rows: how often each of ``n`` units is drawn in each
    resample (every row sums to n). The chunks' size depends on n alone, so the draws are the
    same for the same (n, resamples, seed); a matrix of one chunk is kept for the next call
    (a report resamples the same problem count hundreds of times)."""
    if n * resamples <= _CHUNK_CELLS:
        yield _whole_counts(n, resamples, seed)
        return
    yield from _counts(n, resamples, seed)


def _counts(n: int, resamples: int, seed: int) -> Iterator[np.ndarray]:
    rng = np.random.default_rng([seed, n])
    chunk = max(1, _CHUNK_CELLS // n)
    for start in range(0, resamples, chunk):
        rows = min(chunk, resamples - start)
        drawn = rng.integers(0, n, size=(rows, n)) + n * np.arange(rows)[:, None]
        yield np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


@functools.lru_cache(maxsize=4)
def _whole_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    counts = next(_counts(n, resamples, seed))
    counts.setflags(write=False)
    return counts


def replicates(columns: np.ndarray, statistic: Statistic, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """The statistic under every resample: (resamples, statistics)."""
    parts = []
    for counts in resample_counts(len(columns), resamples, seed):
        with np.errstate(divide="ignore", invalid="ignore"):
            parts.append(np.atleast_2d(statistic(counts @ columns)))
    return np.concatenate(parts, axis=0)


def bootstrap(columns: np.ndarray, statistic: Statistic, *, level: float = LEVEL, resamples: int = RESAMPLES,
              seed: int = SEED, method: str = "bca", min_units: int = MIN_UNITS) -> Intervals:
    """Intervals of ``statistic(sums)`` over the rows of ``columns`` (units x columns; a unit is a
    problem, or a block of problems when there are more than MAX_UNITS). ``statistic`` maps
    column sums (..., columns) to statistics (..., m) and must be vectorised over leading axes.
    A resample whose statistic is not finite (a zero denominator) is left out of its tails.
    Below ``min_units`` units the estimates come without ends (``available`` is False);
    ``min_units`` other than MIN_UNITS is for checking the method's arithmetic on a few units."""
    check_options(level, resamples, method)
    columns = blocks(np.asarray(columns, dtype=np.float64))
    if columns.ndim != 2 or len(columns) < 1:
        raise ConfigError(f"a bootstrap needs at least 1 problem, got {len(columns)}")
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = np.atleast_1d(statistic(columns.sum(axis=0)))
    if len(columns) < max(2, min_units):
        nothing = np.full(len(estimate), np.nan)
        return Intervals(estimate, nothing, nothing.copy(), level, method, resamples, seed, len(columns), False)
    boot = replicates(columns, statistic, resamples, seed)
    alpha = (1 - level) / 2
    levels = np.tile([alpha, 1 - alpha], (len(estimate), 1))
    if method == "bca":
        with np.errstate(divide="ignore", invalid="ignore"):
            jack = statistic(columns.sum(axis=0) - columns)  # leave one out: exact for sums
        levels = _bca_levels(estimate, boot, np.atleast_2d(jack), alpha)
    low, high = _quantiles(boot, levels)
    low, high = np.where(np.isfinite(estimate), low, np.nan), np.where(np.isfinite(estimate), high, np.nan)
    return Intervals(estimate, low, high, level, method, resamples, seed, len(columns))


def _bca_levels(estimate: np.ndarray, boot: np.ndarray, jack: np.ndarray, alpha: float) -> np.ndarray:
    """Per statistic, the quantile levels of the BCa interval's ends; the percentile's where
    the correction is not defined (no spread, or every resample on one side)."""
    levels = np.tile([alpha, 1 - alpha], (len(estimate), 1))
    z_alpha = _NORMAL.inv_cdf(alpha)
    for j, theta in enumerate(estimate):
        b = boot[:, j][np.isfinite(boot[:, j])]
        loo = jack[:, j]
        if not math.isfinite(theta) or len(b) == 0 or not np.all(np.isfinite(loo)):
            continue
        below = float(np.mean(b < theta))
        if not 0 < below < 1:
            continue
        z0 = _NORMAL.inv_cdf(below)
        d = loo.mean() - loo
        spread = float(np.sum(d * d))
        a = float(np.sum(d ** 3)) / (6 * spread ** 1.5) if spread > 0 else 0.0
        for k, z in enumerate((z_alpha, -z_alpha)):
            shifted = z0 + z
            levels[j, k] = _NORMAL.cdf(z0 + shifted / (1 - a * shifted))
    return levels


def _quantiles(boot: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each statistic's replicates at its two levels (numpy's linear quantile)."""
    low, high = np.full(len(levels), np.nan), np.full(len(levels), np.nan)
    for j in range(len(levels)):
        b = boot[:, j][np.isfinite(boot[:, j])]
        if len(b):
            low[j], high[j] = np.quantile(b, levels[j])
    return low, high


def ratios(pairs: list[tuple[int, int]]) -> Statistic:
    """The statistic ``sums[num] / sums[den]`` for each (num, den) pair of column indices."""
    num = np.array([p[0] for p in pairs], dtype=np.intp)
    den = np.array([p[1] for p in pairs], dtype=np.intp)

    def statistic(sums: np.ndarray) -> np.ndarray:
        return sums[..., num] / sums[..., den]

    return statistic
