"""How sure each answer is: sampling intervals of every metric (a bootstrap over
problems, paired between systems that replay the same problems), the declared ranges
of the parameters that are estimates, and the sensitivity of a figure to them
(docs/metrics.md, docs/uncertainty.md)."""

from .._stats._bootstrap import LEVEL, RESAMPLES, SEED, Intervals, bootstrap, ratios
from .._stats._intervals import METRICS, Comparison, Interval, compare, intervals, to_json
from .._stats._serving import serve_intervals
from ._sensitivity import sensitivity


__all__ = ["LEVEL", "METRICS", "RESAMPLES", "SEED", "Comparison", "Interval", "Intervals", "bootstrap", "compare",
           "intervals", "ratios", "sensitivity", "serve_intervals", "to_json"]
