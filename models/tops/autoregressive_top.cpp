#include "autoregressive_top.hpp"

#include <string>

#include "errors.hpp"
#include "param_rules.hpp"

namespace cosim {

namespace {

int checked_slots(const AutoregressiveSpec& spec) {
    spec.validate();
    return static_cast<int>(spec.slots());
}

std::string gpu_name(int index, int count) {
    return count == 1 ? std::string("target") : "target" + std::to_string(index);
}

}  // namespace

void AutoregressiveSpec::validate() const {
    if (shared_prefix_tokens < 0) throw ConfigError("shared_prefix_tokens: must be >= 0");
    if (speculation != nullptr) speculation->validate("speculation");
    if (draft_device != nullptr) {
        if (speculation == nullptr) throw ConfigError("draft: a draft device drafts for speculative decoding alone");
        draft_device->validate("draft");
    }
    if (target_devices < 1) throw ConfigError("cluster.target_devices: must be >= 1");
    // Every slot and every GPU is a simulated thread.
    if (slots() + target_devices > COSIM_MAX_THREADS)
        throw ConfigError("batching.max_batch: " + std::to_string(slots()) + " request slots on " +
                          std::to_string(target_devices) + " GPUs, past the engine's limit of " +
                          std::to_string(COSIM_MAX_THREADS) + " simulated threads");
}

AutoregressiveTop::AutoregressiveTop(sc_core::sc_module_name name, const AutoregressiveSpec& spec)
    : sc_core::sc_module(name), dispatcher_("dispatcher", checked_slots(spec)) {
    const int count = static_cast<int>(spec.target_devices);
    VllmSchedulerParams scheduler = spec.scheduler;
    scheduler.max_model_len = spec.model.context_window;
    scheduler.spec = spec.speculation;
    // A proposer model on the target's GPU writes its drafts' KV in the target's blocks; a
    // host lookup and a draft device keep none there.
    if (spec.speculation != nullptr && spec.drafter != nullptr && spec.draft_device == nullptr)
        scheduler.lookahead_tokens = spec.speculation->draft_tokens;
    std::vector<AutoregressiveGpu> devices;
    for (int i = 0; i < count; ++i) {
        const std::string name_i = gpu_name(i, count);
        AutoregressiveGpu d;
        d.index = i;
        d.request_overhead_ns = spec.gpu.request_overhead_ns;
        d.context_window = spec.model.context_window;
        gpus_.push_back(std::make_unique<GpuProxy>(name_i.c_str(), spec.gpu, spec.model, spec.power, spec.profile,
                                                   !spec.batching, spec.layout));
        d.gpu = gpus_.back().get();
        if (spec.speculation != nullptr && spec.draft_device != nullptr) {
            draft_power_.push_back(std::make_unique<Power>(gpu_name(i, count) + "_draft", spec.draft_power));
            d.gpu->set_speculation(
                std::make_shared<const SpecDecoder>(*spec.speculation, d.gpu->timing(), spec.draft_device),
                draft_power_.back().get());
            d.draft_power = draft_power_.back().get();
        } else if (spec.speculation != nullptr) {
            d.gpu->set_speculation(
                std::make_shared<const SpecDecoder>(*spec.speculation, d.gpu->timing(), spec.drafter));
        }
        if (spec.batching) {
            // The engine is the GPU's one initiator, a command per step, and keeps the KV
            // cache in its own blocks.
            engines_.push_back(
                std::make_unique<VllmEngine>((name_i + "_engine").c_str(), scheduler, spec.async_scheduling));
            engines_.back()->gpu.bind(d.gpu->host);
            engines_.back()->set_speculation(d.gpu->speculation());
            d.engine = engines_.back().get();
        } else {
            servers_.push_back(std::make_unique<DeviceServer>((name_i + "_server").c_str()));
            d.server = servers_.back().get();
        }
        devices.push_back(d);
    }
    // Engines whose MoE layers share their experts step together, a group of data_parallel
    // consecutive GPUs (the pool is whole groups: cosim/config/_cluster.py).
    const int dp = static_cast<int>(spec.layout.engines());
    if (spec.batching && dp > 1) {
        if (count % dp != 0)
            throw ConfigError("cluster.target.devices: " + std::to_string(count) + " GPUs are not whole groups of " +
                              std::to_string(dp) + " (parallel.data_parallel)");
        for (int g = 0; g < count / dp; ++g) {
            groups_.push_back(std::make_unique<LockstepGroup>(dp));
            std::vector<std::pair<VllmEngine*, int>> members;
            for (int m = 0; m < dp; ++m) {
                const int i = g * dp + m;
                engines_[static_cast<size_t>(i)]->lockstep(groups_.back().get(), m);
                members.emplace_back(engines_[static_cast<size_t>(i)].get(), i);
            }
            balancers_.push_back(std::make_unique<EngineBalancer>(("balancer" + std::to_string(g)).c_str(), members));
            for (int m = 0; m < dp; ++m) devices[static_cast<size_t>(g * dp + m)].balancer = balancers_.back().get();
        }
    }
    for (int s = 0; s < static_cast<int>(spec.slots()); ++s)
        hosts_.push_back(std::make_unique<AutoregressiveHost>(("host" + std::to_string(s)).c_str(), dispatcher_, s,
                                                              devices[static_cast<size_t>(s % count)],
                                                              spec.shared_prefix_tokens, finished_));
}

void AutoregressiveTop::set_decisions(DecisionBroker* broker, bool ask_drafts) {
    for (const auto& h : hosts_) h->set_decisions(broker, ask_drafts);
}

std::vector<ServedRequest> AutoregressiveTop::take_finished() {
    std::vector<ServedRequest> out;
    out.swap(finished_);
    return out;
}

std::exception_ptr AutoregressiveTop::error() const {
    for (const auto& s : servers_)
        if (s->error()) return s->error();
    for (const auto& e : engines_)
        if (e->error()) return e->error();
    for (const auto& h : hosts_)
        if (h->error()) return h->error();
    return dispatcher_.error();
}

}  // namespace cosim
