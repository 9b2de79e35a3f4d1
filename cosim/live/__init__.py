"""Live co-simulation (docs/live.md): Python policies decide a problem's steps, verdicts
and backtracks as the simulated hardware reaches each decision."""

from ._policy import Policy, TracePolicy, View
from ._profile_policy import ProfilePolicy
from ._run import LiveResult, cosimulate

__all__ = ["LiveResult", "Policy", "ProfilePolicy", "TracePolicy", "View", "cosimulate"]
