"""Scenarios: which system (docs/system.md), on which devices, with which
models, links and toggles. A scenario is a YAML file or built in code; every
field has a default given by the system's preset, so `system: heteroreason`
alone is a complete scenario.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping

from . import _cluster, _profile_range, _speculation
from ..schema import _params
from ._cluster import Batching, Cluster
from ._speculation import Speculation
from ._settings import DEPTH_WITHOUT_STEP_AHEAD, check_given, check_sequential
from ..schema._yamlio import LocatedDict, Where, load_yaml, locate
from ..errors import ConfigError
from ..schema._toggles import SERVING, TOGGLES
from ..devices._latency_csv import load_latency_profile
from ..devices._operator_profile import load_operator_profile
from .. import devices, systems
from ..devices import Device
from .hardware import ModelConfig, ParallelConfig, PcieLinkConfig, file_ref, load_device, load_link, load_model
from ._written import reloadable
from ._parallel_group import check_group, check_precision, role_group
from ._model_names import CONFIG_TARGETS, DRAFT_MODEL, PRM_MODEL

# The systems a scenario may name, each a file of cosim/systems/.
SYSTEMS = systems.names()


# The toggles and the serving section, declared in cosim/schema/_toggles.py.
Toggles = _params.config_class(TOGGLES, __name__)
Serving = _params.config_class(SERVING, __name__)


@dataclass(frozen=True)
class Role:
    """One device of the system with the model it serves and its host link."""

    device: Device
    model: ModelConfig
    link: PcieLinkConfig
    # A measured latency CSV of this model on this GPU (cosim/devices/_latency_csv.py),
    # replacing the roofline for what it covers; None: the roofline.
    profile: str | None = None
    # The GPUs the model spans (docs/hardware.md "Parallel groups") and the link between
    # them; a device kind that runs alone (an FPGA board) has no peer link.
    parallel: ParallelConfig = ParallelConfig()
    peer_link: PcieLinkConfig | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    system: str
    config: int
    draft: Role
    prm: Role
    target: Role
    toggles: Toggles
    serving: Serving
    description: str = ""
    source: str = "<code>"
    algorithm: str = "brsd"
    # Serving at scale (docs/serving.md); the defaults are the single-request system.
    cluster: Cluster = Cluster()
    batching: Batching = Batching()
    # Token-level speculative decoding (the speculative-decoding system alone reads it).
    speculation: Speculation = Speculation()

    @property
    def backtracking(self) -> bool:
        """Whether the traces this system replays backtrack (BRSD) or not (RSD)."""
        return self.algorithm == "brsd"

    @property
    def sequential(self) -> bool:
        return systems.of(self).sequential

    def canonical_path(self, path: str) -> str:
        """``path`` in full (``pcie.bandwidth`` -> ``draft.link.bandwidth_gbps``); ConfigError if it
        names no parameter. Two spellings of one parameter give the same canonical path."""
        if not isinstance(path, str) or any(not part.strip() for part in path.split(".")):
            raise ConfigError(f"{path!r}: a parameter path is names joined by single dots, e.g. "
                              f"pcie.bandwidth_gbps or fpga.clock_mhz")
        head, _, rest = path.partition(".")
        if head in PATH_ALIASES:
            head, _, rest = f"{PATH_ALIASES[head]}.{rest}".partition(".")
        if not rest:
            raise ConfigError(f"{path}: name a parameter, e.g. pcie.bandwidth_gbps or fpga.clock_mhz")
        if head in ("draft", "prm", "target"):
            part, _, sub = rest.partition(".")
            if part not in _ROLE_PARTS or not sub:
                raise ConfigError(f"{path}: expected {head}.device.<param>, {head}.link.<param>, "
                                  f"{head}.model.<param>, {head}.parallel.<param> or {head}.peer_link.<param>")
            if part == "peer_link" and getattr(self, head).peer_link is None:
                raise ConfigError(f"{path}: the {head} runs on {getattr(self, head).device.name}, which has no "
                                  f"parallel group")
            if part == "device" and sub == "host_link":
                raise ConfigError(f"{path}: the link is chosen when the scenario loads; change "
                                  f"{head}.link.<param> (or `link:` in the scenario file)")
            try:
                return f"{head}.{part}.{_params.canonical(getattr(getattr(self, head), part), sub)}"
            except ConfigError as exc:
                raise ConfigError(f"{path}: {exc}") from None
        if head in _SECTIONS:
            try:
                return f"{head}.{_params.canonical(getattr(self, head), rest)}"
            except ConfigError as exc:
                raise ConfigError(f"{path}: {exc}") from None
        raise ConfigError(f"{path}: unknown parameter path; start with draft, prm, target, "
                          f"{', '.join(_SECTIONS)}, or the short forms {', '.join(PATH_ALIASES)}")

    def with_value(self, path: str, value: Any) -> Scenario:
        """A copy with one parameter changed, by dotted path: ``draft.device.accelerator.clock_mhz``,
        ``prm.link.bandwidth_gbps``, ``target.model.layers``, ``toggles.shadow_sync``,
        ``serving.control_bytes``, ``cluster.target.devices``, ``batching.max_batch``; ``pcie.X``,
        ``fpga.X`` and ``hbm.X`` are short for the draft device's link, accelerator and HBM."""
        return self.with_values({path: value})

    def with_values(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]], *,
                    given_as: Mapping[str, str] | None = None) -> Scenario:
        """A copy with several parameters changed (paths as ``with_value`` takes them), all
        applied first and then checked together, so their order never changes the outcome.
        A value that would have no effect is refused, as in a scenario file: a batching value
        while batching stays off, ``cluster.draft.host_link`` while each board has its own
        link, a step-ahead depth while step-ahead stays off. ``given_as``: per path, how the
        value was given (``--set batching.max_batch=8``); errors name that."""
        pairs = list(values.items()) if isinstance(values, Mapping) else list(values)
        labels = dict(given_as or {})
        given: dict[str, str] = {}
        result = self
        for path, value in pairs:
            label = labels.get(path)
            try:
                full = self.canonical_path(path)
            except ConfigError as exc:
                raise ConfigError(f"{label}: {exc}" if label else str(exc)) from None
            if full in given:
                raise ConfigError(f"{label or path}: {full} is given twice (also as {given[full]})")
            given[full] = label or path
            result = result._set(path, full, value, label)
        check_sequential(systems.of(self), result.toggles, lambda on: given.get(f"toggles.{on}", f"toggles.{on}"))
        for head in ("draft", "prm", "target"):
            changed = [label for full, label in given.items() if full.startswith(f"{head}.")]
            if changed:
                try:
                    check_precision(getattr(result, head))
                    check_group(getattr(result, head))
                except ConfigError as exc:
                    raise ConfigError(f"{changed[0]}: {head}.{exc}") from None
        try:
            unread = [label for full, label in given.items() if full.startswith("speculation.")]
            if unread and not _speculation.reads(systems.of(result), result.toggles):
                raise ConfigError(f"{unread[0]}: {systems.of(result).speculation_unread()}")
            _speculation.check_scenario(result)
            _cluster.check(result)
        except ConfigError as exc:
            text = str(exc)
            if len(given) == 1 and not any(text.startswith(f"{n}:") for n in (*given, *given.values())):
                text = f"{next(iter(given.values()))}: {text}"  # what the one value changed broke
            raise ConfigError(text) from None
        check_given(result, given)
        return result

    def _set(self, path: str, full: str, value: Any, label: str | None) -> Scenario:
        """One parameter changed and checked alone (the whole scenario is checked after all)."""
        name = label or path
        head, _, rest = full.partition(".")
        systems.of(self).check_path(name, full)
        where = Where(label, None, "") if label else None
        try:
            if head in ("draft", "prm", "target"):
                role: Role = getattr(self, head)
                part, _, sub = rest.partition(".")
                changed = _params.replace(getattr(role, part), sub, value, where=where)
                return dataclasses.replace(self, **{head: dataclasses.replace(role, **{part: changed})})
            changed = _params.replace(getattr(self, head), rest, value, where=where)
        except ConfigError as exc:
            raise ConfigError(f"{name}: {exc}") from None
        return dataclasses.replace(self, **{head: changed})

    def fingerprint(self) -> str:
        """A digest of every resolved parameter (what a sweep's journal belongs to)."""
        text = json.dumps(self.resolved(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def reloadable(self) -> dict[str, Any]:
        """The scenario as a scenario file holds it, devices, models and links inline, that
        loads (load_scenario) to this scenario and reruns to the same result: what
        ``scenario.resolved.yaml`` holds (cosim/config/_written.py says what it leaves out)."""
        return reloadable(self)

    def resolved(self) -> dict[str, Any]:
        """Every parameter after defaults and overrides, as plain data (written beside results)."""
        def role(r: Role) -> dict[str, Any]:
            out = {"device": dataclasses.asdict(r.device), "model": dataclasses.asdict(r.model),
                   "link": dataclasses.asdict(r.link), "profile": r.profile}
            if r.peer_link is not None:
                out |= {"parallel": dataclasses.asdict(r.parallel), "peer_link": dataclasses.asdict(r.peer_link)}
            return out

        return {
            "name": self.name, "description": self.description, "system": self.system, "config": self.config,
            "algorithm": self.algorithm,
            "draft": role(self.draft), "prm": role(self.prm), "target": role(self.target),
            "toggles": dataclasses.asdict(self.toggles), "serving": dataclasses.asdict(self.serving),
            "cluster": dataclasses.asdict(self.cluster), "batching": dataclasses.asdict(self.batching),
            "speculation": dataclasses.asdict(self.speculation),
        }


# The sections of scenario-wide parameters (the rest belong to a role: draft, prm, target).
_SECTIONS = ("toggles", "serving", "cluster", "batching", "speculation")

# Short forms for the parameters sweeps change most.
PATH_ALIASES = {"pcie": "draft.link", "fpga": "draft.device.accelerator", "hbm": "draft.device.hbm"}

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

_TOP_KEYS = {"name", "description", "system", "config", "algorithm", "draft", "prm", "target", *_SECTIONS}
_ROLE_KEYS = {"device", "model", "link", "overrides", "profile", "parallel", "peer_link"}
# The parts of a role a parameter path may name.
_ROLE_PARTS = ("device", "link", "model", "parallel", "peer_link")


def _role(data: Any, where: Where, default_device: str, default_model: str, role: str,
          base: Path | None = None) -> Role:
    if data is None:
        data = LocatedDict({}, where, {})
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping with device, model, link, overrides")
    if not isinstance(data, LocatedDict):
        data = locate(data, where.file, where.path)
    for key in data:
        if key not in _ROLE_KEYS:
            raise ConfigError(f"{data.where_of(key)}: unknown key (device, model, link, overrides, profile, "
                              f"parallel or peer_link)")
    try:
        device = load_device(file_ref(data.get("device", default_device), base))
    except ConfigError as exc:
        raise ConfigError(f"{data.where_of('device') if 'device' in data else where}: {exc}") from None
    overrides = data.get("overrides") or {}
    if not isinstance(overrides, dict):
        raise ConfigError(f"{data.where_of('overrides')}: expected a mapping of parameter paths to values")
    device = _params.replace_given(device, overrides, where, "overrides")
    kinds = devices.serving(role)
    if devices.kind_of(device) not in kinds:
        raise ConfigError(f"{data.where_of('device') if 'device' in data else where}: the {role} runs on "
                          f"{' or '.join(k.label for k in kinds)}, not on {device.name}")
    try:
        model = load_model(file_ref(data.get("model", default_model), base))
    except ConfigError as exc:
        raise ConfigError(f"{data.where_of('model') if 'model' in data else where}: {exc}") from None
    try:
        link = load_link(file_ref(data["link"], base) if "link" in data else device.host_link)
    except ConfigError as exc:
        # The link named here, or the device's own host_link (named in the device's file).
        place = data.where_of("link") if "link" in data else (_params.origin(device, "host_link") or where)
        raise ConfigError(f"{place}: {exc}") from None
    parallel, peer_link = role_group(data, where, base, device)
    made = Role(device, model, link, _profile(data, base, device, model, parallel.tensor_parallel), parallel,
                peer_link)
    try:
        check_precision(made)
    except ConfigError as exc:
        place = _params.origin(model, "activation_precision") or where
        raise ConfigError(f"{place}: {str(exc).removeprefix('model.activation_precision: ')}") from None
    try:
        check_group(made)
    except ConfigError as exc:
        place = data.where_of("parallel") if "parallel" in data else where
        raise ConfigError(f"{place}: {str(exc).removeprefix('parallel.')}") from None
    return made


def _profile(data: LocatedDict, base: Path | None, device: Device, model: ModelConfig, tp: int = 1) -> str | None:
    """A role's measured latency profile: its CSV path, or a folder of measured operator times
    (LLMServingSim's or Vidur's, docs/hardware.md; its pass at the role's tensor-parallel
    degree ``tp``), from the scenario's folder, checked now."""
    if "profile" not in data:
        return None
    where, given = data.where_of("profile"), data["profile"]
    if not isinstance(given, str) or not given:
        raise ConfigError(f"{where}: give the path of a latency CSV, got {given!r}")
    kind = devices.kind_of(device)
    if not kind.role_profile:
        raise ConfigError(f"{where}: {kind.label}'s measured profile goes in its device file (profile: file:)")
    path = Path(given).expanduser()
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        if path.is_dir():
            load_operator_profile(path, model, tp)
        else:
            load_latency_profile(path)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return str(path.resolve())


def _toggle_names() -> list[str]:
    return [f.name for f in dataclasses.fields(Toggles)]


def _section(data: LocatedDict, key: str, defaults: dict[str, Any]) -> LocatedDict:
    """A sub-mapping with defaults under it, keeping the file lines of what was given."""
    given = data.get(key) or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{data.where_of(key)}: expected a mapping")
    where = data.where_of(key) if key in data else data.where.child(key, None)
    return LocatedDict({**defaults, **given}, where, getattr(given, "lines", {}))


def build_scenario(data: Mapping[str, Any] | LocatedDict, source: str = "<code>", config: int | None = None
                   ) -> Scenario:
    """A scenario from a mapping (as a YAML file would hold it); ``config`` replaces the
    mapping's own (a target model the mapping names stays)."""
    if not isinstance(data, LocatedDict):
        data = locate(dict(data), source)
    if config is not None:
        data = LocatedDict({**data, "config": config}, data.where, {k: v for k, v in data.lines.items()
                                                                     if k != "config"})
    for key in data:
        if key not in _TOP_KEYS:
            raise ConfigError(f"{data.where_of(key)}: unknown key; known: {', '.join(sorted(_TOP_KEYS))}")
    system = data.get("system")
    if system not in systems.names():
        where = data.where_of("system") if "system" in data else data.where
        raise ConfigError(f"{where}: system must be one of {', '.join(systems.names())}, got {system!r}")
    config = _params.plain(data.get("config", 1))
    if not isinstance(config, int) or isinstance(config, bool) or config not in CONFIG_TARGETS:
        raise ConfigError(f"{data.where_of('config')}: config must be 1 (7B target) or 2 (1.5B target), got {config!r}")
    chosen = systems.by_name(system)
    chosen.check_file(data)
    toggles = _params.build(Toggles, _section(data, "toggles", {k: chosen.preset[k] for k in _toggle_names()}))
    given = data.get("toggles") or {}
    if isinstance(given, dict) and not toggles.step_ahead and given.get("step_ahead_depth"):
        raise ConfigError(f"{given.where_of('step_ahead_depth')}: {toggles.step_ahead_depth} "
                          f"{DEPTH_WITHOUT_STEP_AHEAD}")
    check_sequential(chosen, toggles, lambda on: str(data.where_of("toggles")), _overlapping())
    serving = _params.build(Serving, _section(data, "serving", {}))
    cluster = _params.build(Cluster, _section(data, "cluster", {}))
    batching = _params.build(Batching, _section(data, "batching", {}))
    unused = [f.name for f in dataclasses.fields(Batching) if f.name != "enabled" and _params.given(batching, f.name)]
    if unused and not batching.enabled:
        raise ConfigError(f"{_params.origin(batching, unused[0]) or 'batching.' + unused[0]}: "
                          f"{_cluster.BATCHING_OFF}")
    if "speculation" in data and not _speculation.reads(chosen, toggles):
        raise ConfigError(f"{data.where_of('speculation')}: {chosen.speculation_unread()}")
    base_dir = Path(source).parent if source != "<code>" else None
    speculation = _speculation.located(
        _params.build(Speculation, _section(data, "speculation", dict(chosen.speculation_defaults))), base_dir)
    roles = {}
    for role, device, model in (("draft", chosen.draft_device, DRAFT_MODEL), ("prm", "rtx3090", PRM_MODEL),
                                ("target", "rtx3090", CONFIG_TARGETS[config])):
        where = data.where_of(role) if role in data else data.where.child(role, None)
        roles[role] = _role(data.get(role), where, device, model, role, base_dir)
    name = data.get("name", Path(source).stem if source != "<code>" else system)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        where = data.where_of("name") if "name" in data else data.where
        raise ConfigError(f"{where}: name must be letters, digits, '.', '_' or '-' (it names the output "
                          f"folder), got {name!r}")
    kind = devices.kind_of(roles["draft"].device)
    why = chosen.wrong_draft(kind.name)
    if why is not None:
        where = data.where_of("draft") if "draft" in data else data.where
        takers = [name for name in systems.names() if systems.by_name(name).wrong_draft(kind.name) is None
                  and "draft" in systems.by_name(name).roles and not systems.by_name(name).drafts_on_draft_device]
        raise ConfigError(f"{where}: {why}; {kind.label} draft is the {' or '.join(takers)} system")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{data.where_of('description')}: expected text")
    algorithm = data.get("algorithm", chosen.algorithms[0])
    if algorithm not in chosen.algorithms:
        raise ConfigError(f"{data.where_of('algorithm')}: the {system} system replays "
                          f"{' or '.join(chosen.algorithms)} traces (brsd backtracks, rsd is forward-only), "
                          f"got {algorithm!r}")
    scn = Scenario(
        name=name,
        description=description,
        system=system,
        config=config,
        toggles=toggles,
        serving=serving,
        source=source,
        algorithm=algorithm,
        cluster=cluster,
        batching=batching,
        speculation=speculation,
        **roles,
    )
    _speculation.check_scenario(scn)
    _cluster.check(scn)
    _profile_range.check(scn, {role: str(data[role].where_of("profile")) for role in roles
                               if isinstance(data.get(role), LocatedDict) and "profile" in data[role]})
    return scn


def _overlapping() -> str:
    """What a sequential system's message suggests instead: the systems that overlap work."""
    others = [name for name in systems.names() if not systems.by_name(name).sequential
              and "draft" in systems.by_name(name).roles and not systems.by_name(name).drafts_on_draft_device]
    return f" (use {' or '.join(others)} for overlap)"


def _scenarios_dir() -> Path:
    return Path(str(resources.files("cosim") / "data" / "scenarios"))


def builtin_scenarios() -> list[str]:
    """The built-in scenarios: every system and ablation (cosim/data/scenarios)."""
    return sorted(p.stem for p in _scenarios_dir().glob("*.yaml"))


def load_scenario(ref: str | Path, config: int | None = None) -> Scenario:
    """A scenario: a built-in name (``heteroreason-u280-300``) or a YAML path, checked
    (errors name the file, line and field); ``config`` (1 or 2) replaces the file's."""
    data, path = scenario_data(ref)
    return build_scenario(data, str(path), config)


def scenario_data(ref: str | Path) -> tuple[LocatedDict, Path]:
    """The mapping of scenario ``ref`` (a built-in name or a YAML path) as its file holds it, and the file."""
    path = Path(ref)
    if path.suffix not in (".yaml", ".yml") and not path.exists():
        if str(ref) not in builtin_scenarios():
            hint = _params.did_you_mean(str(ref), builtin_scenarios())
            raise ConfigError(f"unknown scenario {str(ref)!r}" + (hint or f": give a YAML path or a built-in name "
                                                                          f"({', '.join(builtin_scenarios())})"))
        path = _scenarios_dir() / f"{ref}.yaml"
    data = load_yaml(path)
    if not isinstance(data, LocatedDict):
        raise ConfigError(f"{path}: expected a mapping")
    return data, path


def scenario(system: str, config: int = 1, **sections: Any) -> Scenario:
    """A scenario in code: ``cosim.scenario("heteroreason", 1, draft={"device": "v80"})``."""
    return build_scenario({"system": system, "config": config, **sections})
