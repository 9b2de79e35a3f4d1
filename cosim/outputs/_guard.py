"""What an output may name, beyond its own kind (cosim.outputs._safety): never a file the
command reads (every input is noted as it is read, cosim._inputs), and never a folder
that holds the working folder or an input, since a run's folder is replaced whole.

A link is written through: the output goes where it points, and the link stays.
"""

from __future__ import annotations

import os
from pathlib import Path

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


def _within(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)


def real_folder(folder: Path, what: str) -> Path:
    """Where a run replacing ``folder`` whole puts it (through a link), after checking that
    the folder holds neither the working folder nor an input the command reads."""
    real = Path(os.path.realpath(folder))
    if _within(os.path.realpath(os.getcwd()), str(real)):
        raise ConfigError(f"{what} {folder}: is the working folder or holds it; a run replaces its whole folder, "
                          f"so name a folder of its own (e.g. {what} out/run)")
    for given in _inputs.inputs_read().values():
        if _within(os.path.realpath(given), str(real)):
            raise ConfigError(f"{what} {folder}: holds {given}, which the run reads; a run replaces its whole "
                              f"folder, so name another folder")
    return real


def through_link(path: Path) -> Path:
    """The file a write to ``path`` replaces: the link's target when ``path`` is a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path
