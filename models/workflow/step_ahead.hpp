#pragma once
// Step-ahead drafting for one request slot (docs/system.md): while a step is under
// verification the draft device drafts the steps after it, up to the step-ahead depth;
// the step the trace drafts next is taken from the front, and a reject, a backtrack or the
// answer's end drops the rest. It also counts the draft device's stalls (idle, holding all
// it may draft) and the verdicts that found it so.
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "device_server.hpp"
#include "event_source.hpp"
#include "slot_devices.hpp"
#include "slot_state.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

class StepAhead {
public:
    // `written` runs whenever the draft device's KV cache may have reached a position a
    // kept refinement waits for (Refinement::accept_if_written).
    StepAhead(const WorkflowOptions& options, SlotDevices& dev, SlotState& state, std::function<void()> written)
        : options_(options), dev_(dev), state_(state), written_(std::move(written)) {}

    // A new problem: nothing drafted ahead.
    void begin() {
        specs_.clear();
        stall_counted_ns_ = 0.0;
    }
    // The draft of `step` (`tokens` long) the trace asks for now: the one drafted ahead, or
    // one drafted now once the last command has arrived.
    TicketPtr next(int32_t step, int64_t tokens);
    // The draft of next() is taken: stalls counted, it leaves the queue.
    void taken();
    // Waits for `mine`, the draft of `step` next() gave, checks it wrote its `tokens`,
    // credits them to trace event `k` and takes it.
    void collect(const TicketPtr& mine, int32_t step, int64_t tokens, int64_t k);
    // Once `step` (event k) is under verification after `after`, the draft device drafts
    // ahead up to the step-ahead depth, each the length `source` gives.
    void draft_ahead(EventSource& source, int64_t k, int32_t step, int64_t after);
    // Drops every step drafted ahead (a reject, a backtrack or the answer's end).
    void abort();
    // A verdict has arrived: counts it, and whether the draft device held only finished step-ahead steps.
    void count_verdict();
    // Tokens a step-ahead draft of `step` already has (0: none drafted ahead).
    int64_t drafted(int32_t step) const {
        return !specs_.empty() && specs_.front().step == step ? specs_.front().tokens : 0;
    }

    // A step the draft device drafts (or drafted) ahead of its turn, not yet sent to the PRM.
    struct Spec {
        TicketPtr ticket;
        int32_t step = 0;
        int64_t tokens = 0;  // tokens it was asked for
    };
    // The steps drafted ahead, in step order (Lookahead Reasoning starts a target run on each).
    const std::deque<Spec>& queued() const { return specs_; }

private:
    // A draft job, ready at `ready_units`, after the activities `deps`.
    TicketPtr submit_draft(int32_t step, int64_t tokens, std::vector<int64_t> deps, uint64_t ready_units = 0);
    // The draft device idled since its last step-ahead draft ended, holding all it may draft.
    void count_stall();

    const WorkflowOptions& options_;
    SlotDevices& dev_;
    SlotState& state_;
    std::function<void()> written_;
    std::deque<Spec> specs_;         // steps drafted ahead, in step order (at most the depth)
    double stall_counted_ns_ = 0.0;  // stall time is counted up to here
};

}  // namespace cosim
