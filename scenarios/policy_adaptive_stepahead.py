"""Adaptive step-ahead depth: the draft device may draft up to two steps ahead of the
PRM's verdict (the scenario runs at step_ahead_depth 2), and the policy chooses how many
from the verdicts it has seen: two while the last two drafted steps were kept, one after
a single kept step, none after a rejection, so that a run of rejections does not burn
energy on step-ahead drafts that are thrown away.

    python scenarios/policy_adaptive_stepahead.py
"""

from _live_compare import arguments, compare

from cosim.live import ProfilePolicy

DEPTH = 2  # the step-ahead depth the scenario runs at: the most the policy may draft ahead


class AdaptiveStepAhead(ProfilePolicy):
    # profile: a profile name, or the generated trace `cosim run --policy` passes.
    def __init__(self, profile, seed=None, **kw):
        super().__init__(profile, seed=seed, **kw)
        self.kept_in_a_row = {}  # per request: drafted steps kept since the last rejection

    def depth(self, view):
        return min(DEPTH, self.kept_in_a_row.get(view.request, 1))

    def draft(self, view):
        # Asked ahead, the step is 1 or 2 beyond the one about to be verified.
        if view.speculative and view.step - len(view.chain) - 1 > self.depth(view):
            return 0  # not that deep for now
        return super().draft(view)

    def verdict(self, view):
        # Recorded here, once per real verdict (decide also rules hypothetical ones, for
        # questions asked ahead).
        kept, score = super().verdict(view)
        if not view.of_refinement:  # the draft's own record
            self.kept_in_a_row[view.request] = self.kept_in_a_row.get(view.request, 1) + 1 if kept else 0
        return kept, score

    def done(self, request):
        super().done(request)
        self.kept_in_a_row.pop(request, None)  # the problem has ended: its record goes


if __name__ == "__main__":
    args = arguments(__doc__.splitlines()[0])
    compare(args, AdaptiveStepAhead(args.profile, args.seed), "adaptive depth", depth=DEPTH)
