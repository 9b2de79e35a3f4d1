"""Per-problem rows a batch at a time, and the run's totals kept as they arrive.

The engine hands over the problems it has finished every chunk of the trace; each
batch becomes rows here (the engine's time and energy, the trace's chain summary)
and adds to running totals, so the summary never needs the rows again and a run of
any length can stream its rows to disk (cosim._row_sinks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

NS = 1e-9
PS_PER_NS = 1000
PS_PER_S = 1e12  # divided by, so that a whole number of seconds is exact
ROLES = ("draft", "prm", "target")

# Summed in problem order, each as plain floats (numpy's pairwise sum rounds differently).
_TOTAL_KEYS = (
    "latency_ns", "final_tokens", "generated_tokens", "energy_j", "stall_ns", "stalled_verdicts", "verdicts",
    "comm_ns", "stepahead_waste_j", "offchain_energy_j", "accepted_draft_tokens", "target_trace_tokens",
    *(f"busy_{r}" for r in ROLES), *(f"energy_j_{r}" for r in ROLES), "steps", "backtracks",
    "correct", "labelled",
)


# The per-problem rows, in column order.
ROW_FIELDS = (
    "id", "dataset", "latency_s", "goodput_tok_s", "energy_j", "energy_j_per_token", "energy_j_per_generated_token",
    "speedup", "stall_ratio", "stall_step_share", "comm_share", "wasted_energy_share", "offchain_energy_share",
    "breakdown_draft",
    "breakdown_prm", "breakdown_target", "acceptance_rate", "steps_per_problem", "backtracks_per_problem",
    "accuracy", "final_tokens", "generated_tokens", "drafted_tokens", "target_tokens",
    "discarded_step_ahead_tokens", "reused_tokens", "energy_j_draft", "energy_j_prm", "energy_j_target", "start_s",
    "end_s", "ttft_s", "tpot_s",
    # The denominators of the token- and verdict-weighted metrics (acceptance_rate, stall_step_share),
    # so that every whole-run metric is a ratio of sums of rows (cosim.uncertainty resamples them).
    "verdicts", "accepted_draft_tokens", "target_trace_tokens",
)
# Served requests' rows add these (cosim.serve): where each request waited and ran, and the
# time its work kept each of its devices computing or transferring (the pools' busy time).
SERVE_FIELDS = ("request", "arrival_s", "queue_s", "service_s", "slot", "draft_device", "prm_device",
                "target_device", "busy_s_draft", "busy_s_prm", "busy_s_target", "preemptions",
                "recomputed_tokens")
SERVE_ROW_FIELDS = ROW_FIELDS + SERVE_FIELDS


def problem_rows(engine: dict[str, Any], trace: dict[str, Any],
                 serving: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The per-problem columns (result.ROW_FIELDS) of one batch, and the values its totals add up.
    Served requests (``serving``) also get SERVE_FIELDS, and their latency runs from arrival
    (queueing included); the shares (stall, communication, breakdown) stay shares of the
    time the request was served."""
    cols = {k: np.asarray(v) for k, v in engine.items()}
    n = len(trace["id"])
    if len(cols["end_ps"]) != n:
        raise AssertionError(f"engine returned {len(cols['end_ps'])} problems for {n} of the trace")
    # The engine's instants are whole picoseconds (int64): differences are taken exactly, then scaled.
    start_ps, end_ps = cols["start_ps"].astype(np.int64), cols["end_ps"].astype(np.int64)
    latency_ns = (end_ps - start_ps) / PS_PER_NS
    energy = cols["energy_j_draft"] + cols["energy_j_prm"] + cols["energy_j_target"]
    # The final chain is the trace's (its replay owns it); the engine reports time and energy.
    final = trace["final_tokens"].astype(np.float64)
    verdicts = cols["verdicts"]
    correct = trace["answer_correct"]
    rows: dict[str, Any] = {
        "id": list(trace["id"]),
        "dataset": list(trace["dataset"]),
        "latency_s": latency_ns * NS,
        "goodput_tok_s": final / (latency_ns * NS),
        "energy_j": energy,
        "energy_j_per_token": energy / final,
        "energy_j_per_generated_token": energy / cols["generated_tokens"],
        "speedup": np.full(n, np.nan),
        "stall_ratio": cols["stall_ns"] / latency_ns,
        "stall_step_share": cols["stalled_verdicts"] / np.where(verdicts > 0, verdicts, 1),
        "comm_share": cols["comm_critical_ns"] / latency_ns,
        "wasted_energy_share": cols["stepahead_waste_j"] / energy,
        "offchain_energy_share": cols["offchain_energy_j"] / energy,
        **{f"breakdown_{r}": cols[f"busy_ns_{r}"] / latency_ns for r in ROLES},
        "acceptance_rate": trace["acceptance_rate"],
        "steps_per_problem": trace["steps"],
        "backtracks_per_problem": trace["backtracks"],
        "accuracy": np.where(correct >= 0, correct, np.nan),
        "final_tokens": trace["final_tokens"].astype(np.int64),
        "generated_tokens": cols["generated_tokens"],
        "drafted_tokens": cols["drafted_tokens"],
        "target_tokens": cols["target_tokens"],
        "discarded_step_ahead_tokens": cols["discarded_step_ahead_tokens"],
        "reused_tokens": cols["reused_tokens"],
        **{f"energy_j_{r}": cols[f"energy_j_{r}"] for r in ROLES},
        "start_s": start_ps / PS_PER_S,
        "end_s": end_ps / PS_PER_S,
        "verdicts": verdicts.astype(np.int64),
        "accepted_draft_tokens": np.asarray(trace["accepted_draft_tokens"]).astype(np.int64),
        "target_trace_tokens": np.asarray(trace["target_tokens"]).astype(np.int64),
    }
    # Time to the first output token and per output token after it (docs/metrics.md): the
    # autoregressive system reports its first token; the speculative systems have none.
    if "first_token_ps" in cols:
        first_ps = cols["first_token_ps"].astype(np.int64)
        since_ps = cols["arrival_ps"].astype(np.int64) if serving else start_ps
        rows["ttft_s"] = (first_ps - since_ps) / PS_PER_S
        with np.errstate(invalid="ignore", divide="ignore"):
            rows["tpot_s"] = np.where(final > 1, (end_ps - first_ps) / PS_PER_S / (final - 1), np.nan)
    else:
        rows["ttft_s"] = rows["tpot_s"] = np.full(n, np.nan)
    if serving:
        arrival_ps = cols["arrival_ps"].astype(np.int64)
        rows["latency_s"] = (end_ps - arrival_ps) / PS_PER_S
        rows["goodput_tok_s"] = final / rows["latency_s"]
        rows.update({
            "request": cols["request"].astype(np.int64), "arrival_s": arrival_ps / PS_PER_S,
            "queue_s": (start_ps - arrival_ps) / PS_PER_S, "service_s": (end_ps - start_ps) / PS_PER_S,
            "slot": cols["slot"].astype(np.int64), **{f"{r}_device": cols[f"{r}_device"].astype(np.int64)
                                                       for r in ROLES},
            **{f"busy_s_{r}": cols[f"work_ns_{r}"] * NS for r in ROLES},
            # The autoregressive system's vLLM engine: preemptions and the tokens they recomputed.
            **{name: cols[name].astype(np.int64) if name in cols else np.zeros(n, dtype=np.int64)
               for name in ("preemptions", "recomputed_tokens")},
        })
    adds = {
        "latency_ns": latency_ns, "final_tokens": final, "generated_tokens": cols["generated_tokens"],
        "energy_j": energy, "stall_ns": cols["stall_ns"], "stalled_verdicts": cols["stalled_verdicts"],
        "verdicts": verdicts, "comm_ns": cols["comm_critical_ns"], "stepahead_waste_j": cols["stepahead_waste_j"],
        "offchain_energy_j": cols["offchain_energy_j"], "accepted_draft_tokens": trace["accepted_draft_tokens"],
        "target_trace_tokens": trace["target_tokens"], **{f"busy_{r}": cols[f"busy_ns_{r}"] for r in ROLES},
        **{f"energy_j_{r}": cols[f"energy_j_{r}"] for r in ROLES}, "steps": trace["steps"],
        "backtracks": trace["backtracks"], "correct": correct[correct >= 0], "labelled": (correct >= 0).astype(float),
    }
    return rows, adds


