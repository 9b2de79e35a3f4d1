"""Outputs that never destroy inputs or each other, and a run's outputs published as one unit.

One rule for every file a command writes, checked before any work: it is not the same
file as any input or as another output (by identity, so links and other spellings are
caught), it is a regular file or does not exist yet, and it is not read-only. A run's
files are written into a hidden staging folder beside its output folder and published
by exchanging the two folders in one atomic rename, so the folder always holds one whole
run: the new one or the previous one. A manifest names the run, what it was made from and
every file it wrote. Staging left behind by a killed command is removed at the next start.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from pathlib import Path
from typing import Any, Iterable, Iterator

from ._atomic import write_atomically
from ._guard import read_inputs, real_folder, refuse_input, through_link
from ._paths import clean_stale_staging, staging_prefix
from ..errors import ConfigError, CosimError, OutputError

MANIFEST = "manifest.json"


def _identity(path: Path) -> tuple[Any, ...]:
    """What makes two paths the same file: device and inode when it exists, else the
    real path (links resolved)."""
    real = os.path.realpath(path)  # a folder named on the way need not exist yet
    try:
        info = os.stat(real)
        return ("inode", info.st_dev, info.st_ino)
    except OSError:
        return ("path", real)


def check_distinct(outputs: dict[str, Path], inputs: dict[str, Path]) -> None:
    """No output is an input or another output (``what`` -> path each)."""
    seen: dict[tuple[Any, ...], str] = {}
    for what, path in inputs.items():
        seen.setdefault(_identity(Path(path)), what)
    for key, label in read_inputs().items():  # every file read so far: YAMLs, profiles, ...
        seen.setdefault(key, label)
    for what, path in outputs.items():
        key = _identity(Path(path))
        if key in seen:
            named = what if what.endswith(str(path)) else f"{what} {path}"
            raise ConfigError(f"{named}: is the same file as {seen[key]}; it would be overwritten")
        seen[key] = what


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# renameat2(2) with RENAME_EXCHANGE swaps two paths atomically (Linux 3.15, glibc 2.28).
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _exchange(a: Path, b: Path) -> bool:
    """Swaps two folders in one step; False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


