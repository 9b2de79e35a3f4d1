"""Chrome / Perfetto trace-event JSON of a simulation: one track per device
(and per direction of each PCIe link), one slice per activity, with the
problem and step in its args. Opens in ui.perfetto.dev or chrome://tracing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ._atomic import write_atomically

if TYPE_CHECKING:
    from .result import Result

# Track order: devices first, then each link's two directions.
_TRACKS = ["draft", "prm", "target"] + [f"{link} {d}" for link in ("pcie_draft", "pcie_prm", "pcie_target")
                                        for d in ("h2d", "d2h")]


def track_of(device: str, kind: str) -> str:
    if kind.startswith("transfer_"):
        return f"{device} {kind.removeprefix('transfer_')}"
    return device


def timeline_events(result: Result, labels: dict[str, str] | None = None) -> list[dict]:
    if result.activities is None:
        raise ValueError("the result holds no activities: simulate(..., activities=True)")
    labels = labels or {}
    tid = {name: i + 1 for i, name in enumerate(_TRACKS)}
    events: list[dict] = [{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": result.scenario}}]
    for name, i in tid.items():
        device = name.split()[0]
        shown = f"{name} ({labels[device]})" if device in labels else name
        events.append({"ph": "M", "name": "thread_name", "pid": 1, "tid": i, "args": {"name": shown}})
        events.append({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i, "args": {"sort_index": i}})
    for a in result.activities:
        if a.end_ns <= a.start_ns:
            continue
        events.append({
            "ph": "X", "pid": 1, "tid": tid[track_of(a.device, a.kind)], "name": a.kind, "cat": a.kind,
            "ts": a.start_ns / 1e3, "dur": (a.end_ns - a.start_ns) / 1e3,
            "args": {"problem": a.problem, "step": a.step, "tokens_or_bytes": a.tokens,
                     "wasted_share": round(a.wasted_share, 6)},
        })
    return events


def write_timeline(result: Result, path: str | Path, labels: dict[str, str] | None = None) -> Path:
    path = Path(path)
    payload = {"traceEvents": timeline_events(result, labels), "displayTimeUnit": "ns"}
    write_atomically(path, json.dumps(payload, separators=(",", ":")))
    return path
