"""The serving sections of the description the native engine takes (the rest comes
from cosim.engine._workflow.system_dict): the cluster's pools, the GPUs' batching and the draft
boards' shared host link, from a scenario's ``cluster:`` and ``batching:`` sections as
cosim/schema/_cluster.py declares them."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from .. import systems
from ..schema import _params
from ..config._cluster import gpu_blocks, host_link
from ..config import _speculation
from ..config.scenario import Scenario
from ..errors import ConfigError
from ..schema._cluster import SHAPE, flat_key
from ..schema._speculation import DRAFTS


def cluster_section(scn: Scenario) -> dict[str, int]:
    """The engine's ``cluster`` section: every native pool parameter under its flat key
    (cosim/schema/_cluster.py: ``cluster.draft.contexts_per_device`` is
    ``draft_contexts_per_device``)."""
    return {f.key: int(getattr(getattr(scn.cluster, f.pool), f.decl.name)) for f in SHAPE}


def batching_section(scn: Scenario) -> dict[str, Any]:
    """The engine's ``batching`` section: the declared native batching parameters, with the
    vLLM engine's KV blocks per GPU derived where the system's runs read them."""
    batching = _params.native(scn.batching)
    if scn.batching.enabled and "num_gpu_blocks" not in systems.of(scn).batching_unread:
        batching["num_gpu_blocks"] = gpu_blocks(scn)
    return batching


def speculation_section(scn: Scenario, role: str = "target") -> dict[str, Any]:
    """The engine's ``speculation`` section for the role that decodes speculatively (the
    target, or a step-level system's draft GPU): the drafts a pass, their acceptance rates,
    the draws' seed, a host lookup's time, and the proposer's model on that role's GPU
    (None for a host lookup)."""
    spec = scn.speculation
    rates = _speculation.acceptance(spec).rates
    # A system that drafts on its draft device has that device's section instead.
    split = systems.of(scn).drafts_on_draft_device
    # The heuristic_transient schedule and a live policy may draft past draft_tokens: every
    # position the profile gives, up to the drafts a verification checks at most.
    heuristic = spec.draft_schedule == "heuristic_transient"
    return {"draft_tokens": spec.draft_tokens, "heuristic": heuristic, "acceptance": list(rates[:DRAFTS.value]),
            "seed": spec.seed,
            "lookup_ns": spec.lookup_ns if spec.proposer == "ngram" and not split else 0.0,
            "drafter": None if split else _speculation.drafter_section(spec, getattr(scn, role))}


def serving_sections(scn: Scenario) -> dict[str, dict[str, Any]]:
    """``{"cluster": {...}, "batching": {...}}`` as the engine reads them: the cluster's
    pools and the GPUs' batching, and, where draft boards share a PCIe switch's link to the
    host, that link (``host_link``). A scenario without ``cluster:`` and ``batching:``
    sections gives one device of each role, one draft context and no batching: the
    single-request system."""
    if not isinstance(scn, Scenario):
        raise ConfigError(f"serving_sections: expected a Scenario (cosim.load_scenario), got {type(scn).__name__}")
    sections = {"cluster": cluster_section(scn), "batching": batching_section(scn)}
    if scn.cluster.draft.boards_per_host_link > 1:  # else no link is shared: no file to read per point
        sections["host_link"] = _params.native(host_link(scn.cluster))
    return sections


# The engine's cluster keys and the scenario paths that set them, by the schema's one rule.
CLUSTER_PATHS = {f.key: f.path for f in SHAPE}
# A key earlier releases used, still read (with a DeprecationWarning).
RENAMED = {"contexts_per_draft": flat_key("draft", "contexts_per_device")}


def with_cluster(scn: Scenario, cluster: dict[str, Any]) -> Scenario:
    """``scn`` with the pools of ``cluster`` (a dict as the engine's cluster section, as
    the capacity search hands its evaluation); keys it leaves out keep their values."""
    cluster = renamed_keys(cluster, "cluster")
    unknown = sorted(set(cluster) - set(CLUSTER_PATHS))
    if unknown:
        raise ConfigError(f"cluster: unknown key {unknown[0]!r}; known: {', '.join(CLUSTER_PATHS)}")
    pools = systems.of(scn).pools()
    values = {CLUSTER_PATHS[key]: value for key, value in cluster.items()
              # a pool the system does not have (the target alone's draft and PRM): one stands for none
              if not (CLUSTER_PATHS[key].split(".")[1] not in pools and value == 1)}
    return scn.with_values(values) if values else scn


def renamed_keys(cluster: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``cluster`` with a key an earlier release named differently under its name now, and a
    DeprecationWarning that says so; both names at once are refused."""
    out = dict(cluster)
    for old, new in RENAMED.items():
        if old in out:
            if new in out:
                raise ConfigError(f"{what}: {old!r} and {new!r} are one value (its old and new name); give {new!r}")
            warnings.warn(f"{what}: {old!r} is now named {new!r} ({CLUSTER_PATHS[new]} in a scenario)",
                          DeprecationWarning, stacklevel=3)
            out[new] = out.pop(old)
    return out
