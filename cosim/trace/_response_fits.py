"""The PRM's score distributions of the step-quality model, fitted to sampled
model responses with correctness labels: a reward model's raw scores of right
and of wrong responses (``pred_score``, one number or a list per response, the
last taken; read as log-odds), each fitted with a normal by maximum likelihood.
They give the profiles' ``prm_good_logit_*`` and ``prm_bad_logit_*``, with
whole-solution scores standing in for step scores.
"""

from __future__ import annotations

import math
import statistics
from typing import Any


def _reward(value: Any) -> float | None:
    if isinstance(value, list) and value:
        value = value[-1]  # a process reward per step: the last step's stands for the solution
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def reward_logit_fit(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Normal fits of the reward log-odds of right (``good``) and wrong (``bad``)
    responses; empty unless both kinds carry a reward."""
    groups: dict[str, list[float]] = {"good": [], "bad": []}
    for row in rows:
        labels, rewards = row.get("score"), row.get("pred_score")
        if not (isinstance(labels, list) and isinstance(rewards, list)):
            continue
        for label, raw in zip(labels, rewards):
            reward = _reward(raw)
            if isinstance(label, bool) and reward is not None:
                groups["good" if label else "bad"].append(reward)
    if not groups["good"] or not groups["bad"]:
        return {}
    return {name: {"count": len(values), "logit_mean": statistics.fmean(values),
                   "logit_sigma": statistics.pstdev(values)} for name, values in groups.items()}
