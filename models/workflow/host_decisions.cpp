// Live co-simulation on the host's side: the events of a problem made one at a time from
// a policy's answers (decision_broker.hpp), in the order trace replay reads them, so that
// a policy answering from a trace replays it exactly.
#include "sim_time.hpp"
#include "host_orchestrator.hpp"

#include <string>

#include "errors.hpp"

namespace cosim {

void HostOrchestrator::fill(Decision& d, DecisionKind kind, int32_t step) const {
    d.kind = kind;
    d.slot = slot_;
    d.request = request_index_;
    d.step = step;
    d.time_ns = now_ns();
    d.chain.clear();
    for (const ChainStep& s : chain_) d.chain.push_back(s.tokens);
    d.backtracks = acct_.metrics_view().backtracks;
    d.kvmu = d_.draft->kvmu().pointers();
    d.states = {d_.draft->power().state(), d_.prm->power().state(), d_.target->power().state()};
}

bool HostOrchestrator::next_live(int64_t k) {
    if (k == 0) live_.clear();
    const int32_t step = static_cast<int32_t>(chain_.size()) + 1;
    const TraceEvent* last = live_.empty() ? nullptr : &live_.back();
    TraceEvent e;
    if (last != nullptr && last->kind == EventKind::refine && !last->accepted) {
        // The verdict let a failed refinement go: back to the step before it.
        e.kind = EventKind::backtrack;
        e.step = last->step - 1;
    } else if (last != nullptr && ((last->kind == EventKind::draft && !last->accepted) ||
                                   last->kind == EventKind::backtrack)) {
        Decision d;
        fill(d, DecisionKind::refine, step);
        broker_->ask(d);
        if (d.answer_tokens <= 0)
            throw ConfigError("refine: the target's step " + std::to_string(step) + " needs at least one token, got " +
                              std::to_string(d.answer_tokens));
        e.kind = EventKind::refine;
        e.step = step;
        e.tokens = static_cast<int32_t>(d.answer_tokens);
        e.scored = scored_refinements_;
        e.accepted = !scored_refinements_;  // forward-only keeps every refinement unscored
    } else {
        Decision d;
        fill(d, DecisionKind::draft, step);
        if (!specs_.empty() && specs_.front().step == step) d.tokens = specs_.front().tokens;  // drafted ahead
        broker_->ask(d);
        if (d.answer_tokens <= 0) return false;  // the answer is complete
        if (d.tokens > 0 && d.answer_tokens != d.tokens)
            throw ConfigError("draft: step " + std::to_string(step) + " was drafted ahead with " +
                              std::to_string(d.tokens) + " tokens, now answered " +
                              std::to_string(d.answer_tokens) + "; a policy answers the same step the same way");
        e.kind = EventKind::draft;
        e.step = step;
        e.tokens = static_cast<int32_t>(d.answer_tokens);
    }
    live_.push_back(e);
    return true;
}

bool HostOrchestrator::keep(int64_t k, const TraceEvent& e) {
    if (broker_ == nullptr) return e.accepted;
    Decision d;
    fill(d, DecisionKind::verdict, e.step);
    d.of_refinement = e.kind == EventKind::refine;
    d.tokens = e.tokens;
    d.waited_ns = now_ns() - verdict_sent_ns_;
    d.can_backtrack = d.of_refinement && d.backtracks < max_backtracks_ && e.step > 1;
    broker_->ask(d);
    // A refinement that cannot be backtracked over is kept, whatever the verdict.
    const bool kept = d.answer_keep || (d.of_refinement && !d.can_backtrack);
    live_[static_cast<size_t>(k)].accepted = kept;
    return kept;
}

int64_t HostOrchestrator::ask_ahead(DecisionKind kind, int32_t step) {
    Decision d;
    fill(d, kind, step);
    d.speculative = true;
    broker_->ask(d);
    return d.answer_tokens > 0 ? d.answer_tokens : 0;
}

}  // namespace cosim
