"""gpu-baseline: the draft model on a GPU, strictly sequential (each operation waits for
the one before; no overlap toggle may be on): the paper's GPU baseline."""

from __future__ import annotations

from ._stepwise import TOGGLES_OFF, Stepwise


class GpuBaseline(Stepwise):
    name = "gpu-baseline"
    summary = "the draft on a GPU, every operation waiting for the one before"
    preset = TOGGLES_OFF
    sequential = True
    draft_kinds = ("gpu",)
