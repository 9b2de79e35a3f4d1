"""The outcome of one simulation: the metrics (docs/metrics.md) per problem and
for the whole trace, and (on request) every device activity for timelines."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .outputs._arrow import to_pandas
from ._lazy import LazySequence
from .errors import ConfigError

if TYPE_CHECKING:
    from .config.scenario import Scenario

NS = 1e-9
ROLES = ("draft", "prm", "target")

# The metrics by name (docs/metrics.md), in the order tables show them.
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
    "offchain_energy_share",
    "breakdown_draft",
    "breakdown_prm",
    "breakdown_target",
    "acceptance_rate",
    "steps_per_problem",
    "backtracks_per_problem",
    "accuracy",
    "energy_j_draft",
    "energy_j_prm",
    "energy_j_target",
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


ACTIVITY_FIELDS = ("problem", "device", "kind", "step", "start_ns", "end_ns", "tokens", "wasted_share")


class Activities(LazySequence):
    """Every device activity of a run, held as columns (a long run has hundreds of
    thousands); each Activity is made when read. ``column(name)`` gives one field
    for all of them as an array (``device`` and ``kind`` as names)."""

    def __init__(self, columns: dict[str, Any]):
        self._c = columns
        self._devices, self._kinds = list(columns["devices"]), list(columns["kinds"])
        self._n = len(columns["start_ns"])

    def __len__(self) -> int:
        return self._n

    def _item(self, index: int) -> Activity:
        c = self._c
        return Activity(int(c["problem"][index]), self._devices[c["device_code"][index]],
                        self._kinds[c["kind_code"][index]], int(c["step"][index]), float(c["start_ns"][index]),
                        float(c["end_ns"][index]), int(c["tokens"][index]), float(c["wasted_share"][index]))

    def __iter__(self) -> Any:
        c = self._c
        columns = [c[k].tolist() for k in ("problem", "device_code", "kind_code", "step", "start_ns", "end_ns",
                                           "tokens", "wasted_share")]
        devices, kinds = self._devices, self._kinds
        for p, d, k, s, t0, t1, n, w in zip(*columns):
            yield Activity(p, devices[d], kinds[k], s, t0, t1, n, w)

    def __repr__(self) -> str:
        return f"Activities({self._n})"

    @property
    def names(self) -> tuple[list[str], list[str]]:
        """The device and kind names that the columns ``device_code`` and ``kind_code`` index."""
        return self._devices, self._kinds

    def column(self, name: str) -> Any:
        if name == "device":
            return np.asarray(self._devices, dtype=object)[self._c["device_code"]]
        if name == "kind":
            return np.asarray(self._kinds, dtype=object)[self._c["kind_code"]]
        return self._c[name]

    def to_arrow(self) -> Any:
        """Every activity as an Arrow table (device and kind dictionary-encoded)."""
        import pyarrow as pa

        c = self._c
        names = {"device": ("device_code", self._devices), "kind": ("kind_code", self._kinds)}
        arrays = {}
        for field_name in ACTIVITY_FIELDS:
            if field_name in names:
                codes, labels = names[field_name]
                arrays[field_name] = pa.DictionaryArray.from_arrays(pa.array(c[codes], type=pa.int8()),
                                                                    pa.array(labels, type=pa.string()))
            else:
                arrays[field_name] = pa.array(c[field_name])
        return pa.table(arrays)

    def to_pandas(self) -> Any:
        return to_pandas(self.to_arrow())


@dataclass(frozen=True)
class KvmuRecord:
    problem: int
    time_ns: float
    op: str
    valid: int
    curr: int
    ahead: int
    mode: str


# The per-problem rows, in column order.
ROW_FIELDS = (
    "id", "dataset", "latency_s", "goodput_tok_s", "energy_j", "energy_j_per_token", "energy_j_per_generated_token",
    "speedup", "stall_ratio", "stall_step_share", "comm_share", "wasted_energy_share", "offchain_energy_share",
    "breakdown_draft",
    "breakdown_prm", "breakdown_target", "acceptance_rate", "steps_per_problem", "backtracks_per_problem",
    "accuracy", "final_tokens", "generated_tokens", "drafted_tokens", "target_tokens",
    "discarded_step_ahead_tokens", "reused_tokens", "energy_j_draft", "energy_j_prm", "energy_j_target", "start_s",
    "end_s",
)
_MAYBE_UNKNOWN = {"accuracy", "speedup"}
_INTEGER_FIELDS = {"final_tokens", "generated_tokens", "drafted_tokens", "target_tokens",
                   "discarded_step_ahead_tokens", "reused_tokens", "steps_per_problem", "backtracks_per_problem"}


class PerProblem(LazySequence):
    """The per-problem metrics, held as columns (a few hundred bytes a problem,
    so a result stays small however many problems ran); each row is a dict made
    when read. Compares equal to any sequence of equal rows."""

    def __init__(self, columns: dict[str, Any]):
        self._columns = {name: _read_only(values) for name, values in columns.items()}
        self._n = len(columns["id"])

    def __len__(self) -> int:
        return self._n

    def _item(self, index: int) -> dict[str, Any]:
        return {name: _plain(name, self._columns[name][index]) for name in ROW_FIELDS}

    def __repr__(self) -> str:
        return f"PerProblem({self._n} problems)"

    def column(self, name: str) -> Any:
        """One metric for every problem: a read-only numpy array (NaN where accuracy or
        speedup is not known); ids and datasets as tuples. Rows are copies: change a
        row and the result does not change."""
        if name not in self._columns:
            raise KeyError(f"{name!r}: not a per-problem metric (one of {', '.join(ROW_FIELDS)})")
        return self._columns[name]

    def with_column(self, name: str, values: Any) -> PerProblem:
        return PerProblem({**self._columns, name: values})

    def to_arrow(self) -> Any:
        """The rows as an Arrow table, one column per metric in row order (null where
        accuracy or speedup is not known)."""
        import pyarrow as pa

        arrays = {}
        for name in ROW_FIELDS:
            values = self._columns[name]
            if isinstance(values, tuple):
                arrays[name] = pa.array(values, type=pa.string())
            elif name in _MAYBE_UNKNOWN:
                arrays[name] = pa.array(values, type=pa.float64(), from_pandas=True)  # NaN -> null
            else:
                arrays[name] = pa.array(values)
        return pa.table(arrays)

    def to_pandas(self) -> Any:
        return to_pandas(self.to_arrow())


def _plain(name: str, value: Any) -> Any:
    """A column entry as the plain Python value a row holds (None for 'not known',
    NaN in the float columns accuracy and speedup)."""
    if isinstance(value, str):
        return value
    if name in _INTEGER_FIELDS:
        return int(value)
    value = float(value)
    return None if math.isnan(value) and name in _MAYBE_UNKNOWN else value


@dataclass
class Result:
    scenario: str
    system: str
    config: int
    summary: dict[str, Any]
    per_problem: PerProblem
    activities: Activities | None = None
    wall_s: float = 0.0
    totals: dict[str, float] = field(default_factory=dict)
    kvmu: list[KvmuRecord] | None = None
    kernel_deltas: int = 0

    @classmethod
    def from_native(cls, scn: Scenario, raw: dict[str, Any]) -> Result:
        """The metrics from the engine's per-problem numbers and the
        trace's summaries (both columns, from the worker)."""
        cols = {k: np.asarray(v) for k, v in raw["problems"].items()}
        t = raw["trace"]
        n = len(t["id"])
        if len(cols["end_ns"]) != n:
            raise AssertionError(f"engine returned {len(cols['end_ns'])} problems for a trace of {n}")
        latency_ns = cols["end_ns"] - cols["start_ns"]
        energy = cols["energy_j_draft"] + cols["energy_j_prm"] + cols["energy_j_target"]
        # The final chain is the trace's (its replay owns it); the engine reports time and energy.
        final = t["final_tokens"].astype(np.float64)
        verdicts = cols["verdicts"]
        stall_step_share = cols["stalled_verdicts"] / np.where(verdicts > 0, verdicts, 1)
        columns: dict[str, Any] = {
            "id": t["id"],
            "dataset": t["dataset"],
            "latency_s": latency_ns * NS,
            "goodput_tok_s": final / (latency_ns * NS),
            "energy_j": energy,
            "energy_j_per_token": energy / final,
            "energy_j_per_generated_token": energy / cols["generated_tokens"],
            "speedup": np.full(n, np.nan),
            "stall_ratio": cols["stall_ns"] / latency_ns,
            "stall_step_share": stall_step_share,
            "comm_share": cols["comm_critical_ns"] / latency_ns,
            "wasted_energy_share": cols["stepahead_waste_j"] / energy,
            "offchain_energy_share": cols["offchain_energy_j"] / energy,
            **{f"breakdown_{r}": cols[f"busy_ns_{r}"] / latency_ns for r in ROLES},
            "acceptance_rate": t["acceptance_rate"],
            "steps_per_problem": t["steps"],
            "backtracks_per_problem": t["backtracks"],
            "accuracy": np.where(t["answer_correct"] >= 0, t["answer_correct"], np.nan),
            "final_tokens": t["final_tokens"].astype(np.int64),
            "generated_tokens": cols["generated_tokens"],
            "drafted_tokens": cols["drafted_tokens"],
            "target_tokens": cols["target_tokens"],
            "discarded_step_ahead_tokens": cols["discarded_step_ahead_tokens"],
            "reused_tokens": cols["reused_tokens"],
            **{f"energy_j_{r}": cols[f"energy_j_{r}"] for r in ROLES},
            "start_s": cols["start_ns"] * NS,
            "end_s": cols["end_ns"] * NS,
        }
        # Totals add up problem by problem, in order, as plain floats.
        totals = {
            "latency_ns": _sum(latency_ns), "final_tokens": _sum(final),
            "generated_tokens": _sum(cols["generated_tokens"]), "energy_j": _sum(energy),
            "stall_ns": _sum(cols["stall_ns"]), "stalled_verdicts": _sum(cols["stalled_verdicts"]),
            "verdicts": _sum(verdicts), "comm_ns": _sum(cols["comm_critical_ns"]),
            "stepahead_waste_j": _sum(cols["stepahead_waste_j"]), "offchain_energy_j": _sum(cols["offchain_energy_j"]),
            "accepted_draft_tokens": _sum(t["accepted_draft_tokens"]),
            "target_trace_tokens": _sum(t["target_tokens"]),
            **{f"busy_{r}": _sum(cols[f"busy_ns_{r}"]) for r in ROLES},
        }
        labels = t["answer_correct"][t["answer_correct"] >= 0]
        tt = totals
        accepted_plus_target = tt["accepted_draft_tokens"] + tt["target_trace_tokens"]
        summary = {
            "latency_s": tt["latency_ns"] * NS / n,
            "goodput_tok_s": tt["final_tokens"] / (tt["latency_ns"] * NS),
            "energy_j_per_token": tt["energy_j"] / tt["final_tokens"],
            "energy_j_per_generated_token": tt["energy_j"] / tt["generated_tokens"],
            "speedup": None,
            "stall_ratio": tt["stall_ns"] / tt["latency_ns"],
            "stall_step_share": tt["stalled_verdicts"] / tt["verdicts"] if tt["verdicts"] else 0.0,
            "comm_share": tt["comm_ns"] / tt["latency_ns"],
            "wasted_energy_share": tt["stepahead_waste_j"] / tt["energy_j"],
            "offchain_energy_share": tt["offchain_energy_j"] / tt["energy_j"],
            **{f"breakdown_{r}": tt[f"busy_{r}"] / tt["latency_ns"] for r in ROLES},
            **{f"energy_j_{r}": _sum(cols[f"energy_j_{r}"]) for r in ROLES},
            "acceptance_rate": tt["accepted_draft_tokens"] / accepted_plus_target if accepted_plus_target else 0.0,
            "steps_per_problem": _sum(t["steps"]) / n,
            "backtracks_per_problem": _sum(t["backtracks"]) / n,
            "accuracy": _sum(labels) / len(labels) if len(labels) else None,
            "problems": n,
            "energy_j": tt["energy_j"],
            "final_tokens": int(tt["final_tokens"]),
            "generated_tokens": int(tt["generated_tokens"]),
        }
        activities = kvmu = None
        if "activities" in raw:
            activities = Activities(raw["activities"])
            kvmu = [KvmuRecord(*r) for r in raw["kvmu"]]
        return cls(scn.name, scn.system, scn.config, summary, PerProblem(columns), activities, raw["wall_s"],
                   totals, kvmu, raw["kernel_deltas"])

    def with_baseline(self, baseline: Result) -> Result:
        """This result with ``speedup`` = baseline latency / this latency, per problem and overall."""
        if not isinstance(baseline, Result):
            raise ConfigError(f"with_baseline: expected the Result of the baseline's simulate(), got "
                              f"{type(baseline).__name__}")
        if self.per_problem.column("id") != baseline.per_problem.column("id"):
            raise ConfigError("speedup needs both results on the same trace (the problem ids differ)")
        speedup = baseline.per_problem.column("latency_s") / self.per_problem.column("latency_s")
        summary = dict(self.summary, speedup=baseline.summary["latency_s"] / self.summary["latency_s"])
        return Result(self.scenario, self.system, self.config, summary, self.per_problem.with_column("speedup", speedup),
                      self.activities, self.wall_s, self.totals, self.kvmu, self.kernel_deltas)


def _read_only(values: Any) -> Any:
    """A column as handed out: a numpy array no one can write through, or a tuple."""
    if isinstance(values, np.ndarray):
        values.setflags(write=False)
        return values
    return tuple(values)


def _sum(values: Any) -> float:
    """Left to right, as plain floats (numpy's pairwise sum rounds differently)."""
    total = 0.0
    for v in values.tolist() if hasattr(values, "tolist") else values:
        total += v
    return total
