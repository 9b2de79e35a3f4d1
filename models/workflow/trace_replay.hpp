#pragma once
// Trace replay: a problem's events as the trace recorded them, its verdicts the trace's.
#include <cstdint>

#include "event_source.hpp"

namespace cosim {

class TraceReplay final : public EventSource {
public:
    int64_t begin(const TraceChunk& chunk, const TraceProblem& problem) override;
    const TraceEvent* event(int64_t k) override { return k < end_ ? &events_[k] : nullptr; }
    bool keep(int64_t /*k*/, const TraceEvent& e) override { return e.accepted; }
    int64_t lookahead_draft(int64_t k, int32_t step) override;
    int64_t lookahead_refine(int64_t k, int32_t step) override;

private:
    const TraceEvent* events_ = nullptr;  // the chunk's events
    int64_t end_ = 0;                     // one past the problem's last
};

}  // namespace cosim
