"""Descriptions of devices, links and models, loaded from YAML.

Built-in descriptions live in ``cosim/data`` (every value there cites its
source or says it is an estimate); a path to a user's own YAML file works
wherever a built-in name does.
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Union

from ._latency_csv import load_latency_profile
from . import _declarations, _params
from ._params import build, config_class, param
from ._yamlio import LocatedDict, load_yaml, locate
from ..errors import ConfigError
from .._isolation import native


# The groups of parameters the native models take, each declared once in
# cosim/config/_declarations.py (the C++ structs are generated from the same declarations).
PcieLinkConfig = config_class(_declarations.PCIE, __name__)
HbmConfig = config_class(_declarations.HBM, __name__)
PowerConfig = config_class(_declarations.POWER, __name__)


def kv_bytes_per_token(model: Any, kv_bytes_per_element: float) -> float:
    """Bytes of K and V one token keeps in every layer of ``model`` at a device's KV
    precision: the models' own formula (ModelSpec::kv_bytes_per_token, models/model_spec.cpp)."""
    return native().kv_bytes_per_token(_params.native(model), float(kv_bytes_per_element))


def rtl_kvmu_missing() -> str | None:
    """None when this build has the KVMU's RTL (fpga.kvmu: rtl), else what is missing."""
    if "rtl" in getattr(native(), "kvmu_implementations", ()):
        return None
    return ("the Verilated KVMU (rtl/kvmu.v), which this build lacks: Verilator was not found when the "
            "extension was built (install verilator, then rerun `bash scripts/bootstrap.sh setup`)")


def _kvmu_usable(value: str) -> str | None:
    return rtl_kvmu_missing() if value == "rtl" else None


FpgaAcceleratorConfig = config_class(_declarations.FPGA, __name__, usable={"kvmu": _kvmu_usable})
GpuConfig = config_class(_declarations.GPU, __name__)
ModelConfig = config_class(_declarations.MODEL, __name__)


PROJECTIONS = ("linear", "none")


@dataclass(frozen=True, kw_only=True)
class FpgaProfileConfig:
    file: str = param("CSV of measured times (phase,tokens,context,seconds: decode seconds per token by "
                      "context, local-prefill seconds by tokens); a relative path is taken from the device "
                      "file's folder", rule="any")
    measured_clock_mhz: float = param("kernel clock the profile was measured at (not the clock the design runs "
                                      "at: that is the accelerator's clock_mhz)")
    clock_projection: str = param("linear: times scale by measured clock / clock (a compute- or pipeline-bound "
                                  "design); none: used as measured at any clock", rule="any", default="linear",
                                  choices=PROJECTIONS)


@dataclass(frozen=True, kw_only=True)
class FpgaDevice:
    name: str = param("device name", rule="any")
    description: str = param("what this device is", rule="any", default="")
    host_link: str = param("default link to the host (a link name)", rule="any", default="pcie_gen3_x16")
    hbm: HbmConfig = param("on-board HBM", rule="any")
    accelerator: FpgaAcceleratorConfig = param("the draft decoder design", rule="any")
    power: PowerConfig = param("board power per state", rule="any")
    profile: FpgaProfileConfig | None = param("measured decode times that replace the design's formula "
                                              "(optional)", rule="any", default=None)

    kind = "fpga"


@dataclass(frozen=True, kw_only=True)
class GpuDevice:
    name: str = param("device name", rule="any")
    description: str = param("what this device is", rule="any", default="")
    host_link: str = param("default link to the host (a link name)", rule="any", default="pcie_gen4_x16")
    gpu: GpuConfig = param("memory, compute and overheads", rule="any")
    power: PowerConfig = param("board power per state", rule="any")

    kind = "gpu"


Device = Union[FpgaDevice, GpuDevice]
_KINDS: dict[str, type] = {"fpga": FpgaDevice, "gpu": GpuDevice, "pcie": PcieLinkConfig, "model": ModelConfig}
_FOLDERS = {"device": "devices", "link": "links", "model": "models"}


def _data_dir(folder: str) -> Path:
    return Path(str(resources.files("cosim") / "data" / folder))


def builtin_names(what: str) -> list[str]:
    """Names of the built-in descriptions of ``what`` (device, link or model)."""
    return sorted(p.stem for p in _data_dir(_FOLDERS[what]).glob("*.yaml"))


def builtin_path(what: str, name: str) -> Path:
    return _data_dir(_FOLDERS[what]) / f"{name}.yaml"


