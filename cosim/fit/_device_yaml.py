"""The device file a fit writes: the device it started from, with each fitted value
replaced and citing the fit; every other value keeps its own source or estimate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..schema import _units
from ..config._written import absolute_ref
from ..schema._yamltext import commented
from ..outputs._atomic import write_atomically
from .._files import read_text
from .._inputs import MAX_YAML_BYTES
from ..errors import ConfigError
from ..config.hardware import builtin_path, load_device


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _replace_key(section: dict[str, Any], name: str, cited: dict[str, Any]) -> dict[str, Any]:
    """``section`` with parameter ``name`` (given under its name or its unit stem) replaced, in place order."""
    suffix = _units.suffix_of(name)
    stem = name[: -len(suffix)] if suffix else None
    out, placed = {}, False
    for key, value in section.items():
        if key in (name, stem):
            if not placed:
                out[name] = cited
                placed = True
            continue
        out[key] = value
    if not placed:
        out[name] = cited
    return out


def source_file(ref: Any, what: str = "device") -> Path:
    """The file of a device (or ``what``: a model) given by name or path."""
    path = Path(str(ref))
    if path.suffix in (".yaml", ".yml"):
        return path
    return builtin_path(what, str(ref))


def fit_inputs(measured: str | Path, device: Any, model: Any) -> dict[str, Path]:
    """What a fit reads, each named for a message, for the check of its output: the
    measured points (a CSV, or a folder of operator times), the device file it starts
    from, the profile CSV that file names, and the model file."""
    measured = Path(measured)
    kind = "operator-profile folder" if measured.is_dir() else "profile CSV"
    found = {f"the fit's input {kind} {measured}": measured}
    found[f"the device file {source_file(device)} the fit starts from"] = source_file(device)
    profile = getattr(load_device(device), "profile", None)
    if profile is not None:
        found[f"the profile CSV {profile.file} that the device file names"] = Path(profile.file)
    if model is not None:
        found[f"the model file {source_file(model, 'model')}"] = source_file(model, "model")
    return found


def write_fitted_device(base: Any, group: str, fitted: dict[str, dict[str, Any]], note: str, out: Path) -> Path:
    """Writes the device file ``base`` (a built-in name or a YAML path) with the
    values in ``fitted`` (name -> {value, source}) replaced in section ``group``."""
    path = source_file(base)
    data = _plain(yaml.safe_load(read_text(path, MAX_YAML_BYTES)))
    if not isinstance(data, dict) or not isinstance(data.get(group), dict):
        raise ConfigError(f"{path}: no '{group}' section to write the fitted values into")
    section = data[group]
    for name, cited in fitted.items():
        section = _replace_key(section, name, cited)
    data[group] = section
    data.pop("profile", None)  # the fitted formula, not a measured table, times this device
    if isinstance(data.get("host_link"), str):  # a link file beside the device file: found from anywhere
        data["host_link"] = absolute_ref(data["host_link"], path.parent)
    data["description"] = f"{data.get('description', '')}; {note}".lstrip("; ")
    header = f"# {commented(note)}\n# Written by `cosim fit` from {commented(path.name)}; fitted values cite the fit.\n"
    return write_atomically(out, header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
