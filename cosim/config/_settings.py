"""Checks across a scenario's values that a scenario file and Scenario.with_values (the
command line's --set) share, in the same words: values that would have no effect are
refused, the autoregressive system takes no draft, PRM or toggles, and gpu-baseline keeps
its toggles off."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from . import _cluster
from ._yamlio import LocatedDict
from ..errors import ConfigError

# What the autoregressive system does not have: sections and parameter paths it refuses.
NOT_AUTOREGRESSIVE = ("draft", "prm", "toggles", "serving", "algorithm")
# Why the autoregressive system's target link is refused: nothing crosses it.
TARGET_LINK_UNUSED = ("the autoregressive system moves nothing over the target's link (requests reach the GPU's "
                      "engine directly), so a link would have no effect; drop it")
# Why a step-ahead depth given with step-ahead off is refused (after "<depth> ").
DEPTH_WITHOUT_STEP_AHEAD = "steps ahead, but step_ahead is off: the depth would have no effect; drop one of them"


def check_given(scn: Any, given: Mapping[str, str]) -> None:
    """``given``: full path -> how each value was given (``--set batching.max_batch=8``).
    Only these are judged: a file's batching values stay allowed when --set turns batching
    off, as that change itself has an effect."""
    batching = [name for full, name in given.items() if full.startswith("batching.") and full != "batching.enabled"]
    if batching and not scn.batching.enabled:
        raise ConfigError(f"{batching[0]}: {_cluster.BATCHING_OFF}")
    if "cluster.draft.host_link" in given and scn.cluster.draft.boards_per_host_link == 1:
        raise ConfigError(f"{given['cluster.draft.host_link']}: {_cluster.HOST_LINK_UNSHARED}")
    depth = scn.toggles.step_ahead_depth
    if "toggles.step_ahead_depth" in given and depth and not scn.toggles.step_ahead:
        raise ConfigError(f"{given['toggles.step_ahead_depth']}: {depth} {DEPTH_WITHOUT_STEP_AHEAD}")


def check_autoregressive(data: LocatedDict) -> None:
    """The autoregressive system has a target and nothing else: a draft, a PRM, toggles,
    their pools or the target's link given for it would be ignored, so they are refused."""
    for key in NOT_AUTOREGRESSIVE:
        if key in data:
            raise ConfigError(f"{data.where_of(key)}: the autoregressive system runs the target alone; it has no "
                              f"{key} (drop it, or choose a speculative system)")
    target = data.get("target")
    if isinstance(target, LocatedDict) and "link" in target:
        raise ConfigError(f"{target.where_of('link')}: {TARGET_LINK_UNUSED}")
    cluster = data.get("cluster")
    if isinstance(cluster, LocatedDict):
        for key in ("draft", "prm"):
            if key in cluster:
                raise ConfigError(f"{cluster.where_of(key)}: the autoregressive system has no {key} pool; its "
                                  f"cluster is cluster.target.devices GPUs")


def check_sequential(sequential: bool, toggles: Any, where: Callable[[str], str], hint: str = "") -> None:
    """A strictly sequential system (gpu-baseline) keeps every toggle off; ``where(name)``
    names the first toggle that is on, ``hint`` follows the message."""
    on = [name for name, value in dataclasses.asdict(toggles).items() if value]
    if sequential and on:
        raise ConfigError(f"{where(on[0])}: gpu-baseline is strictly sequential; its toggles stay off{hint}")
