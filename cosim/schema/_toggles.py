"""The engine's switches, declared once: a scenario's toggles and serving section (name,
type, rule, help and where the default comes from), the options the C++ host reads
(WorkflowOptions, each naming the scenario value it comes from), the trace's event kinds
and the questions of a live run. From this module come the Python classes
(cosim.config.scenario's Toggles and Serving), the C++ struct's fields, the binding's
reader and the enums (generated at build time by scripts/gen_native_params.py). Standard
library only, beside cosim/schema/_declarations.py."""

from __future__ import annotations

from dataclasses import dataclass

try:
    from ._declarations import PAYLOAD, Decl, Group
except ImportError:  # read by path at build time, after the declarations (scripts/gen_native_params.py)
    from cosim_schema_declarations import PAYLOAD, Decl, Group  # type: ignore[no-redef]

# A scenario's toggles. Their defaults come from the system: each system's preset sets every
# one (cosim/systems/, docs/system.md; gpu-baseline: all off), and a
# scenario may override them.
TOGGLES = Group("toggles", "Toggles", "WorkflowOptions", "", "The workflow's optimizations; each system's preset "
                "gives their defaults (docs/system.md).", (
    Decl("step_ahead", bool, "draft one step ahead of the verdict, and start the target on step i once step i-1 "
         "is settled", rule="any"),
    Decl("step_ahead_depth", int, "with step_ahead: how many steps the draft device may draft beyond the step "
         "under verification: 0 (only the target works ahead), 1 (the published design) or 2 (an extension: the "
         "KVMU keeps the extra step boundary, docs/system.md)", rule="depth"),
    Decl("prefetch_cache", bool, "keep interrupted target runs and reuse them when the context matches",
         rule="any"),
    Decl("shadow_sync", bool, "stream refined tokens into the draft device while the target decodes (off: "
         "vanilla local prefill afterwards)", rule="any"),
    Decl("target_ahead_after_refine", bool, "with step_ahead: once the target's refinement of a step ends, it "
         "starts the next step at once, before the refinement's verdict, as the workflow describes (off: it "
         "waits for that verdict)", rule="any"),
    Decl("target_speculation", bool, "the target decodes its refinements with token-level speculative decoding, "
         "as the scenario's speculation section sets it (an EAGLE head on its GPU by default; docs/system.md)",
         rule="any"),
    Decl("draft_speculation", bool, "a draft model on a GPU decodes its drafted steps with token-level "
         "speculative decoding, as the scenario's speculation section sets it (an EAGLE head of the draft model "
         "on its GPU by default; docs/system.md)", rule="any"),
))

# Toggles that change how the target or a GPU draft decodes, not which operations overlap: a
# strictly sequential system may turn them on (SpecReason with speculative decoding in its
# target is how its paper combines the two).
DECODING = ("target_speculation", "draft_speculation")

SERVING = Group("serving", "Serving", "WorkflowOptions", "", "How the host moves a request's data.", (
    Decl("prm_prefix_cache", bool, "the PRM prefills only tokens it has not seen; off (default): it scores each "
         "step over the whole context, as reward models served through vLLM's pooling runner did without "
         "prefix caching (estimate)", rule="any", default=False),
    Decl("judge_prompt_tokens", int, "tokens of the scoring prompt a target that judges each drafted step itself "
         "(the specreason system) prefills after the step, its score read from the last position",
         rule="non_negative", default=70,
         note="source: SpecReason (arXiv 2504.07891v2) section 4.1: a scoring pass prefills about 70 new tokens "
              "besides the step (the request for a 0-9 score and the answer's prefix); 40-120 with the wording",
         range=(40, 120)),
    Decl("equivalence_prompt_tokens", int, "tokens of the judge's prompt besides the two versions of a step it "
         "compares (the lookahead system), its answer read from the last position",
         rule="non_negative", default=190,
         note="estimate: Lookahead Reasoning's judge template (hao-ai-lab/LookaheadReasoning, src/lr.py, "
              "equal_prompt) is 857 characters, 192 words and marks, in Qwen2.5's chat format; at 4 to 5.5 "
              "characters a token, 155 to 215",
         range=(155, 215)),
    Decl("token_bytes", int, "bytes per token id on PCIe (a 32-bit id)", default=4, limit=PAYLOAD),
    Decl("control_bytes", int, "bytes of a verdict, command or pointer update on PCIe", default=64,
         note="estimate: one small DMA descriptor's payload; plausible from 32 to 256 bytes", range=(32, 256),
         limit=PAYLOAD),
))


@dataclass(frozen=True)
class Option:
    """A field of the C++ WorkflowOptions. ``source``: the scenario value it comes from
    (``toggles.step_ahead``), or where else (``system``: the system's preset; ``run``: the
    call's arguments; ``engine``: set inside the engine); only ``toggles.``, ``serving.``
    and ``system`` options are read from the engine's ``options`` section. A ``system``
    option is the system's class attribute of its name (cosim/systems/)."""

    name: str
    type: str  # bool, int32_t or int64_t
    default: str  # the C++ default
    source: str
    help: str
    rule: str = "any"

    @property
    def read(self) -> bool:
        return self.source == "system" or self.source.startswith(("toggles.", "serving."))


OPTIONS: tuple[Option, ...] = (
    Option("sequential", "bool", "false", "system", "gpu-baseline: every operation waits for the previous one"),
    Option("verifier_is_target", "bool", "false", "system",
           "specreason: the target scores each drafted step on its own GPUs and KV cache (no PRM)"),
    Option("judge_prompt_tokens", "int64_t", "70", "serving.judge_prompt_tokens",
           "specreason: tokens of the scoring prompt the target prefills after a drafted step", "non_negative"),
    Option("lookahead", "bool", "false", "system",
           "lookahead: the target writes its own version of each drafted step and a judge compares the two"),
    Option("equivalence_prompt_tokens", "int64_t", "190", "serving.equivalence_prompt_tokens",
           "lookahead: the judge's prompt besides the two versions of a step", "non_negative"),
    Option("step_ahead_depth", "int32_t", "1", "toggles.step_ahead_depth",
           "steps the draft device may draft ahead of the verdict (0-2; 0 without step_ahead)"),
    Option("step_ahead", "bool", "true", "toggles.step_ahead",
           "the target starts step i once step i-1 is settled"),
    Option("target_ahead_after_refine", "bool", "true", "toggles.target_ahead_after_refine",
           "... or, after its own refinement of step i-1, once that ends"),
    Option("prefetch_cache", "bool", "true", "toggles.prefetch_cache",
           "interrupted target runs are kept for reuse (only with step_ahead)"),
    Option("shadow_sync", "bool", "true", "toggles.shadow_sync", "refined tokens stream into the draft device as "
           "decoded"),
    Option("prm_prefix_cache", "bool", "false", "serving.prm_prefix_cache",
           "the PRM prefills only unseen tokens (else the whole context)"),
    Option("draft_prompt_on_target", "bool", "false", "engine",
           "the draft model's prompt prefill runs on the target GPU (FPGA drafts)"),
    Option("token_bytes", "int64_t", "4", "serving.token_bytes", "a 32-bit token id", "positive"),
    Option("control_bytes", "int64_t", "64", "serving.control_bytes", "a verdict, command or pointer update",
           "positive"),
    Option("keep_activities", "bool", "false", "run", "return every activity (timelines)"),
)

# The trace's event kinds, in the order of their codes (the engine's `kind` column).
EVENT_KINDS = ("draft", "refine", "backtrack")
# The questions a live run asks its policy, in the order of their codes (cosim.live.View.kind).
DECISION_KINDS = ("draft", "refine", "verdict", "speculate")
