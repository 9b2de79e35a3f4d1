"""The figures the README quotes from serving runs and from `cosim validate`: the report's
serving knees (the most requests a second each cluster served over the report's rates),
what `cosim serve vllm-rtx4090` prints for the shipped vLLM log beside what vLLM measured,
and each validation case's errors. Each figure is text exactly as the docs print it."""

from __future__ import annotations

import functools
import statistics
from typing import Any, Callable

from cosim import devices, standalone, validation
from cosim.config import hardware
from cosim.config._sources import counts as source_counts, find as find_sources
from cosim.report import _serving as serving
from cosim.config.scenario import load_scenario
from cosim.serve import run
from cosim.trace._vllm_log import read_request_log
from cosim.validation import _carry_over as carry_over
from cosim.validation import _vllm_serving as vllm_case

from figures_report import defaults

# The README's name of each curve of the report's serving figure.
KNEES = {"knee_u280_200": "heteroreason, 8 U280 @ 200 MHz", "knee_u280_300": "heteroreason, 8 U280 @ 300 MHz",
         "knee_gpu_stepahead": "gpu-stepahead, 2 draft GPUs"}
VLLM_SCENARIO = "vllm-rtx4090"
VLLM_LOG = ("vllm", "requests.jsonl")  # in the validation case's folder, as the README imports it
VLLM_CLOCK = "engine"                  # the README's `cosim trace import --clock engine`


@functools.lru_cache(maxsize=1)
def curves() -> dict[str, list[dict[str, Any]]]:
    return serving.serving(defaults()[1], lambda label: None)["curves"]


def knee(label: str) -> str:
    return f"{max(p['throughput_req_s'] for p in curves()[label]):.2f}"


@functools.lru_cache(maxsize=1)
def vllm_serve() -> tuple[Any, Any]:
    """(vLLM's measured token latencies, the simulated ones) of `cosim trace import` of the
    shipped log served by `cosim serve vllm-rtx4090 --trace` (arrivals from the trace)."""
    log = read_request_log(vllm_case.folder().joinpath(*VLLM_LOG))
    served = run(load_scenario(VLLM_SCENARIO), log.to_trace(VLLM_CLOCK))
    return log.measured(), served.summary.tokens


def _latency(which: int, quantity: str) -> str:
    value = vllm_serve()[which].value(quantity, "mean")
    return f"{value:.1f} s" if quantity == "ttft" else f"{value * 1e3:.1f} ms"


@functools.lru_cache(maxsize=1)
def rows() -> tuple[validation.Row, ...]:
    return tuple(validation.run())


def case_errors(case: str) -> str:
    """A case's median absolute error, then its worst row's error and quantity."""
    found = [r for r in rows() if r.case == case]
    worst = max(found, key=lambda r: abs(r.error))
    median = statistics.median(abs(r.error) for r in found)
    return f"median |error| {median:.1%}, worst {worst.error:+.1%}: {worst.quantity}"


def vllm_within(variant: str, quantity: str, name: str = vllm_case.CASE) -> str:
    """The largest absolute error of a vLLM replay's mean and p99 of one quantity (the
    replay of case ``name``, the RTX 4090's by default)."""
    case = f"{name} ({variant})"
    errors = [abs(r.error) for r in rows() if r.case == case and r.quantity in (f"{quantity} mean", f"{quantity} p99")]
    assert len(errors) == 2, (case, quantity)
    return f"{max(errors):.1%}"


def small_cases_table() -> str:
    """What `cosim validate` prints for the cases of a few rows each, as a code block."""
    cases = ("rtx3090-layers", "qwen-a100", "fpga-designs")
    chosen = [r for r in rows() if r.case in cases]
    return "```\n" + validation.format_table(chosen) + "\n```"


def vllm_table() -> str:
    """The vLLM replay's TTFT and TPOT, mean and p99, of each timing, and each timing's summary."""
    found = [r for r in rows() if r.case.startswith(f"{vllm_case.CASE} (")]
    shown = [r for r in found if r.quantity.split()[0] in ("TTFT", "TPOT") and r.quantity.split()[1] in ("mean", "p99")]
    lines = [f"{case}: {int(s['rows'])} rows, median |error| {s['median_abs_error']:.1%}, "
             f"worst {s['worst_abs_error']:.1%}" for case, s in validation.summary(found).items()]
    table = validation.format_table(shown).split("\n\n")[0]  # its own summary would count the shown rows only
    return "```\n" + table + "\n\n" + "\n".join(lines) + "\n```"


def _efficiencies(values: dict[str, float], fitted: tuple[str, ...]) -> str:
    short = {"memory_efficiency": "mem", "compute_efficiency": "compute", "roofline_exponent": "p"}
    return ", ".join(f"{short[k]} {v:.3g}" + ("" if k in fitted else " (carried)") for k, v in values.items())


def carry_over_table() -> str:
    """Per profiled GPU: its architecture's efficiencies and its errors with them and left out."""
    lines = ["| GPU (architecture) | measured | points | its efficiencies | error with them | "
             "left out: the others' means | error left out |", "|---|---|---|---|---|---|---|"]
    for profiled, row in zip(carry_over.PROFILED, carry_over.table()):
        lines.append(f"| {row['gpu']} ({profiled.architecture}) | {row['measurements']} | {row['points']} | "
                     f"{_efficiencies(row['values'], profiled.fits)} | {row['own_median']:.1%} median, "
                     f"{row['own_worst']:+.1%} worst | {_efficiencies(row['left_out_values'], tuple(row['values']))} | "
                     f"{row['left_out_median']:.1%} median, {row['left_out_worst']:+.1%} worst |")
    return "\n".join(lines)


