"""gpu-stepahead: the draft model on a GPU with step-ahead drafting, the target's prefix
cache and its run ahead after a refinement: the paper's strongest GPU-only system."""

from __future__ import annotations

from ._stepwise import Stepwise


class GpuStepahead(Stepwise):
    name = "gpu-stepahead"
    summary = "the draft on a GPU, drafting a step ahead while the PRM scores"
    preset = {"step_ahead": True, "step_ahead_depth": 1, "prefetch_cache": True, "shadow_sync": False,
              "target_ahead_after_refine": True, "target_speculation": False,
              "draft_speculation": False}
    draft_kinds = ("gpu",)
