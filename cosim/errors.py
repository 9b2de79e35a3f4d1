"""Exceptions raised by cosim. The native models raise the same classes."""

from __future__ import annotations


class CosimError(Exception):
    """Base class of every error cosim raises on purpose."""


class ConfigError(CosimError, ValueError):
    """A parameter, file or option is wrong; the message names where."""


class TraceError(ConfigError):
    """A trace file is malformed or describes a run the algorithm cannot make."""


class CapacityError(CosimError):
    """A model, KV cache or region does not fit the memory it is placed in."""


class KvmuError(CosimError):
    """An illegal KVMU transition or a broken valid <= curr <= ahead order."""


class SimulationError(CosimError, RuntimeError):
    """The simulation could not go on (a SystemC error, an impossible request)."""


class OutputError(CosimError, OSError):
    """An output could not be written (a full disk, a lost mount); nothing is left under
    its final name."""


class WorkerCrashed(SimulationError):
    """The worker process running a simulation died without answering."""


class PolicyError(CosimError):
    """A live co-simulation's policy raised or answered what the run cannot take; the
    message names the policy's method, the problem and the step."""
