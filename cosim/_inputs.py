"""Reading a user's input files, all through here: regular files (a trace may also be a
pipe) of bounded size, as UTF-8 text, with errors that name the file and line and never
quote what the file holds; and a note of every file a command reads, so that none of its
outputs can replace one.

A device (``/dev/zero`` reads forever) or a FIFO where a file is read more than once is
refused before a byte is read; a pipe given as a trace is read line by line, each line
bounded. A file past its bound is refused by its size before it is read.
"""

from __future__ import annotations

import contextlib
import csv
import os
import stat
from pathlib import Path
from typing import BinaryIO, Iterator

from .errors import ConfigError

# Bounds, far above any real input and far below what would exhaust memory or time.
# The shipped configurations are under 6 kB, and the YAML loader (which keeps every key's
# line) reads tens of kB a second: 1 MiB is some 170 times the largest, read in under a
# minute.
MAX_YAML_BYTES = 1 << 20
# A measured profile's row is about 40 bytes: 256 MiB is millions of measured points.
MAX_TABLE_BYTES = 256 << 20
# One CSV line holds a handful of numbers; 64 KiB is a thousand times that.
MAX_TABLE_LINE = 64 << 10
# A dataset, a recorded log or model outputs read whole (JSON Lines).
MAX_DATA_BYTES = 1 << 30
# One line of a trace: about 90 bytes an event, so 64 MiB is some 700,000 events, far past
# the steps any context window holds.
MAX_LINE_BYTES = 64 << 20

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
_UTF8_BOM = b"\xef\xbb\xbf"


def file_kind(mode: int, fifo: str = "a FIFO or pipe") -> str:
    """What a path that is not a regular file is, for a refusal: "a folder", "a device"...
    ``fifo`` names a FIFO (an output path cannot be an anonymous pipe, an input can)."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISFIFO, fifo), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _size_text(limit: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if limit >= size and limit % size == 0:
            return f"{limit // size} {unit}"
    return f"{limit} bytes"


# ---- what a command read -------------------------------------------------------------

_recordings: list[dict[tuple[int, int], str]] = []
# Files a run wrote and reads back (a live run's made trace): its own outputs, not inputs.
_own: set[tuple[int, int]] = set()


@contextlib.contextmanager
def recording() -> Iterator[dict[tuple[int, int], str]]:
    """Notes every input read under it: (device, inode) -> the path as it was given."""
    seen: dict[tuple[int, int], str] = {}
    _recordings.append(seen)
    try:
        yield seen
    finally:
        _recordings.remove(seen)
        if not _recordings:
            _own.clear()


def own_output(path: str | Path) -> None:
    """``path`` is a file the run itself wrote: reading it back does not make it an input,
    so a later write of the run may replace it."""
    try:
        info = os.stat(path)
    except OSError:
        return
    key = (info.st_dev, info.st_ino)
    _own.add(key)
    for seen in _recordings:
        seen.pop(key, None)


def note(path: str | Path, info: os.stat_result | None = None) -> None:
    """``path`` is an input of the commands recording now."""
    if not _recordings:
        return
    try:
        info = info or os.stat(path)
    except OSError:
        return
    if (info.st_dev, info.st_ino) in _own:
        return
    for seen in _recordings:
        seen.setdefault((info.st_dev, info.st_ino), str(path))


def inputs_read() -> dict[tuple[int, int], str]:
    """The inputs the commands recording now have read so far."""
    merged: dict[tuple[int, int], str] = {}
    for seen in _recordings:
        for key, path in seen.items():
            merged.setdefault(key, path)
    return merged


def read_input(path: str | Path) -> str | None:
    """The path of an input already read that ``path`` names (the same file by identity),
    or None."""
    try:
        info = os.stat(os.path.realpath(path))  # a folder named on the way need not exist yet
    except OSError:
        return None
    return inputs_read().get((info.st_dev, info.st_ino))


# ---- opening and reading -------------------------------------------------------------

def open_input(path: str | Path, *, limit: int | None = None, streams: bool = False) -> BinaryIO:
    """``path`` open for reading in binary: a regular file (not past ``limit`` bytes), or
    with ``streams``, a pipe too. ConfigError naming the file otherwise."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if stat.S_ISFIFO(info.st_mode) and streams and _anonymous_pipe(path):
        flags = os.O_RDONLY | os.O_CLOEXEC  # a pipe a writer already holds (/dev/stdin, <(...))
    elif stat.S_ISFIFO(info.st_mode) and streams:
        # A named FIFO may have no writer yet, and reading it would wait for one forever.
        raise ConfigError(f"{path}: is a named FIFO; give a regular file, or pipe it in (/dev/stdin)")
    elif not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: is {file_kind(info.st_mode)}; give a regular file")
    else:
        # Not blocking: if it was swapped for a FIFO since the look above, open does not wait.
        flags = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    info = os.fstat(fd)
    regular = stat.S_ISREG(info.st_mode)
    if not regular and not (streams and stat.S_ISFIFO(info.st_mode)):
        os.close(fd)
        raise ConfigError(f"{path}: is {file_kind(info.st_mode)}; give a regular file")
    if regular and limit is not None and info.st_size > limit:
        os.close(fd)
        raise ConfigError(f"{path}: {info.st_size} bytes, past the {_size_text(limit)} this input may hold")
    if regular:
        os.set_blocking(fd, True)
    note(path, info)
    return os.fdopen(fd, "rb")


