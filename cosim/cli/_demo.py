"""The built-in demonstration: each hardware model alone on default parameters,
printed as a table. Stands in for the evaluation report until that exists."""

from __future__ import annotations

from typing import Callable

from .. import standalone, trace
from ..config.hardware import kv_bytes_per_token, load_device, load_model
from ..engine._workflow import simulate
from ..config.scenario import scenario

STEP_TOKENS = 64       # a typical reasoning step (MATH responses: median 36, mean 50 tokens)
PROMPT_TOKENS = 100    # about the mean MATH500 question of 69 tokens plus a chat template
CONTEXT_TOKENS = 400   # a context midway through a solution (mean response ~370 tokens)


def _rows() -> list[tuple[str, str, Callable[[], str]]]:
    draft = "qwen2.5-0.5b"
    kv_draft = load_model(draft)
    fpga_kv = load_device("u280").accelerator.kv_bytes_per_element  # INT8 on the FPGA
    kv_bytes = int(PROMPT_TOKENS * kv_bytes_per_token(kv_draft, fpga_kv))

    def link(name: str) -> Callable[[], str]:
        return lambda: f"{standalone.transfer(name, kv_bytes).time_ns / 1e3:.2f} us"

    def fpga(device: str, clock: float | None) -> Callable[[], str]:
        def run() -> str:
            r = standalone.fpga_decode(device, draft, CONTEXT_TOKENS, STEP_TOKENS, clock_mhz=clock)
            per_token = r.time_ns / STEP_TOKENS
            return f"{per_token / 1e6:.3f} ms/token ({1e9 / per_token:.0f} tok/s), {r.energy_j:.3f} J"
        return run

    def gpu_decode(device: str, model: str) -> Callable[[], str]:
        def run() -> str:
            r = standalone.gpu_decode(device, model, STEP_TOKENS, CONTEXT_TOKENS)
            per_token = r.time_ns / STEP_TOKENS
            return f"{per_token / 1e6:.2f} ms/token ({1e9 / per_token:.0f} tok/s), {r.energy_j:.2f} J"
        return run

    def gpu_prefill(device: str, model: str, tokens: int, context: int) -> Callable[[], str]:
        def run() -> str:
            r = standalone.gpu_prefill(device, model, tokens, context)
            return f"{r.time_ns / 1e6:.2f} ms ({r.bound}-bound), {r.energy_j:.2f} J"
        return run

    return [
        ("PCIe Gen3 x16", f"migrate the KV of a {PROMPT_TOKENS}-token prompt ({kv_bytes} B)", link("pcie_gen3_x16")),
        ("PCIe Gen4 x16", f"migrate the KV of a {PROMPT_TOKENS}-token prompt ({kv_bytes} B)", link("pcie_gen4_x16")),
        ("U280 @ 200 MHz", f"draft a {STEP_TOKENS}-token step at context {CONTEXT_TOKENS}", fpga("u280", None)),
        ("U280 @ 300 MHz", f"draft a {STEP_TOKENS}-token step at context {CONTEXT_TOKENS}", fpga("u280", 300.0)),
        ("U280, FlexLLM-class", f"draft a {STEP_TOKENS}-token step at context {CONTEXT_TOKENS}",
         fpga("u280-flexllm", None)),
        ("V80", f"draft a {STEP_TOKENS}-token step at context {CONTEXT_TOKENS}", fpga("v80", None)),
        ("RTX 3090, 0.5B", f"draft a {STEP_TOKENS}-token step (GPU baseline)", gpu_decode("rtx3090", draft)),
        ("Jetson Orin Nano", f"draft a {STEP_TOKENS}-token step (W8A8)", gpu_decode("jetson_orin_nano", draft)),
        ("RTX 3090, PRM-7B", f"score a {STEP_TOKENS}-token step (prefill)",
         gpu_prefill("rtx3090", "qwen2.5-math-prm-7b", STEP_TOKENS, CONTEXT_TOKENS)),
        ("RTX 3090, Math-7B", f"refine a {STEP_TOKENS}-token step", gpu_decode("rtx3090", "qwen2.5-math-7b")),
        ("RTX 3090, Math-1.5B", f"refine a {STEP_TOKENS}-token step", gpu_decode("rtx3090", "qwen2.5-math-1.5b")),
    ]


DEMO_PROBLEMS = 20
DEMO_SYSTEMS = (
    ("gpu-baseline", "gpu-baseline", {}),
    ("gpu-stepahead", "gpu-stepahead", {}),
    ("heteroreason, U280 @ 200 MHz", "heteroreason", {}),
    ("heteroreason, U280 @ 300 MHz", "heteroreason", {"draft": {"overrides": {"accelerator.clock": "300 MHz"}}}),
    ("heteroreason, U280 (FlexLLM)", "heteroreason", {"draft": {"device": "u280-flexllm"}}),
    ("heteroreason, V80", "heteroreason", {"draft": {"device": "v80"}}),
)


def _systems(print_fn: Callable[[str], None]) -> None:
    workload = trace.generate("math500", DEMO_PROBLEMS, seed=1)
    print_fn(f"Systems on the same {DEMO_PROBLEMS} Math500-profile problems, Config 1 (7B PRM and target):")
    print_fn("")
    header = f"  {'system':<30}{'latency s':>11}{'speedup':>9}{'goodput tok/s':>15}{'J/token':>9}{'stall':>8}"
    print_fn(header)
    baseline = None
    for label, system, extra in DEMO_SYSTEMS:
        result = simulate(scenario(system, 1, **extra), workload)
        baseline = baseline or result
        s = result.with_baseline(baseline).summary
        print_fn(f"  {label:<30}{s['latency_s']:>11.2f}{s['speedup']:>9.2f}{s['goodput_tok_s']:>15.1f}"
                 f"{s['energy_j_per_token']:>9.2f}{s['stall_ratio']:>8.3f}")


def run_demo(print_fn: Callable[[str], None] = print) -> None:
    rows = [(device, task, measure()) for device, task, measure in _rows()]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    print_fn("heteroreason-cosim demo: each model alone, built-in defaults (every run a SystemC simulation)")
    print_fn("")
    for device, task, result in rows:
        print_fn(f"  {device:<{widths[0]}}  {task:<{widths[1]}}  {result}")
    print_fn("")
    _systems(print_fn)
