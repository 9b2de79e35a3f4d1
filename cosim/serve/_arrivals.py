"""Request arrival processes for serving runs (docs/serving.md).

Arrival times are seconds from the start of the run, one per request in trace order,
as float64 arrays. A drawn process starts at its first inter-arrival time, not at 0:
it is the process observed from time 0, so n requests at rate r span about n / r
seconds whichever request comes first.

Draws are seeded and come from a stream of their own: the seed is mixed with a spawn
key that no trace draw uses (trace draws are keyed by seed, problem and step alone), so
the same seed gives the same trace with or without arrivals, and arrivals do not repeat
any of the trace's random numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._args import real, whole
from ..errors import ConfigError
from ..trace._arrivals import MAX_ARRIVAL_S, MAX_ARRIVALS, check_times

# The spawn key word of the arrival stream (see the module's docstring).
_ARRIVAL_STREAM = 0xA881


def _rng(seed: Any) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(whole(seed, "seed"), spawn_key=(_ARRIVAL_STREAM,)))


def _count(n: Any, rate: float) -> int:
    """The number of arrivals to draw, checked before any is: within the limit of a run's
    requests, and (on average) within the time a run may span."""
    count = whole(n, "n", minimum=1, maximum=MAX_ARRIVALS)
    if count / rate > MAX_ARRIVAL_S:
        raise ConfigError(f"rate_per_s: {count} requests at {rate:g} per second arrive over about "
                          f"{count / rate:.3g} s, beyond the {MAX_ARRIVAL_S:g} s a run may span; raise the rate "
                          f"or draw fewer requests")
    return count


def _times(gaps: np.ndarray, rate: float, n: int) -> np.ndarray:
    times = np.cumsum(gaps)
    if not times[-1] <= MAX_ARRIVAL_S:
        raise ConfigError(f"rate_per_s: {n} requests at {rate:g} per second arrive over about {n / rate:.3g} s, "
                          f"beyond the {MAX_ARRIVAL_S:g} s a run may span; raise the rate or draw fewer requests")
    times.flags.writeable = False
    return times


def poisson(rate_per_s: float, n: int, seed: int) -> np.ndarray:
    """``n`` arrival times (s) of a Poisson process of ``rate_per_s`` requests per second:
    exponential inter-arrival times of mean 1 / rate, the first arrival one inter-arrival
    time after 0."""
    rate = real(rate_per_s, "rate_per_s", positive=True)
    count = _count(n, rate)
    return _times(_rng(seed).exponential(1.0 / rate, count), rate, count)


def gamma(rate_per_s: float, cv: float, n: int, seed: int) -> np.ndarray:
    """``n`` arrival times (s) of a renewal process with Gamma inter-arrival times of mean
    1 / ``rate_per_s`` and coefficient of variation ``cv`` (standard deviation / mean):
    shape 1 / cv**2, scale cv**2 / rate. cv < 1 is smoother than Poisson, cv > 1 burstier;
    cv = 1 is the exponential, so the process is Poisson in distribution (its draws differ
    from ``poisson``'s for the same seed)."""
    rate = real(rate_per_s, "rate_per_s", positive=True)
    spread = real(cv, "cv", positive=True)
    count = _count(n, rate)
    shape = 1.0 / spread**2
    return _times(_rng(seed).gamma(shape, 1.0 / (rate * shape), count), rate, count)


def trace_arrivals(trace: Any) -> np.ndarray | None:
    """The arrival times a trace carries (format version 2), or None for a closed-loop
    trace, where each request starts as soon as a slot is free."""
    return trace.arrivals()


def arrival_ns(times_s: Any) -> np.ndarray:
    """Arrival times in seconds as the engine's ``arrival_ns`` column: int64 nanoseconds,
    rounded to the nearest (rounding keeps the order, so the column stays nondecreasing)."""
    return np.rint(check_times(times_s, "times_s") * 1e9).astype(np.int64)
