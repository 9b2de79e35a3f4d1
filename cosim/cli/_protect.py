"""Every input of a command kept from its outputs, checked before any work: the files it
has read by then (the scenario and the device, model and link YAMLs and profiles it names,
noted as they are read: cosim._inputs), the ones named on the command line, and the ones
it reads later (a dataset profile, read now; the --policy module's file)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from ..outputs._guard import clear_of_run_folder, real_folder
from ..outputs._check import check_files
from ..outputs._safety import MANIFEST
from ..trace._profile_files import load_profile


def later_inputs(profile: str | None = None, policy: str | None = None) -> dict[str, Path]:
    """The inputs read after the outputs are checked, by option: a dataset profile YAML
    (read now, so its errors come first too) and the --policy module's file."""
    found: dict[str, Path] = {}
    if profile is not None and Path(profile).suffix in (".yaml", ".yml"):
        load_profile(profile)
        found["--profile"] = Path(profile)
    if policy:
        where = policy.rpartition(":")[0]
        if where.endswith(".py"):
            found["--policy"] = Path(where)
        elif where:
            origin = _module_file(where)
            if origin is not None:
                found["--policy"] = origin
    return found


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:  # noqa: BLE001 - a module that cannot be found is --policy's own error, later
        return None
    origin = getattr(spec, "origin", None)
    return Path(origin) if origin and Path(origin).is_file() else None


def check_run_outputs(folder: Path, names: tuple[str, ...], outputs: dict[str, Path], inputs: dict[str, Any],
                      what: str = "--out", named: dict[str, str] | None = None) -> None:
    """A run's folder (its files ``names``, and the manifest) and its other ``outputs``:
    none is an input or another output, none is the folder, a folder it goes in, or a
    file the run writes there, and the folder, replaced whole by the run, holds neither
    the working folder nor an input. ``named``: how a message names an output whose
    label is not its option (a file written beside another's), e.g. "--vcd w.vcd: its
    GTKWave file w.gtkw"; others are named "LABEL PATH:"."""
    check_files([*((what, folder / name) for name in (*names, MANIFEST)), *outputs.items()], inputs)
    clear_of_run_folder(folder, what, {(named or {}).get(label, f"{label} {path}:"): path
                                       for label, path in outputs.items()}, (*names, MANIFEST))
    # A name that is no file (a built-in scenario) is held by no folder.
    real_folder(folder, what, [path for path in inputs.values() if path is not None and Path(path).exists()])
