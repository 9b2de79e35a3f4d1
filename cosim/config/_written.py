"""A scenario as ``scenario.resolved.yaml`` holds it: a scenario file, its devices, models
and links inline and its paths absolute, that loads (load_scenario) to the same scenario
from any folder and reruns to the same result. What a file may not give, because it
would have no effect, is left out: batching values while batching is off, the boards'
shared host link while each board has its own, the step-ahead depth while step-ahead is
off, the vLLM engine's values for another system and the batchers' for the
autoregressive system, the PRM's prefix cache for a system without a PRM, and the
autoregressive system's unused roles and its target's link; loaded, they take the values
they had (the defaults and the system's preset)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from .. import systems
from ..schema import _params
from . import _speculation
from .hardware import kind_of


def absolute_ref(ref: str, folder: Path | None = None) -> str:
    """A file a written description names (a YAML or CSV path), made absolute so that the
    written file loads from any folder: a relative path is taken from ``folder`` (the
    folder of the file it was read from; default the current folder, where a loaded
    description's paths are already joined to it). A built-in name is kept as it is."""
    if not ref.endswith((".yaml", ".yml", ".csv")):
        return ref
    return str(((folder or Path.cwd()) / ref).resolve())


def with_ranges(config: Any, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (``config`` as plain data) with each value that declares a plausible range
    written with its range and its citation, as a description file gives it: a rerun from
    the written file has the same uncertainty (the power band, `cosim sensitivity`)."""
    cited = _params.citations(config)
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            data[f.name] = with_ranges(value, data[f.name])
        elif f.name in cited and cited[f.name].range is not None:
            c = cited[f.name]
            data[f.name] = {"value": value, c.kind: c.note or "as the description cites it", "range": [c.low, c.high]}
    return data


def reloadable(scn: Any) -> dict[str, Any]:
    """``scn`` (a Scenario) as a scenario file's mapping."""

    def inline(config: Any) -> dict[str, Any]:
        data = {"kind": kind_of(config), **with_ranges(config, dataclasses.asdict(config))}
        for field in ("host_link", "peer_link"):
            if isinstance(data.get(field), str) and data[field]:
                data[field] = absolute_ref(data[field])
        if isinstance(data.get("profile"), dict):
            data["profile"]["file"] = absolute_ref(data["profile"]["file"])
        return data

    def role(r: Any) -> dict[str, Any]:
        out = {"device": inline(r.device), "model": inline(r.model), "link": inline(r.link)}
        if r.peer_link is not None:
            out |= {"parallel": dataclasses.asdict(r.parallel), "peer_link": inline(r.peer_link)}
        return {**out, "profile": r.profile} if r.profile is not None else out

    system = systems.of(scn)
    toggles = dataclasses.asdict(scn.toggles)
    if not scn.toggles.step_ahead:
        del toggles["step_ahead_depth"]
    cluster = dataclasses.asdict(scn.cluster)
    if scn.cluster.draft.boards_per_host_link == 1:
        del cluster["draft"]["host_link"]
    else:
        cluster["draft"]["host_link"] = absolute_ref(cluster["draft"]["host_link"])
    batching = dataclasses.asdict(scn.batching)
    if not scn.batching.enabled:
        batching = {"enabled": False}
    else:
        batching = {k: v for k, v in batching.items() if k not in system.batching_unread}
    data: dict[str, Any] = {"name": scn.name, "description": scn.description, "system": scn.system,
                            "config": scn.config}
    # What the system's runs read, no more: its roles (the parts of each it reads) and sections.
    if "algorithm" in system.sections:
        data["algorithm"] = scn.algorithm
    for r in system.roles:
        data[r] = {k: v for k, v in role(getattr(scn, r)).items()
                   if k in system.parts or k not in ("device", "model", "link")}
    speculation = dataclasses.asdict(scn.speculation) if _speculation.reads(system, scn.toggles) else {}
    for name in ("acceptance", "draft_model"):
        if name in speculation:
            speculation[name] = absolute_ref(speculation[name])
    # What the proposer does not read (a draft device's system reads none of the three).
    split = system.drafts_on_draft_device
    if split or scn.speculation.proposer != "draft_model":
        speculation.pop("draft_model", None)
    if split or scn.speculation.proposer != "ngram":
        speculation.pop("lookup_ns", None)
    if split:
        speculation.pop("proposer", None)
    serving = {k: v for k, v in dataclasses.asdict(scn.serving).items() if k not in system.serving_unread}
    given = {"toggles": toggles, "serving": serving,
             "cluster": {pool: cluster[pool] for pool in system.pools()}, "batching": batching,
             "speculation": speculation}
    return {**data, **{s: value for s, value in given.items() if s in system.sections and (value or s != "speculation")}}