class RunFolder:
    """The output folder of one run: its files are written under ``staged(name)`` and
    appear in ``folder`` together, with a manifest, when ``publish`` is called."""

    def __init__(self, folder: str | Path, what: str = "--out"):
        self.folder = Path(folder)  # as given: what messages name
        self.what = what
        self.run_id = uuid.uuid4().hex[:12]
        if self.folder.exists() and not self.folder.is_dir():
            raise ConfigError(f"{what} {self.folder}: is a file; name a folder")
        # Where the run goes: through a link (the link stays); never the working folder.
        self.real = real_folder(self.folder, what)
        clean_stale_staging(self.real)
        self._check_owned()
        try:
            self.real.parent.mkdir(parents=True, exist_ok=True)
            self.staging = self.real.parent / f"{staging_prefix(self.real)}{os.getpid()}-{self.run_id}"
            self.staging.mkdir()
        except OSError as exc:
            raise ConfigError(f"{what} {self.folder}: cannot create it: {exc.strerror}") from None
        self._external: dict[Path, Path] = {}  # final path outside the folder -> its staged path
        self._shown: dict[Path, Path] = {}  # final path -> the path as given (a link's target differs)
        self.aliases: dict[str, str] = {}  # a file written under one name and published under another

    def _check_owned(self) -> None:
        """A folder this replaces holds only what an earlier run wrote (its manifest says
        what): a user's own files are never swept away."""
        if not self.real.is_dir():
            return
        present = {p.name for p in self.real.iterdir()}
        if not present:
            return
        try:
            listed = set(json.loads((self.real / MANIFEST).read_text())["files"]) | {MANIFEST}
        except (OSError, ValueError, KeyError, TypeError):
            raise ConfigError(f"{self.what} {self.folder}: holds files that no cosim run wrote there (no "
                              f"{MANIFEST}); name an empty folder or an earlier run's folder") from None
        extra = sorted(present - listed)
        if extra:
            raise ConfigError(f"{self.what} {self.folder}: holds {extra[0]!r}, which the earlier run did not write; "
                              f"name another folder")

    def inside(self, path: Path) -> bool:
        return os.path.realpath(path.parent) == str(self.real)

    def staged(self, name: str | Path) -> Path:
        """Where to write output ``name``: a file name (a str) in the folder, or a path (a
        Path, relative to the working folder) anywhere, written beside its final place and
        renamed there at publication unless it is in the folder."""
        path = Path(name)
        if (isinstance(name, str) and len(path.parts) == 1) or self.inside(path):
            return self.staging / path.name
        final = through_link(path)  # a link is written through, and stays
        if final not in self._external:
            clean_stale_staging(final)
            # The suffix stays last: writers that add one (SystemC adds .vcd) keep the name.
            self._external[final] = final.with_name(f"{staging_prefix(final)}{os.getpid()}-{self.run_id}"
                                                    f"{final.suffix}")
            self._shown[final] = path
        return self._external[final]

    def shown(self, message: str) -> str:
        """``message`` naming the paths as the user gave them, not where they are staged."""
        for final, staged in self._external.items():
            given = str(self._shown.get(final, final))
            # SystemC's partial waveform of the staged name first, then the staged name itself.
            partial = re.escape(str(staged.with_name("." + staged.stem))) + r"\.partial-\d+" + re.escape(staged.suffix)
            message = re.sub(partial, lambda _: given, message)
            message = message.replace(str(staged), given)
        for written, name in self.aliases.items():
            message = message.replace(str(self.staging / written), str(self.folder / name))
        message = message.replace(str(self.staging), str(self.folder))
        return message.replace(str(self.real), str(self.folder))

    def staged_beside(self, staged: Path, name: Path) -> Path:
        """Output ``name`` staged beside the staged file ``staged``, under its own suffix:
        a waveform's save file, which the waveform's writer puts there."""
        final = through_link(name)
        self._external[final] = staged.with_suffix(name.suffix)
        self._shown[final] = name
        return self._external[final]

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Errors under it name the final paths, not the staged ones."""
        try:
            yield
        except CosimError as exc:
            message = self.shown(str(exc))
            if message == str(exc):
                raise
            try:
                renamed = type(exc)(message)
            except Exception:  # noqa: BLE001 - a class that takes other arguments keeps its text
                raise exc from None
            raise renamed from None

    def publish(self, made_from: dict[str, Any]) -> Path:
        """Writes the manifest and puts the run in place in one step; the previous run's
        files go with the staging folder."""
        for final in self._external:  # the last guard: nothing replaces an input
            refuse_input(final, str(self._shown.get(final, final)))
        files = {p.name: {"bytes": p.stat().st_size, "sha256": file_digest(p)}
                 for p in sorted(self.staging.iterdir()) if p.is_file()}
        external = {str(final): file_digest(staged) for final, staged in self._external.items() if staged.exists()}
        manifest = {"run_id": self.run_id, "written": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **made_from,
                    "files": files, "elsewhere": external}
        write_atomically(self.staging / MANIFEST, json.dumps(manifest, indent=1, default=str))
        try:
            if self.real.exists():
                if not _exchange(self.staging, self.real):
                    old = self.staging.with_name(self.staging.name + "-old")
                    os.replace(self.real, old)  # no atomic exchange here: a moment without the folder
                    os.replace(self.staging, self.real)
                    self.staging = old
            else:
                os.replace(self.staging, self.real)
            for final, staged in self._external.items():
                if staged.exists():
                    os.replace(staged, final)
        except OSError as exc:
            raise OutputError(f"{self.what} {self.folder}: publishing the run failed: {exc.strerror}") from None
        finally:
            self.discard()
        return self.folder

    def discard(self) -> None:
        """Removes what is staged (after publication: the previous run's files)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        for staged in self._external.values():
            staged.unlink(missing_ok=True)


def inputs_of(paths: Iterable[tuple[str, Any]]) -> dict[str, Path]:
    """The inputs given (``what``, path or None) as a dict for check_distinct."""
    return {what: Path(p) for what, p in paths if p is not None}
