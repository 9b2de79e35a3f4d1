"""Sampling intervals of a serving run's per-request figures. Requests that queue behind
one another are not independent: a burst delays every request in it. So the requests,
in arrival order, are cut into BLOCKS blocks of consecutive requests and the blocks are
resampled (a block bootstrap): a block keeps the correlation within it, and blocks far
longer than a burst are close to independent. Means (latency, queueing, service, SLO
attainment) take the BCa interval of their block sums; percentiles take the percentile
interval of the percentile over the resampled requests. Below MIN_UNITS requests there are
as many blocks as requests, too few for either (cosim._stats._bootstrap): no interval.

Throughput and energy per token are the whole run's totals over its span (the cluster's
idle energy belongs to no request): another arrival seed (``--seed``) shows their spread.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._bootstrap import LEVEL, RESAMPLES, SEED, bootstrap, resample_counts, too_few
from ._intervals import Interval

BLOCKS = 40
MAX_REQUESTS = 50_000  # percentiles of longer runs are taken over every k-th request (wider, never narrower)
PERCENTILES = {"latency_p50_s": 50, "latency_p90_s": 90, "latency_p99_s": 99, "queueing_p99_s": 99}
MEANS = ("latency_mean_s", "queueing_mean_s", "service_mean_s")


def _columns(per_request: Any, slo_s: float | None) -> dict[str, np.ndarray]:
    order = np.argsort(np.asarray(per_request.column("arrival_s")), kind="stable")
    cols = {"latency_mean_s": np.asarray(per_request.column("latency_s"))[order],
            "queueing_mean_s": np.asarray(per_request.column("queue_s"))[order],
            "service_mean_s": np.asarray(per_request.column("service_s"))[order]}
    if slo_s is not None:
        cols["slo_attainment"] = (cols["latency_mean_s"] <= slo_s).astype(np.float64)
    return cols


def _block_edges(n: int, blocks: int) -> np.ndarray:
    return np.linspace(0, n, blocks + 1).round().astype(np.intp)


def serve_intervals(result: Any, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED,
                    percentiles: tuple[str, ...] = tuple(PERCENTILES)) -> dict[str, Interval]:
    """The interval of each per-request figure of a serving run (``cosim.serve.run``'s result):
    the means, and the ``percentiles`` named (all of PERCENTILES by default); each without
    ends (``available`` False) below MIN_UNITS requests."""
    summary = result.summary
    cols = _columns(result.per_request, summary.slo_s)
    n = len(cols["latency_mean_s"])
    if too_few(n):
        return {m: Interval(float(getattr(summary, m)), math.nan, math.nan, level, available=False)
                for m in [*cols, *percentiles]}
    edges = _block_edges(n, min(BLOCKS, n))
    names = list(cols)
    sums = np.stack([np.add.reduceat(cols[m], edges[:-1]) for m in names] +
                    [np.diff(edges).astype(np.float64)], axis=1)
    means = bootstrap(sums, lambda s: s[..., :-1] / s[..., -1:], level=level, resamples=resamples, seed=seed)
    out = {m: Interval(float(getattr(summary, m)), float(means.low[i]), float(means.high[i]), level)
           for i, m in enumerate(names)}
    out.update(_percentiles(cols, edges, summary, level, resamples, seed, percentiles))
    return out


def _percentiles(cols: dict[str, np.ndarray], edges: np.ndarray, summary: Any, level: float, resamples: int,
                 seed: int, names: tuple[str, ...]) -> dict[str, Interval]:
    """Percentile intervals of the percentiles over resampled blocks (of at most MAX_REQUESTS
    requests: every k-th of a longer run). A resample's percentile is numpy's linear one of
    the requests its blocks hold, found from the sorted values and each one's block count."""
    n = len(cols["latency_mean_s"])
    step = max(1, math.ceil(n / MAX_REQUESTS))
    kept = np.arange(0, n, step)
    block = np.searchsorted(edges, kept, side="right") - 1
    alpha = (1 - level) / 2
    out = {}
    for name in names:
        q = PERCENTILES[name]
        values = cols["latency_mean_s" if name.startswith("latency") else "queueing_mean_s"][kept]
        order = np.argsort(values, kind="stable")
        ordered, owner = values[order], block[order]
        found = []
        for counts in resample_counts(len(edges) - 1, resamples, seed):
            for rows in np.array_split(counts, max(1, len(counts) * len(kept) // 4_000_000)):
                found.append(_weighted_percentile(ordered, rows[:, owner], q))
        low, high = np.quantile(np.concatenate(found), [alpha, 1 - alpha])
        out[name] = Interval(float(getattr(summary, name)), float(low), float(high), level)
    return out


def _weighted_percentile(ordered: np.ndarray, weights: np.ndarray, q: float) -> np.ndarray:
    """Per row of ``weights`` (how often each sorted value is drawn), numpy's linear percentile
    of the values repeated that often: rank h = (N - 1) q / 100 between two order statistics."""
    cum = np.cumsum(weights, axis=1)
    total = cum[:, -1]
    h = (total - 1) * q / 100
    below = np.floor(h)
    lo = (cum <= below[:, None]).sum(axis=1)
    hi = np.minimum((cum <= below[:, None] + 1).sum(axis=1), len(ordered) - 1)
    return ordered[lo] + (h - below) * (ordered[hi] - ordered[lo])
