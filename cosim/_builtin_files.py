"""A folder of built-in description files in the package's data (cosim/data/<folder>): its
names, and a reference's file, a built-in name or a user's YAML path."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from .errors import ConfigError


@dataclass(frozen=True)
class BuiltinFolder:
    folder: str  # under cosim/data
    what: str    # how errors name one (an architecture, an acceptance profile)

    def path(self) -> Path:
        return Path(str(resources.files("cosim") / "data" / self.folder))

    def names(self) -> list[str]:
        """The built-in ones, by file name."""
        return sorted(p.stem for p in self.path().glob("*.yaml"))

    def path_of(self, ref: str, beside: Path | None = None) -> Path:
        """A built-in name's file, or a YAML path (relative: from ``beside``)."""
        path = Path(ref)
        if path.suffix in (".yaml", ".yml"):
            return path if path.is_absolute() or beside is None else beside / path
        if ref not in self.names():
            raise ConfigError(f"unknown {self.what} {ref!r}; built-in: {', '.join(self.names())}")
        return self.path() / f"{ref}.yaml"
