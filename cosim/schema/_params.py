"""Typed parameters: each configuration dataclass declares every parameter once,
with its unit (in the name), help text and rule; `build` turns a located YAML
mapping into that dataclass or raises ConfigError naming file, line and field."""

from __future__ import annotations

import dataclasses
import difflib
import math
import typing
import weakref
from dataclasses import dataclass
from typing import Any, TypeVar

from . import _units
from ._yamlio import LocatedDict, LocatedList, Where, locate
from ..errors import ConfigError
from ._declarations import REQUIRED

T = TypeVar("T")

# Rules a value must satisfy; each maps to a predicate and how to say it.
RULES: dict[str, tuple[Any, str]] = {
    "positive": (lambda v: v > 0, "> 0"),
    "non_negative": (lambda v: v >= 0, ">= 0"),
    "fraction": (lambda v: 0 < v <= 1, "in (0, 1]"),
    "any": (lambda v: True, ""),
    "depth": (lambda v: v in (0, 1, 2), "0, 1 or 2"),
}

# What `cosim params` and docs/params.md show in the unit column of a parameter that is not a number.
WORDS = {str: "text", bool: "bool"}

# No parameter of these models is near this; past it a value cannot be exact in a
# double nor fit the native integers.
MAX_MAGNITUDE = 2.0**53

# Keys allowed beside `value` in a cited value: {value: 460 GB/s, source: "AMD UG1393"}, and
# the plausible range an estimate (or a measured spread) declares: range: [400 GB/s, 460 GB/s].
CITATION_KEYS = ("source", "estimate")
RANGE_KEY = "range"


@dataclass(frozen=True)
class Cited:
    """How a value is cited: a source or an estimate, and the plausible range it declares."""

    kind: str  # "source" or "estimate"
    low: float | None = None
    high: float | None = None
    # The source, or the estimate's reasoning, as written; two citations of one kind and
    # range are the same citation whatever their words.
    note: str = dataclasses.field(default="", compare=False)

    @property
    def range(self) -> tuple[float, float] | None:
        return None if self.low is None or self.high is None else (self.low, self.high)


def param(help: str, rule: str = "positive", default: Any = dataclasses.MISSING,
          choices: tuple[str, ...] | None = None, native: bool = True, note: str = "",
          usable: Any = None, range: tuple[float, float] | None = None, limit: Any = None) -> Any:
    """Declares one parameter of a configuration dataclass (``choices``: the words a text
    parameter may take; ``native``: the C++ models take it; ``note``: where the default
    comes from, "source: ..." or "estimate: ...", for defaults no device file cites;
    ``usable``: value -> None, or what this installation lacks to use that value;
    ``range``: the default's plausible (low, high), which every estimate declares;
    ``limit``: the largest value the engine simulates, a _declarations.Limit)."""
    assert rule in RULES, rule
    assert not note or note.startswith(("source: ", "estimate: ")), note
    return dataclasses.field(default=default, metadata={"help": help, "rule": rule, "choices": choices,
                                                        "native": native, "note": note, "usable": usable,
                                                        "range": range, "limit": limit})


def config_class(group: Any, module: str, usable: dict[str, Any] | None = None) -> type:
    """The frozen configuration dataclass of a declared group (cosim/schema/_declarations.py);
    ``usable``: per parameter name, the check of what a value needs (see `param`)."""
    fields = []
    for d in group.params:
        default = dataclasses.MISSING if d.default is REQUIRED else d.default
        fields.append((d.name, d.type, param(d.help, d.rule, default, choices=d.choices, native=d.native,
                                             note=d.note, range=d.range, usable=(usable or {}).get(d.name),
                                             limit=d.limit)))
    cls = dataclasses.make_dataclass(group.python, fields, frozen=True, kw_only=True)
    cls.__module__, cls.__doc__ = module, group.doc
    return cls


def _group_type(kind: Any) -> type | None:
    """The configuration class of a group parameter (``X`` or ``X | None``), else None."""
    if dataclasses.is_dataclass(kind):
        return kind
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if len(args) == 1 and dataclasses.is_dataclass(args[0]) and type(None) in typing.get_args(kind):
        return args[0]
    return None


def describe(cls: type) -> list[dict[str, str]]:
    """Name, unit, rule (and with the engine's limit, bounds), help and default's note of every
    parameter of a configuration class."""
    rows = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if "help" in f.metadata:
            choices = f.metadata.get("choices")
            rule = " | ".join(choices) if choices else RULES[f.metadata["rule"]][1]
            limit = f.metadata.get("limit")
            rows.append(
                {
                    "name": f.name,
                    # text and true/false have no unit; a number without a unit suffix is dimensionless (1)
                    "unit": WORDS.get(hints[f.name], _units.canonical_unit(f.name)),
                    "rule": rule,
                    # the rule and the engine's limit together, as the listings print them
                    "bounds": ", ".join(([rule] if rule else []) + ([f"<= {limit.value}"] if limit else [])),
                    "help": f.metadata["help"],
                    "note": f.metadata.get("note", ""),
                    "range": f.metadata.get("range"),
                    "limit": limit,
                }
            )
    return rows


