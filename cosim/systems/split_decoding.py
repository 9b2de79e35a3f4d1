"""split-decoding: token-level speculative decoding split across two devices (docs/system.md,
"Split decoding"): a draft device apart from the target (an FPGA board, a Jetson, another
GPU) drafts each pass's tokens with the scenario's draft model, the target GPU verifies them,
and the host relays drafts and verdicts over both devices' PCIe links (models/draft_device.hpp).
It asks what the step-level systems' draft hardware buys as a token-level drafter."""

from __future__ import annotations

from typing import Any

from .speculative_decoding import SpeculativeDecoding
from ._system import Sections
from ..schema._toggles import SERVING

# A token id and a verdict on PCIe: the serving section's declared defaults (the section's
# other values are the step-level workflow's, so it is not read).
RELAY = {d.name: d.default for d in SERVING.params if d.name in ("token_bytes", "control_bytes")}


class SplitDecoding(SpeculativeDecoding):
    name = "split-decoding"
    summary = "token-level speculative decoding, a draft device drafting for the target GPU"
    roles = ("draft", "target")
    parts = ("device", "link", "model")  # the drafts cross both links
    draft_device = "u280"
    what_it_is = "has a draft device beside each target GPU"
    target_link_used = True
    drafts_on_draft_device = True
    # Its draft device runs a draft model: a draft model's acceptance (the declared default is
    # an EAGLE head's).
    speculation_defaults = {"acceptance": "leviathan-t5-small-xxl"}

    def pools(self) -> tuple[str, ...]:
        # A draft device beside each target GPU: the target pool sizes both.
        return ("target",)

    def threads(self, scn: Any) -> dict[str, int]:
        return {"cluster.target.devices": 2 * scn.cluster.target.devices}

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        draft = {"kind": sections.kind("draft"), **sections.role("draft"), "relay": RELAY}
        return {**super().describe(scn, sections), "draft": draft}
