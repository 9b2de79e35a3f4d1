"""What an output may name, beyond its own kind (cosim.outputs._safety): never a file the
command reads (every input is noted as it is read, cosim._inputs), and never a folder
that holds the working folder or an input, since a run's folder is replaced whole.

A link is written through: the output goes where it points, and the link stays.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from .. import _inputs
from ..errors import ConfigError


def read_inputs() -> dict[tuple[str, int, int], str]:
    """The inputs read so far, keyed as cosim.outputs._safety keys files, each labelled
    for a message."""
    return {("inode", dev, ino): f"{given}, which the run reads" for (dev, ino), given in _inputs.inputs_read().items()}


def refuse_input(path: str | Path, what: str) -> None:
    """ConfigError naming ``what`` if ``path`` is a file the command has read: the last
    guard before a write replaces it (the commands check their outputs against every
    input up front)."""
    given = _inputs.read_input(path)
    if given is not None:
        raise ConfigError(f"{what}: is the same file as {given}, which the run reads; it is not replaced")


def within(inner: str, outer: str) -> bool:
    """``inner`` is ``outer`` or lies under it (both real paths)."""
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def real_folder(folder: Path, what: str, inputs: Iterable[str | Path] = ()) -> Path:
    """Where a run replacing ``folder`` whole puts it (through a link), after checking that
    the folder holds neither the working folder nor an input: one the command has read, or
    one of ``inputs``, which it reads later."""
    real = Path(os.path.realpath(folder))
    if within(os.path.realpath(os.getcwd()), str(real)):
        raise ConfigError(f"{what} {folder}: is the working folder or holds it; a run replaces its whole folder, "
                          f"so name a folder of its own (e.g. {what} out/run)")
    for given in (*_inputs.inputs_read().values(), *map(str, inputs)):
        if within(os.path.realpath(given), str(real)):
            raise ConfigError(f"{what} {folder}: holds {given}, which the run reads; a run replaces its whole "
                              f"folder, so name another folder")
    return real


def clear_of_run_folder(folder: Path, what: str, outputs: dict[str, Path], names: Iterable[str]) -> None:
    """Each of ``outputs`` (how a message names it -> path) kept clear of the run folder
    ``folder`` (``what``), which a run puts in place whole: it is not the folder, nor a
    folder the run folder goes in, nor inside a folder within it (swept away with the
    folder's old contents), nor one of the files ``names`` the run writes there. A file
    directly in the folder under another name is harmless: it is published with the run."""
    real = os.path.realpath(folder)
    written = set(names)
    for named, path in outputs.items():
        target = os.path.realpath(path)  # a link is written through: where it points counts
        if target == real:
            problem = "is the run folder"
        elif within(real, target):
            problem = "is a folder the run folder goes in"
        elif within(target, real) and os.path.dirname(target) != real:
            problem = "lies in a folder inside the run folder, which the run replaces whole"
        elif os.path.dirname(target) == real and os.path.basename(target) in written:
            problem = "is a file the run writes in the run folder"
        else:
            continue
        raise ConfigError(f"{named} {problem} ({what} {folder}); give another path")


def through_link(path: Path) -> Path:
    """The file a write to ``path`` replaces: the link's target when ``path`` is a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path
