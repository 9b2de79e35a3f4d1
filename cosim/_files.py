"""Reading a user's text file, with errors that name it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import _inputs
from .errors import ConfigError


def read_text(path: str | Path, limit: int = _inputs.MAX_DATA_BYTES) -> str:
    """The file's text; ConfigError naming the file if it is missing, unreadable, not a
    regular file, past ``limit`` bytes or not UTF-8 (cosim._inputs)."""
    return _inputs.read_text(path, limit)


def parse_json_line(line: str, where: str, error: type[ConfigError] = ConfigError) -> Any:
    """One JSON Lines record; ``error`` naming ``where`` (file:line) if it is not usable JSON."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # absurd integers, absurd nesting
        raise error(f"{where}: not a usable JSON line ({type(exc).__name__})") from None
