"""Physical quantities in configuration files.

A parameter's canonical unit is in its name (``latency_ns``, ``bandwidth_gbps``).
A file may give the bare number under that name, or a quantity string with any
unit of the same dimension under the stem (``latency: 1.5 us``).
"""

from __future__ import annotations

import math
import re

# canonical suffix -> (dimension, canonical unit label, {unit: factor to canonical})
_DIMENSIONS: dict[str, tuple[str, str, dict[str, float]]] = {
    "_ns": ("time", "ns", {"s": 1e9, "ms": 1e6, "us": 1e3, "µs": 1e3, "ns": 1.0, "ps": 1e-3}),
    "_gbps": (
        "bandwidth",
        "GB/s",
        {
            "B/s": 1e-9, "KB/s": 1e-6, "MB/s": 1e-3, "GB/s": 1.0, "TB/s": 1e3,
            "KiB/s": 1024 / 1e9, "MiB/s": 1024**2 / 1e9, "GiB/s": 1024**3 / 1e9,
            "Gbit/s": 1 / 8, "Mbit/s": 1e-3 / 8,
        },
    ),
    "_mhz": ("frequency", "MHz", {"Hz": 1e-6, "kHz": 1e-3, "MHz": 1.0, "GHz": 1e3}),
    "_bytes": (
        "size",
        "bytes",
        {
            "B": 1.0, "bytes": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
            "KiB": 1024.0, "MiB": 1024.0**2, "GiB": 1024.0**3, "TiB": 1024.0**4,
        },
    ),
    "_w": ("power", "W", {"mW": 1e-3, "W": 1.0, "kW": 1e3}),
    "_pj_per_bit": ("energy per bit", "pJ/bit", {"fJ/bit": 1e-3, "pJ/bit": 1.0, "pJ/byte": 1 / 8, "pJ/B": 1 / 8}),
    "_pj": ("energy", "pJ", {"fJ": 1e-3, "pJ": 1.0, "nJ": 1e3}),
    "_tflops": (
        "compute rate",
        "TFLOP/s",
        {"GFLOP/s": 1e-3, "TFLOP/s": 1.0, "PFLOP/s": 1e3, "GFLOPS": 1e-3, "TFLOPS": 1.0, "TOPS": 1.0},
    ),
}

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan)\s*([^\d\s].*?)?\s*$")


def suffix_of(name: str) -> str | None:
    """The unit suffix of a parameter name, or None for a dimensionless one."""
    for suffix in _DIMENSIONS:
        if name.endswith(suffix):
            return suffix
    return None


def canonical_unit(name: str) -> str:
    suffix = suffix_of(name)
    return _DIMENSIONS[suffix][1] if suffix else "1"


def units_for(name: str) -> list[str]:
    suffix = suffix_of(name)
    return list(_DIMENSIONS[suffix][2]) if suffix else []


def parse_quantity(text: str, name: str) -> float:
    """Converts a quantity string to the canonical unit of parameter ``name``.

    Raises ValueError with a message that says what was expected.
    """
    suffix = suffix_of(name)
    assert suffix is not None, name
    dimension, label, factors = _DIMENSIONS[suffix]
    match = _QUANTITY.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a quantity; write a number and a {dimension} unit, e.g. '2 {label}'")
    number, unit = match.group(1), match.group(2)
    if not unit:
        raise ValueError(f"missing unit in {text!r}: expected a {dimension} ({', '.join(factors)})")
    unit = unit.strip().replace("\u03bc", "\u00b5")  # Greek mu and micro sign look alike: take both
    if unit not in factors:
        raise ValueError(f"unit {unit!r} is not a {dimension} unit ({', '.join(factors)})")
    value = float(number) * factors[unit]
    if math.isnan(value):
        raise ValueError(f"{text!r} is not a number")
    return value
