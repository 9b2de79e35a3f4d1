#pragma once
// The step-level speculative systems (gpu-baseline, gpu-stepahead, heteroreason,
// fpga-baseline: docs/system.md) as one SystemC module, a serving cluster: pools of
// draft devices (FPGA boards or GPUs, each holding the KV of several requests'
// contexts), PRM GPUs and target GPUs, each device
// with its own PCIe link to the host, and one request slot per draft context.
// Slot s is bound to draft device s mod D (context s / D), PRM GPU s mod P and
// target GPU s mod T, so that the dispatcher's lowest-idle-slot rule spreads
// requests over the devices. A device used by several slots runs one job at a
// time (its server), FIFO across requests; with batching, each slot has its own
// server per GPU (a request's GPU work in order, like a stream) and the GPU's
// batcher runs every slot's work together in iterations. The single-request
// systems are the cluster of one of each, without batching.
// The module owns every device, link, server, batcher and host slot and binds their
// sockets in its constructor, as the Accellera TLM-2.0 examples' tops do:
//   host slot --draft unit--> draft device's PCIe link (the fabric) --> FPGA context or draft GPU
//   host slot --prm_port / target_port--> that GPU's PCIe link --> GpuProxy (--> its batcher)
// A C++ user elaborates it from a SystemSpec, supplies the dispatcher with problems, runs
// the kernel and reads each problem's metrics and each device's totals.
#include <array>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "device_server.hpp"
#include "draft_unit.hpp"
#include "fpga_draft_accelerator.hpp"
#include "gpu_batcher.hpp"
#include "gpu_proxy.hpp"
#include "spec_decode.hpp"
#include "host_orchestrator.hpp"
#include "pcie_fabric.hpp"
#include "request_dispatcher.hpp"
#include "serving_settings.hpp"

namespace cosim {

// Everything a step-level system is built from: the system's devices, models and links, and its shape.
struct SystemSpec {
    WorkflowOptions options;
    bool draft_on_fpga = true;
    ModelSpec draft_model, prm_model, target_model;
    GpuParams prm_gpu, target_gpu, draft_gpu, draft_on_target_gpu;
    LatencyProfile prm_profile, target_profile, draft_gpu_profile;  // measured, where given
    ParallelLayout prm_layout, target_layout, draft_layout;         // the GPUs each model spans
    // The target decoding its refinements speculatively (spec_decode.hpp), where set, and its
    // proposer's model on its GPU (null: a host lookup).
    std::shared_ptr<const SpecDecodeSetup> target_speculation;
    std::shared_ptr<const GpuTiming> target_drafter;
    // The same for a draft GPU decoding its drafted steps speculatively.
    std::shared_ptr<const SpecDecodeSetup> draft_speculation;
    std::shared_ptr<const GpuTiming> draft_drafter;
    PowerParams draft_power, prm_power, target_power;
    std::array<PcieLinkParams, 3> links;  // of a draft device, a PRM GPU, a target GPU
    PcieLinkParams host_link;             // the switch's link to the host that boards share
    FpgaAcceleratorParams fpga;
    FpgaProfile fpga_profile;
    HbmParams hbm;
    ClusterShape shape;
    bool batching = false;
    BatchingParams batch;
};

class StepwiseTop : public sc_core::sc_module {
public:
    StepwiseTop(sc_core::sc_module_name name, const SystemSpec& spec);

    RequestDispatcher& dispatcher() { return *dispatcher_; }
    int slots() const { return static_cast<int>(slots_.size()); }
    HostOrchestrator& slot(int s) { return *slots_[static_cast<size_t>(s)]; }
    DraftUnit& draft_unit(int s) { return *draft_units_[static_cast<size_t>(s)]; }
    ActivityLog& log(int s) { return *logs_[static_cast<size_t>(s)]; }
    PcieFabric& fabric() { return *fabric_; }
    // One physical device of a pool.
    struct Device {
        const char* role;  // "draft", "prm", "target"
        int index;
        Power* power;
        DeviceServer* server;       // its jobs, when not batched
        GpuBatcher* batcher;        // its iterations, when batched
        const PcieLink* link;       // its PCIe link in the fabric
    };
    const std::vector<Device>& devices() const { return devices_; }
    // Device `index` of pool `role` ("draft", "prm" or "target").
    const Device& device(const std::string& role, int index) const;
    // The draft device, PRM GPU and target GPU request slot `s` is bound to (their pools' indexes).
    std::array<int, 3> bound(int s) const { return bound_[static_cast<size_t>(s)]; }
    // The first error a device server, a slot or the dispatcher stopped the simulation with.
    std::exception_ptr error() const;

private:
    std::unique_ptr<RequestDispatcher> dispatcher_;
    std::unique_ptr<PcieFabric> fabric_;
    std::vector<std::unique_ptr<Power>> board_power_;
    std::vector<std::unique_ptr<FpgaDraftAccelerator>> contexts_;
    std::vector<std::unique_ptr<GpuProxy>> gpus_;  // draft GPUs, PRM GPUs, target GPUs, draft-on-target helpers
    std::vector<GpuProxy*> draft_gpu_, prm_gpu_, target_gpu_, helper_gpu_;
    std::vector<std::unique_ptr<DeviceServer>> servers_;
    std::vector<DeviceServer*> draft_server_, prm_server_, target_server_;
    std::vector<std::unique_ptr<GpuBatcher>> batchers_;
    std::vector<std::unique_ptr<DraftUnit>> draft_units_;
    std::vector<std::unique_ptr<ActivityLog>> logs_;
    std::vector<std::unique_ptr<FabricPort>> ports_;
    std::vector<std::unique_ptr<HostOrchestrator>> slots_;
    std::vector<Device> devices_;
    std::vector<std::array<int, 3>> bound_;
};

}  // namespace cosim
