"""specreason: step-level speculation judged by the target itself (SpecReason, Pan et al.
2025; docs/system.md, "SpecReason"): a small model drafts each reasoning step on the draft
device, the target prefills the step and a scoring prompt over its own KV cache and reads
one score token, and regenerates the step when the score is below the threshold. No PRM,
no backtracking (the forward-only algorithm, rsd): a kept step is already in the target's
KV cache, a regenerated one is prefilled into the drafter's. Strictly sequential, as the
paper runs it; its draft may run on a GPU, an FPGA board or an edge board."""

from __future__ import annotations

from typing import Any, Mapping

from ._stepwise import TOGGLES_OFF, Stepwise
from ._system import Sections, counted
from ..errors import ConfigError
from ..schema._yamlio import LocatedDict

# Why a PRM given to it is refused.
NO_PRM = "the specreason system's target scores each drafted step itself; it has no PRM"


class Specreason(Stepwise):
    name = "specreason"
    summary = "a small model drafts each step, the target scores it itself and regenerates the rejected"
    preset = TOGGLES_OFF
    sequential = True
    roles = ("draft", "target")
    algorithms = ("rsd",)
    verifier_is_target = True
    # Its scoring prompt's length is serving.judge_prompt_tokens (cosim/schema/_toggles.py).
    serving_unread = {"prm_prefix_cache": f"{NO_PRM}; the target scores over its own KV cache, prefilling "
                                          f"only what it lacks",
                      "equivalence_prompt_tokens": Stepwise.serving_unread["equivalence_prompt_tokens"]}

    def check_file(self, data: LocatedDict) -> None:
        """A PRM or a PRM pool given for it would be ignored, so they are refused."""
        if "prm" in data:
            raise ConfigError(f"{data.where_of('prm')}: {NO_PRM} (drop the section)")
        cluster = data.get("cluster")
        if isinstance(cluster, LocatedDict) and "prm" in cluster:
            raise ConfigError(f"{cluster.where_of('prm')}: {NO_PRM}; its scoring passes run on the target GPUs "
                              f"(cluster.target.devices)")
        super().check_file(data)

    def check_path(self, name: str, full: str) -> None:
        super().check_path(name, full)
        if full.startswith(("prm.", "cluster.prm.")):
            raise ConfigError(f"{name}: {NO_PRM}")

    def threads(self, scn: Any) -> dict[str, int]:
        return {k: v for k, v in super().threads(scn).items() if k != "cluster.prm.devices"}

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        # The engine's verifier is the target's model on the target's GPUs (verifier_is_target).
        return {**super().describe(scn, sections), "prm": sections.role("target")}

    def pools(self) -> tuple[str, ...]:
        return ("draft", "target")

    def cluster_words(self, cluster: Mapping[str, int]) -> str:
        return (f"{counted(cluster['draft_devices'], 'draft device')} "
                f"({counted(cluster['draft_contexts_per_device'], 'context')} each) and "
                f"{counted(cluster['target_devices'], 'target GPU')}, which also scores the drafts")
