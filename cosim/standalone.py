"""Each hardware model alone, from Python: move bytes over a link, decode on
the FPGA, prefill or decode on a GPU, integrate power over a timeline, replay
KVMU operations. Every call simulates in its own worker process and returns a
`RunResult` (simulated times in ns, counters, energy in J)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from .schema import _params
from ._args import CLOCK_NS, operation, real, time_ns, whole
from .schema._declarations import CLOCK_PS, PAYLOAD, PROCESSES, TOKENS, Limit
from .engine._isolation import run_isolated
from ._extension import native
from .devices._latency_csv import LatencyProfile, load_latency_profile
from .errors import ConfigError
from . import devices
from .config.hardware import load_device, load_link, load_model
from .devices.fpga import FpgaDevice, profile_native as fpga_profile_native, rtl_kvmu_missing
from .devices.gpu import GpuDevice
from .devices._operator_profile import load_operator_profile
from .schema._cluster import BATCHING, POLICIES
from .config._speculation import eagle_head, mtp_head


class RunResult(dict):
    """The plain data a simulation returned; keys are also attributes."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def _with_overrides(config: Any, overrides: Mapping[str, Any] | None) -> Any:
    for path, value in (overrides or {}).items():
        config = _params.replace(config, path, value)
    return config


def _fpga(device: Any, overrides: Mapping[str, Any] | None) -> FpgaDevice:
    return devices.require(_with_overrides(load_device(device), overrides), "fpga")


def _gpu(device: Any, overrides: Mapping[str, Any] | None) -> GpuDevice:
    return devices.require(_with_overrides(load_device(device), overrides), "gpu")


def _model_dict(model: Any) -> dict[str, Any]:
    return _params.native(load_model(model))


def _call(name: str, *args: Any) -> RunResult:
    def work() -> Any:
        return getattr(native(), name)(*args)

    result = run_isolated(work)
    return RunResult(result) if isinstance(result, dict) else result


# ---- PCIe ---------------------------------------------------------------------------------------


def pcie_transfers(link: Any, transfers: Iterable[Sequence[Any]], overrides: Mapping[str, Any] | None = None
                   ) -> RunResult:
    """Issues ``(direction, bytes[, issue_ns[, ready_ns]])`` transfers (direction h2d or
    d2h) on one link, in order of their issue times.

    A transfer is posted at its issue time with its data ready at ``ready_ns`` (default:
    the issue time; later for data posted ahead of its production) and books its
    direction then (docs/hardware.md): it starts at its ready time, or once the time
    booked before it is over, and takes the free time around what earlier transfers
    booked until it has had latency + bytes / bandwidth. Returns ``issue_ns``,
    ``start_ns``, ``end_ns`` per transfer and per-direction ``*_bytes``, ``*_transfers``
    and ``*_busy_ns``.
    """
    cfg = _with_overrides(load_link(link), overrides)
    script = []
    for t in transfers:
        t = tuple(t)
        if len(t) not in (2, 3, 4):
            raise ConfigError(f"a transfer is (direction, bytes[, issue_ns[, ready_ns]]), got {t!r}")
        i = len(script)
        issue = time_ns(t[2], f"transfers[{i}] issue_ns") if len(t) >= 3 else 0.0
        script.append((t[0], whole(t[1], f"transfers[{i}] bytes", limit=PAYLOAD), issue,
                       time_ns(t[3], f"transfers[{i}] ready_ns") if len(t) == 4 else issue))
    return _call("pcie_transfers", _params.native(cfg), script)


def transfer(link: Any, nbytes: int, direction: str = "h2d", overrides: Mapping[str, Any] | None = None
             ) -> RunResult:
    """Moves ``nbytes`` over ``link``; ``time_ns`` is the transfer's duration."""
    result = pcie_transfers(link, [(direction, whole(nbytes, "nbytes", limit=PAYLOAD), 0.0)], overrides)
    result["time_ns"] = result["end_ns"][0] - result["issue_ns"][0]
    return result


