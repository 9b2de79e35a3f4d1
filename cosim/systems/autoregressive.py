"""autoregressive: the target model alone on its GPUs, generating each problem's final
chain after its prompt, served by a vLLM-faithful engine (models/vllm_engine.hpp); no
draft, no PRM, nothing speculative: the yardstick the speculative systems are compared
with, and what a measured vLLM run checks (docs/validation.md)."""

from __future__ import annotations

from typing import Any, Mapping

from ._stepwise import TOGGLES_OFF
from ._system import ROLES, SECTIONS, Sections, System, counted
from ..errors import ConfigError
from ..schema._cluster import SPECULATIVE_ONLY
from ..schema._yamlio import LocatedDict

_ROLES = ("target",)
_SECTIONS = ("cluster", "batching")
# Why its target link is refused: nothing crosses it.
TARGET_LINK_UNUSED = ("the autoregressive system moves nothing over the target's link (requests reach the GPU's "
                      "engine directly), so a link would have no effect; drop it")


class Autoregressive(System):
    name = "autoregressive"
    top = "autoregressive"
    summary = "the target alone, served by a vLLM-faithful engine"
    preset = TOGGLES_OFF  # its draft and PRM roles stay unused
    roles = _ROLES
    sections = _SECTIONS
    parts = ("device", "model")  # requests reach the GPU's engine directly: no link
    waveforms = False  # a timeline shows its requests
    batching_unread = SPECULATIVE_ONLY  # the engine admits in arrival order, with no verifications
    output_only = True
    # How its refusals say what it is, and whether its target's link carries anything.
    what_it_is = "runs the target alone"
    target_link_used = False

    def not_here(self) -> tuple[str, ...]:
        """What it does not have, refused where given: the other roles and sections."""
        return tuple(r for r in ROLES if r not in self.roles) + tuple(s for s in SECTIONS if s not in self.sections)

    def check_file(self, data: LocatedDict) -> None:
        """A draft, a PRM, toggles, their pools or the target's link given for it would be
        ignored, so they are refused."""
        for key in self.not_here():
            if key in data:
                other = ("the speculative-decoding or split-decoding system" if key == "speculation" else
                         "a step-level speculative system")
                raise ConfigError(f"{data.where_of(key)}: the {self.name} system {self.what_it_is}; it has "
                                  f"no {key} (drop it, or choose {other})")
        target = data.get("target")
        if isinstance(target, LocatedDict) and "link" in target and not self.target_link_used:
            raise ConfigError(f"{target.where_of('link')}: {TARGET_LINK_UNUSED}")
        cluster = data.get("cluster")
        if isinstance(cluster, LocatedDict):
            for key in ("draft", "prm"):
                if key in cluster:
                    raise ConfigError(f"{cluster.where_of(key)}: the {self.name} system has no {key} pool; its "
                                      f"cluster is cluster.target.devices GPUs")

    def check_path(self, name: str, full: str) -> None:
        super().check_path(name, full)
        head = full.partition(".")[0]
        if head in self.not_here() or full.startswith(("cluster.draft.", "cluster.prm.")):
            raise ConfigError(f"{name}: the {self.name} system {self.what_it_is} (no PRM, no step-level toggles, "
                              f"one pool: cluster.target)")
        if full.startswith("target.link.") and not self.target_link_used:
            raise ConfigError(f"{name}: {TARGET_LINK_UNUSED}")

    def threads(self, scn: Any) -> dict[str, int]:
        # A thread per GPU and per sequence of its batch (one per GPU unbatched).
        c, b = scn.cluster, scn.batching
        slots = c.target.devices * (b.max_batch if b.enabled else 1)
        return {"cluster.target.devices": c.target.devices + (slots if not b.enabled else 0),
                "batching.max_batch": slots if b.enabled else 0}

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        # The engine reads the target pool of the cluster, and the batching with the KV
        # blocks per GPU (given, or derived from gpu_memory_utilization).
        return {"system": self.name, "target": sections.role("target"), "cluster": sections.cluster(),
                "batching": sections.batching()}

    def cluster_words(self, cluster: Mapping[str, int]) -> str:
        return counted(cluster["target_devices"], "target GPU")