def _uncite(raw: Any, where: Where) -> Any:
    if isinstance(raw, dict) and "value" in raw:
        extra = set(raw) - {"value", *CITATION_KEYS, RANGE_KEY}
        if extra:
            raise ConfigError(f"{where}: unknown key {sorted(extra)[0]!r} beside 'value' (use source or estimate)")
        if not any(k in raw for k in CITATION_KEYS):
            raise ConfigError(f"{where}: a value given as a mapping needs a 'source' or an 'estimate' note")
        return raw["value"]
    return raw


def _citation(name: str, kind: type, raw: Any, value: Any, rule: str, where: Where, given_as_stem: bool
              ) -> Cited | None:
    """How a value given as a mapping is cited, its declared range checked: two finite numbers
    in the value's unit, low below high, each within the parameter's rule, the value inside."""
    if not (isinstance(raw, dict) and "value" in raw):
        return None
    word = "estimate" if "estimate" in raw else "source"
    if RANGE_KEY not in raw:
        return Cited(word, note=str(raw[word]))
    here = raw.where_of(RANGE_KEY) if isinstance(raw, LocatedDict) else where.child(RANGE_KEY, None)
    bounds = raw[RANGE_KEY]
    if kind not in (int, float):
        raise ConfigError(f"{here}: a range needs a number; {name} is {'true or false' if kind is bool else 'text'}")
    if not isinstance(bounds, list) or len(bounds) != 2:
        raise ConfigError(f"{here}: expected [low, high] in the value's unit, got {bounds!r}")
    ends = []
    for i, end in enumerate(bounds):
        end_where = bounds.where_of(i) if isinstance(bounds, LocatedList) else here.child(i, None)
        ends.append(parse_scalar(name, kind, end, end_where, given_as_stem))
    low, high = ends
    check, text = RULES[rule]
    for end in ends:
        if not check(end):
            raise ConfigError(f"{here}: {end:g} must be {text}, as {name} itself")
    if low > high:
        raise ConfigError(f"{here}: reversed: [{low:g}, {high:g}]; give [low, high]")
    if low == high:
        raise ConfigError(f"{here}: [{low:g}, {high:g}] is one value; a range needs low < high")
    if not low <= value <= high:
        raise ConfigError(f"{here}: [{low:g}, {high:g}] does not contain the value {value:g}")
    return Cited(word, float(low), float(high), str(raw[word]))


def _plain_number(text: str) -> float | None:
    """A number written without a unit (``3e2``), or None."""
    try:
        return float(text) if text.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity") else None
    except ValueError:
        return None


def plain(raw: Any) -> Any:
    """A numpy scalar as the Python bool, int or float it holds (numpy integers are taken
    wherever an int is); anything else as it is."""
    if type(raw).__module__ == "numpy" and getattr(raw, "ndim", None) == 0 and callable(getattr(raw, "item", None)):
        return raw.item()
    return raw


def parse_scalar(name: str, kind: type, raw: Any, where: Where, given_as_stem: bool) -> Any:
    raw = plain(raw)
    if kind is bool:
        if not isinstance(raw, bool):
            raise ConfigError(f"{where}: expected true or false, got {raw!r}")
        return raw
    if kind is str:
        if not isinstance(raw, str):
            raise ConfigError(f"{where}: expected text, got {raw!r}")
        return raw
    suffix = _units.suffix_of(name)
    if isinstance(raw, bool) or raw is None:
        raise ConfigError(f"{where}: expected a number, got {raw!r}")
    if isinstance(raw, str):
        number = _plain_number(raw)
        if number is not None:  # YAML 1.1 reads 7.6e9 and 3e2 (no dot, no exponent sign) as text
            return parse_scalar(name, kind, number, where, given_as_stem)
        if suffix is None:
            raise ConfigError(f"{where}: expected a plain number (dimensionless), got {raw!r}")
        try:
            value = _units.parse_quantity(raw, name)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    elif isinstance(raw, int | float):
        if isinstance(raw, float) and not math.isfinite(raw):  # named as what it is, before any unit
            raise ConfigError(f"{where}: must be a finite number, got {raw!r}")
        if isinstance(raw, int) and abs(raw) > MAX_MAGNITUDE:
            raise ConfigError(f"{where}: {raw} is out of range (at most {MAX_MAGNITUDE:.0e} in magnitude)")
        if given_as_stem:
            units = ", ".join(_units.units_for(name))
            raise ConfigError(
                f"{where}: missing unit in {raw!r}; write e.g. '{raw} {_units.canonical_unit(name)}' ({units}), "
                f"or give the number under '{name}'"
            )
        value = float(raw)
    else:
        raise ConfigError(f"{where}: expected a number, got {type(raw).__name__}")
    if math.isnan(value) or math.isinf(value):
        raise ConfigError(f"{where}: must be a finite number, got {raw!r}")
    if abs(value) > MAX_MAGNITUDE:
        raise ConfigError(f"{where}: {raw!r} is out of range (at most {MAX_MAGNITUDE:.0e} in magnitude)")
    if kind is int:
        if value != int(value):
            raise ConfigError(f"{where}: must be a whole number, got {raw!r}")
        return int(value)
    return value


