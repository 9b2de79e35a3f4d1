"""The report's "Speculation compared": on each dataset (config 1's problems), the kinds of
speculation the simulator runs set against the target alone on the same problems: step-level
HeteroReason (the draft on a U280 at 200 MHz, the report's own run), token-level speculative
decoding with a draft model on the target's RTX 3090 (a fixed number of drafts a pass, and
Hugging Face's adaptive schedule), the same drafting split onto the U280
beside it (split-decoding-u280), HeteroReason with its target's refinements drafted so
(the combination), SpecReason (the target judging each drafted step itself, the draft
on an RTX 3090 or on the U280) and Lookahead Reasoning (the target writing the drafted steps
at once, a judge comparing) on the forward-only run of the same problems. Token-level
speculation with greedy verification keeps the target's output exactly, so its accuracy is
the target alone's; HeteroReason's is BRSD's, SpecReason's and Lookahead Reasoning's RSD's
(the accuracy section)."""

from __future__ import annotations

from typing import Any, Callable

from ..config.scenario import build_scenario, load_scenario
from ..engine._workflow import simulate
from ..uncertainty import compare
from ._intervals import cell

CONFIG = 1
BASELINE = "target-alone"
HETERO = "heteroreason-u280-200"
SPLIT = "split-decoding-u280"
SAME_GPU = "speculative decoding, draft model on the RTX 3090"
ADAPTIVE = "speculative decoding, draft model on the RTX 3090, adaptive drafts"
COMBINED = "heteroreason, its target drafting with a draft model"
SPECREASON = ("specreason", "specreason-u280")
SPECREASON_DECODE = "specreason-u280, its target drafting with a draft model"
LOOKAHEAD = ("lookahead", "lookahead-u280")
LOOKAHEAD_DECODE = "lookahead, its target drafting with a draft model"
DRAFT_MODEL = "qwen2.5-0.5b"  # the split scenario's draft model
# Each compared system: its label, and whose accuracy it has: the target alone's (token level
# keeps the target's output), or the algorithm's whose trace it replays (brsd, rsd).
LABELS = {HETERO: ("HeteroReason (step level, U280)", "brsd"),
          SAME_GPU: ("token level, draft model on the GPU", "target"),
          ADAPTIVE: ("token level, draft model on the GPU, drafts a pass adapted (Hugging Face)", "target"),
          SPLIT: ("token level, drafts on the U280 (split)", "target"),
          COMBINED: ("HeteroReason, its target's refinements token-level too", "brsd"),
          SPECREASON[0]: ("SpecReason (the target judges; draft on an RTX 3090)", "rsd"),
          SPECREASON[1]: ("SpecReason, draft on the U280", "rsd"),
          SPECREASON_DECODE: ("SpecReason on the U280, its target's refinements token-level too", "rsd"),
          LOOKAHEAD[0]: ("Lookahead Reasoning (draft on an RTX 3090, a 7B judge)", "rsd"),
          LOOKAHEAD[1]: ("Lookahead Reasoning, draft on the U280", "rsd"),
          LOOKAHEAD_DECODE: ("Lookahead Reasoning, its target's runs token-level too", "rsd")}
METRICS = ("latency_s", "goodput_tok_s", "energy_j_per_token")


def steps(datasets: tuple[str, ...]) -> int:
    """Runs it adds to the report (HeteroReason's is the report's own)."""
    return 12 * len(datasets)


def _drafting() -> dict[str, Any]:
    """The split scenario's draft model and acceptance, drafting on the target's own GPU."""
    spec = load_scenario(SPLIT, CONFIG).speculation
    return {"proposer": "draft_model", "draft_model": DRAFT_MODEL, "draft_tokens": spec.draft_tokens,
            "acceptance": spec.acceptance}


def same_gpu_scenario(schedule: str = "constant") -> Any:
    """Token-level speculation on the target's GPU, drafting as the split scenario does: a
    fixed number a pass, or from it on Hugging Face's heuristic_transient schedule."""
    return build_scenario({"system": "speculative-decoding", "name": "speculative-decoding-rtx3090",
                           "target": {"device": "rtx3090"},
                           "speculation": {**_drafting(), "draft_schedule": schedule}}, config=CONFIG)


def combined_scenario(name: str = HETERO) -> Any:
    """A step-level system with its target's refinements drafted the same way
    (toggles.target_speculation): HeteroReason's, SpecReason's (SpecReason+Decode), or
    Lookahead Reasoning's runs (LR+SD)."""
    return load_scenario(name, CONFIG).with_values(
        {"toggles.target_speculation": True, **{f"speculation.{k}": v for k, v in _drafting().items()}})


