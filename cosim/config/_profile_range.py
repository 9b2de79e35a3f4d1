"""A measured latency profile must give a positive time at every point a run can ask it
for, found when the scenario loads rather than midway through a run.

The native table (models/latency_profile.cpp) interpolates linearly between measured
points, in tokens within each measured context, then in context, then in batch, and
extends the end segments beyond the table. Within each cell of the grid made by every
measured tokens, context and batch value (and the ends of the range a run can ask for)
that is linear in each coordinate, so its least value over the range is at one of the
grid's corners: those are the points checked, with the table's own arithmetic.

The range a run can ask for: a decode of one token at any context from 0 to the role's
window; a prefill of 1 to a window of tokens after 0 to a window of context; and a batch
from 1 to ``batching.max_batch`` when the GPUs batch and the profile measured batches.
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import ConfigError
from ..devices._latency_csv import PHASES, LatencyProfile, load_latency_profile
from ..schema import _params
from .. import devices


def _between(keys: Sequence[int], x: int, value_of: Callable[[int], Any]) -> Any:
    """The native table's piecewise-linear lookup (keys sorted, end segments extended);
    ``value_of(i)`` is the value at ``keys[i]``, a number or an array of them."""
    if len(keys) == 1:
        return value_of(0)
    hi = bisect.bisect_left(keys, x)
    if hi < len(keys) and keys[hi] == x:
        return value_of(hi)
    hi = min(max(hi, 1), len(keys) - 1)
    lo = hi - 1
    y0, y1 = value_of(lo), value_of(hi)
    return y0 + (y1 - y0) * (float(x) - keys[lo]) / (keys[hi] - keys[lo])


def _curve(keys: np.ndarray, values: np.ndarray, x: np.ndarray) -> np.ndarray:
    """_between over tokens, for many tokens at once."""
    if len(keys) == 1:
        return np.full(len(x), values[0])
    found = np.searchsorted(keys, x)
    exact = (found < len(keys)) & (keys[np.minimum(found, len(keys) - 1)] == x)
    hi = np.clip(found, 1, len(keys) - 1)
    lo = hi - 1
    y0, y1 = values[lo], values[hi]
    line = y0 + (y1 - y0) * (x.astype(float) - keys[lo]) / (keys[hi] - keys[lo])
    return np.where(exact, values[np.minimum(found, len(keys) - 1)], line)


class _Table:
    """phase -> batch -> context -> tokens -> seconds, as the native table holds it."""

    def __init__(self, profile: LatencyProfile):
        # Sorted by phase, batch, context, tokens; each context's curve is a slice of arrays.
        t = profile.table
        t = t[np.lexsort((t[:, 1], t[:, 2], t[:, 3], t[:, 0]))]
        groups = np.flatnonzero(np.any(np.diff(t[:, [0, 3, 2]], axis=0) != 0, axis=1)) + 1
        self.phases: dict[str, dict[int, dict[int, tuple[np.ndarray, np.ndarray]]]] = {}
        for curve in np.split(t, groups):
            phase, batch, context = PHASES[int(curve[0, 0])], int(curve[0, 3]), int(curve[0, 2])
            self.phases.setdefault(phase, {}).setdefault(batch, {})[context] = (curve[:, 1], curve[:, 4])

    def seconds(self, phase: str, tokens: np.ndarray, context: int, batch: int) -> np.ndarray:
        batches = self.phases[phase]
        b_keys = sorted(batches)

        def plane_at(i: int) -> np.ndarray:
            plane = batches[b_keys[i]]
            c_keys = sorted(plane)
            return _between(c_keys, context, lambda j: _curve(*plane[c_keys[j]], tokens))

        return _between(b_keys, batch, plane_at)

    def corners(self, phase: str, window: int, max_batch: int) -> tuple[list[int], list[int], list[int]]:
        """The grid's corners within the range a run can ask for: tokens, contexts, batches."""
        batches = self.phases[phase]
        contexts = {c for plane in batches.values() for c in plane}
        tokens = {int(t) for plane in batches.values() for keys, _ in plane.values() for t in keys}

        def within(values: set[int], low: int, high: int) -> list[int]:
            return sorted({low, high, *(v for v in values if low <= v <= high)})

        token_range = (1, 1) if phase == "decode" else (1, window)
        batch_top = max_batch if len(batches) > 1 else 1
        return within(tokens, *token_range), within(contexts, 0, window), within(set(batches), 1, batch_top)


def least_point(profile: LatencyProfile, window: int, max_batch: int = 1) -> tuple[float, str] | None:
    """The least time the profile gives over the range a run can ask for, and where, when
    it is not positive; None when every point is positive."""
    table = _Table(profile)
    worst: tuple[float, str] | None = None
    for phase in sorted(table.phases):
        tokens, contexts, batches = table.corners(phase, window, max_batch)
        at = np.array(tokens, dtype=np.int64)
        for b in batches:
            for c in contexts:
                seconds = table.seconds(phase, at, c, b)
                bad = ~(seconds > 0)  # NaN too
                if not bad.any():
                    continue
                i = int(np.argmin(np.where(bad, np.nan_to_num(seconds, nan=-np.inf), np.inf)))
                if worst is None or not seconds[i] >= worst[0]:
                    what = "a decode" if phase == "decode" else f"a prefill of {tokens[i]} tokens"
                    worst = (float(seconds[i]), f"{what} at context {c}" + (f" in a batch of {b}" if b > 1 else ""))
    return worst


def check_profile(path: str, where: str, window: int, max_batch: int = 1) -> None:
    """ConfigError naming ``where`` (the profile's place in a configuration), the profile
    and the point, when the profile reaches zero or less time at a point a run can ask for."""
    found = least_point(load_latency_profile(path), window, max_batch)
    if found is not None:
        seconds, point = found
        raise ConfigError(f"{where}: {path}: the profile gives {seconds:.3g} s for {point}, a point a run can ask "
                          f"for (past the table its measured points are extended linearly); add measured points "
                          f"that cover it")


def check(scn: Any, wheres: dict[str, str] | None = None) -> None:
    """Every measured latency profile of the scenario's roles (a GPU's CSV, an FPGA's decode
    table) positive over the range its role can ask for; ``wheres`` names where a role's
    profile is given (file, line and field)."""
    for role in ("draft", "prm", "target"):
        r = getattr(scn, role)
        kind = devices.kind_of(r.device)
        own = kind.measured_profile(r.device)
        if own is not None:
            # Named in the device's file: the device decodes one context, up to its reservation.
            window = kind.kv_reserve(r.device) or r.model.context_window
            where = _params.origin(r.device.profile, "file") or f"{role}.device.profile.file"
            check_profile(own, str(where), window)
        elif r.profile is not None and not Path(r.profile).is_dir():
            batch = scn.batching.max_batch if scn.batching.enabled else 1
            check_profile(r.profile, (wheres or {}).get(role, f"{role}.profile"), r.model.context_window, batch)
