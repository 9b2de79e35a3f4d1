"""Where each number of a built-in description comes from, as `cosim builtins --sources`
prints it: every value of the file with its source or its estimate and declared range,
read from the file itself, so the listing is the citation and cannot drift from it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..devices import _architecture as architectures
from ..errors import ConfigError
from ..schema._params import CITATION_KEYS, RANGE_KEY
from ..schema._yamlio import load_yaml
from .hardware import builtin_names, builtin_path

WHATS = ("device", "link", "model", "architecture")


@dataclass(frozen=True)
class CitedValue:
    key: str          # dotted: accelerator.clock
    value: str        # as the file writes it: 300 MHz
    kind: str         # source, estimate, or given (a plain value: a name, a link)
    note: str         # the source or the estimate's reasoning
    range: str = ""   # the declared plausible range, as written


def _text(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _walk(data: Any, prefix: str, out: list[CitedValue]) -> None:
    for key, raw in data.items():
        name = f"{prefix}{key}"
        if isinstance(raw, dict) and "value" in raw:
            kind = next((k for k in CITATION_KEYS if k in raw), "given")
            out.append(CitedValue(name, _text(raw["value"]), kind, str(raw.get(kind, "")),
                                  _text(raw[RANGE_KEY]) if RANGE_KEY in raw else ""))
        elif isinstance(raw, dict):
            _walk(raw, f"{name}.", out)
        elif key != "kind":
            out.append(CitedValue(name, _text(raw), "given", ""))


def _inherited(data: Any, out: list[CitedValue]) -> None:
    """A GPU's values it takes from its architecture (those its own file leaves out)."""
    ref = data.get("architecture") if isinstance(data, dict) else None
    if not ref:
        return
    own = set(data.get("gpu") or {})
    taken: list[CitedValue] = []
    _walk({"gpu": {k: v for k, v in architectures.load(ref)["gpu"].items() if k not in own}}, "", taken)
    out += [CitedValue(v.key, v.value, v.kind, f"(from the {ref} architecture) {v.note}", v.range) for v in taken]


def find(name: str) -> tuple[str, list[CitedValue]]:
    """What ``name`` is (device, link, model or GPU architecture) and its values with their
    citations; a GPU's include those it takes from its architecture."""
    for what in WHATS:
        known = architectures.names() if what == "architecture" else builtin_names(what)
        if name in known:
            out: list[CitedValue] = []
            data = load_yaml(architectures.path_of(name) if what == "architecture" else builtin_path(what, name))
            _walk(data, "", out)
            if what == "device":
                _inherited(data, out)
            return what, out
    raise ConfigError(f"--sources: no built-in device, link, model or architecture named {name!r} "
                      f"(cosim builtins lists them)")


def counts(values: list[CitedValue]) -> dict[str, int]:
    """How many values cite a source and how many are estimates."""
    return {kind: sum(v.kind == kind for v in values) for kind in CITATION_KEYS}