# ---- FPGA ---------------------------------------------------------------------------------------


def fpga_run(device: Any = "u280", model: Any = "qwen2.5-0.5b", ops: Iterable[Sequence[Any]] = (),
             overrides: Mapping[str, Any] | None = None, record_tokens: bool = False) -> RunResult:
    """Runs a script of accelerator operations; each is ``(name[, n])``.

    Operations: ``load`` n (the prompt's KV now fills n positions), ``decode`` n
    (draft a step of n tokens), ``sync`` n (shadow-sync n target tokens),
    ``prefill`` n (vanilla local prefill), and the KVMU verdicts ``accept``,
    ``rollback``, ``initialize`` n. Returns per-operation times and pointers
    (``ops``), token counters, HBM usage and energy.
    """
    cfg = _fpga(device, overrides)
    script = _kv_script([operation(op, i, 1, TOKENS) for i, op in enumerate(ops)], load_model(model), cfg)
    return _call(
        "fpga_run",
        _params.native(cfg.accelerator),
        _params.native(cfg.hbm),
        _model_dict(model),
        _params.native(cfg.power),
        fpga_profile_native(cfg),
        script,
        record_tokens,
    )


def _kv_script(ops: list[tuple[Any, ...]], model: Any, device: FpgaDevice) -> list[tuple[Any, ...]]:
    """The script, after checking that it never holds more KV than the device reserves (a
    position past it would be refused only after the simulation allocated and ran it)."""
    reserve = device.accelerator.kv_reserve_tokens or model.context_window
    position = 0
    for i, (name, *counts) in enumerate(ops):
        n = counts[0] if counts else 0
        if name in ("decode", "sync", "prefill", "load", "initialize") and not counts:
            raise ConfigError(f"ops[{i}] ({name}): give its token count")
        if name in ("decode", "sync", "prefill") and n < 1:
            raise ConfigError(f"ops[{i}] ({name}): the token count must be >= 1, got {n}")
        position = n if name in ("load", "initialize") else position + n if name in ("decode", "sync", "prefill") \
            else position
        if position > reserve:
            raise ConfigError(f"ops[{i}] ({name} {n}): the KV cache would reach {position} tokens, beyond the "
                              f"{reserve} the device reserves for {model.name}")
    return ops


def fpga_timing(device: Any = "u280", model: Any = "qwen2.5-0.5b", contexts: Iterable[int] = (0,),
                overrides: Mapping[str, Any] | None = None, prefill_tokens: Iterable[int] = ()) -> RunResult:
    """The design's timing formula (or its measured profile) at each decode context, with
    no simulation: ``ns`` per token, its ``compute_ns``, ``memory_ns`` and ``pipeline_ns``
    parts, and ``bound`` (macs, ports, hbm, pipeline or profile) per context; then the
    local prefill of each of ``prefill_tokens`` tokens at context 0. Also ``port_gbps``
    (one port) and ``decoder_gbps`` (all ports)."""
    cfg = _fpga(device, overrides)
    points = [("decode", 1, whole(c, "contexts", limit=TOKENS)) for c in contexts] + \
        [("prefill", whole(n, "prefill_tokens", minimum=1, limit=TOKENS), 0) for n in prefill_tokens]
    return RunResult(native().fpga_timing(_params.native(cfg.accelerator), _params.native(cfg.hbm),
                                          _model_dict(model), fpga_profile_native(cfg), points))


