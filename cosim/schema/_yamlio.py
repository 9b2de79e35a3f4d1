"""YAML loading that remembers where every key came from (file and line),
so that configuration errors can name the file, line and field."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .. import _inputs
from ..errors import ConfigError


@dataclass(frozen=True)
class Where:
    """A place in a configuration: file, line (1-based, if known), dotted field path."""

    file: str
    line: int | None
    path: str
    # How the value given here is cited (cosim.schema._params.Cited), where it is a cited value.
    cited: Any = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line else self.file
        if not place:
            return self.path
        return f"{place}: {self.path}" if self.path else place

    def child(self, key: str | int, line: int | None) -> Where:
        if isinstance(key, int):
            path = f"{self.path}[{key}]"
        else:
            path = f"{self.path}.{key}" if self.path else key
        return Where(self.file, line or self.line, path)


class LocatedDict(dict):
    """A mapping from YAML with the line of each key."""

    def __init__(self, items: dict, where: Where, lines: dict[str, int]):
        super().__init__(items)
        self.where = where
        self.lines = lines

    def where_of(self, key: str) -> Where:
        return self.where.child(key, self.lines.get(key))


class LocatedList(list):
    def __init__(self, items: list, where: Where, lines: list[int]):
        super().__init__(items)
        self.where = where
        self.lines = lines

    def where_of(self, index: int) -> Where:
        return self.where.child(index, self.lines[index] if index < len(self.lines) else None)


class _Builder(yaml.SafeLoader):
    scalar_keys = False


def _convert(node: yaml.Node, loader: _Builder, where: Where, memo: dict[int, Any] | None = None) -> Any:
    # An alias is the same node again: convert it once (an alias bomb stays linear) and
    # refuse a node that contains itself.
    memo = {} if memo is None else memo
    key = id(node)
    if key in memo:
        if memo[key] is _IN_PROGRESS:
            raise ConfigError(f"{where}: a YAML alias refers to a node that contains it")
        return memo[key]
    if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
        if where.path.count(".") + where.path.count("[") >= MAX_DEPTH:
            raise ConfigError(f"{where}: nested deeper than {MAX_DEPTH} levels; no configuration is")
        memo[key] = _IN_PROGRESS
    memo[key] = value = _convert_node(node, loader, where, memo)
    return value


MAX_DEPTH = 32


_IN_PROGRESS = object()


def _convert_node(node: yaml.Node, loader: _Builder, where: Where, memo: dict[int, Any]) -> Any:
    if isinstance(node, yaml.MappingNode):
        items: dict[str, Any] = {}
        lines: dict[str, int] = {}
        loader.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str) and loader.scalar_keys and isinstance(key, int | float) \
                    and not isinstance(key, bool):
                key = str(key)  # a file of another tool's keyed by number (LLMServingSim's per_tp: 1:)
            if not isinstance(key, str):
                raise ConfigError(f"{where.file}:{line}: {where.path or 'top level'}: key {key!r} is not a name")
            if key in items:
                raise ConfigError(f"{where.file}:{line}: {where.child(key, line).path}: duplicate key")
            lines[key] = line
            items[key] = _convert(value_node, loader, where.child(key, line), memo)
        return LocatedDict(items, where, lines)
    if isinstance(node, yaml.SequenceNode):
        values, lines = [], []
        for i, item in enumerate(node.value):
            line = item.start_mark.line + 1
            lines.append(line)
            values.append(_convert(item, loader, where.child(i, line), memo))
        return LocatedList(values, where, lines)
    return loader.construct_object(node, deep=True)


def load_yaml_text(text: str, file: str, scalar_keys: bool = False) -> Any:
    """``scalar_keys``: a number as a mapping's key is taken as its text (files of other
    tools); otherwise a key that is not a name is an error."""
    loader = _Builder(text)
    loader.scalar_keys = scalar_keys
    try:
        node = loader.get_single_node()
        if node is None:
            raise ConfigError(f"{file}: the file is empty")
        return _convert(node, loader, Where(file, node.start_mark.line + 1, ""))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1}" if mark else ""
        context = ""
        if exc.context and exc.context_mark and exc.context_mark is not mark:
            context = f" ({exc.context} on line {exc.context_mark.line + 1})"
        raise ConfigError(f"{file}{line}: YAML syntax error: {_unquoted(exc.problem or 'not YAML')}{context}") \
            from None
    except yaml.YAMLError:
        raise ConfigError(f"{file}: not YAML") from None
    except RecursionError:
        raise ConfigError(f"{file}: nested too deeply to be a configuration") from None
    finally:
        loader.dispose()


def _unquoted(problem: str) -> str:
    """PyYAML's problem without what it quotes from the file (an alias, a tag), past four
    characters: a message does not show what a file holds."""
    return re.sub(r"'[^']{5,}'", "(not shown)", problem)


def load_yaml(path: str | Path, scalar_keys: bool = False) -> Any:
    return load_yaml_text(_inputs.read_text(path, _inputs.MAX_YAML_BYTES), str(path), scalar_keys)


def locate(data: Any, file: str = "<dict>", path: str = "") -> Any:
    """Wraps plain Python data (built in code) so that it loads like a file."""
    where = Where(file, None, path)
    if isinstance(data, LocatedDict | LocatedList):
        return data
    if isinstance(data, dict):
        return LocatedDict({k: locate(v, file, where.child(k, None).path) for k, v in data.items()}, where, {})
    if isinstance(data, list):
        return LocatedList([locate(v, file, where.child(i, None).path) for i, v in enumerate(data)], where, [])
    return data
