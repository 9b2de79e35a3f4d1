#pragma once
// The host side of the reasoning workflow (docs/system.md) for one request slot:
// one SystemC thread that serves the requests the dispatcher hands it, each in
// the order the algorithm settles its steps, and drives the draft device, the
// PRM and the target the slot is bound to through their device servers and the
// PCIe fabric. Slots may share devices (a cluster serving requests at once). Speculative
// work (step-ahead drafts, step-ahead refinement) is launched early and later adopted or
// aborted, so device work overlaps exactly as far as the toggles allow.
// It is built of parts with one job each:
//   HostOrchestrator  drives the steps: phase 1, each draft, refine and backtrack event,
//                     the PRM's verification and the verdicts, the problem's end
//   StepAhead         drafts ahead of the verdicts, up to the step-ahead depth (step_ahead.hpp)
//   LookaheadSteps    Lookahead Reasoning's steps: the target's runs on the drafts and the
//                     judge's comparisons (lookahead_steps.hpp), in place of the PRM's verdicts
//   TargetRuns        the target's runs, their reuse and their sync into the draft (target_runs.hpp)
//   SlotDevices       the slot's commands, jobs and logged activities on its devices (slot_devices.hpp)
//   ProblemAccounting what each problem cost (problem_accounting.hpp)
//   EventSource       the events and verdicts: trace replay, or a live policy's decisions
//                     (event_source.hpp)
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "decision_broker.hpp"
#include "device_server.hpp"
#include "event_source.hpp"
#include "lookahead_steps.hpp"
#include "pcie_fabric.hpp"
#include "request_dispatcher.hpp"
#include "slot_devices.hpp"
#include "slot_state.hpp"
#include "step_ahead.hpp"
#include "sync_stream.hpp"
#include "target_runs.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

class HostOrchestrator : public sc_core::sc_module {
public:
    HostOrchestrator(sc_core::sc_module_name name, const WorkflowOptions& options, const WorkflowDevices& devices,
                     ActivityLog& log, RequestDispatcher& dispatcher, int slot);

    // Told the problem and trace step each event concerns (waveforms).
    void set_step_observer(std::function<void(int32_t problem, int32_t step)> observer) {
        on_step_ = std::move(observer);
    }
    // Waveforms without token detail: shadow-sync passes shown as one summary state.
    void set_sync_summary_observer(SyncStream::OnSummary observer) {
        runs_.set_sync_summary_observer(std::move(observer));
    }
    std::exception_ptr error() const { return error_; }
    // Live co-simulation: the events come from `broker`'s answers, not from the trace;
    // `max_backtracks` is the algorithm's cap on them.
    void set_decisions(DecisionBroker* broker, int32_t max_backtracks, bool scored_refinements);

private:
    void run();
    void run_problem(const Request& request);
    void phase1();
    void prompt_prefills();
    void handle(int64_t k, const TraceEvent& e, int32_t index);
    void on_draft(int64_t k, const TraceEvent& e);
    void on_refine(int64_t k, const TraceEvent& e);
    void on_backtrack(int64_t k, const TraceEvent& e);
    void settled(int64_t k, int32_t step, int64_t cause);
    void finish_problem();
    // The length of a target run started ahead of the trace for `step`, within the window.
    int64_t speculative_length(int64_t k, int32_t step);
    // The PRM scores `tokens` after `context` once they arrive (`ready_units`).
    TicketPtr verify(int64_t context, int64_t tokens, uint64_t ready_units, std::vector<int64_t> deps, int32_t step);
    // The verdict of a scoring job, back at the host.
    Delivery verdict(const TicketPtr& scored, int32_t step);
    // The host's pointer update to the draft device's KVMU.
    Delivery command_to_draft(int64_t cause, int32_t step);
    // The verdict on event k, from the event source.
    bool keep(int64_t k, const TraceEvent& e) { return source_->keep(k, e); }
    // What a live question says of the host's state.
    void fill(Decision& d, DecisionKind kind, int32_t step) const;

    WorkflowOptions options_;
    SlotDevices dev_;  // its sockets are this module's children
    const WorkflowDevices& d_;
    ActivityLog& log_;
    SlotState state_;
    TargetRuns runs_;
    StepAhead ahead_;
    std::unique_ptr<LookaheadSteps> lookahead_;  // Lookahead Reasoning's steps, where the system is it
    RequestDispatcher& dispatcher_;
    const int slot_;
    std::unique_ptr<EventSource> source_;  // trace replay, or live decisions
    std::exception_ptr error_;
    std::function<void(int32_t, int32_t)> on_step_;
};

}  // namespace cosim
