"""heteroreason: the draft on the FPGA accelerator (or any device that may draft), with
step-ahead drafting through the KVMU, the prefix cache and shadow synchronisation of
refined steps into the draft's KV cache: the paper's system."""

from __future__ import annotations

from ._stepwise import Stepwise


class Heteroreason(Stepwise):
    name = "heteroreason"
    summary = "the draft on an FPGA, step-ahead drafting and shadow synchronisation of refinements"
    preset = {"step_ahead": True, "step_ahead_depth": 1, "prefetch_cache": True, "shadow_sync": True,
              "target_ahead_after_refine": True, "target_speculation": False,
              "draft_speculation": False}
    draft_device = "u280"
