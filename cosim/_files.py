"""Reading a user's text file, with errors that name it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ConfigError


def read_text(path: str | Path) -> str:
    """The file's text; ConfigError naming the file if it is missing, unreadable or not UTF-8."""
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def parse_json_line(line: str, where: str, error: type[ConfigError] = ConfigError) -> Any:
    """One JSON Lines record; ``error`` naming ``where`` (file:line) if it is not usable JSON."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:  # absurd integers, absurd nesting
        raise error(f"{where}: not a usable JSON line ({type(exc).__name__})") from None
