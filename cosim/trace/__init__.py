"""Workloads: the trace format, its checks, synthetic traces from dataset
profiles, hand-written trajectories and trace statistics (docs/workload.md)."""

from ._builder import TrajectoryBuilder
from ._events import Backtrack, Draft, Event, Problem, Refine, TraceHeader
from ._generate import GeneratedProblems, generate
from ..errors import TraceError
from ._io import FileProblems, Trace, load
from ._profile_files import builtin_profiles, load_profile
from ._profiles import DatasetProfile
from ._quality import (CONFIGS, TARGETS, DrawnProblem, correctness_probability, good_step_probability, kept_qualities,
                       pass_probability, reject_probability, resolve_target, step_score)
from ._replay import ChainSummary, summarize
from ._rsd_import import RsdImport, RsdRecordError, import_rsd
from ._stats import format_table, trace_statistics
from ._plain import plain_header, plain_problem
from ._vllm_log import RequestLog, import_vllm_requests, read_request_log

__all__ = [
    "Backtrack",
    "CONFIGS",
    "ChainSummary",
    "DatasetProfile",
    "Draft",
    "DrawnProblem",
    "Event",
    "FileProblems",
    "GeneratedProblems",
    "Problem",
    "Refine",
    "RequestLog",
    "RsdImport",
    "RsdRecordError",
    "TARGETS",
    "Trace",
    "TraceError",
    "TraceHeader",
    "TrajectoryBuilder",
    "builtin_profiles",
    "correctness_probability",
    "format_table",
    "generate",
    "good_step_probability",
    "import_rsd",
    "import_vllm_requests",
    "kept_qualities",
    "load",
    "load_profile",
    "pass_probability",
    "plain_header",
    "plain_problem",
    "read_request_log",
    "reject_probability",
    "resolve_target",
    "step_score",
    "summarize",
    "trace_statistics",
]
