"""Arguments as Python users pass them: any integral number (numpy's included) where a
whole number goes, any real where a number goes; out-of-range values refused with the
argument's name, before any work, a count past what the engine holds (its Limit) and a
time past the kernel's clock included, never left to fail as a C++ cast."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .schema._declarations import CLOCK_PS, Limit
from .errors import ConfigError

# The latest instant the kernel's clock holds, in ns.
CLOCK_NS = CLOCK_PS.value / 1e3


def whole(value: Any, name: str, minimum: int | None = 0, maximum: int | None = None,
          limit: Limit | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name}: must be a whole number, got {value!r}")
    result = int(value)
    if minimum is not None and result < minimum:
        raise ConfigError(f"{name}: must be >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ConfigError(f"{name}: must be <= {maximum}, got {result}")
    if limit is not None and result > limit.value:
        raise ConfigError(f"{name}: {result} is past {limit}")
    return result


def real(value: Any, name: str, minimum: float | None = 0.0, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigError(f"{name}: must be a number, got {value!r}")
    result = float(value)
    if not math.isfinite(result):
        raise ConfigError(f"{name}: must be a finite number, got {value!r}")
    if positive and result <= 0:
        raise ConfigError(f"{name}: must be > 0, got {result}")
    if minimum is not None and result < minimum:
        raise ConfigError(f"{name}: must be >= {minimum}, got {result}")
    return result


def time_ns(value: Any, name: str, start_ns: float = 0.0) -> float:
    """A simulated time or duration in ns, >= 0, that ends (after ``start_ns``) within the
    kernel's clock: past it the engine would refuse it without naming it, or hold it short."""
    result = real(value, name)
    if start_ns + result > CLOCK_NS:
        raise ConfigError(f"{name}: {result:g} ns" + (f" after {start_ns:g} ns" if start_ns else "")
                          + f" is past the kernel's clock of {CLOCK_NS:.4g} ns ({CLOCK_PS.why})")
    return result


def operation(op: Any, index: int, arity: int, limit: Limit | None = None, minimum: int = 0) -> tuple[Any, ...]:
    """``(name, n, ...)`` of a script of operations, its counts checked as whole numbers >=
    ``minimum`` (and within ``limit``)."""
    if isinstance(op, str) or not isinstance(op, tuple | list) or not op or not isinstance(op[0], str):
        raise ConfigError(f"ops[{index}]: an operation is (name, count, ...), got {op!r}")
    if len(op) > arity + 1:
        raise ConfigError(f"ops[{index}]: {op[0]} takes at most {arity} number(s), got {len(op) - 1}")
    return (op[0], *(whole(v, f"ops[{index}] ({op[0]})", minimum, limit=limit) for v in op[1:]))
