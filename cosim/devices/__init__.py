"""Device kinds: one file each (fpga.py, gpu.py), each registered here under the ``kind:``
its description files give. The rest of the package asks this registry what a device is
(``kind_of(device)``) and never tests a device's class. CONTRIBUTING.md shows how to add
a kind."""

from __future__ import annotations

from typing import Any, Union

from ..errors import ConfigError
from ._kind import DeviceKind, Memory, Operation, PowerConfig
from .fpga import Fpga, FpgaDevice
from .gpu import Gpu, GpuDevice

_KINDS: dict[str, DeviceKind] = {}


def register(kind: DeviceKind) -> DeviceKind:
    """Adds a device kind under its name (its description files' ``kind:``)."""
    if kind.name in _KINDS:
        raise ValueError(f"device kind {kind.name!r} is registered twice")
    _KINDS[kind.name] = kind
    return kind


for _kind in (Fpga(), Gpu()):
    register(_kind)

# A device of any registered kind (for type hints).
Device = Union[FpgaDevice, GpuDevice]


def names() -> tuple[str, ...]:
    """The registered kinds' names, in registration order."""
    return tuple(_KINDS)


def by_name(name: str) -> DeviceKind:
    return _KINDS[name]


def kind_of(device: Any) -> DeviceKind:
    """The kind of a device configuration (what its description file's ``kind:`` names)."""
    for kind in _KINDS.values():
        if isinstance(device, kind.config):
            return kind
    raise TypeError(f"not a device: {type(device).__name__}")


def is_device(value: Any) -> bool:
    return any(isinstance(value, kind.config) for kind in _KINDS.values())


def require(device: Any, name: str) -> Any:
    """``device`` if it is of kind ``name``; else a ConfigError that says what it is."""
    if kind_of(device).name != name:
        raise ConfigError(f"device {device.name!r} is a {kind_of(device).name}, not {by_name(name).label}")
    return device


def serving(role: str) -> tuple[DeviceKind, ...]:
    """The kinds that may serve ``role`` (draft, prm or target)."""
    return tuple(kind for kind in _KINDS.values() if role in kind.roles)


__all__ = ["Device", "DeviceKind", "Memory", "Operation", "PowerConfig", "by_name", "is_device", "kind_of", "names",
           "register", "require", "serving"]
