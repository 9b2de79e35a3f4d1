"""The outcome of one simulation: the metrics (docs/metrics.md) per problem and
for the whole trace, and (on request) every device activity for timelines."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .outputs._arrow import to_pandas
from ._lazy import LazySequence
from ._rows import NS, ROLES, ROW_FIELDS  # noqa: F401 - re-exported
from .errors import ConfigError
from ._stats import _intervals
from .schema import COLUMNS
from .schema._rows import RATIOS

if TYPE_CHECKING:
    from .config.scenario import Scenario

# The metrics by name (docs/metrics.md), in the order tables show them.
METRICS = tuple(c.name for c in COLUMNS if c.metric)


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
        import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

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


_MAYBE_UNKNOWN = {c.name for c in COLUMNS if c.unknown}
_INTEGER_FIELDS = {c.name for c in COLUMNS if c.type == "int"}


def arrow_rows(columns: dict[str, Any], fields: tuple[str, ...] = ROW_FIELDS) -> Any:
    """Per-problem columns as an Arrow table, one column per metric in row order (null
    where accuracy or speedup is not known)."""
    import pyarrow as pa  # lazy: pyarrow, loaded only when a table is written or read

    arrays = {}
    for name in fields:
        values = columns[name]
        if isinstance(values, (tuple, list)):
            arrays[name] = pa.array(values, type=pa.string())
        elif name in _MAYBE_UNKNOWN:
            arrays[name] = pa.array(values, type=pa.float64(), from_pandas=True)  # NaN -> null
        else:
            arrays[name] = pa.array(values)
    return pa.table(arrays)


class PerProblem(LazySequence):
    """The per-problem metrics, held as columns (a few hundred bytes a problem,
    so a result stays small however many problems ran), or read from a run's
    Arrow file on disk as they are asked for; each row is a dict made when read.
    Compares equal to any sequence of equal rows."""

    def __init__(self, columns: dict[str, Any] | None = None, *, reader: Any = None, rows: int = 0,
                 fields: tuple[str, ...] = ROW_FIELDS):
        self._fields = fields
        # A run's Arrow file, open (it may be renamed since) and read only when asked.
        self._reader = reader
        self._table: Any = None
        self._columns = {name: _read_only(values) for name, values in (columns or {}).items()}
        self._n = rows if reader is not None else len(self._columns["id"])

    def _on_disk(self) -> Any:
        if self._table is None and self._reader is not None:
            self._table = self._reader.read_all()
        return self._table

    def __len__(self) -> int:
        return self._n

    def _item(self, index: int) -> dict[str, Any]:
        return {name: _plain(name, self.column(name)[index]) for name in self._fields}

    def __repr__(self) -> str:
        return f"PerProblem({self._n} problems)"

    def column(self, name: str) -> Any:
        """One metric for every problem: a read-only numpy array (NaN where accuracy or
        speedup is not known); ids and datasets as tuples. Rows are copies: change a
        row and the result does not change."""
        if name not in self._columns:
            if self._reader is None or name not in self._fields:
                raise KeyError(f"{name!r}: not a per-problem metric (one of {', '.join(self._fields)})")
            values = self._on_disk().column(name)
            if name in ("id", "dataset"):
                self._columns[name] = tuple(values.to_pylist())
            else:
                self._columns[name] = _read_only(values.to_numpy())
        return self._columns[name]

    def batches(self, names: tuple[str, ...]) -> Any:
        """The columns ``names`` a record batch at a time, each as a dict of numpy arrays (a run
        on disk is read batch by batch; one in memory is one batch)."""
        if self._reader is None or any(n in self._columns for n in names):
            yield {n: np.asarray(self.column(n)) for n in names}
            return
        for i in range(self._reader.num_record_batches):
            batch = self._reader.get_batch(i)
            yield {n: batch.column(n).to_numpy(zero_copy_only=False) for n in names}

    def with_column(self, name: str, values: Any) -> PerProblem:
        return PerProblem({**{n: self.column(n) for n in self._fields}, name: values}, fields=self._fields)

    def to_arrow(self) -> Any:
        """The rows as an Arrow table, one column per metric in row order (null where
        accuracy or speedup is not known)."""
        if self._reader is not None:
            return self._on_disk()
        return arrow_rows(self._columns, self._fields)

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
    last_end_s: float = 0.0  # when the last problem finished, in simulated seconds

    @classmethod
    def from_native(cls, scn: Scenario, raw: dict[str, Any]) -> Result:
        """A result from the worker's answer: the rows (columns, or a table on disk), the
        summary and totals kept as the rows were made, and the activities if kept."""
        rows, n = raw["rows"], raw["summary"]["problems"]
        per_problem = PerProblem(rows) if isinstance(rows, dict) else PerProblem(reader=rows, rows=n)
        activities = kvmu = None
        if "activities" in raw:
            activities = Activities(raw["activities"])
            kvmu = [KvmuRecord(*r) for r in raw["kvmu"]]
        return cls(scn.name, scn.system, scn.config, raw["summary"], per_problem, activities, raw["wall_s"],
                   raw["totals"], kvmu, raw["kernel_deltas"], raw["last_end_s"])

    def intervals(self, baseline: Result | None = None, **options: Any) -> dict[str, Any]:
        """The 95% interval of every mean (docs/metrics.md), the speedup's too given the
        baseline's Result on the same trace: cosim.uncertainty.intervals."""
        return _intervals.intervals(self, baseline, **options)

    def with_baseline(self, baseline: Result) -> Result:
        """This result with each ratio against ``baseline`` (``speedup`` = baseline latency / this
        latency; RATIOS, cosim/schema/_rows.py), per problem and overall."""
        if not isinstance(baseline, Result):
            raise ConfigError(f"with_baseline: expected the Result of the baseline's simulate(), got "
                              f"{type(baseline).__name__}")
        if self.per_problem.column("id") != baseline.per_problem.column("id"):
            raise ConfigError("speedup needs both results on the same trace (the problem ids differ)")
        summary, per_problem = dict(self.summary), self.per_problem
        for r in RATIOS:
            summary[r.name] = r.value(baseline.summary[r.of], self.summary[r.of])
            per_problem = per_problem.with_column(r.name, r.value(baseline.per_problem.column(r.of),
                                                                  self.per_problem.column(r.of)))
        return Result(self.scenario, self.system, self.config, summary, per_problem, self.activities, self.wall_s,
                      self.totals, self.kvmu, self.kernel_deltas, self.last_end_s)


def _read_only(values: Any) -> Any:
    """A column as handed out: a numpy array no one can write through, or a tuple."""
    if isinstance(values, np.ndarray):
        values.setflags(write=False)
        return values
    return tuple(values)