def device_library_table() -> str:
    """Per GPU of the library that names an architecture: how many of its values cite a
    source and how many are estimates, and where its kernel efficiencies come from."""
    profiled = {p.architecture: p for p in carry_over.PROFILED}
    lines = ["| GPU | architecture | values cited | estimates | kernel efficiencies | measured on it |",
             "|---|---|---|---|---|---|"]
    for name in hardware.builtin_names("device"):
        device = hardware.load_device(name)
        if hardware.kind_of(device) != "gpu" or not device.architecture:
            continue
        tally = source_counts(find_sources(name)[1])
        own = profiled[device.architecture]
        carried = [k.replace("_", " ") for k in ("compute_efficiency", "roofline_exponent") if k not in own.fits]
        where = "fitted to its own measurements" if own.device == name else f"its architecture's, fitted to the {own.label}"
        if carried:
            where += f" ({' and '.join(carried)} carried)"
        lines.append(f"| {device.name} (`{name}`) | {device.architecture} | {tally['source']} | {tally['estimate']} | "
                     f"{where} | {own.measurements if own.device == name else 'nothing'} |")
    return "\n".join(lines)


def u280_design_power() -> str:
    """The paper's U280 design's decode power as the design model derives it, in its parts."""
    device, model = hardware.load_device("u280"), hardware.load_model("qwen2.5-0.5b")
    power = device.power
    timing = standalone.fpga_timing("u280", "qwen2.5-0.5b", [0])
    ns = timing["ns"][0]
    macs = timing["compute_ns"][0] * device.accelerator.macs_per_cycle * device.accelerator.clock_mhz / 1e3
    nbytes = timing["memory_ns"][0] * timing["decoder_gbps"]
    decode_w = devices.kind_of(device).state_powers(device, model)["decode_w"]
    return (f"{decode_w:.1f} W while decoding: its array streams {nbytes / ns:.0f} GB/s of weights "
            f"({power.memory_energy_pj_per_bit * 8 * nbytes / ns * 1e-3:.1f} W) and retires {macs / ns:.0f} GMAC/s "
            f"({power.mac_energy_pj * macs / ns * 1e-3:.1f} W) above the {power.idle_w:.0f} W floor")


# Each FPGA board and the model its shipped scenarios and validation rows run on it.
FPGA_MODELS = {"u280": "qwen2.5-0.5b", "u280-flexllm": "llama-3.2-1b", "v80": "qwen2.5-0.5b",
               "kv260-llama-fpga": "llama-2-7b", "zcu104-llama-fpga": "llama-2-7b",
               "zcu104-llama-fpga-ps-pl": "llama-2-7b", "u250-llama-fpga": "llama-2-7b"}


def fpga_power_table() -> str:
    """Per FPGA board: its idle power, its design model's energies (source or estimate, range)
    as its file gives them, and the decode power they derive for the model it runs."""
    def cell(values: dict, key: str) -> str:
        v = values[key]
        return f"{v.value} ({v.kind}{', range ' + v.range if v.range else ''})"

    lines = ["| board | idle | memory energy | MAC energy | decode power |", "|---|---|---|---|---|"]
    for name, model in FPGA_MODELS.items():
        device = hardware.load_device(name)
        values = {v.key: v for v in find_sources(name)[1]}
        decode_w = devices.kind_of(device).state_powers(device, hardware.load_model(model))["decode_w"]
        lines.append(f"| {device.name} (`{name}`) | {values['power.idle'].value} | {cell(values, 'power.memory_energy')} "
                     f"| {cell(values, 'power.mac_energy')} | {decode_w:.1f} W ({model}) |")
    return "\n".join(lines)


FIGURES: dict[str, Callable[[], str]] = {
    "serving_requests": lambda: f"{serving.REQUESTS:,}",
    **{name: (lambda label=label: knee(label)) for name, label in KNEES.items()},
    "vllm_ttft": lambda: _latency(1, "ttft"),
    "vllm_tpot": lambda: _latency(1, "tpot"),
    "vllm_measured_ttft": lambda: _latency(0, "ttft"),
    "vllm_measured_tpot": lambda: _latency(0, "tpot"),
    "validation_rtx3090": lambda: case_errors("rtx3090-layers"),
    "validation_qwen": lambda: case_errors("qwen-a100"),
    "validation_fpga": lambda: case_errors("fpga-designs"),
    "validation_small_cases": small_cases_table,
    "validation_vllm_table": vllm_table,
    "carry_over_table": carry_over_table,
    "device_library_table": device_library_table,
    "u280_design_power": u280_design_power,
    "fpga_power_table": fpga_power_table,
    "validation_carry_over": lambda: ", ".join(
        f"{r['gpu']} {r['left_out_median']:.0%}" for r in carry_over.table()),
    **{f"validation_vllm_{v.replace('-', '_')}_{q.lower()}": (lambda v=v, q=q: vllm_within(v, q))
       for v in vllm_case.VARIANTS for q in ("TPOT", "TTFT")},
}