def did_you_mean(word: str, choices: list[str]) -> str:
    """"; did you mean 'x'?" naming the choice closest to a misspelt ``word``, or ""."""
    near = difflib.get_close_matches(word, choices, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


def build(cls: type[T], data: Any, where: Where | None = None) -> T:
    """Builds configuration dataclass ``cls`` from a (located) mapping."""
    if not isinstance(data, LocatedDict):
        data = locate(data, where.file if where else "<dict>", where.path if where else "")
    where = data.where if where is None else where
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    stems = {}
    for name in fields:
        suffix = _units.suffix_of(name)
        if suffix:
            stems[name[: -len(suffix)]] = name
    values: dict[str, Any] = {}
    origins: dict[str, Where] = {}
    for key in data:
        key_where = data.where_of(key)
        name = stems.get(key, key)
        if name not in fields:
            hint = did_you_mean(key, sorted(list(fields) + list(stems))) or f"; known: {', '.join(sorted(fields))}"
            raise ConfigError(f"{key_where}: unknown parameter{hint}")
        if name in values:
            raise ConfigError(f"{key_where}: given twice (as {name!r} and its stem)")
        kind = hints[name]
        raw = _uncite(data[key], key_where)
        group = _group_type(kind)
        if group is not None:
            if raw is None and fields[name].default is None:
                values[name] = None  # an optional group left out
                continue
            if not isinstance(raw, dict):
                raise ConfigError(f"{key_where}: expected a mapping of {group.__name__} parameters")
            values[name] = build(group, raw if isinstance(raw, LocatedDict) else locate(raw), key_where)
            continue
        value = parse_scalar(name, kind, raw, key_where, given_as_stem=key != name)
        choices = fields[name].metadata.get("choices")
        if choices and value not in choices:
            raise ConfigError(f"{key_where}: one of {', '.join(choices)}, got {raw!r}")
        usable = fields[name].metadata.get("usable")
        lacking = usable(value) if usable else None
        if lacking:
            raise ConfigError(f"{key_where}: {value} needs {lacking}")
        rule = fields[name].metadata.get("rule", "any")
        check, text = RULES[rule]
        if kind in (int, float) and not check(value):
            raise ConfigError(f"{key_where}: must be {text}, got {raw!r}")
        limit = fields[name].metadata.get("limit")
        if limit is not None and kind in (int, float) and value > limit.value:
            raise ConfigError(f"{key_where}: {value} is past {limit}")
        values[name] = value
        cited = _citation(name, kind, data[key], value, rule, key_where, given_as_stem=key != name)
        origins[name] = dataclasses.replace(key_where, cited=cited) if cited else key_where
    missing = [n for n, f in fields.items() if n not in values and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{where}: missing parameter {missing[0]!r}" + (f" (and {len(missing) - 1} more)"
                                                                             if len(missing) > 1 else ""))
    config = cls(**values)
    set_origins(config, origins)  # where each given value came from (errors name it)
    return config


# Per configuration object (by identity, while it lives): where its values were given.
# Kept beside the objects so that they stay plain dataclasses (vars, asdict, equality).
_ORIGINS: dict[int, dict[str, Where]] = {}


def set_origins(config: Any, origins: dict[str, Where]) -> None:
    key = id(config)
    _ORIGINS[key] = origins
    weakref.finalize(config, _ORIGINS.pop, key, None)


def origins_of(config: Any) -> dict[str, Where]:
    return _ORIGINS.get(id(config), {})


def replaced(config: Any, **changes: Any) -> Any:
    """``config`` with ``changes``, keeping where its values were given."""
    changed = dataclasses.replace(config, **changes)
    set_origins(changed, origins_of(config))
    return changed


