"""Solves the step-quality model's free parameters of the built-in dataset
profiles from the calibration targets, and prints them as profile YAML values.

    .venv/bin/python scripts/calibrate_workload.py [--problems 10000] [--seed 7]
                     [--responses RESPONSES.jsonl]

Fixed inputs: each profile's shape (prompts, steps, step lengths, window), the
PRM's score distributions (``prm_*_logit_*``; with ``--responses`` first
refitted from a responses file with ``score`` and ``pred_score`` lists, as
``cosim trace profile-data`` does) and ``bad_step_penalty`` (an estimate; see
math500.yaml for the range the targets allow).

Targets, at the default thresholds (accept 0.7, backtrack 0.7):
- each dataset's draft reject rate (REJECT_RATE below);
- each dataset's RSD accuracy with the 7B target, Config 1 (RSD_ACCURACY);
- BRSD's accuracy gain over RSD, averaged over the four datasets: +2.0 points
  with the 7B target (Config 1) and +5.0 with the 1.5B target (Config 2), as
  the paper reports.

Structure: a target gets a step right wherever the draft does (one hardness
draw per step), and on every dataset each target gets wrong the same share of
the steps the draft gets wrong: 1 - good_target = share x (1 - good_draft).

Procedure:
1. ``draft_good_step_probability`` in closed form from the reject rate:
   r = g P(score < 0.7 | good) + (1 - g) P(score < 0.7 | bad).
2. The 7B's share, from sampled Config 1 paths (RSD and BRSD): for a share,
   each dataset's ``clean_chain_accuracy`` is its RSD accuracy over
   mean((1 - penalty) ** kept bad steps) on the RSD paths; the share is solved
   (secant) until the mean BRSD gain is +2.0 points.
3. The 1.5B's share: solved (secant) until the mean Config 2 gain is +5.0
   points, with the clean-chain accuracies of step 2.

Draws are common across tries (keyed by seed, problem, step, attempt), so the
solvers see smooth functions. ``bench/check_workload.py`` checks the result on
other draws.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from typing import Callable

import numpy as np

from cosim import trace
from cosim.trace._dataset_stats import read_jsonl
from cosim.trace._response_fits import reward_logit_fit
from cosim.trace import DatasetProfile

DATASETS = ("gsm8k", "math500", "gaokao2023en", "olympiadbench")
# The profiles' draft reject rates before the step-quality model (estimates, kept as targets).
REJECT_RATE = {"gsm8k": 0.15, "math500": 0.20, "gaokao2023en": 0.22, "olympiadbench": 0.25}
# RSD Config 1 accuracy: MATH from the responses data (728 of 800 right), the others the
# Qwen2.5-Math-7B-Instruct CoT results of the Qwen2.5-Math technical report (estimates).
RSD_ACCURACY = {"gsm8k": 0.95, "math500": 0.91, "gaokao2023en": 0.67, "olympiadbench": 0.42}
GAIN = {1: 0.020, 2: 0.050}  # the paper's mean BRSD - RSD accuracy gain per config
THRESHOLD = 0.7


def bad_counts(profile: DatasetProfile, config: int, backtracking: bool, problems: int, seed: int) -> np.ndarray:
    """The bad steps each sampled problem's final chain keeps."""
    drawn = trace.generate(profile, problems, seed, backtracking=backtracking, config=config).problems
    return np.array([drawn.drawn(i).kept_good.count(False) for i in range(problems)])


def secant(f: Callable[[float], float], x0: float, x1: float, tol: float, lo: float, hi: float) -> float:
    """A root of f near x0, x1, kept in [lo, hi]; an error if f is not near zero there."""
    f0, f1 = f(x0), f(x1)
    for _ in range(30):
        if abs(x1 - x0) < tol or f1 == f0:
            if abs(f1) > 1e-4:
                raise SystemExit(f"no solution in [{lo}, {hi}]: {f1:+.5f} off at {x1:.4f}")
            return x1
        x0, x1 = x1, min(hi, max(lo, x1 - f1 * (x1 - x0) / (f1 - f0)))
        f0, f1 = f1, f(x1)
    raise SystemExit("the secant search did not settle")


def survival(counts: np.ndarray, penalty: float) -> float:
    return float(np.mean((1.0 - penalty) ** counts))


