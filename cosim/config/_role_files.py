"""A scenario with a role's files swapped (``--set target.model=FILE``): the device, model,
link or measured profile of the draft, PRM or target given as the scenario file would give
it, so it is loaded and checked exactly as the file's own (a built-in name or a YAML path,
every input recorded), and errors name the option that gave it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..schema._yamlio import LocatedDict, Where
from .scenario import Scenario, build_scenario, scenario_data

ROLES = ("draft", "prm", "target")
# What a role of a scenario file names by file: everything else in it is a parameter.
ROLE_FILES = ("device", "model", "link", "profile", "peer_link")


def role_file(path: str) -> tuple[str, str] | None:
    """(role, key) when ``path`` swaps a role's file (``target.model``), else None."""
    role, sep, key = path.partition(".")
    return (role, key) if sep and role in ROLES and key in ROLE_FILES else None


class _Given(LocatedDict):
    """A role's mapping with keys given elsewhere than its file, each named as it was given."""

    def __init__(self, items: dict, where: Where, lines: dict[str, int], given_as: dict[str, str]):
        super().__init__(items, where, lines)
        self.given_as = given_as

    def where_of(self, key: str) -> Where:
        if key in self.given_as:
            return Where(self.given_as[key], None, "")
        return super().where_of(key)


def _from_here(key: str, value: str) -> Any:
    """A path given on the command line is taken from the working folder, not from the
    scenario's, where a scenario file's own relative paths are taken from: a file as a Path
    (a scenario takes a Path as it is, and errors name it as given), a profile (which a
    scenario takes as text) made absolute. A built-in name stays text."""
    path = Path(value).expanduser()
    if path.is_absolute() or not (path.suffix in (".yaml", ".yml") or path.exists() or key == "profile"):
        return value
    return os.path.abspath(path) if key == "profile" else path


def with_role_files(ref: str | Path, config: int | None, files: list[tuple[str, str, str]]) -> Scenario:
    """Scenario ``ref`` with each (path, value, given as) of ``files`` swapped in: the value
    is text, a built-in name or a path from the working folder."""
    data, source = scenario_data(ref)
    roles: dict[str, Any] = dict(data)
    for path, value, label in files:
        found = role_file(path)
        assert found is not None, path
        role, key = found
        given = roles.get(role)
        if given is not None and not isinstance(given, dict):
            continue  # not a mapping: the scenario's own error, named at its line
        where = given.where if isinstance(given, LocatedDict) else data.where.child(role, data.lines.get(role))
        lines = dict(getattr(given, "lines", {}))
        labels = dict(getattr(given, "given_as", {}))
        labels[key] = label
        roles[role] = _Given({**(given or {}), key: _from_here(key, value)}, where, lines, labels)
    return build_scenario(LocatedDict(roles, data.where, data.lines), str(source), config)
