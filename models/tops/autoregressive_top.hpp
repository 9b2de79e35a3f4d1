#pragma once
// The plain autoregressive system as one SystemC module (docs/system.md): a pool of target
// GPUs, each serving whole requests, and one host slot per request the pool may hold at
// once. It owns the dispatcher, the GPUs (their proxies), each GPU's server (batch 1) or
// vLLM engine (batching), and the host slots, and binds their sockets as the Accellera
// TLM-2.0 examples' tops do:
//   batch 1:  host slot s --gpu_port--> GPU s mod T (its server orders the slots' requests)
//   batched:  vLLM engine --gpu--> its GPU; the slots hand requests to the engine
// A C++ user elaborates it from an AutoregressiveSpec, supplies the dispatcher with
// requests, runs the kernel, and reads the finished requests and each GPU's totals.
#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include <systemc>

#include "autoregressive_host.hpp"
#include "device_server.hpp"
#include "gpu_proxy.hpp"
#include "lockstep_group.hpp"
#include "latency_profile.hpp"
#include "model_spec.hpp"
#include "power.hpp"
#include "request_dispatcher.hpp"
#include "spec_decode.hpp"
#include "vllm_engine.hpp"
#include "vllm_scheduler.hpp"

namespace cosim {

// Everything the autoregressive system is built from.
struct AutoregressiveSpec {
    GpuParams gpu;
    ModelSpec model;
    PowerParams power;
    LatencyProfile profile;  // measured, where given
    ParallelLayout layout;   // the GPUs one replica spans
    int64_t target_devices = 1;
    bool batching = false;
    // vLLM's own settings (SchedulerConfig, CacheConfig), read when batching.
    VllmSchedulerParams scheduler;
    bool async_scheduling = false;
    int64_t shared_prefix_tokens = 0;  // a system prompt every request shares
    // Token-level speculative decoding (spec_decode.hpp), where set: its drafts and their
    // acceptance, and the proposer's model timed on each GPU (null: a host lookup).
    std::shared_ptr<const SpecDecodeSetup> speculation;
    std::shared_ptr<const GpuTiming> drafter;
    // A draft device beside each target GPU drafting instead (split decoding: draft_device.hpp),
    // its power for its meters.
    std::shared_ptr<const DraftDevice> draft_device;
    PowerParams draft_power;

    // Batch 1: one request at a time per GPU, so one slot each; batched: enough slots that
    // the engine, not the slots, limits what runs (max_num_seqs per GPU).
    int64_t slots() const { return batching ? target_devices * scheduler.max_num_seqs : target_devices; }
    // Throws ConfigError naming the field.
    void validate() const;
};

class AutoregressiveTop : public sc_core::sc_module {
public:
    AutoregressiveTop(sc_core::sc_module_name name, const AutoregressiveSpec& spec);

    RequestDispatcher& dispatcher() { return dispatcher_; }
    int gpus() const { return static_cast<int>(gpus_.size()); }
    int slots() const { return static_cast<int>(hosts_.size()); }
    const GpuProxy& gpu(int i) const { return *gpus_[static_cast<size_t>(i)]; }
    // Batch 1: GPU i's server; batched: its engine (the other is null).
    const DeviceServer* server(int i) const {
        return servers_.empty() ? nullptr : servers_[static_cast<size_t>(i)].get();
    }
    // Split decoding: GPU i's draft device's power meter (null otherwise).
    const Power* draft_power(int i) const {
        return draft_power_.empty() ? nullptr : draft_power_[static_cast<size_t>(i)].get();
    }
    const VllmEngine* engine(int i) const {
        return engines_.empty() ? nullptr : engines_[static_cast<size_t>(i)].get();
    }
    // Live: each host slot asks `broker` (AutoregressiveHost::set_decisions).
    void set_decisions(DecisionBroker* broker, bool ask_drafts);
    // The requests finished since the last call, handed over and forgotten here.
    std::vector<ServedRequest> take_finished();
    size_t pending() const { return finished_.size(); }  // finished and not yet taken
    // The first error a server, an engine, a host slot or the dispatcher stopped the simulation with.
    std::exception_ptr error() const;

private:
    RequestDispatcher dispatcher_;
    std::vector<std::unique_ptr<GpuProxy>> gpus_;
    std::vector<std::unique_ptr<DeviceServer>> servers_;
    std::vector<std::unique_ptr<VllmEngine>> engines_;
    std::vector<std::unique_ptr<LockstepGroup>> groups_;  // engines sharing their experts
    std::vector<std::unique_ptr<Power>> draft_power_;     // split decoding: each GPU's draft device
    std::vector<std::unique_ptr<EngineBalancer>> balancers_;  // one a group
    std::vector<ServedRequest> finished_;
    std::vector<std::unique_ptr<AutoregressiveHost>> hosts_;
};

}  // namespace cosim
