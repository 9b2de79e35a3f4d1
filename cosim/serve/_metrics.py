"""Serving metrics (docs/serving.md): tail latency, queueing, throughput, SLO attainment,
energy per token, utilisation and batch size per pool, and the time-average number of
requests in the system, from a run's per-request columns and its list of devices.

Percentiles are numpy's ``linear`` method (Hyndman and Fan's definition 7, numpy's
default): the q-th percentile of n sorted values x[0..n-1] lies at rank h = (n - 1) q / 100,
between x[floor h] and x[floor h + 1] in proportion. Rates and utilisation are over the
span from the first arrival to the last end; energy is every device's over the whole
run, idle included. Whole-run ratios are sums first, then one ratio (a mean of ratios
would weigh a short request like a long one), as for the single-request metrics.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._args import real, whole
from ..errors import ConfigError
from .._token_metrics import TokenLatency, token_latency

PERCENTILE_METHOD = "linear"
ROLES = ("draft", "prm", "target")
REQUEST_COLUMNS = ("arrival_ns", "start_ns", "end_ns", "final_tokens")
# The engine's exact request times: whole picoseconds as integers (in place of the *_ns columns).
EXACT_COLUMNS = ("arrival_ps", "start_ps", "end_ps")
PS_PER_NS = 1000
DEVICE_KEYS = ("role", "index", "energy_j", "busy_ns", "iterations", "batched_sequences")
NS_PER_S = 1e9  # divided by, never multiplied by 1e-9: 2e9 ns is then exactly 2.0 s (an SLO's edge)


@dataclass(frozen=True)
class PoolStats:
    """One pool of devices (a role) over a run."""

    role: str
    devices: int
    utilisation: float  # busy_ns / span, averaged over the pool's devices
    mean_batch: float | None  # batched sequences / iterations over the pool; None: the devices do not batch
    energy_j: float  # the pool's energy over the whole run, idle included
    busy_s: float  # busy time summed over the pool's devices
    iterations: int
    kv_limited_iterations: int = 0  # iterations that left waiting work out for lack of KV memory


@dataclass(frozen=True)
class ServeSummary:
    """What a serving run did, in seconds, requests, tokens and joules."""

    requests: int
    span_s: float  # first arrival to last end
    latency_p50_s: float  # latency: end - arrival
    latency_p90_s: float
    latency_p99_s: float
    latency_max_s: float
    latency_mean_s: float
    queueing_mean_s: float  # queueing delay: start - arrival (waiting for a free slot)
    queueing_p99_s: float
    service_mean_s: float  # end - start
    throughput_req_s: float  # requests / span
    throughput_tok_s: float  # final-chain tokens / span
    slo_s: float | None
    slo_attainment: float | None  # share of requests with latency <= slo_s
    energy_j: float  # every device, idle included, over the whole run
    energy_j_per_token: float  # energy_j / final-chain tokens
    energy_j_per_request: float
    mean_in_system: float  # time-average number of requests between arrival and end, over the span
    mean_in_queue: float  # the same between arrival and start
    pools: dict[str, PoolStats]  # by role: draft, prm, target (the autoregressive system: target)
    # TTFT, TPOT and end-to-end latency as vLLM's benchmark reports them (cosim/_token_metrics.py);
    # None for systems that report no first token (the speculative ones).
    tokens: TokenLatency | None = None

    def to_dict(self) -> dict[str, Any]:
        """One flat row (a table's or a JSON file's): the pools' values as
        ``utilisation_<role>``, ``mean_batch_<role>``, ``devices_<role>``, ``energy_j_<role>``,
        ``kv_limited_iterations_<role>``; with token latencies, ``ttft_mean_s`` and the rest."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("pools", "tokens")}
        if self.tokens is not None:
            row.update({k: v for k, v in self.tokens.to_dict().items() if k != "requests"})
        for role, pool in self.pools.items():
            row.update({f"devices_{role}": pool.devices, f"utilisation_{role}": pool.utilisation,
                        f"mean_batch_{role}": pool.mean_batch, f"energy_j_{role}": pool.energy_j,
                        f"kv_limited_iterations_{role}": pool.kv_limited_iterations})
        return row


def percentile(values: Any, q: float) -> float:
    """The ``q``-th percentile (0 to 100) by the module's method."""
    return float(np.percentile(np.asarray(values, dtype=np.float64), q, method=PERCENTILE_METHOD))


