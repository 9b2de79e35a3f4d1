"""Serving at scale (docs/serving.md): request arrivals, the cluster and batching
sections a scenario hands the engine, tail-latency and capacity metrics, and the
search for the cheapest cluster that meets a latency objective."""

from ._arrivals import arrival_ns, gamma, poisson, trace_arrivals
from ._metrics import PERCENTILE_METHOD, PoolStats, ServeSummary, percentile, requests_in_system, serve_summary
from ._plan import Evaluation, PlanResult, device_costs, plan
from ._run import ServeResult, run, with_arrivals
from ..engine._serving_sections import serving_sections, with_cluster
from .._token_metrics import TokenLatency, token_latency

__all__ = [
    "Evaluation",
    "PERCENTILE_METHOD",
    "PlanResult",
    "PoolStats",
    "ServeResult",
    "ServeSummary",
    "TokenLatency",
    "arrival_ns",
    "device_costs",
    "gamma",
    "percentile",
    "plan",
    "poisson",
    "requests_in_system",
    "run",
    "serve_summary",
    "serving_sections",
    "token_latency",
    "trace_arrivals",
    "with_arrivals",
    "with_cluster",
]