def _anonymous_pipe(path: Path) -> bool:
    """A pipe with no name in a file system (/dev/stdin, /dev/fd/N of a shell's <(...))."""
    return os.path.basename(os.path.realpath(path)).startswith("pipe:[")


def _bom(raw: bytes) -> str | None:
    for mark, name in _BOMS:
        if raw.startswith(mark):
            return name
    return None


def decode(raw: bytes, path: str | Path, line: int | None = None, offset: int = 0) -> str:
    """UTF-8 text; ConfigError naming the file (and line) otherwise, saying when it is
    UTF-16 or UTF-32 text, without quoting it."""
    at = f"{path}:{line}" if line else f"{path}"
    if offset == 0:
        name = _bom(raw)
        if name is not None:
            raise ConfigError(f"{path}: {name} text (it starts with a {name} byte-order mark); save it as UTF-8")
        if raw.startswith(_UTF8_BOM):
            raw = raw[len(_UTF8_BOM):]
            offset = len(_UTF8_BOM)
    if b"\x00" in raw:  # valid UTF-8, but no text input holds it
        if raw.count(b"\x00") * 4 >= len(raw):
            raise ConfigError(f"{at}: not UTF-8 text (NUL bytes between the characters: UTF-16 text without a "
                              f"byte-order mark?); save it as UTF-8")
        nul = offset + raw.index(b"\x00")
        raise ConfigError(f"{at}: not text (a NUL byte at byte {nul})")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{at}: not UTF-8 text ({exc.reason} at byte {offset + exc.start})") from None


def read_text(path: str | Path, limit: int = MAX_DATA_BYTES) -> str:
    """The whole text of a regular file of at most ``limit`` bytes."""
    with open_input(path, limit=limit) as handle:
        try:
            raw = handle.read(limit + 1)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > limit:  # grew since it was opened
        raise ConfigError(f"{path}: past the {_size_text(limit)} this input may hold")
    return decode(raw, path)


def read_lines(handle: BinaryIO, path: str | Path, limit: int = MAX_LINE_BYTES
               ) -> Iterator[tuple[int, int, bytes]]:
    """(line number, byte offset, raw line) of an open file, each line at most ``limit``
    bytes: a longer one (an endless stream without a newline) is an error naming the line."""
    offset = 0
    number = 0
    while True:
        try:
            raw = handle.readline(limit + 1)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
        if not raw:
            return
        number += 1
        if len(raw) > limit:
            raise ConfigError(f"{path}:{number}: the line is longer than {_size_text(limit)}, the most a line of "
                              f"this input may hold")
        yield number, offset, raw
        offset += len(raw)


def text_lines(path: str | Path, *, limit: int = MAX_TABLE_BYTES, line_limit: int = MAX_TABLE_LINE
               ) -> Iterator[tuple[int, str]]:
    """(line number, text) of a regular text file, bounded in size and line length."""
    with open_input(path, limit=limit) as handle:
        for number, offset, raw in read_lines(handle, path, line_limit):
            yield number, decode(raw, path, number, offset)


def csv_records(path: str | Path, *, limit: int = MAX_TABLE_BYTES) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) of a CSV file, one record a line; bad CSV (a NUL byte, an
    unclosed quote) is an error naming the line."""
    for number, text in text_lines(path, limit=limit):
        body = text.rstrip("\r\n")
        # A line without quotes or carriage returns splits as the csv module would split it,
        # many times faster: measured tables are millions of such lines.
        if '"' not in body and "\r" not in body:
            yield number, body.split(",") if body else []
            continue
        try:
            records = list(csv.reader([text]))
        except csv.Error as exc:
            raise ConfigError(f"{path}:{number}: not a CSV line ({exc})") from None
        yield number, records[0] if records else []


def peek_line(path: str | Path, limit: int = MAX_TABLE_LINE) -> str | None:
    """The first line of a regular file (at most ``limit`` bytes), or None when it cannot be
    read as such: a cheap look at what a file is."""
    try:
        with open_input(path) as handle:
            raw = handle.readline(limit)
    except (ConfigError, OSError):
        return None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None

