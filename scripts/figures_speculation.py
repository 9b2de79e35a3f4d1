"""The figures the docs quote on token-level speculative decoding: the shipped acceptance
profiles with the tokens a pass keeps, and the speculative-decoding system's decode rate
and speedup over the target alone on the published measurement's own model and GPU. Each
figure is text exactly as the docs print it."""

from __future__ import annotations

import functools
from typing import Callable

import cosim
from cosim.config import _acceptance
from cosim.config.scenario import build_scenario, load_scenario
from cosim.trace import Trace
from cosim.trace._plain import plain_header, plain_problem

# vLLM's measurement of EAGLE-3 on Llama-3.1-8B-Instruct, one H100, batch 1, MT-bench, two
# drafts a pass (vLLM PR 16937): 133 tokens a second without, 220.21 with.
PUBLISHED = {"device": "h100-sxm", "model": "llama-3.1-8b", "draft_tokens": 2, "vanilla_tok_s": 133.0,
             "eagle3_tok_s": 220.21}
# MT-bench-like requests: a short prompt, a few hundred tokens of answer.
PROMPT, OUTPUT = 120, 300


def acceptance_table() -> str:
    lines = ["| profile | proposer | P(first i drafts kept), i = 1 .. | tokens a pass at 3 drafts | measured by |",
             "|---|---|---|---|---|"]
    for name in _acceptance.names():
        p = _acceptance.load(name)
        rates = ", ".join(f"{r:.3g}" for r in p.rates)
        lines.append(f"| `{name}` | {p.proposer} | {rates} | {p.expected_tokens(3):.2f} | {p.source} |")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def decode_rates() -> dict[int, float]:
    """Tokens a second of one request's decode, by drafts a pass (0: the target alone)."""
    trace = Trace(plain_header("figures"), [plain_problem(f"r{i}", PROMPT, OUTPUT) for i in range(3)])
    target = {"device": PUBLISHED["device"], "model": PUBLISHED["model"]}
    rates = {}
    for k in (0, 2, 3, 4):
        data = {"system": "autoregressive", "target": target} if k == 0 else \
            {"system": "speculative-decoding", "target": target, "speculation": {"draft_tokens": k}}
        tpot = cosim.simulate(build_scenario(data), trace).per_problem.column("tpot_s").mean()
        rates[k] = 1.0 / tpot
    return rates


def speedup_table() -> str:
    r = decode_rates()
    lines = ["| drafts a pass | tokens a second | speedup over the target alone |", "|---|---|---|",
             f"| none (the target alone) | {r[0]:.0f} | 1.00x |"]
    lines += [f"| {k} | {r[k]:.0f} | {r[k] / r[0]:.2f}x |" for k in (2, 3, 4)]
    return "\n".join(lines)


def published_row() -> str:
    r = decode_rates()
    k = PUBLISHED["draft_tokens"]
    return (f"{r[k]:.0f} tokens a second against vLLM's measured {PUBLISHED['eagle3_tok_s']:.0f} "
            f"({r[k] / PUBLISHED['eagle3_tok_s'] - 1:+.0%}), a speedup of {r[k] / r[0]:.2f}x against the measured "
            f"{PUBLISHED['eagle3_tok_s'] / PUBLISHED['vanilla_tok_s']:.2f}x (the target alone "
            f"{r[0]:.0f} tokens a second against {PUBLISHED['vanilla_tok_s']:.0f})")


# The paper's 7B configuration drafted three ways, on one generated Math500 trace.
SPLIT_PROBLEMS = 20


def split_table() -> str:
    """The config's target alone, drafted for by a draft model on its own GPU, and by the
    U280 beside it (split-decoding-u280's settings): latency and energy per token."""
    trace = cosim.trace.generate("math500", SPLIT_PROBLEMS, seed=1)
    split = load_scenario("split-decoding-u280")
    same_gpu = build_scenario({"system": "speculative-decoding", "target": {"device": "rtx3090"},
                               "speculation": {"proposer": "draft_model", "draft_model": "qwen2.5-0.5b",
                                               "draft_tokens": split.speculation.draft_tokens,
                                               "acceptance": split.speculation.acceptance}})
    rows = [("the target alone", load_scenario("target-alone")), ("Qwen2.5-0.5B drafting on the RTX 3090", same_gpu),
            ("Qwen2.5-0.5B drafting on the U280 (split)", split)]
    base = None
    lines = ["| drafts made by | latency (s) | speedup | J/token | of which the draft device |", "|---|---|---|---|---|"]
    for label, scn in rows:
        s = cosim.simulate(scn, trace).summary
        base = base or s["latency_s"]
        share = s["energy_j_draft"] / s["energy_j"] if s["energy_j"] else 0.0
        lines.append(f"| {label} | {s['latency_s']:.2f} | {base / s['latency_s']:.2f}x | "
                     f"{s['energy_j_per_token']:.2f} | {share:.0%} |")
    return "\n".join(lines)


FIGURES: dict[str, Callable[[], str]] = {
    "split_decoding_table": split_table,
    "acceptance_table": acceptance_table,
    "spec_decode_speedup_table": speedup_table,
    "spec_decode_published": published_row,
}
