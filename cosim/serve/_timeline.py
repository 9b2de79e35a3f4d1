"""The Perfetto / Chrome trace-event timeline of a serving run: a track per device of
every pool (and per direction of each device's PCIe link), each slice naming its
request and step, so a request can be followed across the devices it was bound to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ConfigError
from ..outputs._atomic import write_atomically

if TYPE_CHECKING:
    from ._run import ServeResult

_ROLE_OF = {"draft": "draft", "prm": "prm", "target": "target", "pcie_draft": "draft", "pcie_prm": "prm",
            "pcie_target": "target"}


def write_serve_timeline(result: ServeResult, path: str | Path, labels: dict[str, str] | None = None) -> Path:
    """Writes ``result``'s activities (serve.run(..., activities=True)) as trace-event JSON."""
    acts = result.activities
    if acts is None:
        raise ConfigError("timeline: the serving run kept no activities (serve.run(..., activities=True))")
    labels = labels or {}
    rows = result.per_request
    request = np.asarray(rows.column("request"), dtype=np.int64)
    bound = {role: np.zeros(int(request.max()) + 1, dtype=np.int64) for role in ("draft", "prm", "target")}
    for role in bound:
        bound[role][request] = np.asarray(rows.column(f"{role}_device"), dtype=np.int64)
    pools = {role: 0 for role in ("draft", "prm", "target")}  # the autoregressive system has a target pool alone
    for d in result.devices:
        pools[d["role"]] = max(pools[d["role"]], int(d["index"]) + 1)

    # Track ids: each pool's devices in order, then each device's link directions.
    names: list[str] = []
    for role in ("draft", "prm", "target"):
        names += [f"{role} {i}" + (f" ({labels[role]})" if role in labels else "") for i in range(pools[role])]
    for role in ("draft", "prm", "target"):
        names += [f"pcie_{role} {i} {d}" for i in range(pools[role]) for d in ("h2d", "d2h")]
    tid = {name.split(" (")[0]: i + 1 for i, name in enumerate(names)}

    devices, kinds = acts.names
    start, end = acts.column("start_ns"), acts.column("end_ns")
    keep = end > start
    problem = acts.column("problem")[keep].astype(np.int64)
    columns = [acts.column(k)[keep].tolist() for k in ("device_code", "kind_code", "step", "tokens")]
    ts = (start[keep] / 1e3).tolist()
    dur = ((end[keep] - start[keep]) / 1e3).tolist()
    index = {role: bound[role][problem].tolist() for role in bound}
    events = [json.dumps({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": result.scenario}})]
    for name, i in zip(names, range(1, len(names) + 1)):
        events.append(json.dumps({"ph": "M", "name": "thread_name", "pid": 1, "tid": i, "args": {"name": name}}))
        events.append(json.dumps({"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": i,
                                  "args": {"sort_index": i}}))
    for j, (d, k, s, n) in enumerate(zip(*columns)):
        device, kind = devices[d], kinds[k]
        role = _ROLE_OF[device]
        track = f"{device} {index[role][j]}"
        if kind.startswith("transfer_"):
            track += " " + kind.removeprefix("transfer_")
        events.append(f'{{"ph":"X","pid":1,"tid":{tid[track]},"name":"{kind}","cat":"{kind}","ts":{ts[j]!r},'
                      f'"dur":{dur[j]!r},"args":{{"request":{int(problem[j])},"step":{s},"tokens_or_bytes":{n}}}}}')
    path = Path(path)

    def write(handle: Any) -> None:
        handle.write('{"traceEvents":[' + ",".join(events) + '],"displayTimeUnit":"ns"}')

    return write_atomically(path, write)
