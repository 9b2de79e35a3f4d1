#pragma once
// A request slot's hands on its devices: its initiator sockets towards the PRM and the
// target GPU (and the draft model on the target GPU, FPGA systems' phase 1), jobs on the
// device servers it shares with other slots, the serving stack's per-request wait, and the
// activities they log with their energy and the event they served (ProblemAccounting).
// The host's other parts (the step driver, step-ahead drafting, the target's runs) do
// their device work through it.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "activity_log.hpp"
#include "decode_run.hpp"
#include "device_server.hpp"
#include "draft_unit.hpp"
#include "gpu_proxy.hpp"
#include "pcie_fabric.hpp"
#include "problem_accounting.hpp"

namespace cosim {

struct WorkflowDevices {
    DraftUnit* draft = nullptr;
    GpuProxy* prm = nullptr;
    GpuProxy* target = nullptr;
    GpuProxy* draft_on_target = nullptr;  // the draft model on the target GPU (FPGA systems' phase 1)
    DeviceServer* draft_server = nullptr;
    DeviceServer* prm_server = nullptr;
    DeviceServer* target_server = nullptr;
    // Lookahead Reasoning: this slot's own servers on the target GPU, one per run that may
    // go on at once (its batcher runs them together); empty for the other systems.
    std::vector<DeviceServer*> target_lanes;
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

class SlotDevices {
public:
    // The host's initiators towards the GPUs' `host` sockets (through their PCIe links);
    // the draft device is reached through its DraftUnit's port. Constructed inside the
    // host's module, whose children they are.
    tlm_utils::simple_initiator_socket_optional<SlotDevices> prm_port;
    tlm_utils::simple_initiator_socket_optional<SlotDevices> target_port;
    tlm_utils::simple_initiator_socket_optional<SlotDevices> helper_port;

    SlotDevices(const WorkflowDevices& devices, ActivityLog& log, int slot);

    const WorkflowDevices& d() const { return d_; }
    ActivityLog& log() { return log_; }
    ProblemAccounting& accounting() { return acct_; }
    const ProblemAccounting& accounting() const { return acct_; }
    ProblemMetrics& m() { return acct_.metrics(); }
    // The trace event whose tokens `activity` produced (-1: speculative work, dropped).
    void product(int64_t activity, int64_t event) { acct_.product(activity, event); }
    // Each device's energy so far: draft, PRM, target.
    std::array<double, 3> energies() const;

    // A job of this slot's request on `server` (cancelled and drained with the request's
    // own), ready at `ready_units` (kernel time), when its input has arrived.
    TicketPtr submit(DeviceServer* server, DeviceServer::Job job, uint64_t ready_units = 0) {
        return server->submit(std::move(job), slot_, ready_units);
    }
    // The serving stack's per-request wait on `role`'s device, logged; `after` becomes its
    // activity (left as it is when there is none); false if aborted.
    bool request(Role role, double overhead_ns, double idle_w, int32_t step, std::vector<int64_t>& after,
                 AbortSignal* abort = nullptr);
    // A prefill (or a PRM's scoring pass) on a GPU of this slot; false if `abort` cut it short.
    bool gpu_prefill(GpuProxy& gpu, int64_t tokens, int64_t context, AbortSignal* abort = nullptr,
                     bool score = false);
    // The target's run on a GPU of its own: one command (GpuProxy::decode_run); `request` keys
    // its speculative draws, where the target decodes speculatively.
    int64_t decode_alone(GpuProxy& target, DecodeRun& live, int64_t context, Ticket& t, int64_t request);
    // A token per iteration in a batcher's running batch while `next()` says so; `certain`
    // of them for sure unless aborted (the batcher may then run them in one wait). A GPU
    // decoding speculatively verifies drafts instead, its draws keyed by `key`.
    int64_t gpu_batch_decode(GpuProxy& gpu, int64_t context, std::function<bool()> next, AbortSignal* abort,
                             double& energy_j, double& work_ns, int64_t certain = 1, uint64_t key = 0);
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

private:
    // Commands to a GPU of this slot through its port; `gpu` names which.
    tlm_utils::simple_initiator_socket_optional<SlotDevices>& port_to(const GpuProxy& gpu);
    uint64_t route_to(const GpuProxy& gpu) const;

    WorkflowDevices d_;
    ActivityLog& log_;
    const int slot_;
    ProblemAccounting acct_;
};

}  // namespace cosim
