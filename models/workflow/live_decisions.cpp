#include "live_decisions.hpp"

#include <string>

#include "brsd_rule.hpp"
#include "errors.hpp"

namespace cosim {

int64_t LiveDecisions::begin(const TraceChunk& /*chunk*/, const TraceProblem& /*problem*/) {
    live_.clear();
    return 0;
}

const TraceEvent* LiveDecisions::event(int64_t k) {
    if (k < static_cast<int64_t>(live_.size())) return &live_[static_cast<size_t>(k)];
    const TraceEvent* last = live_.empty() ? nullptr : &live_.back();
    const int32_t step = host_.steps_kept() + 1;
    TraceEvent e;
    if (last != nullptr && last->kind == EventKind::refine && !last->accepted) {
        // The verdict let a failed refinement go: back to the step before it.
        e.kind = EventKind::backtrack;
        e.step = last->step - 1;
    } else if (last != nullptr && ((last->kind == EventKind::draft && !last->accepted) ||
                                   last->kind == EventKind::backtrack)) {
        Decision d;
        host_.describe(d, DecisionKind::refine, step);
        broker_.ask(d);
        if (d.answer_tokens <= 0)
            throw ConfigError("refine: the target's step " + std::to_string(step) + " needs at least one token, got " +
                              std::to_string(d.answer_tokens));
        e.kind = EventKind::refine;
        e.step = step;
        e.tokens = static_cast<int32_t>(d.answer_tokens);
        e.scored = scored_;
        e.accepted = !scored_;  // forward-only keeps every refinement unscored
    } else {
        Decision d;
        host_.describe(d, DecisionKind::draft, step);
        d.tokens = host_.drafted_ahead(step);
        broker_.ask(d);
        if (d.answer_tokens <= 0) return nullptr;  // the answer is complete
        if (d.tokens > 0 && d.answer_tokens != d.tokens)
            throw ConfigError("draft: step " + std::to_string(step) + " was drafted ahead with " +
                              std::to_string(d.tokens) + " tokens, now answered " +
                              std::to_string(d.answer_tokens) + "; a policy answers the same step the same way");
        e.kind = EventKind::draft;
        e.step = step;
        e.tokens = static_cast<int32_t>(d.answer_tokens);
    }
    live_.push_back(e);
    return &live_.back();
}

bool LiveDecisions::keep(int64_t k, const TraceEvent& e) {
    Decision d;
    host_.describe(d, DecisionKind::verdict, e.step);
    d.of_refinement = e.kind == EventKind::refine;
    d.tokens = e.tokens;
    d.waited_ns = host_.verdict_waited_ns();
    d.can_backtrack = d.of_refinement && can_backtrack(e.step, d.backtracks, max_backtracks_);
    broker_.ask(d);
    // A refinement that cannot be backtracked over is kept, whatever the verdict (brsd_rule.hpp).
    const bool kept = d.of_refinement ? keeps_refinement(d.answer_keep, e.step, d.backtracks, max_backtracks_)
                                      : d.answer_keep;
    live_[static_cast<size_t>(k)].accepted = kept;
    return kept;
}

int64_t LiveDecisions::ask_ahead(DecisionKind kind, int32_t step) {
    Decision d;
    host_.describe(d, kind, step);
    d.speculative = true;
    broker_.ask(d);
    return d.answer_tokens > 0 ? d.answer_tokens : 0;
}

}  // namespace cosim