def fpga_decode(device: Any = "u280", model: Any = "qwen2.5-0.5b", context: int = 0, tokens: int = 1,
                clock_mhz: float | None = None, overrides: Mapping[str, Any] | None = None,
                record_tokens: bool = False) -> RunResult:
    """Decodes ``tokens`` draft tokens after ``context`` on the FPGA; ``time_ns`` is their total time."""
    overrides = dict(overrides or {})
    if clock_mhz is not None:
        overrides["accelerator.clock_mhz"] = real(clock_mhz, "clock_mhz", positive=True)
    context, tokens = whole(context, "context", limit=TOKENS), whole(tokens, "tokens", minimum=1, limit=TOKENS)
    cfg, spec = _fpga(device, overrides), load_model(model)
    reserve = cfg.accelerator.kv_reserve_tokens or spec.context_window
    if context + tokens > reserve:
        raise ConfigError(f"tokens: context {context} + {tokens} tokens exceeds the {reserve} tokens of KV cache "
                          f"{cfg.name} reserves for {spec.name}")
    result = fpga_run(device, model, [("load", context), ("decode", tokens)], overrides, record_tokens)
    step = result["ops"][1]
    result["time_ns"] = step["end_ns"] - step["start_ns"]
    first = fpga_timing(device, model, [context], overrides)
    result["bound"] = first["bound"][0]  # what sets the first token's time
    for part in ("compute_ns", "memory_ns", "pipeline_ns"):
        result[part] = first[part][0]
    return result


# ---- GPU ----------------------------------------------------------------------------------------


def _profile(profile: Any, model: Any = None) -> Any:
    if profile is None:
        return None
    if isinstance(profile, str | Path) and Path(profile).is_dir():
        # A folder of measured operator times, for this model (docs/hardware.md).
        return load_operator_profile(profile, load_model(model)).native()
    if isinstance(profile, str | Path):
        profile = load_latency_profile(profile)
    if not isinstance(profile, LatencyProfile):
        raise ConfigError("profile: give a CSV path, a folder of operator times or a LatencyProfile")
    return profile.native()


def gpu_run(device: Any, model: Any, ops: Iterable[Sequence[Any]], profile: Any = None,
            overrides: Mapping[str, Any] | None = None, record_tokens: bool = False) -> RunResult:
    """Runs ``(prefill|decode, tokens, context)`` operations of one model on one GPU."""
    cfg = _gpu(device, overrides)
    return _call(
        "gpu_run",
        _params.native(cfg.gpu),
        _model_dict(model),
        _params.native(cfg.power),
        _profile(profile, model),
        _gpu_script(ops, load_model(model)),
        record_tokens,
    )


def _gpu_script(ops: Iterable[Sequence[Any]], model: Any) -> list[tuple[Any, ...]]:
    script = []
    for i, op in enumerate(ops):
        name, *counts = operation(op, i, 2, TOKENS)
        tokens, context = (counts + [0, 0])[:2]
        if tokens < 1:
            raise ConfigError(f"ops[{i}] ({name}): tokens must be >= 1, got {tokens}")
        if context + tokens > model.context_window:
            raise ConfigError(f"ops[{i}] ({name}): context {context} + {tokens} tokens exceeds the "
                              f"{model.context_window}-token window of {model.name}")
        script.append((name, tokens, context))
    return script


def gpu_timing(device: Any, model: Any, points: Iterable[Sequence[Any]], profile: Any = None,
               overrides: Mapping[str, Any] | None = None) -> RunResult:
    """The GPU proxy's formula (or ``profile``) at ``(phase, tokens, context)`` points, with
    no simulation: ``ns`` each, its roofline's ``compute_ns`` and ``memory_ns`` (``ns`` is
    ``overhead_ns`` plus their smooth maximum), ``bound`` (the larger, or profile), and
    ``overhead_ns`` (the host and launch cost of one forward call)."""
    cfg = _gpu(device, overrides)
    script = [(str(p), whole(n, "tokens", minimum=1, limit=TOKENS), whole(c, "context", limit=TOKENS))
              for p, n, c in points]
    return RunResult(native().gpu_timing(_params.native(cfg.gpu), _model_dict(model), _profile(profile, model),
                                         script))


