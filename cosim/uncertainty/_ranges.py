"""The plausible ranges parameters declare: beside a value in a device, link, model or
profile file (``{value: 30 ms, estimate: "...", range: [15 ms, 50 ms]}``), or beside a
default in its declaration (``param(..., note="estimate: ...", range=(32, 128))``).
Every estimate of the shipped data and declarations declares one (``range_problems``
lists those that do not, each as one line naming the file, line and parameter)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
from pathlib import Path
from typing import Any, Iterator

from ..config import hardware
from ..schema import _declarations, _params
from ..schema._params import Cited
from ..errors import ConfigError
from ..config.scenario import builtin_scenarios, load_scenario
from ..trace import builtin_profiles, load_profile

# The modules whose configuration classes declare parameters (param() or the declarations).
DECLARING_MODULES = ("cosim.config.hardware", "cosim.config.scenario", "cosim.config._cluster",
                     "cosim.trace._profiles")


def cited_values(config: Any, prefix: str = "") -> Iterator[tuple[str, Any, str, Cited]]:
    """(dotted path, the configuration object, its field, how it is cited) for every cited
    parameter under ``config``, groups included."""
    cited = _params.citations(config)
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            yield from cited_values(value, f"{prefix}{f.name}.")
        elif f.name in cited:
            yield f"{prefix}{f.name}", config, f.name, cited[f.name]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shipped_configs() -> Iterator[tuple[str, Any]]:
    """Every shipped description, loaded (a load error is a problem too)."""
    loaders = {"device": hardware.load_device, "link": hardware.load_link, "model": hardware.load_model}
    for what, load in loaders.items():
        for name in hardware.builtin_names(what):
            yield str(hardware.builtin_path(what, name)), lambda load=load, name=name: load(name)
    for name in builtin_profiles():
        yield f"profile {name}", lambda name=name: load_profile(name)
    for name in builtin_scenarios():
        def roles(name: str = name) -> Any:
            scn = load_scenario(name)
            return [getattr(getattr(scn, r), p) for r in ("draft", "prm", "target") for p in ("device", "link",
                                                                                              "model")]
        yield f"scenario {name}", roles


def missing_range(place: str, kind: str = "file") -> str:
    fix = ("add range: [LOW, HIGH] beside its value, in the value's unit" if kind == "file"
           else "add range=(LOW, HIGH) to its declaration")
    return f"{place}: an estimate without a plausible range; {fix}"


def range_problems() -> list[str]:
    """One line per estimate of the shipped data or the declarations without a range, or with a
    range that is not a range of its value (the files' loader refuses those as it reads them)."""
    problems: list[str] = []
    seen: set[str] = set()
    for label, load in _shipped_configs():
        try:
            configs = load()
        except ConfigError as exc:
            problems.append(str(exc))
            continue
        for config in configs if isinstance(configs, list) else [configs]:
            for path, owner, name, cited in cited_values(config):
                place = _params.origin(owner, name) or f"{label}: {path}"
                if place in seen:
                    continue
                seen.add(place)
                if cited.kind == "estimate" and cited.range is None and is_number(getattr(owner, name)) \
                        and _params.origin(owner, name):
                    problems.append(missing_range(place))
    return problems + declaration_problems()


def declaring_classes() -> list[type]:
    classes = []
    for module_name in DECLARING_MODULES:
        module = importlib.import_module(module_name)
        for obj in vars(module).values():
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == module_name \
                    and any("help" in f.metadata for f in dataclasses.fields(obj)):
                classes.append(obj)
    return classes


def _declared_at(cls: type, name: str) -> str:
    """file:line of a parameter's declaration (the declarations list for generated classes)."""
    if cls.__name__ in {group.python for group in _declarations.GROUPS}:
        source, needle = _declarations, f'"{name}"'
    else:
        source, needle = inspect.getmodule(cls), f"    {name}:"
    lines, _ = inspect.getsourcelines(source)
    file = Path(inspect.getsourcefile(source) or "?")
    for number, line in enumerate(lines, 1):
        if needle in line:
            return f"{file}:{number}: {cls.__name__}.{name}"
    return f"{file}: {cls.__name__}.{name}"


def declaration_problems(classes: list[type] | None = None) -> list[str]:
    """Declared defaults that are estimates without a range, or with a range that is reversed, not
    finite, breaks the parameter's rule or leaves out the default."""
    problems = []
    for cls in classes if classes is not None else declaring_classes():
        for f in dataclasses.fields(cls):
            note, bounds = f.metadata.get("note", ""), f.metadata.get("range")
            default = f.default
            if bounds is None:
                if note.startswith("estimate:") and is_number(default):
                    problems.append(missing_range(_declared_at(cls, f.name), "declaration"))
                continue
            place = _declared_at(cls, f.name)
            problem = _bad_range(bounds, default, f.metadata.get("rule", "any"))
            if problem:
                problems.append(f"{place}: range {bounds!r} {problem}")
    return problems


def _bad_range(bounds: Any, value: Any, rule: str) -> str:
    """What is wrong with a declared range, or ""."""
    if not isinstance(bounds, tuple | list) or len(bounds) != 2 or not all(is_number(b) for b in bounds):
        return "is not (low, high)"
    low, high = bounds
    if not (math.isfinite(low) and math.isfinite(high)):
        return "is not finite"
    if low >= high:
        return "is reversed or empty; give (low, high) with low < high"
    check, text = _params.RULES[rule]
    if not (check(low) and check(high)):
        return f"breaks the parameter's rule ({text})"
    if not is_number(value):
        return f"is on a parameter that is not a number (default {value!r})"
    if not low <= value <= high:
        return f"does not contain the default {value!r}"
    return ""
