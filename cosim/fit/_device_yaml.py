"""The device file a fit writes: the device it started from, with each fitted value
replaced and citing the fit; every other value keeps its own source or estimate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..config import _units
from ..outputs._atomic import write_atomically
from .._files import read_text
from .._inputs import MAX_YAML_BYTES
from ..errors import ConfigError
from ..config.hardware import builtin_path


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


def source_file(ref: Any) -> Path:
    path = Path(str(ref))
    if path.suffix in (".yaml", ".yml"):
        return path
    return builtin_path("device", str(ref))


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
    data["description"] = f"{data.get('description', '')}; {note}".lstrip("; ")
    header = f"# {note}\n# Written by `cosim fit` from {path.name}; fitted values cite the fit.\n"
    return write_atomically(out, header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120))
