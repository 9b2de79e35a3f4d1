"""The figures the docs quote on token-level speculative decoding: the shipped acceptance
profiles with the tokens a pass keeps, and the speculative-decoding system's decode rate
and speedup over the target alone on the published measurement's own model and GPU. Each
figure is text exactly as the docs print it; the published measurements and the requests
they are predicted on are the eagle3-vllm validation case's."""

from __future__ import annotations

import functools
from typing import Callable

import cosim
from cosim import validation
from cosim.config import _acceptance
from cosim.validation import _spec_decode as spec_case
from cosim.config.scenario import build_scenario, load_scenario

# The published EAGLE-3 measurements and the request lengths the validation case predicts
# them with (cosim/data/validation/eagle3-vllm.yaml).
CASE = spec_case.data()


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
    """One request's decode rate on the published GPU, by drafts a pass (0: the target alone)."""
    gpu = CASE["batch_one"]["gpu"]
    rates = {0: spec_case.decode_rate(CASE, gpu, False)}
    for k in (2, 3, 4):
        rates[k] = spec_case.decode_rate({**CASE, "draft_tokens": k}, gpu, True)
    return rates


def speedup_table() -> str:
    r = decode_rates()
    lines = ["| drafts a pass | tokens a second | speedup over the target alone |", "|---|---|---|",
             f"| none (the target alone) | {r[0]:.0f} | 1.00x |"]
    lines += [f"| {k} | {r[k]:.0f} | {r[k] / r[0]:.2f}x |" for k in (2, 3, 4)]
    return "\n".join(lines)


def published_row() -> str:
    r = decode_rates()
    one = CASE["batch_one"]
    k = CASE["draft_tokens"]
    return (f"{r[k]:.0f} tokens a second against vLLM's measured {one['tokens_per_s']:.0f} "
            f"({r[k] / one['tokens_per_s'] - 1:+.0%}), a speedup of {r[k] / r[0]:.2f}x against the measured "
            f"{one['tokens_per_s'] / one['without_tokens_per_s']:.2f}x (the target alone "
            f"{r[0]:.0f} tokens a second against {one['without_tokens_per_s']:.0f})")


def eagle3_table() -> str:
    """The eagle3-vllm validation case as `cosim validate --case spec_decode` prints it."""
    found = [validation.check_row(r, spec_case.CASE) for r in spec_case.rows()]
    return "```\n" + validation.format_table(found) + "\n```"


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


def eagle3_errors() -> str:
    found = [validation.check_row(r, spec_case.CASE) for r in spec_case.rows()]
    worst = max(found, key=lambda r: abs(r.error))
    s = validation.summary(found)[spec_case.CASE]
    return f"median |error| {s['median_abs_error']:.1%}, worst {worst.error:+.1%}: {worst.quantity}"


FIGURES: dict[str, Callable[[], str]] = {
    "validation_eagle3": eagle3_errors,
    "validation_eagle3_table": eagle3_table,
    "split_decoding_table": split_table,
    "acceptance_table": acceptance_table,
    "spec_decode_speedup_table": speedup_table,
    "spec_decode_published": published_row,
}