def gpu_prefill(device: Any, model: Any, tokens: int, context: int = 0, profile: Any = None,
                overrides: Mapping[str, Any] | None = None) -> RunResult:
    """Prefills ``tokens`` new tokens after ``context`` cached ones; ``time_ns`` and ``bound``."""
    tokens, context = whole(tokens, "tokens", minimum=1, limit=TOKENS), whole(context, "context", limit=TOKENS)
    result = gpu_run(device, model, [("prefill", tokens, context)], profile, overrides)
    op = result["ops"][0]
    result["time_ns"] = op["end_ns"] - op["start_ns"]
    result["bound"] = op.get("bound", "profile")
    return result


def gpu_decode(device: Any, model: Any, tokens: int, context: int = 0, profile: Any = None,
               overrides: Mapping[str, Any] | None = None, record_tokens: bool = False) -> RunResult:
    """Decodes ``tokens`` tokens after ``context``; ``time_ns`` is their total time."""
    tokens, context = whole(tokens, "tokens", minimum=1, limit=TOKENS), whole(context, "context", limit=TOKENS)
    result = gpu_run(device, model, [("decode", tokens, context)], profile, overrides, record_tokens)
    op = result["ops"][0]
    result["time_ns"] = op["end_ns"] - op["start_ns"]
    return result


_PROPOSERS = ("eagle", "mtp", "draft_model", "ngram")


def _acceptance(acceptance: Any, draft_tokens: int) -> list[float]:
    """Per-position rates P(the first i drafts accepted), from a list, or from one rate a per
    draft given those before it (a^i)."""
    if isinstance(acceptance, (int, float)) and not isinstance(acceptance, bool):
        a = real(acceptance, "acceptance")
        if not 0.0 <= a <= 1.0:
            raise ConfigError(f"acceptance: a rate within [0, 1], got {a:g}")
        return [a ** i for i in range(1, draft_tokens + 1)]
    try:
        rates = [real(p, f"acceptance[{i}]") for i, p in enumerate(acceptance)]
    except TypeError:
        raise ConfigError(f"acceptance: a rate or a list of per-position rates, got {acceptance!r}") from None
    return rates


def gpu_speculate(device: Any, model: Any, prompt: int, output: int, draft_tokens: int = 3,
                  acceptance: Any = 0.7, proposer: str = "eagle", draft_model: Any = None, lookup_us: float = 50.0,
                  seed: int = 0, request: int = 0, overrides: Mapping[str, Any] | None = None) -> RunResult:
    """A lone request decoded with token-level speculative decoding on one GPU (docs/system.md,
    "Token-level speculative decoding"): the prompt's prefill, then rounds of ``draft_tokens``
    drafts and a verification of them. ``acceptance``: a rate per draft given those before it,
    or the per-position rates P(first i drafts accepted). ``proposer``: ``eagle`` (a head of
    the target: cosim.config._speculation.eagle_head), ``mtp`` (its multi-token-prediction
    module: mtp_head), ``draft_model`` (``draft_model`` on the same GPU) or ``ngram``
    (a host lookup of ``lookup_us``). Answers the first token's and the last token's times, the
    verification passes, the drafts and those accepted, and the energy."""
    cfg = _gpu(device, overrides)
    spec = load_model(model)
    prompt = whole(prompt, "prompt", minimum=1, limit=TOKENS)
    output = whole(output, "output", minimum=1, limit=TOKENS)
    if prompt + output > spec.context_window:
        raise ConfigError(f"prompt {prompt} + output {output} tokens exceeds the {spec.context_window}-token window "
                          f"of {spec.name}")
    draft_tokens = whole(draft_tokens, "draft_tokens", minimum=1, limit=Limit(64, "at most 64 drafts a pass"))
    rates = _acceptance(acceptance, draft_tokens)
    if proposer not in _PROPOSERS:
        raise ConfigError(f"proposer: one of {', '.join(_PROPOSERS)}, got {proposer!r}")
    if (draft_model is not None) != (proposer == "draft_model"):
        raise ConfigError("draft_model: give it with proposer draft_model, and only then")
    drafter = {"eagle": lambda: eagle_head(load_model(model)), "mtp": lambda: mtp_head(load_model(model)),
               "draft_model": lambda: load_model(draft_model),
               "ngram": lambda: None}[proposer]()
    # The proposer's passes run inside the target's step: no host cost of their own beyond
    # their kernels' launches (CUDA graphs replay them).
    drafter_gpu = _params.native(_params.replaced(cfg.gpu, forward_overhead_ns=0.0))
    lookup_ns = real(lookup_us, "lookup_us") * 1e3 if proposer == "ngram" else 0.0
    return _call("gpu_spec_run", _params.native(cfg.gpu), _params.native(spec), _params.native(cfg.power),
                 drafter_gpu if drafter is not None else None,
                 _params.native(drafter) if drafter is not None else None, prompt, output, draft_tokens, rates,
                 whole(seed, "seed", maximum=2**63), lookup_ns, whole(request, "request", maximum=2**63))