def _column(requests: Mapping[str, Any], name: str, n: int | None) -> np.ndarray:
    if name not in requests:
        raise ConfigError(f"requests: no column {name!r}; give {', '.join(REQUEST_COLUMNS)}")
    try:
        values = np.asarray(requests[name], dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"requests[{name!r}]: expected numbers") from None
    if values.ndim != 1 or (n is not None and len(values) != n):
        raise ConfigError(f"requests[{name!r}]: expected one value per request ({n if n is not None else 'a list'}), "
                          f"got shape {values.shape}")
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        raise ConfigError(f"requests[{name!r}][{bad[0]}]: expected a finite number >= 0, got {float(values[bad[0]])!r}")
    return values


def _exact_column(requests: Mapping[str, Any], name: str, n: int | None) -> np.ndarray:
    values = np.asarray(requests[name])
    if values.dtype.kind not in "iu" or values.ndim != 1 or (n is not None and len(values) != n):
        raise ConfigError(f"requests[{name!r}]: expected one whole number of picoseconds per request, got "
                          f"{values.dtype} of shape {values.shape}")
    values = values.astype(np.int64)
    bad = np.flatnonzero(values < 0)
    if bad.size:
        raise ConfigError(f"requests[{name!r}][{bad[0]}]: expected a time >= 0, got {int(values[bad[0]])}")
    return values


def _order(later: np.ndarray, earlier: np.ndarray, names: tuple[str, str]) -> None:
    bad = np.flatnonzero(later < earlier)
    if bad.size:
        i = int(bad[0])
        raise ConfigError(f"requests[{names[0]!r}][{i}]: {later[i]:.0f} is before {names[1]} {earlier[i]:.0f}")


def _request_times(requests: Mapping[str, Any]) -> tuple[np.ndarray, ...]:
    """Arrival, start and end (ns, float64), queueing, service and latency (ns, float64) and
    the span from the first arrival to the last end (ns), checked in order. Exact integer columns (``*_ps``) are checked and subtracted as integers."""
    exact = EXACT_COLUMNS[0] in requests
    names = EXACT_COLUMNS if exact else REQUEST_COLUMNS[:3]
    read = _exact_column if exact else _column
    if names[0] not in requests:
        raise ConfigError(f"requests: no column {names[0]!r}; give {', '.join(REQUEST_COLUMNS)}")
    arrival = read(requests, names[0], None)
    if len(arrival) == 0:
        raise ConfigError("requests: no finished request")
    start, end = (read(requests, name, len(arrival)) for name in names[1:])
    _order(start, arrival, (names[1], names[0]))
    _order(end, start, (names[2], names[1]))
    scale = PS_PER_NS if exact else 1
    queueing, service, latency = ((later - earlier) / scale for later, earlier in
                                  ((start, arrival), (end, start), (end, arrival)))
    span = (end.max() - arrival.min()) / scale
    return arrival / scale, start / scale, end / scale, queueing, service, latency, float(span)


def requests_in_system(enter_ns: Any, leave_ns: Any, window: tuple[float, float] | None = None) -> float:
    """The time-average number of requests present over ``window`` (ns; default: the
    first entry to the last exit), each present on [enter, leave): the integral of the
    count, which is the sum of each interval's overlap with the window, over its length.
    Over the whole span this is Little's L = (requests / span) x mean (leave - enter); a
    window that leaves out warm-up and drain measures the steady state."""
    enter = np.asarray(enter_ns, dtype=np.float64)
    leave = np.asarray(leave_ns, dtype=np.float64)
    if enter.ndim != 1 or enter.shape != leave.shape or not enter.size:
        raise ConfigError(f"requests_in_system: one entry and one exit time per request, got shapes {enter.shape} "
                          f"and {leave.shape}")
    lo, hi = (float(enter.min()), float(leave.max())) if window is None else map(float, window)
    if not hi > lo:
        raise ConfigError(f"window: must end after it starts, got [{lo:g}, {hi:g}] ns")
    overlap = np.clip(np.minimum(leave, hi) - np.maximum(enter, lo), 0.0, None)
    return float(math.fsum(overlap.tolist()) / (hi - lo))


