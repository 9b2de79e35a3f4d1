#pragma once
// Lookahead Reasoning (Fu et al., arXiv 2506.19830; docs/system.md, "Lookahead Reasoning")
// for one request slot. The draft device drafts steps back to back, up to the step-ahead
// depth beyond the step under verification; the target writes its own version of each
// step, every run from the context the drafts before it make, so several runs of one
// request share the target GPU's iterations (its batcher); a judge model on the PRM's GPU
// compares each drafted step with the target's version of it in one prefill (a prompt
// holding both, one answer token). Equivalent: the drafted step is kept and the run built
// on it is already under way. Not: the target's own step is kept (it is written already),
// every draft and run after it is dropped, and the draft device prefills the target's step.
// The runs go on lanes of their own (one server each) so that they overlap.
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "device_server.hpp"
#include "event_source.hpp"
#include "slot_devices.hpp"
#include "slot_state.hpp"
#include "step_ahead.hpp"
#include "target_runs.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

class LookaheadSteps {
public:
    // `refined` has the draft device's KVMU accept a target step once it is written.
    LookaheadSteps(const WorkflowOptions& options, SlotDevices& dev, SlotState& state, StepAhead& ahead,
                   TargetRuns& refined, int slot)
        : options_(options), dev_(dev), state_(state), ahead_(ahead), refined_(refined), slot_(slot) {}

    // A new problem, after phase 1: the target prefills the prompt and writes step 1.
    void begin(EventSource& source, int64_t before_first);
    // The drafted step of event `k`: compared with the target's version of it.
    void on_draft(EventSource& source, int64_t k, const TraceEvent& e);
    // The target's version of a step the judge found different: it is kept.
    void on_refine(EventSource& source, int64_t k, const TraceEvent& e);
    // The answer is settled: every run still going is dropped.
    void stop();
    // Blocks until the lanes hold nothing of this slot.
    void drain();

private:
    struct Run {
        TicketPtr ticket;
        int32_t step = 0;
        int64_t context = 0;  // tokens before the step: the prompt and the steps it builds on
        std::shared_ptr<TargetRuns::RunState> live;
    };
    // The target writes `step` after the chain's context and, where `base` is a drafted step
    // not yet settled (its ticket), after that draft's `base_tokens` once they arrive.
    void start(EventSource& source, int64_t k, int32_t step, int64_t context, const TicketPtr& base,
               int64_t base_tokens, int64_t fill);
    // The run's tokens up to its limit in the target's iterations, from `context` on (an abort
    // stops it), logged after `after`; the job's ticket answers them.
    void decode(TargetRuns::RunState& live, int64_t context, int32_t step, Ticket& t, std::vector<int64_t> after);
    // A run for the step after each drafted step that has none yet.
    void start_after_drafts(EventSource& source, int64_t k);
    Run* run_of(int32_t step);
    // Tells the runs of the steps after `step` to stop.
    void halt_after(int32_t step);
    // Drops the runs of the steps after `step` (all, from 0), their work wasted.
    void drop_after(int32_t step);
    // The run of `step` leaves the list (its work is accounted for).
    void forget(int32_t step);
    DeviceServer* lane(int32_t step) const;

    const WorkflowOptions& options_;
    SlotDevices& dev_;
    SlotState& state_;
    StepAhead& ahead_;
    TargetRuns& refined_;
    const int slot_;
    std::deque<Run> runs_;  // in step order
};

}  // namespace cosim