_BATCH_KINDS = ("prefill", "verify", "decode")
# The scenario's batching defaults (cosim/schema/_cluster.py).
_BATCHING = {d.name: d.default for d in BATCHING.params}


def gpu_batch(device: Any, model: Any, sequences: Iterable[Sequence[Any]], max_batch: int = _BATCHING["max_batch"],
              token_budget: int = _BATCHING["token_budget"], policy: str = _BATCHING["policy"],
              overrides: Mapping[str, Any] | None = None, kv_budget_gb: float | None = None,
              profile: Any = None, promised: bool = False) -> RunResult:
    """One GPU serving ``(kind, tokens, context, arrival_s)`` sequences with iteration-level
    batching (kind: ``prefill``, ``verify`` (a prefill the ``verify_first`` policy runs first)
    or ``decode``). Per sequence: ``start_ns``, ``end_ns``, its energy share and (decode) each
    token's end; ``iterations`` and ``batched_sequences`` (their sum of batch sizes).
    ``kv_budget_gb``: the KV memory an iteration's sequences share (None: unlimited);
    ``kv_limited_iterations`` counts the iterations that left work out for it. ``profile``:
    a measured latency CSV (or LatencyProfile) of this model on this GPU, batch rows included.
    ``promised``: each decode promises its tokens, so that iterations whose batch nothing
    changes run in one wait (as a Lookahead Reasoning run's do); the timing and energy are the
    same, the kernel's events fewer, and ``token_end_ns`` is not recorded."""
    cfg = _gpu(device, overrides)
    spec = load_model(model)
    script = []
    for i, seq in enumerate(sequences):
        if len(seq) != 4:
            raise ConfigError(f"sequences[{i}]: give (kind, tokens, context, arrival_s)")
        kind, tokens, context, arrival = seq
        if kind not in _BATCH_KINDS:
            raise ConfigError(f"sequences[{i}]: kind is one of {', '.join(_BATCH_KINDS)}, got {kind!r}")
        tokens = whole(tokens, f"sequences[{i}] tokens", minimum=1, limit=TOKENS)
        context = whole(context, f"sequences[{i}] context", limit=TOKENS)
        if context + tokens > spec.context_window:
            raise ConfigError(f"sequences[{i}]: context {context} + {tokens} tokens exceeds the "
                              f"{spec.context_window}-token window of {spec.name}")
        arrival = real(arrival, f"sequences[{i}] arrival_s")
        if arrival * 1e9 > CLOCK_NS:
            raise ConfigError(f"sequences[{i}] arrival_s: {arrival:g} s is past the kernel's clock of "
                              f"{CLOCK_NS / 1e9:.4g} s ({CLOCK_PS.why})")
        script.append((kind, tokens, context, arrival * 1e9))
    if policy not in POLICIES:
        raise ConfigError(f"policy: {' or '.join(POLICIES)}, got {policy!r}")
    if not isinstance(promised, bool):
        raise ConfigError(f"promised: true or false, got {promised!r}")
    return _call("gpu_batch_run", _params.native(cfg.gpu), _model_dict(model), _params.native(cfg.power), script,
                 whole(max_batch, "max_batch", minimum=1, limit=PROCESSES),
                 whole(token_budget, "token_budget", minimum=1, limit=TOKENS),
                 policy == "verify_first",
                 0.0 if kv_budget_gb is None else real(kv_budget_gb, "kv_budget_gb", positive=True) * 1e9,
                 _profile(profile, model), promised)


