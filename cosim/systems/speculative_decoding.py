"""speculative-decoding: the target alone on its GPUs, decoding each answer with
token-level speculative decoding (docs/system.md, "Token-level speculative decoding"): a
proposer on the target's GPU (an EAGLE head, a draft model) or on the host (an n-gram
lookup) drafts tokens, and the target verifies them in one forward pass, keeping the
accepted prefix and one token of its own (models/spec_decode.hpp). What a user sets the
step-level systems against: the token-level speculation vLLM ships."""

from __future__ import annotations

from typing import Any

from .autoregressive import Autoregressive
from ._system import Sections


class SpeculativeDecoding(Autoregressive):
    name = "speculative-decoding"
    summary = "the target alone, drafting and verifying tokens (EAGLE, a draft model, n-gram)"
    sections = ("cluster", "batching", "speculation")

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        return {**super().describe(scn, sections), "speculation": sections.speculation()}
