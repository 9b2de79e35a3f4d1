#pragma once
// Live co-simulation's event source: the events of a problem made one at a time from a
// policy's answers (DecisionBroker: one question per decision, never per token), in the
// order trace replay reads them, so that a policy answering from a trace replays it
// exactly. Each question carries the host's state (the chain, the KVMU's pointers, the
// devices' power states), which the host describes through HostState.
#include <cstdint>
#include <deque>
#include <functional>

#include "decision_broker.hpp"
#include "event_source.hpp"

namespace cosim {

struct HostState {
    // Fills a question's context: slot, request, step, time, chain, backtracks, KVMU, states.
    std::function<void(Decision&, DecisionKind, int32_t step)> describe;
    // Steps of the chain kept so far.
    std::function<int32_t()> steps_kept;
    // Tokens a step-ahead draft of `step` already has (0: none drafted ahead).
    std::function<int64_t(int32_t step)> drafted_ahead;
    // Since the step under verdict went to the PRM.
    std::function<double()> verdict_waited_ns;
};

class LiveDecisions final : public EventSource {
public:
    // `max_backtracks`: the algorithm's cap; `scored_refinements`: the PRM scores
    // refinements (BRSD), else forward-only keeps every refinement unscored.
    LiveDecisions(DecisionBroker& broker, int32_t max_backtracks, bool scored_refinements, HostState host)
        : broker_(broker), max_backtracks_(max_backtracks), scored_(scored_refinements), host_(std::move(host)) {}

    int64_t begin(const TraceChunk& chunk, const TraceProblem& problem) override;
    const TraceEvent* event(int64_t k) override;
    bool keep(int64_t k, const TraceEvent& e) override;
    int64_t lookahead_draft(int64_t /*k*/, int32_t step) override { return ask_ahead(DecisionKind::draft, step); }
    int64_t lookahead_refine(int64_t /*k*/, int32_t step) override { return ask_ahead(DecisionKind::refine, step); }

private:
    int64_t ask_ahead(DecisionKind kind, int32_t step);

    DecisionBroker& broker_;
    int32_t max_backtracks_;
    bool scored_;
    HostState host_;
    std::deque<TraceEvent> live_;  // the problem's events so far (a deque: the host holds them)
};

}  // namespace cosim
