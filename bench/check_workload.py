"""Checks the calibration of the step-quality model on fresh draws: 5,000
problems per dataset (seed 0; scripts/calibrate_workload.py solved on seed 7).

    .venv/bin/python bench/check_workload.py [--problems 5000] [--seed 0]

Targets, each within half a percentage point: the draft reject rate at the
default threshold 0.7 (BRSD, Config 1) per dataset; RSD's MATH accuracy with
the 7B target, 0.91; BRSD's mean gain over RSD across the four datasets,
+2.0 points (Config 1) and +5.0 (Config 2). Accuracies are expected shares of
right answers (mean probability of a right answer over the drawn problems);
the labels drawn from them are shown beside, with their extra sampling noise.
Also prints each dataset's backtracks per problem and the reject rates at
thresholds 0.5 and 0.9. Exits 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from cosim import trace
from cosim.trace import Backtrack, Draft, TraceHeader

DATASETS = ("gsm8k", "math500", "gaokao2023en", "olympiadbench")
REJECT_RATE = {"gsm8k": 0.15, "math500": 0.20, "gaokao2023en": 0.22, "olympiadbench": 0.25}
RSD_MATH_ACCURACY = 0.91
GAIN = {1: 0.020, 2: 0.050}
TOLERANCE = 0.005


def measure(dataset: str, problems: int, seed: int, config: int, backtracking: bool,
            threshold: float = 0.7) -> dict[str, float]:
    drawn = trace.generate(dataset, problems, seed, backtracking, TraceHeader(accept_threshold=threshold),
                           config=config).problems
    drafts = rejected = backtracks = 0
    chance, labels = [], []
    for i in range(problems):
        d = drawn.drawn(i)
        chance.append(d.correct_probability)
        labels.append(d.problem.answer_correct)
        for event in d.problem.events:
            drafts += isinstance(event, Draft)
            rejected += isinstance(event, Draft) and not event.accepted
            backtracks += isinstance(event, Backtrack)
    return {"accuracy": statistics.fmean(chance), "labels": statistics.fmean(labels),
            "reject_rate": rejected / drafts, "backtracks": backtracks / problems}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    started = time.monotonic()
    runs = {(d, c, m): measure(d, args.problems, args.seed, c, m == "brsd")
            for d in DATASETS for c in (1, 2) for m in ("rsd", "brsd")}
    misses = []

    def check(what: str, value: float, target: float) -> str:
        ok = abs(value - target) <= TOLERANCE
        if not ok:
            misses.append(what)
        return f"{value:.4f} (target {target:.4f}, {'ok' if ok else 'MISSED'})"

    print(f"{args.problems} problems per dataset, seed {args.seed}\n")
    print("dataset        config  RSD acc  BRSD acc  gain    (labels: RSD  BRSD  gain)   reject RSD/BRSD  "
          "backtracks")
    for d in DATASETS:
        for c in (1, 2):
            r, b = runs[d, c, "rsd"], runs[d, c, "brsd"]
            print(f"{d:14} {c:6}  {r['accuracy']:.4f}   {b['accuracy']:.4f}  {100 * (b['accuracy'] - r['accuracy']):+5.2f}"
                  f"   ({r['labels']:.4f} {b['labels']:.4f} {100 * (b['labels'] - r['labels']):+5.2f})   "
                  f"{r['reject_rate']:.4f}/{b['reject_rate']:.4f}    {b['backtracks']:.3f}")
    print()
    for d in DATASETS:
        at = {t: measure(d, args.problems, args.seed, 1, True, t)["reject_rate"] for t in (0.5, 0.9)}
        print(f"reject rate {d:14} at 0.5 {at[0.5]:.4f}, at 0.7 "
              f"{check(f'reject rate {d}', runs[d, 1, 'brsd']['reject_rate'], REJECT_RATE[d])}, at 0.9 {at[0.9]:.4f}")
    print(f"RSD MATH accuracy, Config 1: "
          f"{check('RSD MATH accuracy', runs['math500', 1, 'rsd']['accuracy'], RSD_MATH_ACCURACY)} "
          f"(labels {runs['math500', 1, 'rsd']['labels']:.4f})")
    for c in (1, 2):
        gains = [runs[d, c, "brsd"]["accuracy"] - runs[d, c, "rsd"]["accuracy"] for d in DATASETS]
        label_gains = [runs[d, c, "brsd"]["labels"] - runs[d, c, "rsd"]["labels"] for d in DATASETS]
        print(f"mean BRSD gain, Config {c}: {check(f'gain config {c}', statistics.fmean(gains), GAIN[c])} "
              f"(labels {statistics.fmean(label_gains):+.4f})")
    print(f"\n{time.monotonic() - started:.0f} s; " + ("all targets met" if not misses else f"missed: {misses}"))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
