"""The factors of a sensitivity analysis: each parameter with a plausible range that a
scenario (and its baseline, for a speedup) and its workload depend on, and how a value of
it is set. A value in a device, link or model file is one factor however many roles use
that file (the RTX 3090's request overhead is the PRM's, the target's and the baseline's
draft's): the estimate is one number, uncertain once. A dataset profile's value changes
the trace drawn; ``--range PATH=LOW:HIGH`` adds or narrows a factor by scenario path or
by factor name."""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import _cluster, _speculation
from ..schema import _params, _units
from ..schema._yamlio import Where
from ..config.scenario import Scenario
from ..errors import ConfigError
from ._ranges import cited_values, is_number
from .. import systems
from ..trace import DatasetProfile

ROLES = ("draft", "prm", "target")
SECTIONS = ("serving", "batching", "speculation")
# A profile's good-step probability of the target the other config uses: no factor of this one.
_OTHER_TARGET = {1: "target_1_5b_good_step_probability", 2: "target_7b_good_step_probability"}


@dataclass(frozen=True)
class Factor:
    """One uncertain parameter: its name, range and nominal value, and where a value of it goes."""

    name: str                   # "rtx3090:gpu.request_overhead_ns", "math500:bad_step_penalty", "fpga.clock_mhz"
    low: float
    high: float
    nominal: float
    kind: str                   # estimate, source (a measured spread), or given (--range)
    integer: bool = False
    paths: tuple[str, ...] = ()           # scenario paths of the system
    baseline_paths: tuple[str, ...] = ()  # scenario paths of the baseline
    profile_field: str | None = None      # a dataset profile's parameter (the trace is drawn again)
    where: str = ""                       # where the range is declared

    def value(self, x: float) -> float | int:
        """A sampled value as the parameter takes it (whole numbers rounded)."""
        return int(round(x)) if self.integer else float(x)


@dataclass
class _Found:
    name: str
    nominal: Any
    cited: Any
    where: str
    paths: list[str] = field(default_factory=list)
    baseline_paths: list[str] = field(default_factory=list)
    profile_field: str | None = None


def _file_stem(origin: str) -> str:
    return Path(origin.split(":", 1)[0]).stem