def citations(config: Any) -> dict[str, Cited]:
    """How each parameter of ``config`` is cited: as the file (or override) that gave it cites
    it, or, for a default no file gave, as its declaration's note says (cosim/config)."""
    origins = origins_of(config)
    out = {}
    for f in dataclasses.fields(config):
        where = origins.get(f.name)
        if where is not None:
            if where.cited is not None:
                out[f.name] = where.cited
        elif f.metadata.get("note"):
            bounds = f.metadata.get("range") or (None, None)
            kind, _, text = f.metadata["note"].partition(": ")
            out[f.name] = Cited(kind, *bounds, text)
    return out


def given(config: Any, name: str) -> bool:
    """Whether parameter ``name`` of ``config`` was given (in a file, in code or on the command
    line), not left at its default."""
    return name in origins_of(config)


def origin(config: Any, name: str) -> str:
    """Where parameter ``name`` of ``config`` was given: "file:line: path", or "" (a default,
    or set in code)."""
    where = origins_of(config).get(name)
    return str(where) if where is not None and where.file not in ("", "<dict>", "<code>") else ""


def native(config: Any) -> dict[str, Any]:
    """The flat parameter dict the native models take: the parameters declared native."""
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.metadata.get("native", False)}


def canonical(config: Any, path: str, _prefix: str = "") -> str:
    """The full field path ``path`` names in ``config`` (stems become unit-suffixed
    names); ConfigError if it names nothing."""
    head, _, rest = path.partition(".")
    here = f"{_prefix}{head}"
    names = {f.name: f for f in dataclasses.fields(config)}
    if rest:
        if head not in names or not dataclasses.is_dataclass(getattr(config, head)):
            groups = [n for n in names if dataclasses.is_dataclass(getattr(config, n))]
            if head in names and _group_type(typing.get_type_hints(type(config))[head]) is not None:
                raise ConfigError(f"{here}: not given for this device (an optional group)")
            raise ConfigError(f"{here}: not a group of parameters" + (f" (groups: {', '.join(groups)})"
                                                                      if groups else ""))
        return canonical(getattr(config, head), rest, f"{here}.")
    for name in names:
        suffix = _units.suffix_of(name)
        if name == head or (suffix and name[: -len(suffix)] == head):
            if dataclasses.is_dataclass(getattr(config, name)):
                raise ConfigError(f"{here}: a group of parameters; name one of them")
            return f"{_prefix}{name}"
    raise ConfigError(f"{here}: unknown parameter{did_you_mean(head, list(names))}")


def replace(config: T, path: str, value: Any, _prefix: str = "", where: Where | None = None) -> T:
    """A copy of ``config`` with the dotted parameter ``path`` set, checked like a
    file value; errors name the full dotted path. ``where`` is where the new value was
    given (an override's file and line); the other values keep their origins."""
    head, _, rest = path.partition(".")
    here = f"{_prefix}{head}"
    if rest:
        current = getattr(config, head, None)
        if not dataclasses.is_dataclass(current):
            choices = [f.name for f in dataclasses.fields(config) if dataclasses.is_dataclass(getattr(config, f.name))]
            raise ConfigError(f"{here}: not a group of parameters" + (f" (groups: {', '.join(choices)})"
                                                                      if choices else ""))
        changed = dataclasses.replace(config, **{head: replace(current, rest, value, f"{here}.", where)})
        set_origins(changed, origins_of(config))
        return changed
    data = {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init}
    data = {k: (dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v) for k, v in data.items()}
    name = head
    for f in dataclasses.fields(config):
        suffix = _units.suffix_of(f.name)
        if suffix and f.name[: -len(suffix)] == head:
            name = f.name
    data.pop(name, None)
    data[head] = value
    changed = build(type(config), locate(data, "", _prefix.rstrip(".")))
    origins = dict(origins_of(config))
    origins.pop(name, None)
    given = origins_of(changed).get(name)  # a value given as a cited mapping keeps its citation
    cited = given.cited if given is not None else None
    # The new value is no longer the default: its place (or the code) stands in the origins.
    origins[name] = dataclasses.replace(where or Where("<code>", None, f"{_prefix}{name}"), cited=cited)
    set_origins(changed, origins)
    return changed


def replace_given(config: T, given: Any, where: Where, part: str) -> T:
    """``config`` with each ``path: value`` of a file's mapping set (``replace``), each change
    keeping the file line it was given at; errors read ``FILE:LINE: <where>.<part>.<path>: ...``."""
    for path, value in given.items():
        place = given.where_of(path) if isinstance(given, LocatedDict) else where
        try:
            config = replace(config, path, value, where=place if place.file else None)
        except ConfigError as exc:
            at = f"{place.file}:{place.line}: " if place.line else f"{place.file}: " if place.file else ""
            raise ConfigError(f"{at}{where.path}.{part}.{exc}") from None
    return config
