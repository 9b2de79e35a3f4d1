"""The serving sections of the description the native engine takes (the rest comes
from cosim._workflow.system_dict): the cluster's pools and the GPUs' batching, from a
scenario's ``cluster:`` and ``batching:`` sections (cosim/config/_cluster.py)."""

from __future__ import annotations

from typing import Any

from .config import _params
from .config._cluster import gpu_blocks, host_link
from .config.scenario import Scenario
from .errors import ConfigError


def host_link_section(scn: Scenario) -> dict[str, Any]:
    """The engine's ``host_links`` section: how many draft boards share a switch's link to
    the host, and that link."""
    return {"boards_per_host_link": int(scn.cluster.draft.boards_per_host_link),
            "link": _params.native(host_link(scn.cluster))}


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
            "gpu_memory_utilization": float(batching.gpu_memory_utilization),
        },
    }


def autoregressive_system(scn: Scenario, target: dict[str, Any]) -> dict[str, Any]:
    """What the native autoregressive run takes (bindings/autoregressive_run.hpp): the target's
    GPU section (``target``, as system_dict makes it), its pool, and the batching, with the vLLM
    engine's KV blocks per GPU (given, or derived from gpu_memory_utilization)."""
    batching = scn.batching
    return {
        "system": "autoregressive",
        "target": target,
        "cluster": {"target_devices": int(scn.cluster.target.devices)},
        "batching": {
            "enabled": bool(batching.enabled),
            "max_batch": int(batching.max_batch),
            "token_budget": int(batching.token_budget),
            "block_size": int(batching.block_size),
            "num_gpu_blocks": gpu_blocks(scn) if batching.enabled else 0,
            "prefix_caching": bool(batching.prefix_caching),
            "async_scheduling": bool(batching.async_scheduling),
        },
    }


# The engine's cluster keys and the scenario paths that set them.
CLUSTER_PATHS = {"draft_devices": "cluster.draft.devices", "contexts_per_draft": "cluster.draft.contexts_per_device",
                 "prm_devices": "cluster.prm.devices", "target_devices": "cluster.target.devices"}


def with_cluster(scn: Scenario, cluster: dict[str, Any]) -> Scenario:
    """``scn`` with the pools of ``cluster`` (a dict as the engine's cluster section, as
    the capacity search hands its evaluation); keys it leaves out keep their values."""
    unknown = sorted(set(cluster) - set(CLUSTER_PATHS))
    if unknown:
        raise ConfigError(f"cluster: unknown key {unknown[0]!r}; known: {', '.join(CLUSTER_PATHS)}")
    values = {CLUSTER_PATHS[key]: value for key, value in cluster.items()
              # the target alone has no draft or PRM pool: one of each stands for none
              if not (scn.system == "autoregressive" and key != "target_devices" and value == 1)}
    return scn.with_values(values) if values else scn
