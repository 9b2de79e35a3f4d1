"""What every system answers (cosim/systems/__init__.py keeps one of each, by the name a
scenario's ``system:`` gives): its preset, the roles and sections it reads, what it
refuses, how the engine is told of it and which native entry runs it, and how a plan
speaks of its pools. Each system is one file of this package; a family's shared
behaviour is a base class of its own (_stepwise.py)."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping, Protocol

from .. import devices
from ..errors import ConfigError

ROLES = ("draft", "prm", "target")
# A scenario's sections besides its roles.
SECTIONS = ("algorithm", "toggles", "serving", "cluster", "batching", "speculation")


class Sections(Protocol):
    """The engine's sections a system composes its description from (cosim/engine/_workflow.py
    builds them from a scenario): each role's device section, the host's options, and the
    serving sections."""

    def role(self, name: str) -> dict[str, Any]: ...
    def kind(self, name: str) -> str: ...
    def options(self) -> dict[str, Any]: ...
    def cluster(self) -> dict[str, int]: ...
    def batching(self) -> dict[str, Any]: ...
    def serving(self) -> dict[str, dict[str, Any]]: ...
    def speculation(self, role: str = "target") -> dict[str, Any]: ...


def counted(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


class System:
    """One system. Subclasses set the class attributes and override what differs."""

    name: ClassVar[str]
    summary: ClassVar[str]                 # one line: what it is (docs, `cosim systems`)
    # The toggles it starts from (a scenario's toggles: section changes them) and the
    # built-in device its draft runs on by default.
    preset: ClassVar[Mapping[str, Any]]
    top: ClassVar[str]                     # the C++ top module that runs it (models/tops/)
    draft_device: ClassVar[str] = "rtx3090"
    sequential: ClassVar[bool] = False     # every operation waits for the one before
    # The algorithms whose traces it replays (the first is the default): brsd scores the
    # refinements and backtracks over a failing one; rsd is forward-only, refinements kept.
    algorithms: ClassVar[tuple[str, ...]] = ("brsd", "rsd")
    # The target scores each drafted step itself (no PRM), with serving.judge_prompt_tokens.
    verifier_is_target: ClassVar[bool] = False
    # The target writes its own version of each drafted step and a judge on the PRM's GPU
    # compares the two (Lookahead Reasoning), with serving.equivalence_prompt_tokens.
    lookahead: ClassVar[bool] = False
    # Toggles its runs need at one value, each with why: any other value is refused.
    toggles_fixed: ClassVar[Mapping[str, tuple[Any, str]]] = {}
    roles: ClassVar[tuple[str, ...]] = ROLES   # the roles its runs use
    parts: ClassVar[tuple[str, ...]] = ("device", "link", "model")  # what of each role they read
    # The scenario's sections its runs read (cosim/config/scenario.py); others are refused.
    sections: ClassVar[tuple[str, ...]] = tuple(s for s in SECTIONS if s != "speculation")
    # The device kinds its draft may run on (None: any kind that may draft).
    draft_kinds: ClassVar[tuple[str, ...] | None] = None
    waveforms: ClassVar[bool] = True       # writes a VCD of its devices
    # The batching parameters its runs never read (cosim/schema/_cluster.py).
    batching_unread: ClassVar[tuple[str, ...]] = ()
    # The serving parameters its runs never read, each with why: refused where given, left
    # out of a written scenario, no factor of a sensitivity analysis.
    serving_unread: ClassVar[Mapping[str, str]] = {
        "judge_prompt_tokens": "only a target that scores its drafts itself (the specreason system) reads it",
        "equivalence_prompt_tokens": "only a judge that compares two versions of a step (the lookahead system) "
                                     "reads it"}
    # Each problem is its final chain generated after the prompt (no step events replayed).
    output_only: ClassVar[bool] = False
    # Token-level drafts are made on the draft role's device (split decoding), not by the
    # speculation section's proposer on the target's GPU.
    drafts_on_draft_device: ClassVar[bool] = False
    # Speculation values its runs take where the scenario gives none (the declared defaults else).
    speculation_defaults: ClassVar[Mapping[str, Any]] = {}

    # ---- the scenario --------------------------------------------------------------------

    def check_file(self, data: Any) -> None:
        """Refuses what a scenario file gives that this system would ignore."""
        serving = data.get("serving")
        if isinstance(serving, dict):
            for key, why in self.serving_unread.items():
                if key in serving:
                    raise ConfigError(f"{serving.where_of(key)}: the {self.name} system does not read "
                                      f"serving.{key}: {why}")

    def check_path(self, name: str, full: str) -> None:
        """Refuses a parameter path (``--set``) this system would ignore; ``name`` is how
        the value was given."""
        if full.startswith("speculation.") and "speculation" not in self.sections:
            raise ConfigError(f"{name}: {self.speculation_unread()}")
        head, _, key = full.partition(".")
        if head == "serving" and key in self.serving_unread:
            raise ConfigError(f"{name}: the {self.name} system does not read {full}: {self.serving_unread[key]}")

    def speculation_unread(self) -> str:
        """Why a speculation section would have no effect on this system's runs."""
        if "speculation" in self.sections:
            return (f"the {self.name} system decodes speculatively only with toggles.target_speculation (or, "
                    f"with a GPU draft, toggles.draft_speculation) on; turn one on, or drop the section")
        return (f"the {self.name} system does not decode token by token speculatively; speculation is for the "
                f"speculative-decoding and split-decoding systems, and a step-level system's target or GPU draft")

    def wrong_draft(self, kind: str) -> str | None:
        """Why a draft of device kind ``kind`` is refused, or None."""
        if self.draft_kinds is None or kind in self.draft_kinds:
            return None
        return f"{self.name} drafts on {' or '.join(devices.by_name(k).label for k in self.draft_kinds)}"

    def threads(self, scn: Any) -> dict[str, int]:
        """The engine's simulated threads by the scenario path that makes them."""
        raise NotImplementedError

    # ---- the engine ----------------------------------------------------------------------

    def describe(self, scn: Any, sections: Sections) -> dict[str, Any]:
        """The description the native engine takes."""
        raise NotImplementedError

    def run(self, native: Any, description: dict[str, Any], feed: Callable[..., Any], keep: bool, *,
            vcd_stem: str, every_token: bool, shared_prefix: int, live: Any, header: Any) -> dict[str, Any]:
        """Runs this system on its C++ top through the engine's one entry; each top reads the
        options it uses (bindings/system_run.hpp)."""
        options: dict[str, Any] = {"keep_activities": keep, "vcd_path": vcd_stem, "vcd_every_token": every_token,
                                   "shared_prefix_tokens": shared_prefix}
        if live is not None:
            options.update(decide=live.decide, max_backtracks=header.max_backtracks,
                           scored_refinements=header.backtracking, ask_drafts=live.asks_drafts)
        return native.simulate(self.top, description, feed, options)

    # ---- capacity plans ------------------------------------------------------------------

    def pools(self) -> tuple[str, ...]:
        """The device pools a plan sizes (one per role it uses)."""
        return self.roles

    def cluster_words(self, cluster: Mapping[str, int]) -> str:
        """A cluster in words, as a plan's table shows it."""
        raise NotImplementedError
