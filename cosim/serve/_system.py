"""The serving sections of the description the native engine takes (the rest comes
from cosim._workflow.system_dict): the cluster's pools and the GPUs' batching, from a
scenario's ``cluster:`` and ``batching:`` sections (cosim/config/_cluster.py)."""

from __future__ import annotations

from typing import Any

from ..config.scenario import Scenario
from ..errors import ConfigError


def serving_sections(scn: Scenario) -> dict[str, dict[str, Any]]:
    """``{"cluster": {...}, "batching": {...}}`` as the engine reads them. A scenario
    without those sections gives one device of each role, one draft context and no
    batching: today's single-request system."""
    if not isinstance(scn, Scenario):
        raise ConfigError(f"serving_sections: expected a Scenario (cosim.load_scenario), got {type(scn).__name__}")
    cluster, batching = scn.cluster, scn.batching
    return {
        "cluster": {
            "draft_devices": int(cluster.draft.devices),
            "contexts_per_draft": int(cluster.draft.contexts_per_device),
            "prm_devices": int(cluster.prm.devices),
            "target_devices": int(cluster.target.devices),
        },
        "batching": {
            "enabled": bool(batching.enabled),
            "max_batch": int(batching.max_batch),
            "token_budget": int(batching.token_budget),
            "policy": str(batching.policy),
        },
    }