def kind_of(config: Any) -> str:
    """The ``kind:`` a description file gives for ``config`` (fpga, gpu, pcie or model)."""
    return next(kind for kind, cls in _KINDS.items() if isinstance(config, cls))


def _load(what: str, ref: Any, allowed: tuple[str, ...]) -> Any:
    if isinstance(ref, tuple(_KINDS[k] for k in allowed)):
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
    if kind == "fpga":
        body = _profile_clock_renamed(body)
    config = build(_KINDS[kind], body)
    if isinstance(ref, dict):
        path = Path.cwd() / "inline"  # relative paths of an inline mapping: from the current folder
    if isinstance(config, FpgaDevice) and config.profile is not None:
        config = _with_profile_checked(config, path.parent, body)
    host_link = getattr(config, "host_link", "")
    if host_link.endswith((".yaml", ".yml")) and not Path(host_link).is_absolute():
        # A link file named in a device file is found beside that file.
        config = _with_origins_kept(config, host_link=str(path.parent / host_link))
    return config


# The profile's clock was once `clock` (`clock_mhz`), a name every other section gives the
# clock the design runs at; files that still say so load, with a DeprecationWarning.
_OLD_PROFILE_CLOCK = {"clock": "measured_clock", "clock_mhz": "measured_clock_mhz"}


def _profile_clock_renamed(body: LocatedDict) -> LocatedDict:
    """The FPGA device's mapping with its profile's old clock key given the new name."""
    profile = body.get("profile")
    if not isinstance(profile, LocatedDict) or not set(_OLD_PROFILE_CLOCK) & set(profile):
        return body
    items, lines = {}, {}
    for key, value in profile.items():
        new = _OLD_PROFILE_CLOCK.get(key, key)
        if new != key:
            both = [k for k in ("measured_clock", "measured_clock_mhz") if k in profile]
            if both:
                raise ConfigError(f"{profile.where_of(key)}: the old name of profile.{both[0]}, which is also "
                                  f"given; keep {both[0]} only")
            warnings.warn(f"{profile.where_of(key)}: deprecated name; write {new} (the clock the profile was "
                          f"measured at)", DeprecationWarning, stacklevel=_caller_level())
        items[new] = value
        if key in profile.lines:
            lines[new] = profile.lines[key]
    renamed = LocatedDict(items, profile.where, lines)
    return LocatedDict({**body, "profile": renamed}, body.where, body.lines)


def _caller_level() -> int:
    """The stacklevel of the first frame outside this package (or the command line's own
    __main__), so that a warning points at the caller whichever function loaded the file."""
    package = str(Path(__file__).resolve().parent.parent)
    frame, level = sys._getframe(1), 1  # the frame that calls warnings.warn is level 1
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(package + "/") \
            and frame.f_globals.get("__name__") != "__main__":
        frame, level = frame.f_back, level + 1
    return level


def _with_origins_kept(config: Any, **changes: Any) -> Any:
    changed = dataclasses.replace(config, **changes)
    _params.set_origins(changed, _params.origins_of(config))
    return changed


def _with_profile_checked(device: FpgaDevice, folder: Path, body: LocatedDict) -> FpgaDevice:
    """The device with its profile's path taken from the device file's folder, and the CSV checked now."""
    profile = device.profile
    assert profile is not None
    where = body["profile"].where_of("file") if isinstance(body.get("profile"), LocatedDict) else body.where
    path = Path(profile.file).expanduser()
    if not path.is_absolute():
        path = folder / path
    try:
        table = load_latency_profile(path)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    if table.has_batches():
        raise ConfigError(f"{where}: {path}: rows at batch > 1 time a GPU's batched iterations; the FPGA decodes "
                          f"one context at a time")
    return _with_origins_kept(device, profile=dataclasses.replace(profile, file=str(path)))


def fpga_profile_native(device: FpgaDevice) -> dict[str, Any] | None:
    """The measured profile as the native models take it, or None."""
    if device.profile is None:
        return None
    table = load_latency_profile(device.profile.file)
    return {"source": table.source, "rows": table.table,
            "measured_clock_mhz": device.profile.measured_clock_mhz,
            "project_clock": device.profile.clock_projection == "linear"}


def load_device(ref: Any) -> Device:
    """An FPGA or GPU device: built-in name (``u280``), YAML path or config object."""
    return _load("device", ref, ("fpga", "gpu"))


def load_link(ref: Any) -> PcieLinkConfig:
    return _load("link", ref, ("pcie",))


def load_model(ref: Any) -> ModelConfig:
    return _load("model", ref, ("model",))
