#pragma once
// The host side of the reasoning workflow (docs/system.md) for one request slot:
// one SystemC thread that serves the requests the dispatcher hands it, each in
// the order the algorithm settles its steps, and drives the draft device, the
// PRM and the target the slot is bound to through their device servers and the
// PCIe fabric. Slots may share devices (a cluster serving requests at once). Speculative work (step-ahead
// drafts, step-ahead refinement) is launched early and later adopted or
// aborted, so device work overlaps exactly as far as the toggles allow.
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "activity_log.hpp"
#include "decision_broker.hpp"
#include "decode_run.hpp"
#include "device_server.hpp"
#include "draft_unit.hpp"
#include "event_source.hpp"
#include "gpu_proxy.hpp"
#include "pcie_fabric.hpp"
#include "problem_accounting.hpp"
#include "request_dispatcher.hpp"
#include "sync_stream.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

struct WorkflowDevices {
    DraftUnit* draft = nullptr;
    GpuProxy* prm = nullptr;
    GpuProxy* target = nullptr;
    GpuProxy* draft_on_target = nullptr;  // the draft model on the target GPU (FPGA systems' phase 1)
    DeviceServer* draft_server = nullptr;
    DeviceServer* prm_server = nullptr;
    DeviceServer* target_server = nullptr;
    FabricPort* fabric = nullptr;
    // The PCIe links the host's commands to the PRM and the target GPU (and the draft model
    // on it) cross, and the GPUs' routes on them (PcieLink::attach); null: bound directly.
    PcieLink* prm_link = nullptr;
    PcieLink* target_link = nullptr;
    uint64_t prm_route = 0, target_route = 0, helper_route = 0;
    std::array<int32_t, 3> index{0, 0, 0};  // which draft device, PRM GPU and target GPU of their pools
    // Other slots use these devices too: a request's energy is then its activities'
    // (the devices' meters count everyone's work).
    bool shared = false;
};

class HostOrchestrator : public sc_core::sc_module {
public:
    // The host's initiators towards the GPUs' `host` sockets: the PRM, the target, and the
    // draft model on the target GPU (FPGA systems' phase 1). The draft device is reached
    // through its DraftUnit's port.
    tlm_utils::simple_initiator_socket_optional<HostOrchestrator> prm_port;
    tlm_utils::simple_initiator_socket_optional<HostOrchestrator> target_port;
    tlm_utils::simple_initiator_socket_optional<HostOrchestrator> helper_port;

    HostOrchestrator(sc_core::sc_module_name name, const WorkflowOptions& options, const WorkflowDevices& devices,
                     ActivityLog& log, RequestDispatcher& dispatcher, int slot);

    // Told the problem and trace step each event concerns (waveforms).
    void set_step_observer(std::function<void(int32_t problem, int32_t step)> observer) {
        on_step_ = std::move(observer);
    }
    // Waveforms without token detail: shadow-sync passes shown as one summary state.
    void set_sync_summary_observer(SyncStream::OnSummary observer) { on_sync_summary_ = std::move(observer); }
    std::exception_ptr error() const { return error_; }
    // Live co-simulation: the events come from `broker`'s answers, not from the trace;
    // `max_backtracks` is the algorithm's cap on them.
    void set_decisions(DecisionBroker* broker, int32_t max_backtracks, bool scored_refinements);

private:
    // Commands to a GPU of this slot through its port; `gpu` names which.
    tlm_utils::simple_initiator_socket_optional<HostOrchestrator>& port_to(const GpuProxy& gpu);
    uint64_t route_to(const GpuProxy& gpu) const;
    bool gpu_prefill(GpuProxy& gpu, int64_t tokens, int64_t context, AbortSignal* abort = nullptr,
                     bool score = false);
    int64_t gpu_batch_decode(GpuProxy& gpu, int64_t context, std::function<bool()> next, AbortSignal* abort,
                             double& energy_j, double& work_ns);

    // What the host and the target's decode job share while a run goes on.
    struct RunState : DecodeRun {
        std::vector<int64_t> acts; // its decode activities
    };
    // A target run: decodes step `step` from the context identified by `key`.
    struct Run {
        TicketPtr ticket;
        int32_t step = 0;
        std::vector<int64_t> key;
        int64_t context = 0;
        int64_t reused = 0;
        std::shared_ptr<RunState> live;
        std::vector<int64_t> reused_from;  // activities of the cached run whose tokens it prefilled
        double reused_share = 0.0;         // share of those activities' tokens it reused
    };
    struct Cached {
        int32_t step = 0;
        int64_t tokens = 0;
        std::vector<int64_t> activities;
    };
    // A step the draft device drafts (or drafted) ahead of its turn, not yet sent to the PRM.
    struct Spec {
        TicketPtr ticket;
        int32_t step = 0;
        int64_t tokens = 0;  // tokens it was asked for
    };
    struct ChainStep {
        int64_t tokens = 0;
        int64_t product = 0;  // trace event index that produced it
    };

    void run();
    void run_problem(const Request& request);
    // A job of this slot's request on `server` (cancelled and drained with the request's own).
    TicketPtr submit(DeviceServer* server, DeviceServer::Job job, uint64_t ready_units = 0) {
        return server->submit(std::move(job), slot_, ready_units);
    }
    void phase1();
    void prompt_prefills();
    void on_draft(int64_t k, const TraceEvent& e);
    void on_refine(int64_t k, const TraceEvent& e);
    void on_backtrack(int64_t k, const TraceEvent& e);
    void settled(int64_t k, int32_t step, int64_t cause);
    void finish_problem();

