"""GPU architectures (docs/hardware.md, "The device library"): the kernel efficiencies a
GPU of an architecture reaches, fitted where the project has measurements of one of its
GPUs and carried with a declared range where it has none. A GPU description names its
architecture (``architecture: ada``) and takes these values for any of them its own file
leaves out; a value the file gives wins. Each architecture is one file of
cosim/data/architectures, its values cited there as a device file's are."""

from __future__ import annotations

from pathlib import Path

from .._builtin_files import BuiltinFolder
from ..errors import ConfigError
from ..schema._yamlio import LocatedDict, load_yaml

# What an architecture sets: how its kernels use the datasheet's bandwidth and tensor rate.
# The rest of a GPU (memory, bandwidth, peak rate, precision, overheads) is its own.
KERNEL_EFFICIENCIES = ("memory_efficiency", "compute_efficiency", "roofline_exponent")


FILES = BuiltinFolder("architectures", "architecture")
folder, names, path_of = FILES.path, FILES.names, FILES.path_of


def load(ref: str, beside: Path | None = None) -> LocatedDict:
    """An architecture's mapping, checked: ``kind: architecture``, a name, and a ``gpu``
    section holding only kernel efficiencies."""
    path = path_of(ref, beside)
    data = load_yaml(path)
    if not isinstance(data, LocatedDict) or data.get("kind") != "architecture":
        raise ConfigError(f"{path}: kind must be architecture")
    gpu = data.get("gpu")
    if not isinstance(gpu, LocatedDict) or not gpu:
        raise ConfigError(f"{data.where}: gpu: an architecture gives its kernel efficiencies under gpu:")
    for key in gpu:
        if key not in KERNEL_EFFICIENCIES:
            raise ConfigError(f"{gpu.where_of(key)}: an architecture sets only {', '.join(KERNEL_EFFICIENCIES)}")
    return data


def filled(body: LocatedDict) -> LocatedDict:
    """A GPU description's mapping with its architecture's kernel efficiencies in its
    ``gpu`` section wherever the file gives none (an error names the field's line)."""
    ref = body.get("architecture")
    if ref is None or ref == "":
        return body
    if not isinstance(ref, str):
        raise ConfigError(f"{body.where_of('architecture')}: an architecture name or YAML path")
    where = body.where_of("architecture")
    beside = Path(where.file).parent if where.file and not where.file.startswith("<") else None
    try:
        gpu_of_arch = load(ref, beside)["gpu"]
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    gpu = body.get("gpu")
    if not isinstance(gpu, LocatedDict):
        return body  # the build names the missing section
    # A value taken from the architecture keeps its own place (the architecture's file) for errors.
    items = {**{key: value for key, value in gpu_of_arch.items() if key not in gpu}, **gpu}
    return LocatedDict({**body, "gpu": LocatedDict(items, gpu.where, dict(gpu.lines))}, body.where, body.lines)
