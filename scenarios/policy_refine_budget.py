"""A refinement budget: once a problem has run longer than a budget of simulated time,
the target refines no more; every drafted step is kept as the draft model wrote it.

    python scenarios/policy_refine_budget.py [--budget-s 3]
"""

from _live_compare import arguments, compare

from cosim.live import ProfilePolicy


class RefineBudget(ProfilePolicy):
    # profile: a profile name, or the generated trace `cosim run --policy` passes.
    def __init__(self, profile, seed=None, budget_s=3.0, **kw):
        super().__init__(profile, seed=seed, **kw)
        self.budget_s = budget_s
        self.started = {}  # per request: the simulated time of its first question

    def draft(self, view):
        self.started.setdefault(view.request, view.time_s)
        return super().draft(view)

    def decide(self, view, score):
        kept, score = super().decide(view, score)
        over = view.time_s - self.started.get(view.request, view.time_s) > self.budget_s
        if over and not view.of_refinement:
            return True, score  # out of budget: the draft's step stands
        return kept, score

    def done(self, request):
        super().done(request)
        self.started.pop(request, None)  # the problem has ended: its record goes


if __name__ == "__main__":
    import argparse
    import sys

    extra = argparse.ArgumentParser(add_help=False)
    extra.add_argument("--budget-s", type=float, default=3.0)
    own, rest = extra.parse_known_args()
    sys.argv = [sys.argv[0], *rest]
    args = arguments(__doc__.splitlines()[0])
    compare(args, RefineBudget(args.profile, args.seed, own.budget_s), f"budget {own.budget_s:g} s")
