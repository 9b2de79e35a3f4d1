"""heteroreason-cosim: SystemC/TLM-2.0 co-simulation of heterogeneous FPGA-GPU
speculative reasoning (draft on an FPGA, PRM and target on GPUs)."""

from . import live, serve, standalone, trace, uncertainty
from .live import cosimulate
from .config import hardware
from .devices._latency_csv import LatencyProfile, load_latency_profile
from ._cmake_prefix import cmake_prefix
from ._sweep import SweepTable, sweep
from .engine._workflow import simulate
from .errors import (CapacityError, ConfigError, CosimError, KvmuError, OutputError, PolicyError, SimulationError,
                     WorkerCrashed)
from .config.hardware import (
    FpgaDevice,
    GpuDevice,
    ModelConfig,
    PcieLinkConfig,
    builtin_names,
    load_device,
    load_link,
    load_model,
)
from .result import METRICS, Result
from .config.scenario import Scenario, build_scenario, builtin_scenarios, load_scenario, scenario

__version__ = "0.1.0"

__all__ = [
    "CapacityError",
    "ConfigError",
    "CosimError",
    "FpgaDevice",
    "GpuDevice",
    "KvmuError",
    "LatencyProfile",
    "METRICS",
    "OutputError",
    "PolicyError",
    "Result",
    "Scenario",
    "build_scenario",
    "cmake_prefix",
    "cosimulate",
    "live",
    "load_scenario",
    "scenario",
    "simulate",
    "sweep",
    "SweepTable",
    "ModelConfig",
    "PcieLinkConfig",
    "SimulationError",
    "WorkerCrashed",
    "builtin_names",
    "builtin_scenarios",
    "load_device",
    "load_latency_profile",
    "load_link",
    "load_model",
    "serve",
    "standalone",
    "trace",
    "uncertainty",
]
