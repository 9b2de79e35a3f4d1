"""Time-budgeted acceptance: a drafted step the PRM scores just below the acceptance
threshold is kept anyway when its verdict came late (the PRM took longer than a budget),
rather than paying for a refinement on top of the wait.

    python scenarios/policy_time_budget.py [--margin 0.1] [--late-ms 60]
"""

from _live_compare import arguments, compare

from cosim.live import ProfilePolicy


class TimeBudgetAcceptance(ProfilePolicy):
    # profile: a profile name, or the generated trace `cosim run --policy` passes.
    def __init__(self, profile, seed=None, margin=0.1, late_s=0.06, **kw):
        super().__init__(profile, seed=seed, **kw)
        self.margin, self.late_s = margin, late_s

    def decide(self, view, score):
        kept, score = super().decide(view, score)
        borderline = self.header.accept_threshold - self.margin <= score
        if not kept and not view.of_refinement and borderline and view.waited_s > self.late_s:
            return True, score  # late and nearly good enough: keep it
        return kept, score


if __name__ == "__main__":
    import argparse
    import sys

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--margin", type=float, default=0.1)
    extra.add_argument("--late-ms", type=float, default=60.0)
    own, rest = extra.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    args = arguments(__doc__.splitlines()[0])
    compare(args, TimeBudgetAcceptance(args.profile, args.seed, own.margin, own.late_ms / 1e3),
            f"late-accept {own.late_ms:g} ms")