class Totals:
    """The run's sums, problem by problem in order, and the span it covered."""

    def __init__(self) -> None:
        self.sums = dict.fromkeys(_TOTAL_KEYS, 0.0)
        self.problems = 0
        self.last_end_s = 0.0

    def add(self, rows: dict[str, Any], adds: dict[str, Any]) -> None:
        sums = self.sums
        for key, values in adds.items():
            total = sums[key]
            for v in values.tolist():
                total += v
            sums[key] = total
        n = len(rows["id"])
        if n:
            self.problems += n
            # Rows come as slots release their requests, not always in the order they ended.
            self.last_end_s = max(self.last_end_s, float(np.max(rows["end_s"])))

    def public(self) -> dict[str, float]:
        """The sums a Result shows as ``totals``."""
        return {k: v for k, v in self.sums.items() if k not in ("energy_j_draft", "energy_j_prm", "energy_j_target",
                                                                 "steps", "backtracks", "correct", "labelled")}

    def summary(self) -> dict[str, Any]:
        """The run's metrics (docs/metrics.md): ratios of the sums, never means of ratios."""
        tt, n = self.sums, self.problems
        accepted_plus_target = tt["accepted_draft_tokens"] + tt["target_trace_tokens"]
        return {
            "latency_s": tt["latency_ns"] * NS / n,
            "goodput_tok_s": tt["final_tokens"] / (tt["latency_ns"] * NS),
            "energy_j_per_token": tt["energy_j"] / tt["final_tokens"],
            "energy_j_per_generated_token": tt["energy_j"] / tt["generated_tokens"],
            "speedup": None,
            "stall_ratio": tt["stall_ns"] / tt["latency_ns"],
            "stall_step_share": tt["stalled_verdicts"] / tt["verdicts"] if tt["verdicts"] else 0.0,
            "comm_share": tt["comm_ns"] / tt["latency_ns"],
            "wasted_energy_share": tt["stepahead_waste_j"] / tt["energy_j"],
            "offchain_energy_share": tt["offchain_energy_j"] / tt["energy_j"],
            **{f"breakdown_{r}": tt[f"busy_{r}"] / tt["latency_ns"] for r in ROLES},
            **{f"energy_j_{r}": tt[f"energy_j_{r}"] for r in ROLES},
            "acceptance_rate": tt["accepted_draft_tokens"] / accepted_plus_target if accepted_plus_target else 0.0,
            "steps_per_problem": tt["steps"] / n,
            "backtracks_per_problem": tt["backtracks"] / n,
            "accuracy": tt["correct"] / tt["labelled"] if tt["labelled"] else None,
            "problems": n,
            "energy_j": tt["energy_j"],
            "final_tokens": int(tt["final_tokens"]),
            "generated_tokens": int(tt["generated_tokens"]),
        }