def _devices(devices: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    pools: dict[str, list[Mapping[str, Any]]] = {role: [] for role in ROLES}
    seen: set[tuple[str, int]] = set()
    for i, device in enumerate(devices):
        missing = [k for k in DEVICE_KEYS if k not in device]
        if missing:
            raise ConfigError(f"devices[{i}]: no {missing[0]!r}; a device is {{{', '.join(DEVICE_KEYS)}}}")
        if device["role"] not in ROLES:
            raise ConfigError(f"devices[{i}].role: one of {', '.join(ROLES)}, got {device['role']!r}")
        key = (device["role"], device["index"])
        if key in seen:
            raise ConfigError(f"devices[{i}]: {device['role']} device {device['index']} is listed twice")
        seen.add(key)
        whole(device["index"], f"devices[{i}].index")
        for name in ("energy_j", "busy_ns"):
            real(device[name], f"devices[{i}].{name}")  # a finite number >= 0
        for name in ("iterations", "batched_sequences"):
            whole(device[name], f"devices[{i}].{name}")
        whole(device.get("kv_limited_iterations", 0), f"devices[{i}].kv_limited_iterations")
        pools[device["role"]].append(device)
    # Every system has target GPUs; a PRM scores a draft device's steps (specreason has a
    # draft pool and no PRM, the autoregressive system the target's pool alone).
    if not pools["target"]:
        raise ConfigError("devices: no target device; every system has a target pool")
    if pools["prm"] and not pools["draft"]:
        raise ConfigError("devices: PRM devices but no draft device; a PRM scores drafted steps")
    return {role: members for role, members in pools.items() if members}


def _pool(role: str, members: list[Mapping[str, Any]], span_ns: float) -> PoolStats:
    busy = [float(d["busy_ns"]) for d in members]
    iterations = sum(int(d["iterations"]) for d in members)
    batched = sum(float(d["batched_sequences"]) for d in members)
    return PoolStats(role=role, devices=len(members), utilisation=sum(b / span_ns for b in busy) / len(members),
                     mean_batch=batched / iterations if batched > 0 and iterations > 0 else None,
                     energy_j=math.fsum(float(d["energy_j"]) for d in members), busy_s=math.fsum(busy) / NS_PER_S,
                     iterations=iterations,
                     kv_limited_iterations=sum(int(d.get("kv_limited_iterations", 0)) for d in members))


def serve_summary(requests: Mapping[str, Any], devices: Sequence[Mapping[str, Any]], *,
                  slo_s: float | None = None) -> ServeSummary:
    """The serving metrics of a run. ``requests``: per finished request, in any order,
    ``arrival_ns``, ``start_ns``, ``end_ns`` and ``final_tokens`` (other columns are
    ignored), or in place of the three times the engine's exact ``arrival_ps``,
    ``start_ps`` and ``end_ps`` (whole picoseconds, integers). ``devices``: the run's
    device list, each {role, index, energy_j, busy_ns, iterations, batched_sequences}.
    ``slo_s``: the latency objective whose attainment is reported (optional)."""
    arrival, start, end, queueing_ns, service_ns, latency_ns, span_ns = _request_times(requests)
    n = len(arrival)
    tokens = _column(requests, "final_tokens", n)
    if not span_ns > 0:
        raise ConfigError("requests: the run spans no time (every request ends as it arrives)")
    total_tokens = math.fsum(tokens.tolist())
    if not total_tokens > 0:
        raise ConfigError("requests['final_tokens']: the final chains hold no token")
    slo = None if slo_s is None else real(slo_s, "slo_s", positive=True)
    pools = {role: _pool(role, members, span_ns) for role, members in _devices(devices).items()}
    energy = math.fsum(pool.energy_j for pool in pools.values())
    latency = latency_ns / NS_PER_S
    queueing = queueing_ns / NS_PER_S
    span_s = span_ns / NS_PER_S
    return ServeSummary(
        requests=n,
        span_s=span_s,
        latency_p50_s=percentile(latency, 50),
        latency_p90_s=percentile(latency, 90),
        latency_p99_s=percentile(latency, 99),
        latency_max_s=float(latency.max()),
        latency_mean_s=math.fsum(latency.tolist()) / n,
        queueing_mean_s=math.fsum(queueing.tolist()) / n,
        queueing_p99_s=percentile(queueing, 99),
        service_mean_s=math.fsum((service_ns / NS_PER_S).tolist()) / n,
        throughput_req_s=n / span_s,
        throughput_tok_s=total_tokens / span_s,
        slo_s=slo,
        slo_attainment=None if slo is None else float(np.mean(latency <= slo)),
        energy_j=energy,
        energy_j_per_token=energy / total_tokens,
        energy_j_per_request=energy / n,
        mean_in_system=requests_in_system(arrival, end),
        mean_in_queue=requests_in_system(arrival, start, (float(arrival.min()), float(end.max()))),
        pools=pools,
        tokens=_token_latency(requests, arrival, end, tokens),
    )


def _token_latency(requests: Mapping[str, Any], arrival: np.ndarray, end: np.ndarray,
                   tokens: np.ndarray) -> TokenLatency | None:
    """TTFT and TPOT when every request reports its first token (``first_token_ps``, whole
    picoseconds; -1 where the system reports none)."""
    if "first_token_ps" not in requests:
        return None
    first = np.asarray(requests["first_token_ps"])
    if first.shape != arrival.shape or not np.all(first >= 0):
        return None
    return token_latency(arrival / NS_PER_S, first / PS_PER_NS / NS_PER_S, end / NS_PER_S, tokens)
