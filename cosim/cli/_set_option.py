"""The command line's ``--set PATH=V1,V2,...`` for sweeps."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError


def parse_value(text: str) -> Any:
    """A command-line value: a number, true/false, or text (a quantity such as '300 MHz')."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip()


def parse_set(option: str) -> tuple[str, list[Any]]:
    """``path=v1,v2,...`` from ``--set``."""
    path, sep, values = option.partition("=")
    if not sep or not path.strip() or not values.strip():
        raise ConfigError(f"--set {option!r}: write PATH=VALUE[,VALUE...], e.g. pcie.bandwidth_gbps=4,8,16")
    parsed = [parse_value(v) for v in values.split(",") if v.strip()]
    return path.strip(), parsed
