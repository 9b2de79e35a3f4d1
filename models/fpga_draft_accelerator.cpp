#include "sim_time.hpp"
#include "fpga_draft_accelerator.hpp"

#include <algorithm>
#include <vector>

#include "errors.hpp"

namespace cosim {

namespace {
const char* const kWeightsRegion = "weights";
const char* const kKvRegion = "kv_cache";

// Validates before the members that depend on these values are built.
const FpgaAcceleratorParams& checked(const FpgaAcceleratorParams& params, const ModelSpec& model,
                                     const std::string& where) {
    model.validate();
    params.validate(where);
    model.kv_reserve(where, params.kv_reserve_tokens);
    return params;
}
}  // namespace

void FpgaAcceleratorParams::validate(const std::string& where) const {
    require_positive(where + ".clock_mhz", clock_mhz);
    require_positive(where + ".macs_per_cycle", macs_per_cycle);
    require_non_negative(where + ".pipeline_cycles", pipeline_cycles);
    require_positive(where + ".weight_bytes_per_param", weight_bytes_per_param);
    require_positive(where + ".kv_bytes_per_element", kv_bytes_per_element);
    require_non_negative(where + ".kv_reserve_tokens", static_cast<double>(kv_reserve_tokens));
}

FpgaDraftAccelerator::FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params,
                                           const HbmParams& hbm, const ModelSpec& model, const PowerParams& power)
    : sc_core::sc_module(name),
      params_(checked(params, model, this->name())),
      model_(model),
      hbm_(std::string(this->name()) + ".hbm", hbm),
      kvmu_(this->name(), model.kv_reserve(this->name(), params.kv_reserve_tokens)),
      power_(this->name(), power) {
    const double ns_per_cycle = params_.ns_per_cycle();
    compute0_ns_ = model_.linear_macs_per_token() / params_.macs_per_cycle * ns_per_cycle;
    compute_per_ctx_ns_ = model_.attention_macs_per_token(1.0) / params_.macs_per_cycle * ns_per_cycle;
    memory0_ns_ = hbm_.stream_ns(streamed_weight_bytes());
    memory_per_ctx_ns_ = hbm_.stream_ns(kv_bytes_per_token());
    pipeline_ns_ = params_.pipeline_cycles * ns_per_cycle;
    hbm_.allocate(kWeightsRegion, stored_weight_bytes());
    const auto reserve = static_cast<double>(model_.kv_reserve(this->name(), params_.kv_reserve_tokens));
    hbm_.allocate(kKvRegion, reserve * kv_bytes_per_token());
}

double FpgaDraftAccelerator::streamed_weight_bytes() const {
    return model_.linear_macs_per_token() * params_.weight_bytes_per_param;
}

double FpgaDraftAccelerator::stored_weight_bytes() const { return model_.params * params_.weight_bytes_per_param; }

double FpgaDraftAccelerator::kv_bytes_per_token() const {
    return model_.kv_elements_per_token() * params_.kv_bytes_per_element;
}

double FpgaDraftAccelerator::kv_used_bytes() const { return context() * kv_bytes_per_token(); }

double FpgaDraftAccelerator::compute_ns(double context) const {
    return compute0_ns_ + compute_per_ctx_ns_ * context;
}

double FpgaDraftAccelerator::memory_ns(double context) const { return memory0_ns_ + memory_per_ctx_ns_ * context; }

double FpgaDraftAccelerator::token_ns(double context) const {
    return std::max(compute_ns(context), memory_ns(context)) + pipeline_ns_;
}

void FpgaDraftAccelerator::notify_token() {
    if (token_events_) token_done.notify(sc_core::SC_ZERO_TIME);
}

double FpgaDraftAccelerator::prefill_ns(int64_t tokens, double context) const {
    const double n = static_cast<double>(tokens);
    // Sum over j = 0..n-1 of the attention span (context + j).
    const double span = n * context + n * (n - 1.0) / 2.0;
    const double macs = n * model_.linear_macs_per_token() + model_.attention_macs_per_token(1.0) * span;
    const double compute = macs / params_.macs_per_cycle * params_.ns_per_cycle();
    const double memory = hbm_.stream_ns(streamed_weight_bytes() + (context + n) * kv_bytes_per_token());
    return std::max(compute, memory) + params_.pipeline_cycles * params_.ns_per_cycle();
}

void FpgaDraftAccelerator::busy(PowerState state, double ns) {
    power_.set_state(state);
    sc_core::wait(duration_ns(ns));
    power_.set_state(PowerState::idle);
}

void FpgaDraftAccelerator::load_context(int64_t tokens) {
    kvmu_.clear();
    kvmu_.initialize(tokens);
}

int64_t FpgaDraftAccelerator::decode_step(int64_t tokens, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a step needs at least one token");
    if (kvmu_.mux() == MuxSource::pcie) kvmu_.begin_speculation();
    power_.set_state(PowerState::decode);
    int64_t written = 0;
    if (token_events_ || kvmu_.observed_per_token()) {
        // Someone watches every token (an event listener, a waveform): one wait per token.
        while (written < tokens) {
            if (!wait_unless_aborted(token_ns(context()), abort)) break;
            kvmu_.speculate_token();
            ++written;
            ++tokens_drafted_;
            notify_token();
        }
    } else {
        // One wait for the whole step; an abort keeps the tokens whose end had passed.
        std::vector<double> durations(static_cast<size_t>(tokens));
        const double start = context();
        for (int64_t i = 0; i < tokens; ++i) durations[static_cast<size_t>(i)] = token_ns(start + static_cast<double>(i));
        in_flight_.begin(token_ends(durations, 0));
        written = wait_tokens(durations, 0, abort).completed;
        kvmu_.speculate_tokens(in_flight_.take_due(written));
        in_flight_.end();
        tokens_drafted_ += written;
    }
    if (written == tokens) kvmu_.end_step();
    power_.set_state(PowerState::idle);
    return written;
}

void FpgaDraftAccelerator::sync_token() {
    busy(PowerState::decode, token_ns(context()));
    record_syncs(1);
}

void FpgaDraftAccelerator::record_syncs(int64_t passes) {
    kvmu_.sync_tokens(passes);
    tokens_synced_ += passes;
    notify_token();
}

void FpgaDraftAccelerator::prefill_local(int64_t tokens) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a local prefill needs at least one token");
    busy(PowerState::prefill, prefill_ns(tokens, context()));
    kvmu_.sync_tokens(tokens);
    tokens_prefilled_ += tokens;
    notify_token();
}

}  // namespace cosim
