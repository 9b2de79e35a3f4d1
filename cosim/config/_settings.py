"""Checks across a scenario's values that a scenario file and Scenario.with_values (the
command line's --set) share, in the same words: values that would have no effect are
refused and a sequential system keeps its toggles off (what each system refuses besides
is its own: cosim/systems/)."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from . import _cluster
from ..errors import ConfigError
from ..schema._toggles import DECODING

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


def check_sequential(system: Any, toggles: Any, where: Callable[[str], str], hint: str = "") -> None:
    """A strictly sequential system (gpu-baseline) keeps every overlap toggle off (a toggle of
    how the target or the draft decodes may be on); ``where(name)`` names the first that is
    on, ``hint`` follows the message."""
    on = [name for name, value in dataclasses.asdict(toggles).items() if value and name not in DECODING]
    if system.sequential and on:
        raise ConfigError(f"{where(on[0])}: {system.name} is strictly sequential; its toggles stay off{hint}")
    for name, (value, why) in system.toggles_fixed.items():
        if getattr(toggles, name) != value:
            raise ConfigError(f"{where(name)}: the {system.name} system keeps toggles.{name} "
                              f"{str(value).lower()}: {why}")
