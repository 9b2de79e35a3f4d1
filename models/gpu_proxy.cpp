#include "gpu_proxy.hpp"

#include <algorithm>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr double kFlopsPerMac = 2.0;
constexpr double kFlopsPerNsPerTflops = 1e3;  // 1 TFLOP/s = 1e12 FLOP/s = 1e3 FLOP/ns
constexpr double kNsPerSecond = 1e9;

HbmParams memory_params(const GpuParams& p) {
    return HbmParams{p.memory_bytes, 1, p.memory_bandwidth_gbps, p.memory_efficiency};
}

const GpuParams& checked(const GpuParams& params, const ModelSpec& model, const std::string& where) {
    model.validate();
    params.validate(where);
    model.kv_reserve(where, params.kv_reserve_tokens);
    return params;
}
}  // namespace

void GpuParams::validate(const std::string& where) const {
    require_positive(where + ".memory_bytes", memory_bytes);
    require_positive(where + ".memory_bandwidth_gbps", memory_bandwidth_gbps);
    require_fraction(where + ".memory_efficiency", memory_efficiency);
    require_positive(where + ".peak_tflops", peak_tflops);
    require_fraction(where + ".compute_efficiency", compute_efficiency);
    require_non_negative(where + ".request_overhead_ns", request_overhead_ns);
    require_non_negative(where + ".forward_overhead_ns", forward_overhead_ns);
    require_non_negative(where + ".layer_overhead_ns", layer_overhead_ns);
    require_positive(where + ".weight_bytes_per_param", weight_bytes_per_param);
    require_positive(where + ".kv_bytes_per_element", kv_bytes_per_element);
    require_non_negative(where + ".kv_reserve_tokens", static_cast<double>(kv_reserve_tokens));
}

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   const PowerParams& power, LatencyProfile profile)
    : sc_core::sc_module(name),
      params_(checked(params, model, this->name())),
      model_(model),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      own_power_(std::make_unique<Power>(this->name(), power)),
      power_(own_power_.get()),
      profile_(std::move(profile)) {
    init();
}

GpuProxy::GpuProxy(sc_core::sc_module_name name, const GpuParams& params, const ModelSpec& model,
                   Power& shared_power, LatencyProfile profile)
    : sc_core::sc_module(name),
      params_(checked(params, model, this->name())),
      model_(model),
      memory_(std::string(this->name()) + ".memory", memory_params(params)),
      power_(&shared_power),
      profile_(std::move(profile)) {
    init();
}

void GpuProxy::init() {
    memory_.allocate("weights", model_.params * params_.weight_bytes_per_param);
    const auto reserve = static_cast<double>(model_.kv_reserve(name(), params_.kv_reserve_tokens));
    memory_.allocate("kv_cache", reserve * kv_bytes_per_token());
    decode0_ns_ = overhead_ns() + memory_.stream_ns(streamed_weight_bytes());
    decode_per_ctx_ns_ = memory_.stream_ns(kv_bytes_per_token());
}

double GpuProxy::streamed_weight_bytes() const {
    return model_.linear_macs_per_token() * params_.weight_bytes_per_param;
}

double GpuProxy::kv_bytes_per_token() const { return model_.kv_elements_per_token() * params_.kv_bytes_per_element; }

double GpuProxy::overhead_ns() const {
    return params_.forward_overhead_ns + static_cast<double>(model_.layers) * params_.layer_overhead_ns;
}

double GpuProxy::decode_token_ns(int64_t context) const {
    if (profile_.covers(Phase::decode)) return profile_.seconds(Phase::decode, 1, context) * kNsPerSecond;
    return decode0_ns_ + decode_per_ctx_ns_ * static_cast<double>(context);
}

double GpuProxy::prefill_compute_ns(int64_t tokens, int64_t context) const {
    const double n = static_cast<double>(tokens);
    const double span = n * static_cast<double>(context) + n * (n - 1.0) / 2.0;
    const double macs = n * model_.linear_macs_per_token() + model_.attention_macs_per_token(1.0) * span;
    return kFlopsPerMac * macs / (params_.peak_tflops * params_.compute_efficiency * kFlopsPerNsPerTflops);
}

double GpuProxy::prefill_memory_ns(int64_t tokens, int64_t context) const {
    const double kv = static_cast<double>(context + tokens) * kv_bytes_per_token();
    return memory_.stream_ns(streamed_weight_bytes() + kv);
}

double GpuProxy::prefill_ns(int64_t tokens, int64_t context) const {
    if (profile_.covers(Phase::prefill)) return profile_.seconds(Phase::prefill, tokens, context) * kNsPerSecond;
    return overhead_ns() + std::max(prefill_compute_ns(tokens, context), prefill_memory_ns(tokens, context));
}

bool GpuProxy::prefill(int64_t tokens, int64_t context, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a prefill needs at least one token");
    if (context + tokens > model_.context_window)
        throw SimulationError(std::string(name()) + ": prefill to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model_.name + " (" +
                              std::to_string(model_.context_window) + ")");
    power_->set_state(PowerState::prefill);
    const bool done = wait_unless_aborted(prefill_ns(tokens, context), abort);
    power_->set_state(PowerState::idle);
    if (done) tokens_prefilled_ += tokens;
    return done;
}

int64_t GpuProxy::decode(int64_t tokens, int64_t context, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a decode needs at least one token");
    if (context + tokens > model_.context_window)
        throw SimulationError(std::string(name()) + ": decoding to " + std::to_string(context + tokens) +
                              " tokens exceeds the context window of " + model_.name + " (" +
                              std::to_string(model_.context_window) + ")");
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
