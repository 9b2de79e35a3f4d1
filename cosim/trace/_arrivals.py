"""Arrival times carried by a trace (format version 2): their limits, the check every
source of them goes through, and a trace's problems with arrival times attached as
they are read, so that a generated or file-backed trace carries arrivals without being
held in memory."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any, Iterator

import numpy as np

from .._lazy import LazySequence
from ..errors import ConfigError, TraceError
from ._events import Problem

# The simulation kernel's 64-bit picosecond clock holds about 106 days; arrivals are
# kept within about 11.6 days (the same bound as one operation, cosim/engine/_preflight.py) so
# that the requests' own service always fits behind the last arrival.
MAX_ARRIVAL_S = 1e6
# The most requests a run draws arrivals for: their times and what the serving metrics keep
# of each request take about 60 bytes a request in memory, 6 GB at this limit.
MAX_ARRIVALS = 100_000_000


def check_times(times: Any, name: str = "times_s", count: int | None = None) -> np.ndarray:
    """``times`` as a read-only float64 array of arrival seconds: one dimension, real numbers,
    finite, within [0, MAX_ARRIVAL_S] and nondecreasing (``count`` long when given).
    ConfigError naming ``name`` and the first bad index otherwise."""
    try:
        array = np.array(times, copy=True)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{name}: expected a sequence of numbers (seconds), got {type(times).__name__}: "
                          f"{exc}") from None
    if array.ndim != 1:
        raise ConfigError(f"{name}: expected one dimension (one time per problem), got shape {array.shape}")
    if array.dtype.kind not in "iuf":  # bools, complex numbers, text and objects are not times
        raise ConfigError(f"{name}: expected real numbers (seconds), got values of type {array.dtype}")
    array = array.astype(np.float64)
    if count is not None and len(array) != count:
        raise ConfigError(f"{name}: {len(array)} arrival times for {count} problems; give one per problem")
    bad = np.flatnonzero(~np.isfinite(array) | (array < 0) | (array > MAX_ARRIVAL_S))
    if bad.size:
        i = int(bad[0])
        raise ConfigError(f"{name}[{i}]: an arrival time is a finite number of seconds in [0, {MAX_ARRIVAL_S:g}], "
                          f"got {float(array[i])!r}")
    falls = np.flatnonzero(np.diff(array) < 0)
    if falls.size:
        i = int(falls[0]) + 1
        raise ConfigError(f"{name}[{i}]: {float(array[i])!r} s is before {name}[{i - 1}] = {float(array[i - 1])!r} s; "
                          f"arrivals are in trace order and must not decrease")
    array.flags.writeable = False
    return array


def arrival_problem(value: Any) -> str | None:
    """What is wrong with one problem's ``arrival_s`` as a stored value, or None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return f"expected a finite number of seconds, got {value!r}"
    if not 0 <= value <= MAX_ARRIVAL_S:
        return f"must be in [0, {MAX_ARRIVAL_S:g}] seconds, got {value!r}"
    return None


class ArrivalProblems(LazySequence):
    """A trace's problems with arrival times attached when each is read: problem ``i``
    is the base's problem ``i`` with ``arrival_s = times[i]``. The base stays as it is
    (drawn or read from its file when asked), so nothing is held but the times."""

    def __init__(self, base: Sequence[Problem], times: np.ndarray):
        self._base, self._times = base, times

    @property
    def base(self) -> Sequence[Problem]:
        return self._base

    @property
    def times(self) -> np.ndarray:
        """The arrival times in seconds, in trace order (read-only)."""
        return self._times

    def __len__(self) -> int:
        return len(self._times)

    def _item(self, index: int) -> Problem:
        return dataclasses.replace(self._base[index], arrival_s=float(self._times[index]))

    def __iter__(self) -> Iterator[Problem]:
        # Through the base's own iteration: a file is then read in one pass, and checked
        # whole against what was loaded.
        for problem, time in zip(self._base, self._times):
            yield dataclasses.replace(problem, arrival_s=float(time))

    def __repr__(self) -> str:
        return f"ArrivalProblems({self._base!r}, {len(self)} arrivals)"


def arrival_times(problems: Sequence[Problem]) -> np.ndarray | None:
    """The problems' arrival times in seconds (float64, trace order), or None when no
    problem carries one; TraceError if some do and some do not."""
    if isinstance(problems, ArrivalProblems):
        return problems.times
    values: list[float] = []
    without: str | None = None
    for problem in problems:
        if problem.arrival_s is None:
            without = without or problem.id
        else:
            values.append(problem.arrival_s)
        if values and without is not None:
            raise TraceError(f"problem {without!r} carries no arrival_s while others do; a trace carries an "
                             f"arrival time for every problem or for none")
    if not values:
        return None
    return check_times(values, "arrival_s")
