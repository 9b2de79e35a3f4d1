"""Workloads: the trace format, its checks, synthetic traces from dataset
profiles, hand-written trajectories and trace statistics (SPEC section 3)."""

from ._builder import TrajectoryBuilder
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader
from ._generate import GeneratedProblems, generate
from ..errors import TraceError
from ._io import FileProblems, Trace, load
from ._profiles import DatasetProfile, builtin_profiles, load_profile
from ._replay import ChainSummary, summarize
from ._rsd_import import RsdImport, RsdRecordError, import_rsd
from ._stats import format_table, trace_statistics

__all__ = [
    "Backtrack",
    "ChainSummary",
    "DatasetProfile",
    "Draft",
    "Event",
    "FileProblems",
    "GeneratedProblems",
    "Problem",
    "Refine",
    "RsdImport",
    "RsdRecordError",
    "Trace",
    "TraceError",
    "TraceHeader",
    "TrajectoryBuilder",
    "builtin_profiles",
    "format_table",
    "generate",
    "import_rsd",
    "load",
    "load_profile",
    "summarize",
    "trace_statistics",
]
