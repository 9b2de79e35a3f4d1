"""Adaptive step-ahead depth: the draft device drafts the next step ahead of the PRM's
verdict (depth 1) only while steps are being accepted; after a rejection it waits for the
verdicts (depth 0) until a step is accepted again, so that a run of rejections does not
burn energy on step-ahead drafts that are thrown away.

    python scenarios/policy_adaptive_stepahead.py
"""

from _live_compare import arguments, compare

from cosim.live import ProfilePolicy


class AdaptiveStepAhead(ProfilePolicy):
    def __init__(self, profile, seed, **kw):
        super().__init__(profile, seed=seed, **kw)
        self.last_kept = {}  # per request: whether the PRM kept its last drafted step

    def draft(self, view):
        if view.speculative and not self.last_kept.get(view.request, True):
            return 0  # depth 0 for now: no step-ahead draft
        return super().draft(view)

    def decide(self, view, score):
        kept, score = super().decide(view, score)
        if not view.of_refinement:  # the draft's own record: was its last step kept?
            self.last_kept[view.request] = kept
        return kept, score


if __name__ == "__main__":
    args = arguments(__doc__.splitlines()[0])
    compare(args, AdaptiveStepAhead(args.profile, args.seed), "adaptive depth")