def _used(scn: Scenario) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The roles, their parts and the sections whose values ``scn``'s runs read: the
    autoregressive system reads its target's device and model alone (no link, no serving
    section), and the batching section only while batching is on."""
    system = systems.of(scn)
    roles, parts = system.roles, system.parts
    sections = tuple(s for s in SECTIONS if s in system.sections)
    return roles, parts, tuple(s for s in sections if (s != "batching" or scn.batching.enabled)
                               and (s != "speculation" or _speculation.reads(system, scn.toggles)))


def _batching_unused(scn: Scenario, name: str) -> bool:
    """A batching value the system's runs never read: the vLLM engine's on another system;
    on the autoregressive system, the runtime memory that derives the KV blocks when the
    scenario gives their number."""
    if name in systems.of(scn).batching_unread:
        return True
    # The runtime memory only derives the KV blocks, unused when the scenario gives their number.
    return name == "runtime_memory_bytes" and "num_gpu_blocks" not in systems.of(scn).batching_unread \
        and bool(scn.batching.num_gpu_blocks)


def _speculation_unused(scn: Scenario, name: str, cited: Any) -> bool:
    """A speculation value the runs do not read (the host's lookup time without the n-gram
    proposer or with drafts made on a draft device), or a range its profile cannot take (more
    drafts a pass than it has rates for)."""
    spec = scn.speculation
    if name == "lookup_ns":
        return spec.proposer != "ngram" or systems.of(scn).drafts_on_draft_device
    if name == "draft_tokens" and cited.range is not None:
        return len(_speculation.acceptance(spec).rates) < cited.range[1]
    return False


def _collect(scn: Scenario, found: dict[str, _Found], baseline: bool) -> None:
    roles, parts, sections = _used(scn)
    for role in roles:
        for part in parts:
            for path, owner, name, cited in cited_values(getattr(getattr(scn, role), part)):
                where = _params.origin(owner, name)
                if not where or not is_number(getattr(owner, name)):
                    continue
                # A description file's value is one factor whatever roles use the file; one
                # given inline in a scenario (a written scenario.resolved.yaml) is its role's.
                inline = where.partition(": ")[2].startswith(f"{role}.")
                key = f"{_file_stem(where)}:{role}.{part}.{path}" if inline else f"{_file_stem(where)}:{path}"
                entry = found.setdefault(key, _Found(key, getattr(owner, name), cited, where))
                (entry.baseline_paths if baseline else entry.paths).append(f"{role}.{part}.{path}")
    for section in sections:
        for path, owner, name, cited in cited_values(getattr(scn, section)):
            if _params.origin(owner, name) or not is_number(getattr(owner, name)):
                continue  # a default declared in code; a value given in the scenario is plain
            if section == "batching" and _batching_unused(scn, name):
                continue
            if section == "speculation" and _speculation_unused(scn, name, cited):
                continue
            if section == "serving" and name in systems.of(scn).serving_unread:
                continue
            key = f"{section}.{path}"
            entry = found.setdefault(key, _Found(key, getattr(owner, name), cited, "the declaration of " + key))
            (entry.baseline_paths if baseline else entry.paths).append(key)


def candidates(scn: Scenario, baseline: Scenario | None = None, profile: Any = None) -> dict[str, _Found]:
    """Every cited number the runs depend on, by factor name, with or without a declared range."""
    found: dict[str, _Found] = {}
    _collect(scn, found, baseline=False)
    if baseline is not None:
        _collect(baseline, found, baseline=True)
    if profile is not None:
        for path, owner, name, cited in cited_values(profile):
            where = _params.origin(owner, name)
            if where and is_number(getattr(owner, name)) and name != _OTHER_TARGET[scn.config]:
                key = f"{_file_stem(where)}:{path}"
                found[key] = _Found(key, getattr(owner, name), cited, where, profile_field=name)
    return found


def _factor(entry: _Found, low: float, high: float, kind: str, where: str) -> Factor:
    return Factor(entry.name, float(low), float(high), float(entry.nominal), kind, isinstance(entry.nominal, int),
                  tuple(entry.paths), tuple(entry.baseline_paths), entry.profile_field, where)


def parse_range(option: str) -> tuple[str, str, str]:
    """``NAME=LOW:HIGH`` from ``--range`` (NAME a factor or a scenario path)."""
    name, sep, ends = option.partition("=")
    low, colon, high = ends.partition(":")
    if not sep or not colon or not name.strip() or not low.strip() or not high.strip():
        raise ConfigError(f"--range {option!r}: write NAME=LOW:HIGH, e.g. fpga.clock_mhz=150:300 or "
                          f"rtx3090:gpu.request_overhead_ns=15ms:50ms")
    return name.strip(), low.strip(), high.strip()


def _given_range(name: str, parameter: str, nominal: Any, low: str, high: str, rule: str) -> tuple[float, float]:
    """Both ends of a ``--range`` in the parameter's unit, checked as a file's range is."""
    here = Where("", None, f"--range {name}")
    kind = int if isinstance(nominal, int) else float
    for text in (low, high):
        if text.split()[0].lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ConfigError(f"--range {name}: the ends must be finite numbers, got {text!r}")
    ends = [_params.parse_scalar(parameter, kind, text, here, False) for text in (low, high)]
    check, text = _params.RULES[rule]
    for end in ends:
        if not check(end):
            raise ConfigError(f"--range {name}: {end:g} must be {text}, as {parameter} itself")
    if ends[0] >= ends[1]:
        raise ConfigError(f"--range {name}: [{ends[0]:g}, {ends[1]:g}] is reversed or one value; give LOW:HIGH "
                          f"with LOW < HIGH")
    if not ends[0] <= nominal <= ends[1]:
        raise ConfigError(f"--range {name}: [{ends[0]:g}, {ends[1]:g}] does not contain the value {nominal:g}")
    return ends[0], ends[1]


def _rule_of(scn: Scenario, path: str) -> str:
    head, _, rest = path.partition(".")
    config = getattr(scn, head)
    parts = rest.split(".")
    if head in ROLES:
        config, parts = getattr(config, parts[0]), parts[1:]
    for part in parts[:-1]:
        config = getattr(config, part)
    return {f.name: f for f in dataclasses.fields(config)}[parts[-1]].metadata.get("rule", "any")


def _value_at(scn: Scenario, path: str) -> Any:
    head, _, rest = path.partition(".")
    value: Any = getattr(scn, head)
    parts = rest.split(".")
    if head in ROLES:
        value, parts = getattr(value, parts[0]), parts[1:]
    for part in parts:
        value = getattr(value, part)
    return value


def factors(scn: Scenario, baseline: Scenario | None = None, profile: Any = None, ranges: list[str] = (),
            only: list[str] = (), estimates_only: bool = False) -> list[Factor]:
    """The factors of an analysis: every cited value with a declared range (estimates only, with
    ``estimates_only``), each ``--range`` given (a factor's name or a scenario path), narrowed to
    the names matching ``only`` (patterns such as ``rtx3090:*``)."""
    found = candidates(scn, baseline, profile)
    chosen: dict[str, Factor] = {}
    for key, entry in found.items():
        if entry.cited.range is not None and (entry.cited.kind == "estimate" or not estimates_only):
            chosen[key] = _factor(entry, *entry.cited.range, entry.cited.kind, entry.where)
    given: dict[str, str] = {}  # the parameter or factor each --range names -> the option
    for option in ranges:
        name, low, high = parse_range(option)
        path = None
        if name in found:
            entry = found[name]
            parameter = (entry.profile_field or (entry.paths or entry.baseline_paths)[0]).rsplit(".", 1)[-1]
            if entry.profile_field:
                rule = _profile_rule(entry)
            else:
                rule = _rule_of(scn, entry.paths[0]) if entry.paths else _rule_of(baseline, entry.baseline_paths[0])
        else:
            try:
                path = scn.canonical_path(name)
            except ConfigError as exc:
                known = ", ".join(sorted(found)[:6])
                raise ConfigError(f"--range {name}: names no parameter of {scn.name} ({exc}); factors are scenario "
                                  f"paths or names such as {known}") from None
            nominal = _value_at(scn, path)
            if not is_number(nominal):
                raise ConfigError(f"--range {name}: {path} is {nominal!r}, not a number")
            entry = _Found(name, nominal, None, "--range", [path])
            parameter, rule = path.rsplit(".", 1)[-1], _rule_of(scn, path)
        same = path or name  # two spellings of one path are one parameter
        if same in given:
            raise ConfigError(f"--range {option}: {same} already has a range (--range {given[same]}); give one")
        given[same] = option
        if path is not None:
            _check_used(scn, path, [entry.nominal], option)  # no effect: refused whatever the ends
        lo, hi = _given_range(name, parameter, entry.nominal, low, high, rule)
        chosen[name] = _factor(entry, lo, hi, "given", f"--range {option}")
        if path is not None:
            _check_used(scn, path, [chosen[name].value(lo), chosen[name].value(hi)], option)
    if only:
        patterns = [p.strip() for item in only for p in item.split(",") if p.strip()]
        unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(n, p) for n in chosen)]
        if unmatched:
            raise ConfigError(f"--only {unmatched[0]}: matches no factor with a range (factors: "
                              f"{', '.join(sorted(chosen)) or 'none'})")
        chosen = {n: f for n, f in chosen.items() if any(fnmatch.fnmatchcase(n, p) for p in patterns)}
    _check_distinct(chosen.values())
    return sorted(chosen.values(), key=lambda f: f.name)


def _check_used(scn: Scenario, path: str, values: list[Any], option: str) -> None:
    """A --range by scenario path is set at each of ``values`` as --set would set it, before
    any point runs: a value the system does not use (the autoregressive system's serving
    section, a batching value while batching is off) or an end the scenario cannot take is
    refused now, not at every point."""
    for value in values:
        scn.with_values({path: value}, given_as={path: f"--range {option}"})


def _check_distinct(chosen: Any) -> None:
    """No two factors set one parameter: the one applied last would win at every point."""
    setters: dict[str, Factor] = {}
    for f in chosen:
        for place in (*f.paths, *(f"{p} (baseline)" for p in f.baseline_paths),
                      *([f"profile {f.profile_field}"] if f.profile_field else [])):
            other = setters.setdefault(place, f)
            if other is not f:
                # A file's or a profile's factor is named FILE:PARAMETER; one given by path has no colon.
                by_path, named = (f, other) if ":" not in f.name else (other, f)
                raise ConfigError(f"{by_path.where}: {place} is also set by the factor {named.name}; narrow "
                                  f"that one by name (--range {named.name}=LOW:HIGH), or leave it out (--only)")


def _profile_rule(entry: _Found) -> str:
    return {f.name: f for f in dataclasses.fields(DatasetProfile)}[entry.profile_field].metadata.get("rule", "any")


def apply(scn: Scenario, chosen: list[Factor], values: dict[str, float], baseline: bool = False) -> Scenario:
    """The scenario (or its baseline) with each factor's value set wherever the factor applies.
    A role's values are set on its configurations together and the scenario checked once (as
    with_value checks it), so a point costs one check, not one per path."""
    by_part: dict[tuple[str, str], list[tuple[str, Any]]] = {}
    for f in chosen:
        if f.name not in values:
            continue
        for path in f.baseline_paths if baseline else f.paths:
            head, _, rest = path.partition(".")
            if head in ROLES:
                part, _, sub = rest.partition(".")
                by_part.setdefault((head, part), []).append((sub, f.value(values[f.name])))
            else:
                scn = scn.with_value(path, f.value(values[f.name]))
    if not by_part:
        return scn
    for (role, part), changes in by_part.items():
        current = getattr(scn, role)
        config = _set_many(getattr(current, part), changes, f"{role}.{part}.")
        scn = dataclasses.replace(scn, **{role: dataclasses.replace(current, **{part: config})})
    if any(role == "draft" for role, _ in by_part):
        _cluster.check(scn)  # as with_value: the draft device must still hold its contexts
    return scn


def _set_many(config: Any, changes: list[tuple[str, Any]], prefix: str) -> Any:
    """``config`` with every (dotted path, value) set at once, each value checked against its
    parameter's rule (a point sets a few dozen values: one copy per configuration, not a
    rebuild per value)."""
    groups: dict[str, list[tuple[str, Any]]] = {}
    leaves: dict[str, Any] = {}
    for path, value in changes:
        head, _, rest = path.partition(".")
        if rest:
            groups.setdefault(head, []).append((rest, value))
        else:
            leaves[head] = value
    fields = {f.name: f for f in dataclasses.fields(config)}
    for name, value in leaves.items():
        check, text = _params.RULES[fields[name].metadata.get("rule", "any")]
        if not check(value):
            raise ConfigError(f"{prefix}{name}: must be {text}, got {value!r}")
    nested = {head: _set_many(getattr(config, head), items, f"{prefix}{head}.") for head, items in groups.items()}
    return dataclasses.replace(config, **leaves, **nested)


def apply_profile(profile: Any, chosen: list[Factor], values: dict[str, float]) -> Any:
    changes = {f.profile_field: f.value(values[f.name]) for f in chosen if f.profile_field and f.name in values}
    return dataclasses.replace(profile, **changes) if changes else profile


def unit_of(f: Factor) -> str:
    """The factor's unit ("" for a plain number)."""
    field_name = (f.profile_field or (f.paths or f.baseline_paths or (f.name,))[0]).rsplit(".", 1)[-1]
    unit = _units.canonical_unit(field_name)
    return "" if unit in ("", "1", "-") else unit


def describe_range(f: Factor) -> str:
    """``15..50 ms``: the range in a readable unit."""
    unit, scale = unit_of(f), 1.0
    if unit == "ns":
        for name, factor in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
            if f.high >= factor:
                unit, scale = name, factor
                break
    return f"{f.low / scale:g}..{f.high / scale:g}" + (f" {unit}" if unit else "")