def with_shares(profile: DatasetProfile, share_7b: float, share_1_5b: float) -> DatasetProfile:
    bad_draft = 1 - profile.draft_good_step_probability
    return dataclasses.replace(profile, target_7b_good_step_probability=1 - share_7b * bad_draft,
                               target_1_5b_good_step_probability=1 - share_1_5b * bad_draft)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=10000, help="sampled problems per dataset (default 10000)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the sampled paths (default 7)")
    parser.add_argument("--responses", help="refit the PRM's score distributions from this responses file")
    parser.add_argument("--penalty", type=float, help="bad_step_penalty (default: the profiles' value)")
    args = parser.parse_args(argv)
    n, seed = args.problems, args.seed

    profiles = {d: trace.load_profile(d) for d in DATASETS}
    penalty = profiles["math500"].bad_step_penalty if args.penalty is None else args.penalty
    if args.responses:
        fit = reward_logit_fit(read_jsonl(args.responses))
        if not fit:
            raise SystemExit(f"{args.responses}: needs score and pred_score lists")
        scores = {f"prm_{k}_logit_{m}": fit[k][f"logit_{m}"] for k in ("good", "bad") for m in ("mean", "sigma")}
        print("fit: " + ", ".join(f"{k} {v:.4f}" for k, v in scores.items()))
        profiles = {d: dataclasses.replace(p, **scores) for d, p in profiles.items()}

    # Step 1: the draft's good-step probability, in closed form.
    base = profiles["math500"]
    fail_good = 1 - trace.pass_probability(base, True, THRESHOLD)
    fail_bad = 1 - trace.pass_probability(base, False, THRESHOLD)
    for d in DATASETS:
        bad_draft = (REJECT_RATE[d] - fail_good) / (fail_bad - fail_good)
        profiles[d] = dataclasses.replace(profiles[d], draft_good_step_probability=1 - bad_draft)

    def paths(config: int, share_7b: float, share_1_5b: float) -> dict[tuple[str, str], np.ndarray]:
        return {(d, mode): bad_counts(with_shares(p, share_7b, share_1_5b), config, mode == "brsd", n, seed)
                for d, p in profiles.items() for mode in ("rsd", "brsd")}

    def settle(runs: dict) -> dict[str, float]:
        """The clean-chain accuracies that meet the RSD accuracies on Config 1 paths."""
        return {d: RSD_ACCURACY[d] / survival(runs[d, "rsd"], penalty) for d in DATASETS}

    def gain(runs: dict, clean: dict[str, float]) -> float:
        return statistics.fmean(clean[d] * (survival(runs[d, "brsd"], penalty) - survival(runs[d, "rsd"], penalty))
                                for d in DATASETS)

    # Step 2: the 7B's share and the clean-chain accuracies.
    def config1_excess(share: float) -> float:
        runs = paths(1, share, share)
        value = gain(runs, settle(runs))
        print(f"  7B share {share:.4f}: Config 1 gain {value * 100:+.3f} points", file=sys.stderr)
        return value - GAIN[1]

    share_7b = secant(config1_excess, 0.1, 0.2, 1e-4, 0.0, 1.0)
    clean = settle(paths(1, share_7b, share_7b))
    if max(clean.values()) > 1:
        raise SystemExit(f"clean-chain accuracy above 1 ({clean}): penalty {penalty} is too large for the targets")

    # Step 3: the 1.5B's share.
    def config2_excess(share: float) -> float:
        value = gain(paths(2, share_7b, share), clean)
        print(f"  1.5B share {share:.4f}: Config 2 gain {value * 100:+.3f} points", file=sys.stderr)
        return value - GAIN[2]

    share_1_5b = secant(config2_excess, 0.3, 0.5, 1e-4, share_7b, 1.0)

    print(f"bad_step_penalty {penalty:.4f} (given); share of the draft's bad steps the 7B gets wrong {share_7b:.4f}, "
          f"the 1.5B {share_1_5b:.4f}")
    for d, p in profiles.items():
        p = dataclasses.replace(with_shares(p, share_7b, share_1_5b), clean_chain_accuracy=clean[d])
        values = ", ".join(f"{name} {getattr(p, name):.4f}" for name in (
            "draft_good_step_probability", "target_7b_good_step_probability", "target_1_5b_good_step_probability",
            "clean_chain_accuracy"))
        print(f"{d}: {values}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
