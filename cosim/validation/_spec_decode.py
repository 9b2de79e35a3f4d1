"""Case eagle3-vllm: EAGLE-3's published speedups in vLLM against the speculative-decoding
system on the paper's own model, Llama-3.1-8B, and the GPUs it was measured on: the
throughput over vLLM without speculation by batch size on an RTX 3090 (EAGLE-3 paper
Table 5), and the decode rate at batch 1 on an H100 (vLLM PR 16937). The acceptance is the
shipped EAGLE-3 profile, its one rate fitted to another vLLM measurement (seven drafts a
pass); nothing here is fitted to these rows. Each batch size serves three times as many
requests of the file's lengths, all there at once, at most that many sequences a step."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from ..config.scenario import build_scenario
from ..engine._workflow import simulate
from ..serve import run
from ..trace import Trace
from ..trace._plain import plain_header, plain_problem

CASE = "eagle3-vllm"


def data() -> dict[str, Any]:
    path = resources.files("cosim") / "data" / "validation" / "eagle3-vllm.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _scenario(table: dict[str, Any], gpu: str, speculative: bool, batch: int | None = None) -> Any:
    data: dict[str, Any] = {"system": "speculative-decoding" if speculative else "autoregressive",
                            "target": {"device": gpu, "model": table["model"]}}
    if speculative:
        data["speculation"] = {"draft_tokens": table["draft_tokens"], "acceptance": table["acceptance"]}
    if batch is not None:
        data["batching"] = {"enabled": True, "max_batch": batch}
    return build_scenario(data)


def throughput_ratio(table: dict[str, Any], gpu: str, batch: int) -> float:
    """Tokens a second served with speculation over without, `batch` sequences at a time."""
    requests = Trace(plain_header(CASE), [plain_problem(f"r{i}", table["prompt_tokens"], table["output_tokens"], 0.0)
                                          for i in range(3 * batch)])
    rates = [run(_scenario(table, gpu, spec, batch), requests).summary.throughput_tok_s for spec in (True, False)]
    return rates[0] / rates[1]


def decode_rate(table: dict[str, Any], gpu: str, speculative: bool) -> float:
    """One request's decode rate (tokens after the first over their time), alone on the GPU."""
    trace = Trace(plain_header(CASE), [plain_problem("r", table["prompt_tokens"], table["output_tokens"])])
    return 1.0 / float(simulate(_scenario(table, gpu, speculative), trace).per_problem.column("tpot_s")[0])


def rows() -> list[dict[str, Any]]:
    table = data()
    batches, one = table["batch_speedups"], table["batch_one"]
    out = [{"case": CASE, "quantity": f"{one['gpu']} batch 1, {table['draft_tokens']} drafts: tokens/s",
            "unit": "tok/s", "measured": float(one["tokens_per_s"]), "predicted": decode_rate(table, one["gpu"], True)},
           {"case": CASE, "quantity": f"{one['gpu']} batch 1, without speculation: tokens/s", "unit": "tok/s",
            "measured": float(one["without_tokens_per_s"]), "predicted": decode_rate(table, one["gpu"], False)}]
    for batch, speedup in batches["speedups"].items():
        out.append({"case": CASE, "quantity": f"{batches['gpu']} batch {batch}: throughput speedup", "unit": "x",
                    "measured": float(speedup), "predicted": throughput_ratio(table, batches["gpu"], int(batch))})
    return out
