"""Writing result files atomically: a reader (or a crash) never sees half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import IO, Callable

from ..errors import ConfigError, OutputError
from ._guard import refuse_input, through_link
from ._paths import TEMPORARY, check_output, clean_stale_staging

# The process's umask, read once (reading it means setting it): files made through
# mkstemp or opened for streaming get the mode an ordinary open() would give them.
UMASK = os.umask(0)
os.umask(UMASK)


def write_atomically(path: str | Path, write: Callable[[IO[str]], None] | str | bytes) -> Path:
    """Writes ``path`` through a temporary file in the same folder, then renames it.

    ``write`` is the whole text (or bytes), or a function that writes to the open text handle.
    """
    path = through_link(Path(path))  # a link is written through, and stays
    refuse_input(path, str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_staging(path)  # what a killed command left writing it
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}{TEMPORARY}{os.getpid()}-", dir=path.parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o666 & ~UMASK)
        if isinstance(write, bytes):
            with os.fdopen(fd, "wb") as raw:
                raw.write(write)
                raw.flush()
                os.fsync(raw.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                if isinstance(write, str):
                    handle.write(write)
                else:
                    write(handle)
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"{path}: writing failed: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def writable_folder(folder: str | Path, what: str) -> Path:
    """Creates ``folder`` if needed and checks that files can be written in it;
    ConfigError naming ``what`` (an option or parameter) otherwise."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{what} {folder}: cannot create it: {exc.strerror}") from None
    try:
        fd, probe = tempfile.mkstemp(prefix=".cosim-write-test.", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigError(f"{what} {folder}: not writable: {exc.strerror}") from None
    return folder


def writable_file(path: str | Path, what: str) -> Path:
    """``path`` can take an output (cosim.outputs._paths.check_output: a regular file or nothing
    yet, not read-only) in a folder files can be written to."""
    path = check_output(path, what)
    writable_folder(path.parent, f"{what} {path}: the folder")
    return path