    // Device jobs are ready at `ready_units` (kernel time), when their input has arrived.
    TicketPtr submit_draft(int32_t step, int64_t tokens, std::vector<int64_t> deps, uint64_t ready_units = 0);
    Run start_run(int32_t step, int64_t limit, std::vector<int64_t> deps);
    TicketPtr decode_job(const Run& run, std::vector<int64_t> deps, uint64_t ready_units, bool new_request);
    // The run's tokens on a GPU of its own (one wait for all, unless cut short), or in its
    // batcher's running batch; both return the tokens decoded.
    // The target's run, one command on its socket (GpuProxy::decode_run).
    int64_t decode_alone(GpuProxy& target, RunState& live, int64_t context, Ticket& t);
    int64_t decode_batched(GpuProxy& target, RunState& live, int64_t context, Ticket& t, double& energy_j,
                           double& work_ns);
    // The serving stack's per-request wait on `role`'s device, logged; returns
    // its activity (or `after` when there is none) and false if aborted.
    bool request(Role role, double overhead_ns, double idle_w, int32_t step, std::vector<int64_t>& after,
                 AbortSignal* abort = nullptr);
    void stream_to_draft(Run& run, int64_t tokens, int64_t product_event);
    void accept_if_written();
    // Shadow-sync streams not finished yet: a backtrack or the answer cuts them.
    void cut_streams();
    TicketPtr verify(int64_t context, int64_t tokens, uint64_t ready_units, std::vector<int64_t> deps, int32_t step);
    Delivery verdict(const TicketPtr& scored, int32_t step);
    Delivery command_to_draft(int64_t cause, int32_t step);
    void stop_run();
    // Drops every step drafted ahead (a reject, a backtrack or the answer's end).
    void abort_spec();
    // Once `step` (event k) is under verification after `after`, the draft device drafts
    // ahead up to the step-ahead depth.
    void draft_ahead(int64_t k, int32_t step, int64_t after);
    // The draft device idled since its last step-ahead draft ended, holding all it may draft.
    void count_stall();
    // A verdict has arrived: counts it, and whether the draft device held only finished step-ahead steps.
    void count_verdict();
    // A batched GPU's activity draws its share of the iterations it took part in, and
    // keeps the GPU busy for its share of their time.
    void batched_energy(int64_t id, const GpuProxy& gpu) {
        if (gpu.batcher() != nullptr) batched_share(id, gpu.last_energy_j(), gpu.last_work_ns());
    }
    void batched_share(int64_t id, double energy_j, double work_ns) {
        log_.set_energy(id, energy_j);
        log_.set_work(id, work_ns);
    }
    // Energy above idle of activity `id` of a device whose idle power is `idle_w`.
    double above_idle_j(int64_t id, double idle_w) const;
    void request_accept(int64_t end_position);

    int64_t lookahead_draft(int64_t k, int32_t step);
    int64_t lookahead_refine(int64_t k, int32_t step);
    // The length of a target run started ahead of the trace for `step`, within the window.
    int64_t speculative_length(int64_t k, int32_t step);
    void handle(int64_t k, const TraceEvent& e, int32_t index);

    // The verdict on event k, from the event source.
    bool keep(int64_t k, const TraceEvent& e) { return source_->keep(k, e); }
    // What a live question says of the host's state (host_decisions.cpp).
    void fill(Decision& d, DecisionKind kind, int32_t step) const;
    int64_t context_len() const;
    std::vector<int64_t> chain_key() const;
    void product(int64_t activity, int64_t event) { acct_.product(activity, event); }
    ProblemMetrics& m() { return acct_.metrics(); }
    std::vector<int64_t> chain_events() const;
    // Each device's energy so far: draft, PRM, target.
    std::array<double, 3> energies() const;

    WorkflowOptions options_;
    WorkflowDevices d_;
    ActivityLog& log_;
    RequestDispatcher& dispatcher_;
    const int slot_;
    std::unique_ptr<EventSource> source_;  // trace replay, or live decisions
    int64_t request_index_ = 0;
    double verdict_sent_ns_ = 0.0;        // when the step under verdict went to the PRM
    ProblemAccounting acct_;
    std::exception_ptr error_;
    std::function<void(int32_t, int32_t)> on_step_;
    SyncStream::OnSummary on_sync_summary_;
    std::vector<std::shared_ptr<SyncStream>> streams_;

    // Per problem.
    const TraceProblem* problem_ = nullptr;
    std::vector<ChainStep> chain_;
    std::deque<Spec> specs_;      // steps drafted ahead, in step order (at most the depth)
    double stall_counted_ns_ = 0.0;  // stall time is counted up to here
    Run run_;                     // the target's current run (ticket null when none)
    std::map<std::vector<int64_t>, Cached> prefetch_;
    int64_t prm_cached_ = 0;
    int64_t target_cached_ = 0;
    int64_t last_settle_ = kNoActivity;
    int64_t last_command_ = kNoActivity;
    uint64_t command_arrival_units_ = 0;  // when the last command reaches the draft device
    int64_t accept_pending_ = -1;  // KV position that, once written, lets the KVMU accept the refined step
};

}  // namespace cosim
