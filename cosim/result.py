"""The outcome of one simulation: the metrics of SPEC section 5 per problem and
for the whole trace, and (on request) every device activity for timelines."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import ConfigError

if TYPE_CHECKING:
    from .scenario import Scenario
    from .trace import Trace

NS = 1e-9
ROLES = ("draft", "prm", "target")

# SPEC section 5, by name, in the order tables show them.
METRICS = (
    "latency_s",
    "goodput_tok_s",
    "energy_j_per_token",
    "energy_j_per_generated_token",
    "speedup",
    "stall_ratio",
    "stall_step_share",
    "comm_share",
    "wasted_energy_share",
    "breakdown_draft",
    "breakdown_prm",
    "breakdown_target",
    "acceptance_rate",
    "steps_per_problem",
    "backtracks_per_problem",
    "accuracy",
)


@dataclass(frozen=True)
class Activity:
    problem: int
    device: str
    kind: str
    step: int
    start_ns: float
    end_ns: float
    tokens: int
    wasted_share: float


@dataclass(frozen=True)
class KvmuRecord:
    problem: int
    time_ns: float
    op: str
    valid: int
    curr: int
    ahead: int
    mode: str


@dataclass
class Result:
    scenario: str
    system: str
    config: int
    summary: dict[str, Any]
    per_problem: list[dict[str, Any]]
    activities: list[Activity] | None = None
    wall_s: float = 0.0
    totals: dict[str, float] = field(default_factory=dict)
    kvmu: list[KvmuRecord] | None = None
    kernel_deltas: int = 0

    @classmethod
    def from_native(cls, scn: Scenario, trace: Trace, raw: dict[str, Any]) -> Result:
        cols = raw["problems"]
        summaries = trace.summaries()
        rows = []
        totals = {k: 0.0 for k in ("latency_ns", "final_tokens", "generated_tokens", "energy_j", "stall_ns",
                                   "stalled_steps", "drafts", "comm_ns", "wasted_energy_j", "accepted_draft_tokens",
                                   "target_trace_tokens", "busy_draft", "busy_prm", "busy_target")}
        for i, (problem, summary) in enumerate(zip(trace.problems, summaries)):
            latency_ns = cols["end_ns"][i] - cols["start_ns"][i]
            energy = sum(cols[f"energy_j_{r}"][i] for r in ROLES)
            final = cols["final_tokens"][i]
            if final != summary.final_tokens:
                raise AssertionError(f"{problem.id}: engine chain {final} tokens, trace {summary.final_tokens}")
            row = {
                "id": problem.id,
                "dataset": problem.dataset,
                "latency_s": latency_ns * NS,
                "goodput_tok_s": final / (latency_ns * NS),
                "energy_j": energy,
                "energy_j_per_token": energy / final,
                "energy_j_per_generated_token": energy / cols["generated_tokens"][i],
                "speedup": None,
                "stall_ratio": cols["stall_ns"][i] / latency_ns,
                "stall_step_share": cols["stalled_steps"][i] / summary.drafts if summary.drafts else 0.0,
                "comm_share": cols["comm_critical_ns"][i] / latency_ns,
                "wasted_energy_share": cols["wasted_energy_j"][i] / energy,
                **{f"breakdown_{r}": cols[f"busy_ns_{r}"][i] / latency_ns for r in ROLES},
                "acceptance_rate": summary.acceptance_rate,
                "steps_per_problem": summary.steps,
                "backtracks_per_problem": summary.backtracks,
                "accuracy": None if problem.answer_correct is None else float(problem.answer_correct),
                "final_tokens": final,
                "generated_tokens": cols["generated_tokens"][i],
                "drafted_tokens": cols["drafted_tokens"][i],
                "target_tokens": cols["target_tokens"][i],
                "discarded_step_ahead_tokens": cols["discarded_step_ahead_tokens"][i],
                "reused_tokens": cols["reused_tokens"][i],
                **{f"energy_j_{r}": cols[f"energy_j_{r}"][i] for r in ROLES},
                "start_s": cols["start_ns"][i] * NS,
                "end_s": cols["end_ns"][i] * NS,
            }
            rows.append(row)
            totals["latency_ns"] += latency_ns
            totals["final_tokens"] += final
            totals["generated_tokens"] += cols["generated_tokens"][i]
            totals["energy_j"] += energy
            totals["stall_ns"] += cols["stall_ns"][i]
            totals["stalled_steps"] += cols["stalled_steps"][i]
            totals["drafts"] += summary.drafts
            totals["comm_ns"] += cols["comm_critical_ns"][i]
            totals["wasted_energy_j"] += cols["wasted_energy_j"][i]
            totals["accepted_draft_tokens"] += summary.accepted_draft_tokens
            totals["target_trace_tokens"] += summary.target_tokens
            for r in ROLES:
                totals[f"busy_{r}"] += cols[f"busy_ns_{r}"][i]
        n = len(rows)
        labels = [r["accuracy"] for r in rows if r["accuracy"] is not None]
        t = totals
        accepted_plus_target = t["accepted_draft_tokens"] + t["target_trace_tokens"]
        summary = {
            "latency_s": t["latency_ns"] * NS / n,
            "goodput_tok_s": t["final_tokens"] / (t["latency_ns"] * NS),
            "energy_j_per_token": t["energy_j"] / t["final_tokens"],
            "energy_j_per_generated_token": t["energy_j"] / t["generated_tokens"],
            "speedup": None,
            "stall_ratio": t["stall_ns"] / t["latency_ns"],
            "stall_step_share": t["stalled_steps"] / t["drafts"] if t["drafts"] else 0.0,
            "comm_share": t["comm_ns"] / t["latency_ns"],
            "wasted_energy_share": t["wasted_energy_j"] / t["energy_j"],
            **{f"breakdown_{r}": t[f"busy_{r}"] / t["latency_ns"] for r in ROLES},
            "acceptance_rate": t["accepted_draft_tokens"] / accepted_plus_target if accepted_plus_target else 0.0,
            "steps_per_problem": sum(r["steps_per_problem"] for r in rows) / n,
            "backtracks_per_problem": sum(r["backtracks_per_problem"] for r in rows) / n,
            "accuracy": sum(labels) / len(labels) if labels else None,
            "problems": n,
            "energy_j": t["energy_j"],
            "final_tokens": int(t["final_tokens"]),
            "generated_tokens": int(t["generated_tokens"]),
        }
        activities = kvmu = None
        if "activities" in raw:
            activities = [Activity(*a) for a in raw["activities"]]
            kvmu = [KvmuRecord(*r) for r in raw["kvmu"]]
        return cls(scn.name, scn.system, scn.config, summary, rows, activities, raw["wall_s"], totals, kvmu,
                   raw["kernel_deltas"])

    def with_baseline(self, baseline: Result) -> Result:
        """This result with ``speedup`` = baseline latency / this latency, per problem and overall."""
        mine = [r["id"] for r in self.per_problem]
        theirs = [r["id"] for r in baseline.per_problem]
        if mine != theirs:
            raise ConfigError("speedup needs both results on the same trace (the problem ids differ)")
        rows = [dict(r, speedup=b["latency_s"] / r["latency_s"]) for r, b in zip(self.per_problem,
                                                                                 baseline.per_problem)]
        summary = dict(self.summary, speedup=baseline.summary["latency_s"] / self.summary["latency_s"])
        return Result(self.scenario, self.system, self.config, summary, rows, self.activities, self.wall_s,
                      self.totals, self.kvmu, self.kernel_deltas)
