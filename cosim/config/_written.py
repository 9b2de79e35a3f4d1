"""A scenario as ``scenario.resolved.yaml`` holds it: a scenario file, its devices, models
and links inline and its paths absolute, that loads (load_scenario) to the same scenario
from any folder and reruns to the same result. What a file may not give, because it would
have no effect, is left out: batching values while batching is off, the boards' shared
host link while each board has its own, the step-ahead depth while step-ahead is off,
the vLLM engine's values for another system and the batchers' for the autoregressive
system, and the autoregressive system's unused roles and its target's link; loaded, they
take the values they had (the defaults and the system's preset)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from . import _cluster
from .hardware import kind_of


def absolute_ref(ref: str, folder: Path | None = None) -> str:
    """A file a written description names (a YAML or CSV path), made absolute so that the
    written file loads from any folder: a relative path is taken from ``folder`` (the
    folder of the file it was read from; default the current folder, where a loaded
    description's paths are already joined to it). A built-in name is kept as it is."""
    if not ref.endswith((".yaml", ".yml", ".csv")):
        return ref
    return str(((folder or Path.cwd()) / ref).resolve())


def reloadable(scn: Any) -> dict[str, Any]:
    """``scn`` (a Scenario) as a scenario file's mapping."""

    def inline(config: Any) -> dict[str, Any]:
        data = {"kind": kind_of(config), **dataclasses.asdict(config)}
        if isinstance(data.get("host_link"), str):
            data["host_link"] = absolute_ref(data["host_link"])
        if isinstance(data.get("profile"), dict):
            data["profile"]["file"] = absolute_ref(data["profile"]["file"])
        return data

    def role(r: Any) -> dict[str, Any]:
        out = {"device": inline(r.device), "model": inline(r.model), "link": inline(r.link)}
        return {**out, "profile": r.profile} if r.profile is not None else out

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
        unread = _cluster.SPECULATIVE_ONLY if scn.system == "autoregressive" else _cluster.ENGINE_ONLY
        batching = {k: v for k, v in batching.items() if k not in unread}
    data: dict[str, Any] = {"name": scn.name, "description": scn.description, "system": scn.system,
                            "config": scn.config}
    if scn.system == "autoregressive":
        target = {k: v for k, v in role(scn.target).items() if k != "link"}  # it moves nothing over a link
        return {**data, "target": target, "cluster": {"target": cluster["target"]}, "batching": batching}
    return {**data, "algorithm": scn.algorithm, "draft": role(scn.draft), "prm": role(scn.prm),
            "target": role(scn.target), "toggles": toggles, "serving": dataclasses.asdict(scn.serving),
            "cluster": cluster, "batching": batching}
