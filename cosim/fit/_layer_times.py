"""Per-layer GPU kernel times as LLMServingSim's profiler writes them
(``layer_name,input,kv_cache,tp_size,latency(ns)``: PyTorch-profiler times of each op of
one transformer layer, plus the embedding, the final norm and the output head), summed
into the forward passes the GPU proxy predicts.

A forward pass of n tokens, as a serving engine runs it at batch 1, is the embedding and
the final norm at n tokens, every layer's ops at n tokens, and the output head at one
token (logits only where the engine samples). The times are the GPU's kernels alone: the
framework's per-step and per-layer host overheads are not in them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..devices._latency_csv import LatencyProfile
from .._inputs import csv_records, peek_line
from ..errors import ConfigError

HEADER = ("layer_name", "input", "kv_cache", "tp_size", "latency(ns)")
LAYER_OPS = ("input_layernorm", "q_proj", "k_proj", "v_proj", "rope", "attn", "o_proj", "post_layernorm",
             "gate_proj", "up_proj", "act_fn", "down_proj")
ONCE_OPS = ("embedding", "final_layernorm", "lm_head")
# Decode at batch 1, and prefills over the range the profile covers (powers of two: the GEMM
# shapes tensor-core kernels are tuned for; other sizes scatter around them).
POINTS = (1, 16, 32, 64, 128, 256, 512, 1024, 2048)


@dataclass(frozen=True)
class LayerTimes:
    source: str
    ns: dict[tuple[str, int], float]  # (op, input tokens) -> kernel ns, at kv_cache 0 and tp 1

    def op_ns(self, op: str, tokens: int) -> float:
        try:
            return self.ns[op, tokens]
        except KeyError:
            raise ConfigError(f"{self.source}: {op} at {tokens} input tokens: not measured") from None

    def forward_ns(self, layers: int, tokens: int) -> float:
        """One forward pass of ``tokens`` tokens at batch 1 through ``layers`` layers."""
        layer = sum(self.op_ns(op, tokens) for op in LAYER_OPS)
        return (self.op_ns("embedding", tokens) + layers * layer + self.op_ns("final_layernorm", tokens)
                + self.op_ns("lm_head", 1))

    def measured_points(self, points: tuple[int, ...] = POINTS) -> tuple[int, ...]:
        """Those of ``points`` at which every op was measured (the output head at one token)."""
        if ("lm_head", 1) not in self.ns:
            return ()
        ops = (*LAYER_OPS, "embedding", "final_layernorm")
        return tuple(n for n in points if all((op, n) in self.ns for op in ops))

    def profile(self, layers: int, points: tuple[int, ...] = POINTS) -> LatencyProfile:
        """The forward passes as a latency profile: decode at one token, prefills at the rest
        (context 0: the profile measured attention without a KV cache), at the points the
        file measured; ConfigError if that is fewer than four."""
        present = self.measured_points(points)
        if len(present) < 4:
            raise ConfigError(f"{self.source}: input: forward passes need every op at 1 token and at some of "
                              f"{', '.join(map(str, points[1:]))} tokens; found {len(present)} such points, "
                              f"a fit needs at least 4")
        rows = tuple(("decode" if n == 1 else "prefill", n, 0, self.forward_ns(layers, n) * 1e-9) for n in present)
        return LatencyProfile(self.source, rows)


def is_layer_times(path: str | Path) -> bool:
    """Whether ``path`` starts with the layer-times header (a cheap look at the first line)."""
    first = peek_line(path)
    return first is not None and tuple(cell.strip() for cell in first.strip().split(",")) == HEADER


def load_layer_times(path: str | Path) -> LayerTimes:
    """Reads the layer times; errors name the file, line and field."""
    path = Path(path)
    times: dict[tuple[str, int], float] = {}
    lines: dict[tuple[str, int], int] = {}
    header: tuple[str, ...] = ()
    for line, record in csv_records(path):
        if not header:
            header = tuple(cell.strip() for cell in record)
            if header != HEADER:  # not quoted: a message does not show what a file holds
                raise ConfigError(f"{path}:1: header must be {','.join(HEADER)}")
            continue
        if not record or all(not cell.strip() for cell in record):
            continue
        if len(record) != len(HEADER):
            raise ConfigError(f"{path}:{line}: expected {len(HEADER)} fields, got {len(record)}")
        op, tokens, kv, tp, ns = (cell.strip() for cell in record)
        numbers = {}
        for field, text in (("input", tokens), ("kv_cache", kv), ("tp_size", tp)):
            try:
                numbers[field] = int(text)
            except ValueError:
                raise ConfigError(f"{path}:{line}: {field}: not a whole number: {text!r}") from None
        try:
            value = float(ns)
        except ValueError:
            raise ConfigError(f"{path}:{line}: latency(ns): not a number: {ns!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{path}:{line}: latency(ns): must be a finite number > 0, got {ns!r}")
        if numbers["input"] < 1:
            raise ConfigError(f"{path}:{line}: input: must be >= 1, got {numbers['input']}")
        if numbers["kv_cache"] != 0 or numbers["tp_size"] != 1:
            continue  # forward passes here are at an empty KV cache on one GPU
        key = (op, numbers["input"])
        if key in times:
            raise ConfigError(f"{path}:{line}: {op} at {key[1]} input tokens is measured on line {lines[key]} too")
        times[key], lines[key] = value, line
    if not times:
        raise ConfigError(f"{path}: no layer times at kv_cache 0 and tp_size 1")
    missing = sorted({op for op in (*LAYER_OPS, *ONCE_OPS)} - {op for op, _ in times})
    if missing:
        raise ConfigError(f"{path}: layer_name: no rows for {', '.join(missing)} (a forward pass needs every op)")
    return LayerTimes(str(path), times)
