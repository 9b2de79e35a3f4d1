"""Checks on a path that is to take an output, and the hidden names a command writing it
leaves beside it (a staging folder or file, an atomic write's temporary file, a partial
waveform) so that what a killed command left can be found and removed."""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

from .._inputs import file_kind
from ..errors import ConfigError

# An atomic write's temporary file: .NAME.tmp-PID-..., so that one a killed command left is known.
TEMPORARY = ".tmp-"
# A run's staging: .NAME.staging-PID-..., beside the folder or file it becomes.
STAGING = ".staging-"


def check_output(path: str | Path, what: str) -> Path:
    """``path`` can take an output: a regular file or nothing yet, not read-only, in a
    folder that exists or can be made. ConfigError naming ``what`` otherwise."""
    text = str(path)
    if not text.strip():
        raise ConfigError(f"{what}: give a file name")
    if text.endswith(os.sep):
        raise ConfigError(f"{what} {text}: names a folder; name a file")
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot use it: {exc.strerror}") from None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"{what} {path}: is {file_kind(info.st_mode, fifo='a FIFO')}; name a regular file")
        if not info.st_mode & 0o222:
            raise ConfigError(f"{what} {path}: is read-only; it is not replaced")
    parent = path.parent
    if parent.exists() and not parent.is_dir():
        raise ConfigError(f"{what} {path}: {parent} is not a folder")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def staging_prefix(path: Path) -> str:
    return f".{path.stem if path.suffix else path.name}{STAGING}"


def _stale_names(path: Path) -> re.Pattern[str]:
    """The hidden names a command writing ``path`` leaves if it is killed, with the
    command's process id: its staging (a folder, or a file beside ``path``), the partial
    waveform SystemC writes (of the staged name too) and an atomic write's temporary file."""
    stem = re.escape(path.stem if path.suffix else path.name)
    return re.compile(rf"^(?:\.\.?{stem}(?:{re.escape(STAGING)}|\.partial-)|\.{re.escape(path.name)}"
                      rf"{re.escape(TEMPORARY)})(\d+)")


def clean_stale_staging(path: Path) -> None:
    """Removes what commands that are gone staged for ``path`` (a folder or a file)."""
    parent, names = path.parent, _stale_names(path)
    if not parent.is_dir():
        return
    for entry in parent.iterdir():
        match = names.match(entry.name)
        if match is None:
            continue
        pid = int(match.group(1))
        if _alive(pid) and pid != os.getpid():
            continue  # another command is writing it now
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
