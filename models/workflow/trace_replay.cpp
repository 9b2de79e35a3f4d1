#include "trace_replay.hpp"

namespace cosim {

int64_t TraceReplay::begin(const TraceChunk& chunk, const TraceProblem& problem) {
    events_ = chunk.events.data();
    end_ = problem.first_event + problem.events;
    return problem.first_event;
}

int64_t TraceReplay::lookahead_draft(int64_t k, int32_t step) {
    // The draft of that step the trace will ask for.
    for (int64_t j = k + 1; j < end_; ++j) {
        const TraceEvent& e = events_[j];
        if (e.kind == EventKind::draft && e.step == step) return e.tokens;
    }
    return 0;
}

int64_t TraceReplay::lookahead_refine(int64_t k, int32_t step) {
    // The refinement of that step the trace will ask for from the same context, if any;
    // else the step's draft length as a proxy.
    for (int64_t j = k + 1; j < end_; ++j) {
        const TraceEvent& e = events_[j];
        if (e.kind == EventKind::refine && e.step == step) return e.tokens;
        if (e.kind == EventKind::backtrack && e.step < step) break;  // the context of `step` changes
    }
    return lookahead_draft(k, step);
}

}  // namespace cosim
