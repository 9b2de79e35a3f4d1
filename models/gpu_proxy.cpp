#include "sim_time.hpp"
#include "gpu_proxy.hpp"

#include <algorithm>

#include "errors.hpp"

namespace cosim {

namespace {
HbmParams memory_params(const GpuParams& p) {
    return HbmParams{p.memory_bytes, 1, p.memory_bandwidth_gbps, p.memory_efficiency};
}
}  // namespace

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   const PowerParams& power, LatencyProfile profile)
    : sc_core::sc_module(name),
      timing_(this->name(), params, model, std::move(profile)),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      own_power_(std::make_unique<Power>(this->name(), power)),
      power_(own_power_.get()) {
    init();
}

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   Power& shared_power, LatencyProfile profile)
    : sc_core::sc_module(name),
      timing_(this->name(), params, model, std::move(profile)),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      power_(&shared_power) {
    init();
}

void GpuProxy::init() {
    memory_.allocate("weights", model().params * params().weight_bytes_per_param);
    const auto reserve = static_cast<double>(model().kv_reserve(name(), params().kv_reserve_tokens));
    memory_.allocate("kv_cache", reserve * kv_bytes_per_token());
}

bool GpuProxy::prefill(int64_t tokens, int64_t context, AbortSignal* abort, bool urgent) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a prefill needs at least one token");
    if (context + tokens > model().context_window)
        throw SimulationError(std::string(name()) + ": prefill to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model().name + " (" +
                              std::to_string(model().context_window) + ")");
    last_energy_j_ = 0.0;
    last_work_ns_ = 0.0;
    bool done = false;
    if (batcher_ != nullptr) {
        // Requests that share this GPU wait in the batcher at once: each keeps its own share
        // until it returns, and only then makes it the last operation's.
        double energy_j = 0.0;
        double work_ns = 0.0;
        done = batcher_->prefill(timing_, tokens, context, urgent, abort, energy_j, &work_ns);
        last_energy_j_ = energy_j;
        last_work_ns_ = work_ns;
    } else {
        const double start = now_ns();
        power_->set_state(PowerState::prefill);
        done = wait_unless_aborted(prefill_ns(tokens, context), abort);
        power_->set_state(PowerState::idle);
        last_work_ns_ = now_ns() - start;
        last_energy_j_ = last_work_ns_ * power_->params().prefill_w * kJoulesPerWattNs;
    }
    if (done) tokens_prefilled_ += tokens;
    return done;
}

int64_t GpuProxy::decode(int64_t tokens, int64_t context, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a decode needs at least one token");
    if (context + tokens > model().context_window)
        throw SimulationError(std::string(name()) + ": decoding to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model().name + " (" +
                              std::to_string(model().context_window) + ")");
    power_->set_state(PowerState::decode);
    int64_t decoded = 0;
    while (decoded < tokens) {
        if (!wait_unless_aborted(decode_token_ns(context + decoded), abort)) break;
        ++decoded;
        ++tokens_decoded_;
        if (token_events_) token_ready.notify(sc_core::SC_ZERO_TIME);
    }
    power_->set_state(PowerState::idle);
    return decoded;
}

}  // namespace cosim
