#pragma once
// The draft device of a system, whichever it is: the FPGA accelerator (with its
// KVMU) or a GPU serving the draft model (its prefix cache tracked by the same
// pointer rules). Its operations block the calling SystemC thread.
// It is the host's initiator towards the draft device: every FPGA operation is one command
// (DeviceCommand) through `port` to the accelerator's `host` socket; a GPU draft's prefill
// and batched decode are commands to the GPU's `host` socket.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "abort_signal.hpp"
#include "device_command.hpp"
#include "fpga_draft_accelerator.hpp"
#include "gpu_proxy.hpp"
#include "kvmu.hpp"
#include "kvmu_model.hpp"
#include "pcie_link.hpp"
#include "power.hpp"

namespace cosim {

class DraftUnit : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<DraftUnit> port;

    // Bound to the device's `host` socket through `link` (the PCIe interconnect), where the
    // device's route is `route` (PcieLink::attach); without a link, to the device directly.
    DraftUnit(sc_core::sc_module_name name, FpgaDraftAccelerator& fpga, PcieLink* link = nullptr,
              uint64_t route = 0);
    DraftUnit(sc_core::sc_module_name name, GpuProxy& gpu, PcieLink* link = nullptr, uint64_t route = 0);

    bool on_fpga() const { return fpga_ != nullptr; }
    // The KVMU's state (reads, observers); it changes through the commands below.
    Kvmu& kvmu() { return fpga_ ? fpga_->kvmu() : *gpu_kvmu_; }
    // Verdicts and set-up, as commands: the step under verification accepted or rejected,
    // a backtrack to `position`, the step-ahead depth.
    void verdict(Verdict verdict, int64_t position = 0);
    void set_depth(int32_t depth);
    Power& power();
    int64_t position() { return kvmu().pointers().ahead; }
    double token_ns(int64_t context) const;
    double prefill_ns(int64_t tokens, int64_t context) const;
    double kv_bytes_per_token() const;
    // The serving stack's cost per request of a GPU draft (0 for the FPGA, driven directly).
    double request_overhead_ns() const;

    // A fresh context of `tokens` whose KV arrived from elsewhere (migration).
    void load(int64_t tokens);
    // A fresh context of `tokens` prefilled on the device itself (a GPU draft's prompt).
    void prefill_prompt(int64_t tokens);
    // Drafts one step; an abort stops it. Returns the tokens written. A GPU draft decoding
    // speculatively (GpuProxy::set_speculation) writes a round's tokens together, at its
    // verification, its draws keyed by `key` and each round's position.
    int64_t draft(int64_t tokens, AbortSignal* abort, uint64_t key = 0);
    // Writes to the KVMU the tokens of a step in flight that are done by now (a step
    // nobody watches token by token writes them when it ends): call before a verdict.
    void settle();
    // Shadow synchronisation: `passes` forward passes over target tokens whose time the
    // caller simulated (one pass lasts token_ns(position())); their KV entries at once.
    void record_syncs(int64_t passes);
    // One shadow-sync pass on a batching GPU: a decode token at position() in the GPU's
    // iterations, beside other requests' work; its KV entry recorded. A batch of one lasts
    // token_ns(position()), as a pass alone does.
    void sync_batched();
    // Prefills target tokens locally (vanilla, or a GPU's prefix-cache refill).
    void prefill(int64_t tokens);
    // A GPU draft in a batching cluster: its operations share iterations with other
    // requests; last_energy_j() is the last one's share (read before waiting again).
    bool batched() const { return gpu_ != nullptr && gpu_->batcher() != nullptr; }
    double last_energy_j() const { return last_energy_j_; }
    // Batched: the last operation's share of the iterations' time (GpuProxy::last_work_ns).
    double last_work_ns() const { return last_work_ns_; }

private:
    void send(DeviceOp op, int64_t count, DeviceCommand& c) { send_command(port, op, count, c, route_); }
    void send(DeviceOp op, int64_t count) {
        DeviceCommand c;
        send(op, count, c);
    }
    // A GPU draft's prefill through its socket; its energy and time become the last operation's.
    void gpu_prefill(int64_t tokens, int64_t context);
    // A GPU draft's decode in its GPU's iterations; its share is added to the last operation's.
    void gpu_batch_decode(int64_t context, std::function<bool()> next, AbortSignal* abort);

    uint64_t route_ = 0;
    FpgaDraftAccelerator* fpga_ = nullptr;
    GpuProxy* gpu_ = nullptr;
    const LatencyModel* latency_ = nullptr;  // the device's latency formula, whichever kind it is
    std::unique_ptr<Kvmu> gpu_kvmu_;
    TokensInFlight gpu_in_flight_;
    double last_energy_j_ = 0.0;
    double last_work_ns_ = 0.0;
};

}  // namespace cosim
