"""The step-level speculative family (docs/system.md): a draft device drafts each
reasoning step, a process reward model (PRM) scores it, and the target refines a step
the PRM rejects; the algorithm may backtrack. Its members differ in where the draft runs
and which overlaps their toggles allow; the native workflow (models/workflow/) runs them
all."""

from __future__ import annotations

from typing import Any, Mapping

from ._system import SECTIONS, Sections, System, counted
from ..schema._cluster import ENGINE_ONLY

# Every toggle off: each operation of the host waits for the one before it to finish.
TOGGLES_OFF = {"step_ahead": False, "step_ahead_depth": 0, "prefetch_cache": False, "shadow_sync": False,
               "target_ahead_after_refine": False, "target_speculation": False,
               "draft_speculation": False}


class Stepwise(System):
    top = "stepwise"
    batching_unread = ENGINE_ONLY  # the vLLM engine's own; the batchers admit by KV bytes
    # The speculation section sets the target's decoding with toggles.target_speculation on,
    # a draft GPU's with toggles.draft_speculation.
    sections = SECTIONS

    def threads(self, scn: Any) -> dict[str, int]:
        c = scn.cluster
        return {"cluster.draft.devices": c.draft.devices,
                "cluster.draft.contexts_per_device": c.draft.devices * c.draft.contexts_per_device,
                "cluster.prm.devices": c.prm.devices, "cluster.target.devices": c.target.devices}

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        found = {"options": sections.options(),
                 "draft": {"kind": sections.kind("draft"), **sections.role("draft")},
                 "prm": sections.role("prm"), "target": sections.role("target"), **sections.serving()}
        if scn.toggles.target_speculation:
            found["speculation"] = sections.speculation()
        if scn.toggles.draft_speculation:
            found["draft_speculation"] = sections.speculation("draft")
        return found

    def cluster_words(self, cluster: Mapping[str, int]) -> str:
        return (f"{counted(cluster['draft_devices'], 'draft device')} "
                f"({counted(cluster['draft_contexts_per_device'], 'context')} each), "
                f"{counted(cluster['prm_devices'], 'PRM GPU')} and {counted(cluster['target_devices'], 'target GPU')}")
