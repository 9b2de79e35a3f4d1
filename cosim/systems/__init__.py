"""Systems: one file each, each registered here under the name a scenario's ``system:``
gives. The rest of the package asks this registry what a system does (``of(scn)``,
``by_name(name)``) and never compares a system's name. CONTRIBUTING.md shows how to add
one."""

from __future__ import annotations

from typing import Any

from ._system import ROLES, Sections, System
from .autoregressive import Autoregressive
from .fpga_baseline import FpgaBaseline
from .gpu_baseline import GpuBaseline
from .gpu_stepahead import GpuStepahead
from .heteroreason import Heteroreason
from .lookahead import Lookahead
from .speculative_decoding import SpeculativeDecoding
from .specreason import Specreason
from .split_decoding import SplitDecoding

_SYSTEMS: dict[str, System] = {}


def register(system: System) -> System:
    """Adds a system under its name."""
    if system.name in _SYSTEMS:
        raise ValueError(f"system {system.name!r} is registered twice")
    _SYSTEMS[system.name] = system
    return system


for _system in (GpuBaseline(), GpuStepahead(), Heteroreason(), FpgaBaseline(), Autoregressive(),
                SpeculativeDecoding(), SplitDecoding(), Specreason(), Lookahead()):
    register(_system)


def names() -> tuple[str, ...]:
    """The registered systems' names, in registration order."""
    return tuple(_SYSTEMS)


def by_name(name: str) -> System:
    return _SYSTEMS[name]


def of(scn: Any) -> System:
    """The system a scenario runs."""
    return _SYSTEMS[scn.system]


__all__ = ["ROLES", "Sections", "System", "by_name", "names", "of", "register"]