def record(dataset: str, trace: Any, own: dict[str, Any], tick: Callable[[str], None],
           forward_only: Any) -> dict[str, Any]:
    """One dataset: the target alone's latency, goodput and J/token, and each compared
    system's with its speedup over the target alone, intervals paired over the problems.
    ``trace``: the BRSD run of the problems; ``forward_only``: their RSD run (SpecReason's and
    Lookahead Reasoning's)."""
    results = {BASELINE: simulate(load_scenario(BASELINE, CONFIG), trace)}
    tick(f"{dataset} speculation {BASELINE}")
    results[HETERO] = own[HETERO]
    results[SAME_GPU] = simulate(same_gpu_scenario(), trace)
    tick(f"{dataset} speculation {SAME_GPU}")
    results[ADAPTIVE] = simulate(same_gpu_scenario("heuristic_transient"), trace)
    tick(f"{dataset} speculation {ADAPTIVE}")
    results[SPLIT] = simulate(load_scenario(SPLIT, CONFIG), trace)
    tick(f"{dataset} speculation {SPLIT}")
    results[COMBINED] = simulate(combined_scenario(), trace)
    tick(f"{dataset} speculation {COMBINED}")
    found = compare(results, BASELINE, metrics=METRICS)
    # SpecReason and Lookahead Reasoning replay the forward-only run, whose final chains (what
    # the target alone decodes) differ from the BRSD run's: their speedup is over the target
    # alone on that run.
    forward = {BASELINE: simulate(load_scenario(BASELINE, CONFIG), forward_only)}
    tick(f"{dataset} speculation {BASELINE} forward-only")
    for name in (*SPECREASON, *LOOKAHEAD):
        forward[name] = simulate(load_scenario(name, CONFIG), forward_only)
        tick(f"{dataset} speculation {name}")
    forward[SPECREASON_DECODE] = simulate(combined_scenario(SPECREASON[1]), forward_only)
    tick(f"{dataset} speculation {SPECREASON_DECODE}")
    forward[LOOKAHEAD_DECODE] = simulate(combined_scenario(LOOKAHEAD[0]), forward_only)
    tick(f"{dataset} speculation {LOOKAHEAD_DECODE}")
    return {"dataset": dataset, "config": CONFIG, **_rows(results, found),
            "forward_only": _rows(forward, compare(forward, BASELINE, metrics=METRICS))}


def _rows(results: dict[str, Any], found: Any) -> dict[str, Any]:
    """The baseline's metrics and each compared system's, with intervals paired over the problems."""
    rows = []
    for name, (label, accuracy_of) in LABELS.items():
        if name not in results:
            continue
        m = found.metrics[name]
        rows.append({"system": label, "accuracy_of": accuracy_of, "speedup": m["speedup"].estimate,
                     **{k: results[name].summary[k] for k in METRICS},
                     "intervals": {"speedup": m["speedup"].to_list(), **{k: m[k].to_list() for k in METRICS}}})
    base = found.metrics[BASELINE]
    return {"baseline": {**{k: results[BASELINE].summary[k] for k in METRICS},
                         "intervals": {k: base[k].to_list() for k in METRICS}}, "systems": rows}


def markdown(report: dict[str, Any]) -> list[str]:
    records = report["speculation"]
    accuracy = {(r["dataset"], r["config"], r["mode"]): r["accuracy"] for r in report["accuracy"]}
    alone = {(a["dataset"], a["config"]): a["accuracy"] for a in report["target_alone"]}
    lines = ["## Speculation compared", "",
             "On config 1's problems, step-level HeteroReason (the draft on a U280 at 200 MHz) beside token-level "
             "speculative decoding with Qwen2.5-0.5B drafting on the target's RTX 3090 (a fixed number of drafts a "
             "pass, and Hugging Face's adaptive `heuristic_transient` schedule from it) and the same drafting on "
             "the U280 (`split-decoding-u280`), and HeteroReason with its target's refinements drafted so too "
             "(`toggles.target_speculation`; docs/system.md), and SpecReason, whose target judges each drafted "
             "step itself (`specreason`, `specreason-u280`, and the latter with its target's refinements drafted "
             "token-level too), and Lookahead Reasoning, whose target writes the drafted steps at once while a "
             "judge compares each with the target's own (`lookahead`, `lookahead-u280`, and the former with its "
             "target's runs drafted token-level too), the last two on the "
             "forward-only run of the same problems, each "
             "set against the target alone on the same run. Token-level speculation keeps the target's output, so "
             "its accuracy is the target alone's (shown where real responses measured it); HeteroReason's is "
             "BRSD's expected accuracy and SpecReason's and Lookahead Reasoning's RSD's, their verdicts the "
             "trace's. Speedup: the target alone's mean latency over the system's. Brackets: 95% intervals over "
             "the problems, paired.", "",
             "| dataset | system | latency s | speedup | J/token | goodput tok/s | accuracy |",
             "|---|---|---|---|---|---|---|"]
    for r in records:
        key = (r["dataset"], r["config"])
        own = alone.get(key)
        for label, group in (("the target alone", r), ("the target alone, forward-only run", r["forward_only"])):
            base = group["baseline"]
            lines.append(f"| {r['dataset']} | {label} | {cell(base, 'latency_s', '{:.2f}')} | 1.00 | "
                         f"{cell(base, 'energy_j_per_token', '{:.2f}')} | {cell(base, 'goodput_tok_s', '{:.1f}')} | "
                         f"{'-' if own is None else f'{own:.1%}'} |")
            for s in group["systems"]:
                acc = own if s["accuracy_of"] == "target" else accuracy.get(key + (s["accuracy_of"],))
                lines.append(f"| {r['dataset']} | {s['system']} | {cell(s, 'latency_s', '{:.2f}')} | "
                             f"{cell(s, 'speedup', '{:.2f}')} | {cell(s, 'energy_j_per_token', '{:.2f}')} | "
                             f"{cell(s, 'goodput_tok_s', '{:.1f}')} | {'-' if acc is None else f'{acc:.1%}'} |")
    lines += ["", "The token-level rows take a draft model's acceptance from Leviathan et al. "
              "(translation), which a profile of one's own replaces (docs/workload.md)."]
    return lines
