"""Per-token latency as vLLM's serving benchmark reports it (``vllm bench serve``,
vllm/benchmarks/serve.py, ``calculate_metrics``), docs/metrics.md:

- TTFT, time to first token: from the request's arrival to its first output token;
- TPOT, time per output token: (end - first token) / (output tokens - 1), for each request
  with more than one output token (the others are left out, as vLLM leaves them out);
- E2EL, end-to-end latency: from arrival to the last output token;

each summarised by its mean, median and 90th, 95th and 99th percentiles over the requests:
numpy's mean, median and ``percentile`` with its default (linear) method, as vLLM computes
them. A request's own TPOT is the mean of its inter-token gaps; the run's mean TPOT is the
mean over requests of those means, not total decode time over total tokens."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ConfigError

PERCENTILES = (90, 95, 99)
QUANTITIES = ("ttft", "tpot", "e2el")
STATISTICS = ("mean", "median", *(f"p{q}" for q in PERCENTILES))


@dataclass(frozen=True)
class TokenLatency:
    """TTFT, TPOT and end-to-end latency of a set of requests, in seconds."""

    requests: int
    ttft_mean_s: float
    ttft_median_s: float
    ttft_p90_s: float
    ttft_p95_s: float
    ttft_p99_s: float
    tpot_mean_s: float | None  # None when no request has more than one output token
    tpot_median_s: float | None
    tpot_p90_s: float | None
    tpot_p95_s: float | None
    tpot_p99_s: float | None
    e2el_mean_s: float
    e2el_median_s: float
    e2el_p90_s: float
    e2el_p95_s: float
    e2el_p99_s: float

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def value(self, quantity: str, statistic: str) -> float | None:
        """One statistic (mean, median, p90, p95, p99) of one quantity (ttft, tpot, e2el), seconds."""
        if quantity not in QUANTITIES or statistic not in STATISTICS:
            raise ConfigError(f"token latency: {quantity}_{statistic}: one of {', '.join(QUANTITIES)} with one of "
                              f"{', '.join(STATISTICS)}")
        return getattr(self, f"{quantity}_{statistic}_s")


def _stats(values: np.ndarray) -> list[float]:
    return [float(np.mean(values)), float(np.median(values)),
            *(float(np.percentile(values, q)) for q in PERCENTILES)]


def _seconds(values: Any, name: str, n: int | None) -> np.ndarray:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ConfigError(f"{name}: expected numbers") from None
    if array.ndim != 1 or (n is not None and len(array) != n):
        raise ConfigError(f"{name}: expected one value per request, got shape {array.shape}")
    return array


def token_latency(start_s: Any, first_token_s: Any, end_s: Any, output_tokens: Any) -> TokenLatency:
    """The statistics of requests that each started (arrived) at ``start_s``, had their
    first output token at ``first_token_s`` and their last at ``end_s`` (seconds, any common
    origin), with ``output_tokens`` output tokens each."""
    start = _seconds(start_s, "start_s", None)
    n = len(start)
    if n == 0:
        raise ConfigError("token latency: no request")
    first = _seconds(first_token_s, "first_token_s", n)
    end = _seconds(end_s, "end_s", n)
    tokens = _seconds(output_tokens, "output_tokens", n)
    for name, values in (("start_s", start), ("first_token_s", first), ("end_s", end), ("output_tokens", tokens)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise ConfigError(f"token latency: {name}[{bad[0]}]: expected a finite number, got "
                              f"{float(values[bad[0]])!r}")
    for later, earlier, names in ((first, start, ("first_token_s", "start_s")), (end, first, ("end_s", "first_token_s"))):
        bad = np.flatnonzero(later < earlier)
        if bad.size:
            i = int(bad[0])
            raise ConfigError(f"token latency: {names[0]}[{i}] = {float(later[i])!r} is before {names[1]}[{i}] = "
                              f"{float(earlier[i])!r}")
    if np.any(tokens < 1):
        raise ConfigError(f"token latency: output_tokens[{int(np.flatnonzero(tokens < 1)[0])}]: at least one token")
    ttft = first - start
    e2el = end - start
    several = tokens > 1
    tpot = (end[several] - first[several]) / (tokens[several] - 1)
    tpot_stats: list[float | None] = _stats(tpot) if tpot.size else [None] * len(STATISTICS)
    return TokenLatency(n, *_stats(ttft), *tpot_stats, *_stats(e2el))


def format_latency(latency: TokenLatency) -> str:
    """One line per quantity: its statistics in milliseconds."""
    lines = [f"{'':6}" + "".join(f"{statistic:>10}" for statistic in STATISTICS) + "   (ms)"]
    for quantity in QUANTITIES:
        values = [latency.value(quantity, statistic) for statistic in STATISTICS]
        lines.append(f"{quantity.upper():6}" + "".join(f"{'-':>10}" if v is None else f"{v * 1e3:10.1f}"
                                                       for v in values))
    return "\n".join(lines)


def format_comparison(measured: TokenLatency, predicted: TokenLatency) -> str:
    """A table of both in milliseconds with the relative error, as LLMServingSim prints its validation."""
    lines = [f"{'metric':16} {'measured ms':>12} {'predicted ms':>12} {'error':>8}"]
    for quantity in QUANTITIES:
        for statistic in STATISTICS:
            m, p = measured.value(quantity, statistic), predicted.value(quantity, statistic)
            if m is None or p is None:
                continue
            error = f"{p / m - 1:+.1%}" if m else "-"
            lines.append(f"{quantity.upper() + ' ' + statistic:16} {m * 1e3:12.1f} {p * 1e3:12.1f} {error:>8}")
    return "\n".join(lines)
