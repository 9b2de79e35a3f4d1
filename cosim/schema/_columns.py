"""Every column a run reports, declared once: the engine's per-problem numbers (the C++
struct ProblemMetrics and the columns the native module hands over), the per-problem and
per-request rows (cosim.Result, per_problem.csv, per_request.csv), the run's totals and
summary, and each device's numbers. From this module come the C++ struct's fields and the
binding's column export (generated at build time by scripts/gen_native_params.py as
X-macro lists), the Python row field lists (cosim._rows, cosim.result) and the tables of
docs/metrics.md (scripts/gen_metrics_doc.py). It imports nothing but the standard library,
so the build can read it.

Adding a metric the engine measures: declare its engine column here (ENGINE) and its row
(ROWS, at the end, with ``elapsed`` naming the engine instant it is measured to), then set
the field in the C++ model; see CONTRIBUTING.md.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("draft", "prm", "target")


@dataclass(frozen=True)
class EngineColumn:
    """A field of the C++ ProblemMetrics and the column(s) the engine exports for it.

    kind: ``value`` (exported as it is), ``instant`` (kernel units in C++, exported as whole
    picoseconds: field ``<name>_units``, column ``<name>_ps``), ``instant_or_none`` (the
    same, -1 where the instant never came) or ``per_role`` (one value per device role,
    exported as ``export`` with ``{role}`` filled in).
    """

    name: str
    type: str  # int32_t, int64_t or double (instants are uint64_t kernel units)
    help: str
    kind: str = "value"
    export: str = ""  # per_role: the column name pattern

    @property
    def field(self) -> str:
        return f"{self.name}_units" if self.kind.startswith("instant") else self.name

    @property
    def columns(self) -> tuple[str, ...]:
        if self.kind == "per_role":
            return tuple(self.export.format(role=r) for r in ROLES)
        if self.kind.startswith("instant"):
            return (f"{self.name}_ps",)
        return (self.name,)


def _roles(name: str, type: str, help: str, export: str = "") -> EngineColumn:
    return EngineColumn(name, type, help, "per_role", export or name + "_{role}")


# The engine's numbers of one finished problem (request), in the order of ProblemMetrics.
ENGINE = (
    EngineColumn("request", "int64_t", "index in trace order"),
    # Instants in kernel units, exactly: a start is never before its arrival, an end never
    # before its start, however long the run.
    EngineColumn("arrival", "uint64_t", "when the request arrived", "instant"),
    EngineColumn("slot", "int32_t", "the request slot that served it"),
    _roles("devices", "int32_t", "the draft, PRM and target device it was bound to (-1: none)", "{role}_device"),
    EngineColumn("start", "uint64_t", "when its slot began serving it", "instant"),
    EngineColumn("end", "uint64_t", "when the verdict that settles its answer reached the host", "instant"),
    EngineColumn("first_token", "uint64_t", "the target alone: its first output token (the end of its prefill)",
                 "instant_or_none"),
    EngineColumn("generated_tokens", "int64_t", "tokens any model generated"),
    EngineColumn("drafted_tokens", "int64_t", "tokens the draft model generated"),
    EngineColumn("discarded_step_ahead_tokens", "int64_t", "step-ahead draft tokens dropped on a reject or backtrack"),
    EngineColumn("target_tokens", "int64_t", "tokens the target model decoded"),
    EngineColumn("reused_tokens", "int64_t", "prefetched target tokens a refinement reused"),
    EngineColumn("verdicts", "int32_t", "PRM verdicts (on drafted steps and on scored refinements)"),
    EngineColumn("stalled_verdicts", "int32_t",
                 "verdicts the draft device waited for, holding a finished step-ahead step"),
    EngineColumn("backtracks", "int32_t", "backtracks"),
    EngineColumn("preemptions", "int32_t", "the vLLM engine: times the request was preempted"),
    EngineColumn("recomputed_tokens", "int64_t", "the vLLM engine: tokens its preemptions made it recompute"),
    EngineColumn("cached_prompt_tokens", "int64_t", "the vLLM engine: prompt tokens found in the prefix cache"),
    EngineColumn("verify_passes", "int64_t", "token-level speculative decoding: the target's passes after the "
                 "prefill (verifications, and plain decodes where nothing was left to draft)"),
    EngineColumn("kept_draft_tokens", "int64_t", "token-level speculative decoding: drafted tokens the target kept"),
    EngineColumn("stall_ns", "double", "time the draft device sat holding a finished step-ahead step"),
    EngineColumn("comm_critical_ns", "double", "PCIe time on the critical path to the settling verdict"),
    _roles("busy_ns", "double", "each device's activities up to the problem's end"),
    # Its work's busy time on each device, trailing work included (on a batching GPU its
    # share of each iteration it was in); summed over requests it is each pool's busy time.
    _roles("work_ns", "double", "the time its work kept each device computing or transferring"),
    _roles("energy_j", "double", "each device's energy over the problem, idle included"),
    EngineColumn("offchain_energy_j", "double", "energy of work whose tokens never reach the final chain"),
    EngineColumn("stepahead_waste_j", "double", "energy above idle of step-ahead drafts that were discarded"),
    EngineColumn("first_accept", "uint64_t", "when the host first kept a step: a drafted step's accepting verdict "
                 "or a kept refinement reached it (the target alone: its first output token)", "instant_or_none"),
)


def engine_columns() -> tuple[str, ...]:
    """The names of the columns the engine exports per problem, in order."""
    return tuple(c for e in ENGINE for c in e.columns)
