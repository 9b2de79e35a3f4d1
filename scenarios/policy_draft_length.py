"""Drafts a pass by expected tokens per second: before each verification pass of a
token-level system, choose the number of drafts k that maximises the tokens a pass is
expected to keep, 1 + P(1) + ... + P(k), over the time a pass of k drafts is expected to
take (Leviathan et al. 2023, section 3.5, with per-position rates and a measured cost in
place of one rate and a cost ratio). Both are learned as the run goes, pooled over its
requests: each position's rate from the passes' kept drafts, the cost as a line a + b k
fitted to the passes' measured durations (the time between a request's questions).

    python scenarios/policy_draft_length.py [--scenario split-decoding-u280] [--problems 30]
"""

from __future__ import annotations

import cosim
from cosim.live import TracePolicy

# Passes timed at two draft counts at least before the cost line is trusted; until then the
# policy drafts the scenario's count and one fewer in turn, so that the line can be fitted.
WARMUP = 8


class DraftLength(TracePolicy):
    """Output lengths from the trace; drafts chosen by expected tokens per second."""

    def __init__(self, trace):
        super().__init__(trace)
        self.tried = [0] * 64      # passes whose position i + 1 was drafted, the i before it kept
        self.kept = [0] * 64       # of which kept
        self.sums = [0.0] * 5      # n, sum k, sum k^2, sum t, sum k t over timed passes
        self.by_k: dict[int, int] = {}
        self.last: dict[int, tuple[float, int]] = {}  # request -> (time of its last question, its drafts)

    def _learn(self, view) -> None:
        # The pass before: its rates, and (when this request asked before it) its duration.
        d, a = view.last_drafts, view.last_accepted
        for i in range(min(a + 1, d)):
            self.tried[i] += 1
            self.kept[i] += i < a
        before = self.last.get(view.request)
        if before is not None:
            t, k = view.time_s - before[0], before[1]
            for j, v in enumerate((1.0, k, k * k, t, k * t)):
                self.sums[j] += v
            self.by_k[k] = self.by_k.get(k, 0) + 1

    def _cost(self) -> tuple[float, float] | None:
        n, sk, skk, st, skt = self.sums
        if sum(1 for c in self.by_k.values() if c >= WARMUP) < 2:
            return None
        slope = (n * skt - sk * st) / (n * skk - sk * sk)
        return (st - slope * sk) / n, max(slope, 0.0)

    def rates(self, positions: int) -> list[float]:
        """Each position's rate given the drafts before it kept: its counts, with two passes'
        worth of the position before's rate as a prior (0.5 for the first), so that a
        position never drafted is expected to keep as the one before it does."""
        out, prior = [], 0.5
        for i in range(positions):
            prior = (self.kept[i] + 2 * prior) / (self.tried[i] + 2)
            out.append(prior)
        return out

    def speculate(self, view) -> int:
        self._learn(view)
        cost = self._cost()
        if cost is None:
            k = view.proposed if view.step % 2 else max(view.proposed - 1, 0)
        else:
            a, b = cost
            best, k, expected, reach = -1.0, 0, 1.0, 1.0
            rates = self.rates(view.most)
            for drafts in range(view.most + 1):
                if drafts:
                    reach *= rates[drafts - 1]  # P(the first `drafts` kept)
                    expected += reach
                rate = expected / (a + b * drafts)
                if rate > best:
                    best, k = rate, drafts
        self.last[view.request] = (view.time_s, min(k, view.output - view.tokens - 1))
        return k

    def done(self, request):
        super().done(request)
        self.last.pop(request, None)

    def collect(self):
        return {"cost": self._cost(), "rates": self.rates(8)}


# The comparison's defaults: the scripts' profile and seed, fewer problems (each a request alone).
SCENARIOS = ("speculative-decoding-h100", "split-decoding-u280")
PROBLEMS = 30


def compare(scenario: str, profile: str = "math500", problems: int = PROBLEMS, seed: int = 1) -> dict:
    """Each row's run summary on the same answers: the scenario's draft count, Hugging Face's
    heuristic_transient schedule from it, and this policy (with what it learned, and how
    many passes drafted each count)."""
    scn = cosim.load_scenario(scenario)
    trace = cosim.trace.generate(profile, problems, seed=seed)
    heuristic = scn.with_values({"speculation.draft_schedule": "heuristic_transient"})
    live = cosim.cosimulate(scn, DraftLength(trace), trace)
    chosen: dict[int, int] = {}
    for problem in live.trace.problems:
        for k in problem.draft_schedule:
            chosen[k] = chosen.get(k, 0) + 1
    return {"constant": cosim.simulate(scn, trace).summary, "heuristic": cosim.simulate(heuristic, trace).summary,
            "policy": live.result.summary, "learned": live.policy_outcome, "chosen": chosen,
            "draft_tokens": scn.speculation.draft_tokens}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=SCENARIOS[0])
    parser.add_argument("--profile", default="math500")
    parser.add_argument("--problems", type=int, default=PROBLEMS)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    runs = compare(args.scenario, args.profile, args.problems, args.seed)
    print(f"{args.scenario}, {args.problems} {args.profile} answers (seed {args.seed}):\n")
    for name, label in (("constant", "the scenario's drafts"), ("heuristic", "heuristic_transient"),
                        ("policy", "this policy")):
        s = runs[name]
        print(f"  {label:24s} latency {s['latency_s']:.3f} s   {s['energy_j_per_token']:.3f} J/token")
    a, b = runs["learned"]["cost"]
    print(f"\n  learned: a pass takes {a * 1e3:.2f} ms + {b * 1e3:.2f} ms a draft; the first drafts' rates "
          f"{', '.join(f'{r:.2f}' for r in runs['learned']['rates'][:4])}")
