"""Arguments as Python users pass them: any integral number (numpy's included) where a
whole number goes, any real where a number goes; out-of-range values refused with the
argument's name, before any work."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .errors import ConfigError


def whole(value: Any, name: str, minimum: int | None = 0, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigError(f"{name}: must be a whole number, got {value!r}")
    result = int(value)
    if minimum is not None and result < minimum:
        raise ConfigError(f"{name}: must be >= {minimum}, got {result}")
    if maximum is not None and result > maximum:
        raise ConfigError(f"{name}: must be <= {maximum}, got {result}")
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


def operation(op: Any, index: int, arity: int) -> tuple[Any, ...]:
    """``(name, n, ...)`` of a script of operations, its counts checked as whole numbers >= 0."""
    if isinstance(op, str) or not isinstance(op, tuple | list) or not op or not isinstance(op[0], str):
        raise ConfigError(f"ops[{index}]: an operation is (name, count, ...), got {op!r}")
    if len(op) > arity + 1:
        raise ConfigError(f"ops[{index}]: {op[0]} takes at most {arity} number(s), got {len(op) - 1}")
    return (op[0], *(whole(v, f"ops[{index}] ({op[0]})") for v in op[1:]))
