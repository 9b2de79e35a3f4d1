#pragma once
// Where the host's events come from: a problem's draft, refine and backtrack events,
// the verdicts on its steps, and the lengths of work started ahead of them. Two sources
// feed the host: trace replay (TraceReplay, trace_replay.hpp) reads them from a trace
// chunk; live co-simulation (LiveDecisions, live_decisions.hpp) makes each one when it is
// due from a policy's answers. The host asks the same questions of either.
#include <cstdint>

#include "workflow_inputs.hpp"

namespace cosim {

class EventSource {
public:
    virtual ~EventSource() = default;

    // A new problem of `chunk`; returns the index of its first event (the host names
    // events by index: it ties each device activity to the event it served).
    virtual int64_t begin(const TraceChunk& chunk, const TraceProblem& problem) = 0;
    // Event `k` (begin()'s index, then one up each), made when the host is ready for it;
    // nullptr once the problem's answer is complete. It stays valid for the problem.
    virtual const TraceEvent* event(int64_t k) = 0;
    // Whether the verdict on event `k` (a drafted step, a scored refinement) keeps it.
    virtual bool keep(int64_t k, const TraceEvent& e) = 0;
    // The length of a draft of `step` started ahead of event `k` (0: none will be asked).
    virtual int64_t lookahead_draft(int64_t k, int32_t step) = 0;
    // The natural length of a target run for `step` started ahead of event `k`.
    virtual int64_t lookahead_refine(int64_t k, int32_t step) = 0;
};

}  // namespace cosim
