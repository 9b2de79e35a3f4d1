"""Levenberg-Marquardt least squares on relative residuals, with the checks that tell
whether the measured points can determine the parameters at all.

Parameters are fitted through a transform that keeps each inside its rule while
the solver moves freely: log for positive values, logit for fractions. The
uncertainty of each is the delta method on the covariance s^2 (J^T J)^-1 of the
transformed parameters.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..errors import ConfigError

# A parameter whose effect on every point is below this (relative time per unit of its
# transformed value) cannot be fitted from these points.
NO_INFLUENCE = 1e-7
# Condition number of the scaled Jacobian beyond which two parameters cannot be told apart.
MAX_CONDITION = 1e7
_STEP = 1e-6  # finite-difference step in the transformed parameters
_EDGE = 1e-4  # a fraction within this of 0 or 1 sits at its bound
_FREE_LIMIT = 60.0  # |transformed value| beyond this is e^60 times the start: nothing physical


@dataclass(frozen=True)
class Param:
    name: str
    start: float
    rule: str  # "positive" or "fraction"
    why_silent: str = ""  # what would make it influence the points (said when it does not)

    def to_free(self, value: float) -> float:
        if self.rule == "fraction":
            v = min(max(value, _EDGE), 1 - _EDGE)
            return math.log(v / (1 - v))
        return math.log(max(value, 1e-12))

    def from_free(self, u: float) -> float:
        if self.rule == "fraction":
            return 1.0 / (1.0 + math.exp(-u))
        return math.exp(u)

    def slope(self, value: float) -> float:
        """d value / d free at ``value``."""
        return value * (1 - value) if self.rule == "fraction" else value


@dataclass(frozen=True)
class Fit:
    values: dict[str, float]
    sigmas: dict[str, float]
    predicted: np.ndarray    # seconds at each point
    residuals: np.ndarray    # predicted / measured - 1
    rms: float


def _jacobian(residual: Callable[[np.ndarray], np.ndarray], u: np.ndarray, r0: np.ndarray) -> np.ndarray:
    columns = []
    for j in range(len(u)):
        step = np.zeros_like(u)
        step[j] = _STEP
        columns.append((residual(u + step) - r0) / _STEP)
    return np.stack(columns, axis=1)


def _levenberg_marquardt(residual: Callable[[np.ndarray], np.ndarray], u: np.ndarray,
                         iterations: int = 200) -> tuple[np.ndarray, float]:
    r = residual(u)
    cost = float(r @ r)
    damping = 1e-3
    for _ in range(iterations):
        jac = _jacobian(residual, u, r)
        jtj, jtr = jac.T @ jac, jac.T @ r
        improved = False
        for _ in range(30):
            try:
                delta = np.linalg.solve(jtj + damping * np.diag(np.diag(jtj) + 1e-12), -jtr)
            except np.linalg.LinAlgError:
                damping *= 10
                continue
            trial = u + delta
            r_trial = residual(trial)
            cost_trial = float(r_trial @ r_trial) if np.all(np.isfinite(r_trial)) else math.inf
            if np.isfinite(cost_trial) and cost_trial < cost:
                u, r, damping = trial, r_trial, max(damping / 10, 1e-12)
                improved = cost - cost_trial > 1e-15 * max(cost, 1e-300)
                cost = cost_trial
                break
            damping *= 10
        if not improved or cost < 1e-30:
            break
    return u, cost


def least_squares(params: Sequence[Param], predict: Callable[[dict[str, float]], np.ndarray],
                  measured: np.ndarray) -> Fit:
    """Fits ``params`` so that ``predict(values)`` (seconds per point) matches ``measured``.

    ConfigError, naming the cause, when the points cannot determine the parameters:
    too few points, a parameter with no influence on any point, or parameters
    whose effects cannot be told apart.
    """
    n, p = len(measured), len(params)
    if n <= p:
        raise ConfigError(f"cannot fit {p} parameters ({', '.join(q.name for q in params)}) to {n} measured "
                          f"points: give more points than parameters")

    def values_of(u: np.ndarray) -> dict[str, float]:
        return {q.name: q.from_free(x) for q, x in zip(params, u)}

    def residual(u: np.ndarray) -> np.ndarray:
        if np.any(np.abs(u) > _FREE_LIMIT):
            return np.full(n, np.inf)  # values no device has (the transform would overflow)
        try:
            r = predict(values_of(u)) / measured - 1.0
        except ConfigError:
            return np.full(n, np.inf)  # a value the model refuses: never the minimum
        return r if np.all(np.isfinite(r)) and np.all(np.abs(r) < 1e150) else np.full(n, np.inf)

    start = np.array([q.to_free(q.start) for q in params])
    _check_identifiable(params, _jacobian(residual, start, residual(start)))
    # The time is a maximum of terms, so the cost has corners: start from the given values
    # and from a spread around them, and keep the best end point.
    spreads = [0.0] if p > 3 else [-1.4, 0.0, 1.4]
    best_u, best_cost = start, math.inf
    for shift in itertools.product(spreads, repeat=p):
        u, cost = _levenberg_marquardt(residual, start + np.array(shift))
        if cost < best_cost:
            best_u, best_cost = u, cost
    r = residual(best_u)
    jac = _jacobian(residual, best_u, r)
    _check_identifiable(params, jac)
    values = values_of(best_u)
    dof = n - p
    s2 = float(r @ r) / dof
    cov = s2 * np.linalg.pinv(jac.T @ jac)
    sigmas = {q.name: abs(q.slope(values[q.name])) * math.sqrt(max(cov[i, i], 0.0)) for i, q in enumerate(params)}
    for q in params:
        if q.rule == "fraction" and not _EDGE < values[q.name] < 1 - _EDGE:
            raise ConfigError(f"{q.name} runs to its bound ({values[q.name]:.4g}): no value in (0, 1] fits these "
                              f"points; check the device's other parameters (clock, ports) against the board")
    predicted = (r + 1.0) * measured
    return Fit(values, sigmas, predicted, r, math.sqrt(float(r @ r) / n))


def _check_identifiable(params: Sequence[Param], jac: np.ndarray) -> None:
    if not np.all(np.isfinite(jac)):
        raise ConfigError("the model cannot be evaluated at these parameters; check the device against the points")
    norms = np.linalg.norm(jac, axis=0)
    for q, norm in zip(params, norms):
        if norm < NO_INFLUENCE:
            hint = f" ({q.why_silent})" if q.why_silent else ""
            raise ConfigError(f"{q.name} has no influence on these points{hint}, so it cannot be fitted; leave it "
                              f"out (--params) or add points where it matters")
    scaled = jac / norms
    singular = np.linalg.svd(scaled, compute_uv=False)
    if singular[-1] <= 0 or singular[0] / singular[-1] > MAX_CONDITION:
        _, _, vt = np.linalg.svd(scaled)
        weakest = np.argsort(-np.abs(vt[-1]))[:2]
        names = " and ".join(params[i].name for i in sorted(weakest))
        raise ConfigError(f"{names} move these points the same way, so they cannot be told apart; fit one of them "
                          f"(--params) or add points that separate them")
