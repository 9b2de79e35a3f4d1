"""lookahead: Lookahead Reasoning (Fu et al. 2025, arXiv 2506.19830; docs/system.md,
"Lookahead Reasoning"): the draft device drafts reasoning steps back to back, up to the
step-ahead depth beyond the step under verification; the target writes its own version of
every step at once, each from the context the drafts before it make, in one batching
engine; a judge model on the PRM's GPU compares each drafted step with the target's
version and keeps the draft where they mean the same, else the target's step. Forward-only
(rsd); the draft may run on a GPU, an FPGA board or an edge board."""

from __future__ import annotations

from ._stepwise import Stepwise

# Why the workflow toggles it has no use for stay off.
_OWN_RUNS = "Lookahead Reasoning starts a target run on every drafted step itself"


class Lookahead(Stepwise):
    name = "lookahead"
    summary = "the draft writes steps ahead, the target writes each at once, a judge keeps the equivalent drafts"
    # Its official code drafts up to 4 steps ahead of the settled one (max_depth 4); the KVMU
    # keeps at most two step-ahead boundaries, so three: the step under verification and two more.
    preset = {"step_ahead": True, "step_ahead_depth": 2, "prefetch_cache": False, "shadow_sync": False,
              "target_ahead_after_refine": False, "target_speculation": False,
              "draft_speculation": False}
    algorithms = ("rsd",)
    lookahead = True
    toggles_fixed = {
        "step_ahead": (True, "drafting ahead of the verdicts is the algorithm (toggles.step_ahead_depth sets how "
                             "far)"),
        "prefetch_cache": (False, _OWN_RUNS), "target_ahead_after_refine": (False, _OWN_RUNS),
        "shadow_sync": (False, "the target's step is written whole before the judge compares it; the draft "
                               "device prefills it"),
    }
    serving_unread = {
        "judge_prompt_tokens": Stepwise.serving_unread["judge_prompt_tokens"],
        "prm_prefix_cache": "the judge reads two versions of a step in a prompt of its own, not the context"}
