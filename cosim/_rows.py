"""Per-problem rows a batch at a time, and the run's totals kept as they arrive.

The engine hands over the problems it has finished every chunk of the trace; each
batch becomes rows here (the engine's time and energy, the trace's chain summary)
and adds to running totals, so the summary never needs the rows again and a run of
any length can stream its rows to disk (cosim.engine._row_sinks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .schema import COLUMNS, SUMS, TOTALS, Sum, row_fields

NS = 1e-9
PS_PER_NS = 1000
PS_PER_S = 1e12  # divided by, so that a whole number of seconds is exact
ROLES = ("draft", "prm", "target")

# The per-problem rows, in column order (cosim/schema/_rows.py declares them).
ROW_FIELDS = row_fields("problem")
# Served requests' rows add these (cosim.serve): where each request waited and ran, and the
# time its work kept each of its devices computing or transferring (the pools' busy time).
SERVE_ROW_FIELDS = row_fields("serve")
SERVE_FIELDS = tuple(c.name for c in COLUMNS if c.table == "serve")
# Row columns measured from the request's start to an engine instant, with no code of their own.
_ELAPSED = tuple((c.name, c.elapsed + "_ps") for c in COLUMNS if c.elapsed)


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
    # Times from the request's start (its arrival when served) to an instant the engine
    # reports (docs/metrics.md); NaN where the instant never came (-1).
    since_ps = cols["arrival_ps"].astype(np.int64) if serving else start_ps
    for name, instant in _ELAPSED:
        at_ps = cols[instant].astype(np.int64)
        rows[name] = np.where(at_ps >= 0, (at_ps - since_ps) / PS_PER_S, np.nan)
    # Per output token after the first: the autoregressive system reports its first token;
    # the speculative systems have none.
    first_ps = cols["first_token_ps"].astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rows["tpot_s"] = np.where((final > 1) & (first_ps >= 0), (end_ps - first_ps) / PS_PER_S / (final - 1),
                                  np.nan)
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
            **{name: cols[name].astype(np.int64) for name in ("preemptions", "recomputed_tokens")},
            # Token-level speculative decoding: verification passes, drafted and kept tokens.
            **{name: cols[name].astype(np.int64) for name in ("verify_passes", "kept_draft_tokens")},
        })
    # What each declared sum adds (cosim/schema/_rows.py, SUMS): a new total needs no line here.
    adds = added(SUMS, {"row": rows, "engine": cols, "worked": {"latency_ns": latency_ns}})
    return rows, adds


def added(sums: tuple[Sum, ...], sources: dict[str, dict[str, Any]]) -> dict[str, np.ndarray]:
    """The values each of ``sums`` adds for one batch, taken from ``sources`` (``row``,
    ``engine``, ``worked``: name -> the batch's values) as each declares."""
    found = {}
    for s in sums:
        values = np.asarray(sources[s.source][s.of])
        if s.take != "all":
            known = ~np.isnan(values)
            values = values[known] if s.take == "known" else known.astype(float)
        found[s.name] = values
    return found


class Totals:
    """The run's sums (cosim/schema/_rows.py's SUMS, as the module has them when the run
    starts), problem by problem in order, and the span it covered."""

    def __init__(self) -> None:
        self.declared = SUMS
        self.sums = dict.fromkeys((s.name for s in SUMS), 0.0)
        self.problems = 0
        self.last_end_s = 0.0

    def add(self, rows: dict[str, Any], adds: dict[str, Any]) -> None:
        # Summed in problem order, each as plain floats (numpy's pairwise sum rounds differently).
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
        shown = {s.name for s in self.declared if s.shown}
        return {k: v for k, v in self.sums.items() if k in shown}

    def summary(self) -> dict[str, Any]:
        """The run's metrics (docs/metrics.md): ratios of the sums, never means of ratios,
        each as cosim/schema/_rows.py's TOTALS says."""
        return {t.name: _total(t, self.sums, self.problems) for t in TOTALS}


def _total(t: Any, sums: dict[str, float], n: int) -> Any:
    if t.how == "none":
        return None
    if t.how == "count":
        return n
    if t.how == "sum":
        return int(sums[t.of]) if t.integer else sums[t.of]
    # A scale of 1.0 multiplies exactly: these are the sums' own quotients, bit for bit.
    if t.how == "mean":
        return sums[t.of] * t.scale / n
    per = sum(sums[name] for name in t.per)
    if t.empty != "raise" and not per:
        return t.empty
    return sums[t.of] / (per * t.scale)
