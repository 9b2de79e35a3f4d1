"""Chrome / Perfetto trace-event JSON of a simulation: one track per device
(and per direction of each PCIe link), one slice per activity, with the
problem and step in its args. Opens in ui.perfetto.dev or chrome://tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any


from ._atomic import write_atomically

if TYPE_CHECKING:
    from ..result import Result

# Track order: devices first, then each link's two directions.
_TRACKS = ["draft", "prm", "target"] + [f"{link} {d}" for link in ("pcie_draft", "pcie_prm", "pcie_target")
                                        for d in ("h2d", "d2h")]


def track_of(device: str, kind: str) -> str:
    if kind.startswith("transfer_"):
        return f"{device} {kind.removeprefix('transfer_')}"
    return device


def _header(result: Result, labels: dict[str, str]) -> list[dict]:
    tid = {name: i + 1 for i, name in enumerate(_TRACKS)}
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": result.scenario}}]
    for name, i in tid.items():
        device = name.split()[0]
        if labels and device.removeprefix("pcie_") not in labels:
            continue  # a role the system does not have (labels name the roles it has)
        shown = f"{name} ({labels[device]})" if device in labels else name
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": i, "args": {"name": shown}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i, "args": {"sort_index": i}})
    return events


def _slices(result: Result) -> list[str]:
    """One JSON object per activity with a duration, written directly: a run keeps
    hundreds of thousands, and building a dict for each to hand to json was most
    of a timeline's cost. Names are fixed identifiers and numbers are finite."""
    acts = result.activities
    devices, kinds = acts.names
    tid = {name: i + 1 for i, name in enumerate(_TRACKS)}
    # Every (device, kind) pair that can occur has a track; other pairs never index this.
    track = [[tid.get(track_of(d, k), 0) for k in kinds] for d in devices]
    start, end = acts.column("start_ns"), acts.column("end_ns")
    keep = end > start
    columns = [acts.column(k)[keep].tolist() for k in ("device_code", "kind_code", "problem", "step", "tokens")]
    ts = (start[keep] / 1e3).tolist()
    dur = ((end[keep] - start[keep]) / 1e3).tolist()
    wasted = [round(w, 6) for w in acts.column("wasted_share")[keep].tolist()]
    return [
        f'{{"ph":"X","pid":1,"tid":{track[d][k]},"name":"{kinds[k]}","cat":"{kinds[k]}","ts":{t!r},"dur":{u!r},'
        f'"args":{{"problem":{p},"step":{s},"tokens_or_bytes":{n},"wasted_share":{w!r}}}}}'
        for d, k, p, s, n, t, u, w in zip(*columns, ts, dur, wasted)
    ]


def timeline_events(result: Result, labels: dict[str, str] | None = None) -> list[dict]:
    """The timeline's events as dicts (what write_timeline writes)."""
    if result.activities is None:
        raise ValueError("the result holds no activities: simulate(..., activities=True)")
    return _header(result, labels or {}) + [json.loads(text) for text in _slices(result)]


def write_timeline(result: Result, path: str | Path, labels: dict[str, str] | None = None) -> Path:
    if result.activities is None:
        raise ValueError("the result holds no activities: simulate(..., activities=True)")
    path = Path(path)
    head = [json.dumps(e, separators=(",", ":")) for e in _header(result, labels or {})]

    def write(handle: Any) -> None:
        handle.write('{"traceEvents":[')
        handle.write(",".join(head + _slices(result)))
        handle.write('],"displayTimeUnit":"ns"}')

    write_atomically(path, write)
    return path