# ---- Power, KVMU, kernel floor --------------------------------------------------------------------


def power_timeline(device: Any, segments: Iterable[Sequence[Any]]) -> RunResult:
    """Holds the device in each ``(state, duration_ns)`` in turn; returns energy per state and in total."""
    cfg = load_device(device) if not hasattr(device, "idle_w") else None
    power = device if cfg is None else cfg.power
    if power.limit_w > 0:
        raise ConfigError(f"power_timeline: {getattr(cfg, 'name', 'the device')} draws the load model, whose busy "
                          f"power depends on the work in each interval, not on its state alone; time its work "
                          f"with a simulation, or give state powers")
    if power.mac_energy_pj > 0 or power.memory_energy_pj_per_bit > 0:
        raise ConfigError(f"power_timeline: {getattr(cfg, 'name', 'the device')} draws the design model, whose busy "
                          f"power depends on the model its decoder runs, not on its state alone; time its work "
                          f"with a simulation, or give state powers")
    script, end_ns = [], 0.0
    for i, (state, duration) in enumerate(segments):
        ns = time_ns(duration, f"segments[{i}] duration_ns", end_ns)  # the timeline ends within the clock
        script.append((str(state), ns))
        end_ns += ns
    return _call("power_run", _params.native(power), script)


def kvmu_replay(ops: Iterable[Sequence[Any]], capacity_tokens: int = 4096, depth: int = 1,
                kvmu: str = "tlm") -> list[RunResult]:
    """Applies KVMU operations in order with ``depth`` step-ahead steps allowed (0-2); each
    record gives the pointers after it, ``marks`` (ends of finished step-ahead steps) and
    ``error`` (None, or the KvmuError message of an illegal operation, which left the state unchanged).
    ``kvmu``: ``tlm`` (the behavioural model), ``rtl`` (the Verilated RTL, checked against the
    model on every operation), or ``rtl-faulty`` (the RTL built with an accept that leaves
    valid in place: the check stops it with a SimulationError)."""
    # A negative position is an operation the KVMU refuses in its record, not an argument error.
    script = [operation(op, i, 1, TOKENS, minimum=-TOKENS.value) for i, op in enumerate(ops)]
    depth = whole(depth, "depth", minimum=0)
    if depth > 2:
        raise ConfigError(f"depth: must be 0, 1 or 2, got {depth}")
    if kvmu not in ("tlm", "rtl", "rtl-faulty"):
        raise ConfigError(f"kvmu: one of tlm, rtl, rtl-faulty, got {kvmu!r}")
    if kvmu != "tlm":
        missing = rtl_kvmu_missing()
        if missing:
            raise ConfigError(f"kvmu: {kvmu} needs {missing}")
    records = _call("kvmu_run", whole(capacity_tokens, "capacity_tokens", minimum=1, limit=TOKENS), script, depth,
                    kvmu)
    return [RunResult(r) for r in records]


def kernel_floor(transactions: int = 1_000_000, delay_ns: float = 10.0) -> RunResult:
    """The bare SystemC cost: one b_transport + wait per transaction, no model."""
    count, delay = whole(transactions, "transactions", minimum=1), real(delay_ns, "delay_ns", positive=True)
    time_ns(count * delay, f"transactions x delay_ns ({count} x {delay:g} ns)")  # the run ends within the clock
    return _call("kernel_floor", count, delay)
