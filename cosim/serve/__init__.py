"""Serving at scale (docs/serving.md): request arrivals, the cluster and batching
sections a scenario hands the engine, tail-latency and capacity metrics, and the
search for the cheapest cluster that meets a latency objective."""

from ._arrivals import arrival_ns, gamma, poisson, trace_arrivals
from ._system import serving_sections

__all__ = [
    "arrival_ns",
    "gamma",
    "poisson",
    "serving_sections",
    "trace_arrivals",
]
