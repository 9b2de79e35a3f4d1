#pragma once
// The target's runs for one request slot: a run decodes a step from a context (a
// refinement the trace asks for, or one started ahead of its verdict), reuses the tokens
// of an earlier run from the same context (the prefetch cache), is stopped when its
// context is reverted, and streams its tokens into the draft device's KV cache as they are
// decoded (shadow sync), after which the KVMU accepts the refined step once it is written.
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "decode_run.hpp"
#include "device_server.hpp"
#include "slot_devices.hpp"
#include "slot_state.hpp"
#include "sync_stream.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

class TargetRuns {
public:
    // What the host and the target's decode job share while a run goes on.
    struct RunState : DecodeRun {
        std::vector<int64_t> acts;  // its decode activities
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

    TargetRuns(const WorkflowOptions& options, SlotDevices& dev, SlotState& state)
        : options_(options), dev_(dev), state_(state) {}

    // Waveforms without token detail: shadow-sync passes shown as one summary state.
    void set_sync_summary_observer(SyncStream::OnSummary observer) { on_sync_summary_ = std::move(observer); }

    // A new problem: no run, nothing cached, nothing to accept.
    void begin() {
        prefetch_.clear();
        run_ = Run{};
        accept_pending_ = -1;
    }
    // The run under way (ticket null when none).
    Run& run() { return run_; }
    // A run of `step` up to `limit` tokens from the chain's context, after `deps`.
    Run start(int32_t step, int64_t limit, std::vector<int64_t> deps);
    // The run's decode job on the target's server, ready at `ready_units`; `new_request`: the
    // serving stack's wait and the target's missing context come first.
    TicketPtr decode_job(const Run& run, std::vector<int64_t> deps, uint64_t ready_units, bool new_request);
    // Stops the run under way; what it decoded is kept for reuse (the prefetch cache).
    void stop();
    // Streams the run's first `tokens` into the draft device as they are decoded, each
    // sync credited to trace event `product_event`.
    void stream_to_draft(Run& run, int64_t tokens, int64_t product_event);
    // Shadow-sync streams not finished yet: a backtrack or the answer cuts them.
    void cut_streams();
    void clear_streams() { streams_.clear(); }
    // Accept once the refined step is written up to `end_position`: now if it is, else from
    // the job that writes that position.
    void request_accept(int64_t end_position);
    void drop_accept() { accept_pending_ = -1; }
    // The draft's KV cache may have reached the position a kept refinement waits for.
    void accept_if_written();

private:
    // A sequence in the GPU's running batch: a token per iteration until the limit as it
    // stands then, or an abort.
    int64_t decode_batched(GpuProxy& target, RunState& live, int64_t context, Ticket& t, double& energy_j,
                           double& work_ns);

    struct Cached {
        int32_t step = 0;
        int64_t tokens = 0;
        std::vector<int64_t> activities;
    };

    const WorkflowOptions& options_;
    SlotDevices& dev_;
    SlotState& state_;
    SyncStream::OnSummary on_sync_summary_;
    std::vector<std::shared_ptr<SyncStream>> streams_;
    Run run_;
    std::map<std::vector<int64_t>, Cached> prefetch_;
    int64_t accept_pending_ = -1;  // KV position that, once written, lets the KVMU accept the refined step
};

}  // namespace cosim
