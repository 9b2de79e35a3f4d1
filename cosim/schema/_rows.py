"""The columns of a run's rows and the run's summary, declared once: each per-problem
(``problem``) and per-request (``serve``) column with its unit, type and meaning, and how
the run's summary combines the rows (TOTALS). cosim._rows and cosim.result derive their
field lists from these, scripts/gen_metrics_doc.py the tables of docs/metrics.md.
Standard library only."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ROLES = ("draft", "prm", "target")


@dataclass(frozen=True)
class Column:
    name: str
    unit: str  # "" for a pure number or a share
    help: str
    # How a row (a dict) holds it: float, int or text. The serving index columns (request,
    # slot, the devices) are whole numbers in the tables but floats in a row, as they have
    # always been: "index".
    type: str = "float"
    table: str = "problem"  # problem: every run's rows; serve: a serving run's rows add it
    unknown: bool = False  # NaN (null in Arrow, None in a row) where it is not known
    metric: bool = False  # one of cosim.METRICS: the summary has it and the tables show it
    # Seconds from the request's start (its arrival when served) to this engine instant
    # (an ``instant_or_none`` engine column): derived with no code of its own; NaN where the
    # instant never came.
    elapsed: str = ""


def _each_role(name: str, unit: str, help: str, **kw) -> tuple[Column, ...]:
    return tuple(Column(name.format(role=r), unit, help.format(role=r), **kw) for r in ROLES)


# The rows, in column order: the per-problem columns, then a serving run's.
COLUMNS: tuple[Column, ...] = (
    Column("id", "", "the problem's id in the trace", "text"),
    Column("dataset", "", "the dataset the problem comes from", "text"),
    Column("latency_s", "s", "end-to-end seconds per problem, from the prompt's arrival to the verdict that "
           "settles the answer (served: from its arrival, queueing included)", metric=True),
    Column("goodput_tok_s", "tokens/s", "tokens of the final accepted reasoning chain / end-to-end time",
           metric=True),
    Column("energy_j", "J", "energy of all devices over the problem, idle included"),
    Column("energy_j_per_token", "J/token", "energy of all devices, idle included / final-chain tokens", metric=True),
    Column("energy_j_per_generated_token", "J/token", "the same energy / every token any model generated",
           metric=True),
    Column("speedup", "", "baseline latency / this system's latency on the same trace "
           "(`result.with_baseline(base)`)", unknown=True, metric=True),
    Column("stall_ratio", "", "share of the time the draft device sits idle holding a finished step-ahead step, "
           "waiting for a verdict", metric=True),
    Column("stall_step_share", "", "share of PRM verdicts (on a drafted step or on a refinement) during which the "
           "draft device held a finished step-ahead step and waited; within [0, 1]", metric=True),
    Column("comm_share", "", "time of PCIe transfers on the critical path / end-to-end time; the phase-1 KV "
           "migration included", metric=True),
    Column("wasted_energy_share", "", "energy drawn above idle while producing step-ahead tokens that were then "
           "discarded (a step-ahead draft dropped on a reject or a backtrack) / total energy: the extra energy "
           "step-ahead speculation costs", metric=True),
    Column("offchain_energy_share", "", "energy of every generated token that never reaches the final chain "
           "(rejected drafts, failed refinements, discarded step-ahead drafts, unused target prefetch), at the "
           "power it was produced with / total energy", metric=True),
    *_each_role("breakdown_{role}", "", "the {role} device's busy time / end-to-end time", metric=True),
    Column("acceptance_rate", "", "token-weighted, as RSD defines it: accepted draft tokens / (accepted draft "
           "tokens + target tokens)", metric=True),
    Column("steps_per_problem", "", "reasoning steps, from the trace", "int", metric=True),
    Column("backtracks_per_problem", "", "backtracks, from the trace", "int", metric=True),
    Column("accuracy", "", "1 where the trace marks the answer correct, 0 where wrong (the run's: the share "
           "correct)", unknown=True, metric=True),
    Column("final_tokens", "tokens", "tokens of the final chain", "int"),
    Column("generated_tokens", "tokens", "tokens any model generated", "int"),
    Column("drafted_tokens", "tokens", "tokens the draft model generated", "int"),
    Column("target_tokens", "tokens", "tokens the target model decoded", "int"),
    Column("discarded_step_ahead_tokens", "tokens", "step-ahead draft tokens dropped on a reject or a backtrack",
           "int"),
    Column("reused_tokens", "tokens", "prefetched target tokens a refinement reused", "int"),
    *_each_role("energy_j_{role}", "J", "the {role} device's energy, idle included (the three add up to "
                "`energy_j`)", metric=True),
    Column("start_s", "s", "when its slot began serving it, in simulated seconds"),
    Column("end_s", "s", "when the verdict that settles its answer reached the host"),
    Column("ttft_s", "s", "the autoregressive system: seconds from the request's start (its arrival when "
           "served) to its first output token, the end of its prompt's prefill; NaN for the speculative systems",
           unknown=True, elapsed="first_token"),
    Column("tpot_s", "s", "the autoregressive system: (end - first token) / (output tokens - 1), the mean gap "
           "between its output tokens after the first; NaN for one output token and for the speculative systems",
           unknown=True),
    # The denominators of the token- and verdict-weighted metrics (acceptance_rate,
    # stall_step_share), so that every whole-run metric is a ratio of sums of rows
    # (cosim.uncertainty resamples them).
    Column("verdicts", "", "PRM verdicts (on drafted steps and on scored refinements)", "int"),
    Column("accepted_draft_tokens", "tokens", "draft tokens the PRM accepted, from the trace", "int"),
    Column("target_trace_tokens", "tokens", "tokens the trace's refinements hold", "int"),
    # Served requests' rows add these (cosim.serve): where each request waited and ran, and
    # the time its work kept each of its devices computing or transferring.
    Column("request", "", "index in arrival order", "index", "serve"),
    Column("arrival_s", "s", "when it arrived", table="serve"),
    Column("queue_s", "s", "arrival to the start of its service", table="serve"),
    Column("service_s", "s", "start of its service to its end", table="serve"),
    Column("slot", "", "the request slot that served it", "index", "serve"),
    *_each_role("{role}_device", "", "the {role} device it was bound to (-1: none)", type="index", table="serve"),
    *_each_role("busy_s_{role}", "s", "the time its work kept its {role} device computing or transferring "
                "(on a batching GPU its share of each iteration)", table="serve"),
    Column("preemptions", "", "the vLLM engine: times it was preempted", "int", "serve"),
    Column("recomputed_tokens", "tokens", "the vLLM engine: tokens its preemptions recomputed", "int", "serve"),
    Column("verify_passes", "", "token-level speculative decoding: the target's passes after the prefill "
           "(verifications, and plain decodes where nothing was left to draft; 0 for other systems)", "int",
           "serve"),
    Column("kept_draft_tokens", "tokens", "token-level speculative decoding: drafted tokens the target kept "
           "(`drafted_tokens` the proposer drafted)", "int", "serve"),
    Column("first_accept_s", "s", "seconds from the request's start (its arrival when served) until the host "
           "first keeps one of its steps: the PRM's accepting verdict on a drafted step, or a refinement kept "
           "(unscored, or scored and accepted), reaching the host, a step later reverted by a backtrack "
           "included; the target alone keeps every token it writes, so its first accepted step is its first "
           "output token (= `ttft_s`)", unknown=True, elapsed="first_accept"),
)


@dataclass(frozen=True)
class Parts:
    """One problem's share of a whole-run metric's numerator and denominator, read off its
    row (what the metric's sampling interval resamples, cosim/_stats/_intervals.py): the
    numerator is the product of the row's ``num`` columns, the denominator the sum of its
    ``den`` columns (none: 1, so the metric is a mean over problems). ``known``: a column
    given for some problems only; the numerator counts 0 where it is not, and the
    denominator counts the problems where it is."""

    num: tuple[str, ...]
    den: tuple[str, ...] = ()
    known: str = ""


@dataclass(frozen=True)
class Total:
    """How the run's summary combines the rows' sums: ``sum`` (the sum; ``of`` the sum's
    name), ``mean`` (the sum x scale / problems), ``ratio`` (sum of ``of`` / (sum of ``per``
    x scale); ``per`` may name several sums, added), ``count`` (problems) or ``none``
    (known only against a baseline). ``empty`` is the value where the divisor is zero (a
    divisor that cannot be zero has none). ``parts``: a mean or a ratio, as each problem's
    row gives its share of the sums (Parts): it then has an interval."""

    name: str
    how: str
    of: str = ""
    per: tuple[str, ...] = ()
    scale: float = 1.0
    empty: object = "raise"
    integer: bool = False
    parts: Parts | None = None


NS = 1e-9
# The run's summary (result.summary), in order: every whole-run value is a ratio of sums
# over problems, never a mean of ratios.
TOTALS: tuple[Total, ...] = (
    Total("latency_s", "mean", "latency_ns", scale=NS, parts=Parts(("latency_s",))),
    Total("goodput_tok_s", "ratio", "final_tokens", ("latency_ns",), scale=NS,
          parts=Parts(("final_tokens",), ("latency_s",))),
    Total("energy_j_per_token", "ratio", "energy_j", ("final_tokens",), parts=Parts(("energy_j",), ("final_tokens",))),
    Total("energy_j_per_generated_token", "ratio", "energy_j", ("generated_tokens",),
          parts=Parts(("energy_j",), ("generated_tokens",))),
    Total("speedup", "none"),
    Total("stall_ratio", "ratio", "stall_ns", ("latency_ns",), parts=Parts(("stall_ratio", "latency_s"), ("latency_s",))),
    Total("stall_step_share", "ratio", "stalled_verdicts", ("verdicts",), empty=0.0,
          parts=Parts(("stall_step_share", "verdicts"), ("verdicts",))),
    Total("comm_share", "ratio", "comm_ns", ("latency_ns",), parts=Parts(("comm_share", "latency_s"), ("latency_s",))),
    Total("wasted_energy_share", "ratio", "stepahead_waste_j", ("energy_j",),
          parts=Parts(("wasted_energy_share", "energy_j"), ("energy_j",))),
    Total("offchain_energy_share", "ratio", "offchain_energy_j", ("energy_j",),
          parts=Parts(("offchain_energy_share", "energy_j"), ("energy_j",))),
    *(Total(f"breakdown_{r}", "ratio", f"busy_{r}", ("latency_ns",),
            parts=Parts((f"breakdown_{r}", "latency_s"), ("latency_s",))) for r in ROLES),
    *(Total(f"energy_j_{r}", "sum", f"energy_j_{r}") for r in ROLES),
    Total("acceptance_rate", "ratio", "accepted_draft_tokens", ("accepted_draft_tokens", "target_trace_tokens"),
          empty=0.0, parts=Parts(("accepted_draft_tokens",), ("accepted_draft_tokens", "target_trace_tokens"))),
    Total("steps_per_problem", "mean", "steps", parts=Parts(("steps_per_problem",))),
    Total("backtracks_per_problem", "mean", "backtracks", parts=Parts(("backtracks_per_problem",))),
    Total("accuracy", "ratio", "correct", ("labelled",), empty=None, parts=Parts(("accuracy",), known="accuracy")),
    Total("problems", "count"),
    Total("energy_j", "sum", "energy_j"),
    Total("final_tokens", "sum", "final_tokens", integer=True),
    Total("generated_tokens", "sum", "generated_tokens", integer=True),
)


@dataclass(frozen=True)
class Ratio:
    """A metric of a run against a baseline run of the same problems: the baseline's mean
    ``of`` over the run's, per problem and for the whole run (``result.with_baseline``,
    the paired intervals, sensitivity). ``of`` is a mean over problems, so the whole-run
    ratio is a ratio of the two runs' sums, resampled problem by problem. ``baseline``: the
    built-in scenario it is taken against where none is named."""

    name: str
    of: str
    baseline: str

    def value(self, baseline: Any, run: Any) -> Any:
        return baseline / run


RATIOS: tuple[Ratio, ...] = (Ratio("speedup", "latency_s", "gpu-baseline"),)

@dataclass(frozen=True)
class Sum:
    """A sum the totals are made of, added problem by problem in order as plain floats
    (cosim._rows derives what each batch adds from these): the values of ``of``, a row
    column (``source`` ``row``, COLUMNS), an engine column (``engine``, cosim/schema/
    _columns.py) or a value cosim._rows works out that no column holds (``worked``).
    ``take``: ``all`` the values, ``known`` those that are not NaN, or ``count`` 1 for each
    known one. ``shown``: in result.totals."""

    name: str
    of: str
    source: str = "row"
    take: str = "all"
    shown: bool = True


# The sums the totals are made of, in the order result.totals shows them.
SUMS: tuple[Sum, ...] = (
    # The engine's start to end: served, the service without the queueing.
    Sum("latency_ns", "latency_ns", "worked"),
    Sum("final_tokens", "final_tokens"), Sum("generated_tokens", "generated_tokens"), Sum("energy_j", "energy_j"),
    Sum("stall_ns", "stall_ns", "engine"), Sum("stalled_verdicts", "stalled_verdicts", "engine"),
    Sum("verdicts", "verdicts"), Sum("comm_ns", "comm_critical_ns", "engine"),
    Sum("stepahead_waste_j", "stepahead_waste_j", "engine"), Sum("offchain_energy_j", "offchain_energy_j", "engine"),
    Sum("accepted_draft_tokens", "accepted_draft_tokens"), Sum("target_trace_tokens", "target_trace_tokens"),
    *(Sum(f"busy_{r}", f"busy_ns_{r}", "engine") for r in ROLES),
    *(Sum(f"energy_j_{r}", f"energy_j_{r}", shown=False) for r in ROLES),
    Sum("steps", "steps_per_problem", shown=False), Sum("backtracks", "backtracks_per_problem", shown=False),
    # Accuracy over the problems the trace labels: the correct ones, and how many are labelled.
    Sum("correct", "accuracy", take="known", shown=False), Sum("labelled", "accuracy", take="count", shown=False),
)


@dataclass(frozen=True)
class DeviceColumn:
    """A number each device reports over the whole run (result.devices, devices.csv).
    ``runs``: which engines report it (all, or only the target alone's: ``autoregressive``,
    or only its vLLM engine's: ``vllm``, or only the step-level systems': ``workflow``)."""

    name: str
    type: str  # int32_t, int64_t, double or text
    unit: str
    help: str
    runs: str = "all"


DEVICES: tuple[DeviceColumn, ...] = (
    DeviceColumn("role", "text", "", "draft, prm or target"),
    DeviceColumn("index", "int32_t", "", "the device's index in its pool"),
    DeviceColumn("energy_j", "double", "J", "its energy over the whole run, idle included"),
    DeviceColumn("busy_ns", "double", "ns", "the time it computed or transferred (its meter's time out of idle)"),
    DeviceColumn("held_ns", "double", "ns", "the time jobs held it (a batching GPU: its iterations)"),
    DeviceColumn("iterations", "int64_t", "", "a batching GPU: its iterations (0 otherwise)"),
    DeviceColumn("batched_sequences", "int64_t", "", "a batching GPU: its batch sizes summed over iterations"),
    DeviceColumn("kv_limited_iterations", "int64_t", "",
                 "a batching GPU: iterations that left waiting work out for lack of KV memory"),
    DeviceColumn("preemptions", "int64_t", "", "the target alone's vLLM engine: requests it preempted",
                 "autoregressive"),
    DeviceColumn("kv_blocks", "int64_t", "", "the target alone's vLLM engine: KV blocks it could use", "vllm"),
    DeviceColumn("collective_ns", "double", "ns", "a step-level system's GPU group over PCIe: the time its "
                 "collectives held its PCIe link, each direction (0 elsewhere)", "workflow"),
    DeviceColumn("collective_wait_ns", "double", "ns", "a step-level system's GPU group over PCIe: the time its "
                 "passes waited for the link past their collectives' own time, other transfers in the way",
                 "workflow"),
    DeviceColumn("transfer_wait_ns", "double", "ns", "a step-level system's GPU group over PCIe: the time the "
                 "transfers on its link waited for its collectives (against the link without them)", "workflow"),
)


def row_fields(table: str = "problem") -> tuple[str, ...]:
    """The row's columns in order: a single-request run's (``problem``) or a serving run's."""
    return tuple(c.name for c in COLUMNS if table == "serve" or c.table == "problem")
