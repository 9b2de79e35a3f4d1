"""Descriptions of devices, links and models, loaded from YAML.

Built-in descriptions live in ``cosim/data`` (every value there cites its
source or says it is an estimate); a path to a user's own YAML file works
wherever a built-in name does.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from .. import devices
from ..devices import Device
# The device kinds' configuration classes, named here as earlier releases did.
from ..devices.fpga import (FpgaAcceleratorConfig, FpgaDevice, FpgaProfileConfig, HbmConfig, PROJECTIONS,  # noqa: F401
                            profile_native as fpga_profile_native, rtl_kvmu_missing)
from ..devices.gpu import GpuConfig, GpuDevice  # noqa: F401
from ..devices._kind import PowerConfig  # noqa: F401
from ..schema import _declarations, _params
from ..schema._params import build, config_class
from ..schema._yamlio import LocatedDict, load_yaml, locate
from ..errors import ConfigError
from .._extension import native


# The groups of parameters the native models take, each declared once in
# cosim/schema/_declarations.py (the C++ structs are generated from the same declarations).
# The device kinds' own groups live with their kinds (cosim/devices/).
PcieLinkConfig = config_class(_declarations.PCIE, __name__)
# A PCIe link between GPUs is their own links to the host: a group's collectives share it
# with the host's transfers (not a field: the kind of link, which a file's kind: says).
PcieLinkConfig.carries_host_traffic = True
ModelConfig = config_class(_declarations.MODEL, __name__)
ParallelConfig = config_class(_declarations.PARALLEL, __name__)


class NvlinkConfig(PcieLinkConfig):
    """An NVLink between GPUs: a PCIe link's parameters (bandwidth per direction,
    efficiency, latency of one transfer), its own kind so that a written file says which.
    It carries the GPUs' collectives alone."""

    carries_host_traffic = False


def kv_bytes_per_token(model: Any, kv_bytes_per_element: float) -> float:
    """Bytes of K and V one token keeps in every layer of ``model`` at a device's KV
    precision: the models' own formula (ModelSpec::kv_bytes_per_token, models/model_spec.cpp)."""
    return native().kv_bytes_per_token(_params.native(model), float(kv_bytes_per_element))


# What a description file's ``kind:`` builds besides the device kinds.
# A link is a PCIe link or NVLink: the same parameters (bandwidth per direction,
# efficiency, latency of one transfer).
_OTHERS: dict[str, type] = {"nvlink": NvlinkConfig, "pcie": PcieLinkConfig, "model": ModelConfig}
_FOLDERS = {"device": "devices", "link": "links", "model": "models"}

__all__ = ["Device", "FpgaAcceleratorConfig", "FpgaDevice", "FpgaProfileConfig", "GpuConfig", "GpuDevice",
           "HbmConfig", "ModelConfig", "NvlinkConfig", "PROJECTIONS", "ParallelConfig", "PcieLinkConfig",
           "PowerConfig", "builtin_names", "builtin_path", "file_ref", "fpga_profile_native", "kind_of",
           "kv_bytes_per_token", "load_device", "load_link", "load_model", "rtl_kvmu_missing"]


def _data_dir(folder: str) -> Path:
    return Path(str(resources.files("cosim") / "data" / folder))


def builtin_names(what: str) -> list[str]:
    """Names of the built-in descriptions of ``what`` (device, link or model)."""
    return sorted(p.stem for p in _data_dir(_FOLDERS[what]).glob("*.yaml"))


def builtin_path(what: str, name: str) -> Path:
    return _data_dir(_FOLDERS[what]) / f"{name}.yaml"


def kind_of(config: Any) -> str:
    """The ``kind:`` a description file gives for ``config`` (a device kind, pcie or model)."""
    if devices.is_device(config):
        return devices.kind_of(config).name
    return next(kind for kind, cls in _OTHERS.items() if isinstance(config, cls))


def _class(kind: str) -> type:
    return devices.by_name(kind).config if kind in devices.names() else _OTHERS[kind]


def _load(what: str, ref: Any, allowed: tuple[str, ...]) -> Any:
    if isinstance(ref, tuple(_class(k) for k in allowed)):
        return ref
    if isinstance(ref, dict):
        # Given inline (a written scenario.resolved.yaml): read as the file would be, its
        # relative paths from the current folder.
        data, path = (ref if isinstance(ref, LocatedDict) else locate(ref, "<code>")), Path("<inline>")
    elif not isinstance(ref, str | Path):
        raise ConfigError(f"a {what} is a built-in name, a YAML path, a mapping or a config object, not "
                          f"{type(ref).__name__}")
    else:
        path = Path(ref)
        if path.suffix not in (".yaml", ".yml"):
            if str(ref) not in builtin_names(what):
                raise ConfigError(f"unknown {what} {str(ref)!r}; built-in: {', '.join(builtin_names(what))}")
            path = builtin_path(what, str(ref))
        data = load_yaml(path)
    if not isinstance(data, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping of parameters")
    kind = data.get("kind")
    if kind not in allowed:
        # What it holds instead is not quoted: a reference may name any YAML file.
        given = "it has none" if kind is None else "the file is not one"
        place = data.where_of("kind") if "kind" in data else data.where if isinstance(ref, dict) else path
        raise ConfigError(f"{place}: kind must be one of {', '.join(allowed)}; {given}")
    body = LocatedDict({k: v for k, v in data.items() if k != "kind"}, data.where, data.lines)
    device_kind = devices.by_name(kind) if kind in devices.names() else None
    if device_kind is not None:
        body = device_kind.prepared(body)
    config = build(_class(kind), body)
    if isinstance(ref, dict):
        path = Path.cwd() / "inline"  # relative paths of an inline mapping: from the current folder
    if device_kind is not None:
        config = device_kind.finished(config, path.parent, body)
    for field in ("host_link", "peer_link"):
        named = getattr(config, field, "")
        if named.endswith((".yaml", ".yml")) and not Path(named).is_absolute():
            # A link file named in a device file is found beside that file.
            config = _params.replaced(config, **{field: str(path.parent / named)})
    return config


def file_ref(value: Any, base: Path | None) -> Any:
    """A device, link or model reference of a scenario file: a relative YAML path is taken
    from the scenario's folder (``base``), anything else is as given."""
    if base is not None and isinstance(value, str) and value.endswith((".yaml", ".yml")) \
            and not Path(value).is_absolute():
        return str(base / value)
    return value


def load_device(ref: Any) -> Device:
    """A device of any kind (cosim/devices/): built-in name (``u280``), YAML path or config object."""
    return _load("device", ref, devices.names())


def load_link(ref: Any) -> PcieLinkConfig:
    return _load("link", ref, ("pcie", "nvlink"))


def load_model(ref: Any) -> ModelConfig:
    return _load("model", ref, ("model",))
