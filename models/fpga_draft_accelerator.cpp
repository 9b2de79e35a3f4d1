#include "sim_time.hpp"
#include "fpga_draft_accelerator.hpp"

#include <algorithm>
#include <vector>

#include "errors.hpp"

namespace cosim {

namespace {
const char* const kWeightsRegion = "weights";
const char* const kKvRegion = "kv_cache";
}  // namespace

FpgaDraftAccelerator::FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params,
                                           const HbmParams& hbm, const ModelSpec& model, const PowerParams& power,
                                           FpgaProfile profile)
    : sc_core::sc_module(name),
      timing_(this->name(), params, hbm, model, std::move(profile)),
      model_(model),
      hbm_(std::string(this->name()) + ".hbm", hbm),
      kvmu_(make_kvmu(params.kvmu, this->name(), model.kv_reserve(this->name(), params.kv_reserve_tokens),
                      std::string(this->name()) + ".kvmu")),
      own_power_(std::make_unique<Power>(this->name(), power)),
      power_(own_power_.get()) {
    init(params);
}

FpgaDraftAccelerator::FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params,
                                           const HbmParams& hbm, const ModelSpec& model, Power& board_power,
                                           FpgaProfile profile)
    : sc_core::sc_module(name),
      timing_(this->name(), params, hbm, model, std::move(profile)),
      model_(model),
      hbm_(std::string(this->name()) + ".hbm", hbm),
      kvmu_(make_kvmu(params.kvmu, this->name(), model.kv_reserve(this->name(), params.kv_reserve_tokens),
                      std::string(this->name()) + ".kvmu")),
      power_(&board_power) {
    init(params);
}

void FpgaDraftAccelerator::init(const FpgaAcceleratorParams& params) {
    hbm_.allocate(kWeightsRegion, timing_.stored_weight_bytes());
    const auto reserve = static_cast<double>(model_.kv_reserve(this->name(), params.kv_reserve_tokens));
    hbm_.allocate(kKvRegion, reserve * kv_bytes_per_token());
}

double FpgaDraftAccelerator::kv_used_bytes() const { return context() * kv_bytes_per_token(); }

void FpgaDraftAccelerator::notify_token() {
    if (token_events_) token_done.notify(sc_core::SC_ZERO_TIME);
}

void FpgaDraftAccelerator::busy(PowerState state, double ns) {
    power_->set_state(state);
    sc_core::wait(duration_ns(ns));
    power_->set_state(PowerState::idle);
}

void FpgaDraftAccelerator::load_context(int64_t tokens) {
    kvmu_->clear();
    kvmu_->initialize(tokens);
}

int64_t FpgaDraftAccelerator::decode_step(int64_t tokens, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a step needs at least one token");
    if (kvmu_->mux() == MuxSource::pcie) kvmu_->begin_speculation();
    power_->set_state(PowerState::decode);
    int64_t written = 0;
    if (token_events_ || kvmu_->observed_per_token()) {
        // Someone watches every token (an event listener, a waveform): one wait per token.
        while (written < tokens) {
            if (!wait_unless_aborted(token_ns(context()), abort)) break;
            kvmu_->speculate_token();
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
        kvmu_->speculate_tokens(in_flight_.take_due(written));
        in_flight_.end();
        tokens_drafted_ += written;
    }
    if (written == tokens) kvmu_->end_step();
    power_->set_state(PowerState::idle);
    return written;
}

void FpgaDraftAccelerator::sync_token() {
    busy(PowerState::decode, token_ns(context()));
    record_syncs(1);
}

void FpgaDraftAccelerator::record_syncs(int64_t passes) {
    kvmu_->sync_tokens(passes);
    tokens_synced_ += passes;
    notify_token();
}

void FpgaDraftAccelerator::prefill_local(int64_t tokens) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a local prefill needs at least one token");
    busy(PowerState::prefill, prefill_ns(tokens, context()));
    kvmu_->sync_tokens(tokens);
    tokens_prefilled_ += tokens;
    notify_token();
}

}  // namespace cosim
