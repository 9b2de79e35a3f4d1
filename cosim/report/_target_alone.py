"""The report's "target alone": the plain autoregressive system (the built-in scenario
target-alone), the config's target writing each answer itself on one RTX 3090 at batch 1,
on the same problems the speculative systems replay: it generates each BRSD run's final
chain after the prompt. Its latency and energy per token set what speculative reasoning
must beat; its accuracy is the dataset profile's measured share of right answers of the
target alone, where the profile has one (real responses: MATH500 with the 7B), and is
left out elsewhere rather than modelled."""

from __future__ import annotations

from typing import Any

from .. import trace as traces
from ..engine._workflow import simulate
from ..config.scenario import load_scenario
from ..uncertainty import compare
from ._intervals import cell

SCENARIO = "target-alone"
# The speculative systems set beside it.
COMPARED = ("gpu-baseline", "heteroreason-u280-300")


METRICS = ("latency_s", "goodput_tok_s", "energy_j_per_token")


def record(dataset: str, config: int, trace: traces.Trace, group: dict[str, Any]) -> dict[str, Any]:
    """The target alone on one dataset and config: its latency, goodput and energy per token, and
    the speedup of each compared system over it (``group``: the systems' results on the same
    problems), each with its interval, paired over the problems as the report's other tables."""
    result = simulate(load_scenario(SCENARIO, config), trace)
    summary = result.summary
    found = compare({SCENARIO: result, **{name: group[name] for name in COMPARED}}, SCENARIO, metrics=METRICS)
    own = found.metrics[SCENARIO]
    measured = traces.load_profile(dataset).target_7b_alone_accuracy if config == 1 else 0.0
    return {"dataset": dataset, "config": config, **{m: summary[m] for m in METRICS},
            "intervals": {m: own[m].to_list() for m in METRICS},
            "speedups": {name: {"speedup": found.metrics[name]["speedup"].estimate,
                                "intervals": {"speedup": found.metrics[name]["speedup"].to_list()}}
                         for name in COMPARED},
            "accuracy": measured or None}


def markdown(report: dict[str, Any]) -> list[str]:
    alone = report["target_alone"]
    accuracy = {(r["dataset"], r["config"], r["mode"]): r["accuracy"] for r in report["accuracy"]}
    lines = ["## Target alone (the autoregressive system)", "",
             f"The config's target writes each answer itself (`{SCENARIO}`: one RTX 3090, batch 1, the same serving "
             "overhead per request as the speculative systems' GPUs): the prompt's prefill, then the final chain of "
             "the BRSD run token by token. Speedup: target-alone latency over the system's. Accuracy of the target "
             "alone: the dataset profile's measured share of right answers (MATH500: 728 of 800 real "
             "Qwen2.5-Math-Instruct responses), shown only where real responses give it; BRSD: the expected "
             "accuracy of the section below. Brackets: 95% intervals over the problems, paired with the systems' runs.", "",
             "| dataset | config | latency s | J/token | goodput tok/s | "
             + " | ".join(f"{name} speedup" for name in COMPARED) + " | accuracy alone | accuracy BRSD |",
             "|---|---|---|---|---|" + "---|" * len(COMPARED) + "---|---|"]
    for a in alone:
        speedups = [cell(a["speedups"][name], "speedup", "{:.2f}") for name in COMPARED]
        own = "-" if a["accuracy"] is None else f"{a['accuracy']:.1%}"
        brsd = accuracy.get((a["dataset"], a["config"], "brsd"))
        lines.append(f"| {a['dataset']} | {a['config']} | {cell(a, 'latency_s', '{:.2f}')} | "
                     f"{cell(a, 'energy_j_per_token', '{:.2f}')} | {cell(a, 'goodput_tok_s', '{:.1f}')} | "
                     + " | ".join(speedups) + f" | {own} | " + ("-" if brsd is None else f"{brsd:.1%}") + " |")
    return lines
