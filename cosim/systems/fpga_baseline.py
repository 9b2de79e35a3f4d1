"""fpga-baseline: gpu-baseline with the draft on the FPGA accelerator: strictly sequential,
so it shows what the FPGA's decode rate alone buys, before any overlap (step-ahead
drafting, shadow synchronisation) that heteroreason adds."""

from __future__ import annotations

from ._stepwise import TOGGLES_OFF, Stepwise


class FpgaBaseline(Stepwise):
    name = "fpga-baseline"
    summary = "the draft on an FPGA, every operation waiting for the one before"
    preset = TOGGLES_OFF
    sequential = True
    draft_device = "u280"
    draft_kinds = ("fpga",)
