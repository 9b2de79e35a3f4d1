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
      host("host"),
      hbm_port("hbm_port"),
      kvmu_port("kvmu_port"),
      timing_(this->name(), params, hbm, model, std::move(profile)),
      model_(model),
      hbm_(std::string(this->name()) + ".hbm", hbm),
      hbm_target_("hbm", hbm_),
      registers_("kvmu", make_kvmu(params.kvmu, this->name(),
                                   model.kv_reserve(this->name(), params.kv_reserve_tokens),
                                   std::string(this->name()) + ".kvmu")),
      own_power_(std::make_unique<Power>(this->name(), fpga_board_power(this->name(), power, timing_, model))),
      power_(own_power_.get()) {
    init(params);
}

FpgaDraftAccelerator::FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params,
                                           const HbmParams& hbm, const ModelSpec& model, Power& board_power,
                                           FpgaProfile profile)
    : sc_core::sc_module(name),
      host("host"),
      hbm_port("hbm_port"),
      kvmu_port("kvmu_port"),
      timing_(this->name(), params, hbm, model, std::move(profile)),
      model_(model),
      hbm_(std::string(this->name()) + ".hbm", hbm),
      hbm_target_("hbm", hbm_),
      registers_("kvmu", make_kvmu(params.kvmu, this->name(),
                                   model.kv_reserve(this->name(), params.kv_reserve_tokens),
                                   std::string(this->name()) + ".kvmu")),
      power_(&board_power) {
    init(params);
}

void FpgaDraftAccelerator::init(const FpgaAcceleratorParams& params) {
    hbm_.allocate(kWeightsRegion, timing_.stored_weight_bytes());
    const auto reserve = static_cast<double>(model_.kv_reserve(this->name(), params.kv_reserve_tokens));
    hbm_.allocate(kKvRegion, reserve * kv_bytes_per_token());
    hbm_stream_.ports = params.hbm_ports;
    hbm_stream_.port_gbps = timing_.port_clocked_gbps();
    hbm_payload_.set_command(tlm::TLM_READ_COMMAND);
    hbm_payload_.set_address(static_cast<uint64_t>(HbmRegion::weights));
    hbm_payload_.set_data_ptr(nullptr);
    hbm_payload_.set_data_length(0);  // the stream's length is HbmStream::bytes (a step may pass 4 GiB)
    hbm_payload_.set_streaming_width(0);
    hbm_payload_.set_extension(&hbm_stream_);
    host.register_b_transport(this, &FpgaDraftAccelerator::b_transport);
    hbm_port.bind(hbm_target_.socket);
    kvmu_port.bind(registers_.socket);
}

double FpgaDraftAccelerator::kv_used_bytes() const { return context() * kv_bytes_per_token(); }

void FpgaDraftAccelerator::kvmu_write(KvmuRegister reg, int64_t value) {
    kvmu_access(kvmu_port, kvmu_payload_, tlm::TLM_WRITE_COMMAND, reg, static_cast<uint64_t>(value));
}

void FpgaDraftAccelerator::kvmu_command(KvmuCmd command, int64_t arg) {
    if (command == KvmuCmd::initialize) kvmu_write(KvmuRegister::arg, arg);
    kvmu_write(KvmuRegister::cmd, static_cast<int64_t>(command));
}

void FpgaDraftAccelerator::stream(int64_t passes, double context) {
    if (passes <= 0) return;
    // Pass i reads the weights and the KV of context + i earlier tokens.
    const double n = static_cast<double>(passes);
    stream_bytes(n * streamed_weight_bytes() + (n * context + n * (n - 1.0) / 2.0) * kv_bytes_per_token());
}

void FpgaDraftAccelerator::stream_bytes(double bytes) {
    check_argument_non_negative("FpgaDraftAccelerator::stream_bytes", "bytes", bytes);
    // A stream takes no time of its own here (the decoder's timing has it), so one payload,
    // set up once in init(), serves them all.
    hbm_stream_.bytes = bytes;
    hbm_payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time annotated = sc_core::SC_ZERO_TIME;
    hbm_port->b_transport(hbm_payload_, annotated);
}

void FpgaDraftAccelerator::notify_token() {
    if (token_events_) token_done.notify(sc_core::SC_ZERO_TIME);
}

void FpgaDraftAccelerator::busy(PowerState state, double ns) {
    power_->set_state(state);
    sc_core::wait(duration_ns(ns));
    power_->set_state(PowerState::idle);
}

void FpgaDraftAccelerator::load_context(int64_t tokens) {
    check_argument_non_negative("FpgaDraftAccelerator::load_context", "tokens", static_cast<double>(tokens));
    kvmu_command(KvmuCmd::clear);
    kvmu_command(KvmuCmd::initialize, tokens);
}

int64_t FpgaDraftAccelerator::decode_step(int64_t tokens, AbortSignal* abort) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a step needs at least one token");
    if (kvmu().mux() == MuxSource::pcie) kvmu_command(KvmuCmd::begin_speculation);
    power_->set_state(PowerState::decode);
    const double start = context();
    stream(tokens, start);
    int64_t written = 0;
    if (token_events_ || kvmu().observed_per_token()) {
        // Someone watches every token (an event listener, a waveform): one wait per token.
        while (written < tokens) {
            if (!wait_unless_aborted(token_ns(context()), abort)) break;
            kvmu_write(KvmuRegister::spec, 1);
            ++written;
            ++tokens_drafted_;
            notify_token();
        }
    } else {
        // One wait for the whole step; an abort keeps the tokens whose end had passed.
        std::vector<double> durations(static_cast<size_t>(tokens));
        for (int64_t i = 0; i < tokens; ++i) durations[static_cast<size_t>(i)] = token_ns(start + static_cast<double>(i));
        in_flight_.begin(token_ends(durations, 0));
        written = wait_tokens(durations, 0, abort).completed;
        kvmu_write(KvmuRegister::spec, in_flight_.take_due(written));
        in_flight_.end();
        tokens_drafted_ += written;
    }
    if (written == tokens) kvmu_command(KvmuCmd::end_step);
    power_->set_state(PowerState::idle);
    return written;
}

void FpgaDraftAccelerator::sync_token() {
    stream(1, context());
    busy(PowerState::decode, token_ns(context()));
    kvmu_write(KvmuRegister::sync, 1);
    tokens_synced_ += 1;
    notify_token();
}

void FpgaDraftAccelerator::record_syncs(int64_t passes) {
    stream(passes, context());
    kvmu_write(KvmuRegister::sync, passes);
    tokens_synced_ += passes;
    notify_token();
}

void FpgaDraftAccelerator::prefill_local(int64_t tokens) {
    if (tokens <= 0) throw SimulationError(std::string(name()) + ": a local prefill needs at least one token");
    // One weight stream for the batch, the KV of the context read and the new tokens' written.
    stream_bytes(streamed_weight_bytes() + (context() + static_cast<double>(tokens)) * kv_bytes_per_token());
    busy(PowerState::prefill, prefill_ns(tokens, context()));
    kvmu_write(KvmuRegister::sync, tokens);
    tokens_prefilled_ += tokens;
    notify_token();
}

void FpgaDraftAccelerator::b_transport(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    DeviceCommand& c = command_of(trans);
    const int64_t n = command_count(trans);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    switch (command_op(trans)) {
        case DeviceOp::load_context: load_context(n); return;
        case DeviceOp::draft_step:
            sync_annotated(delay);
            c.produced = decode_step(n, c.abort);
            c.ok = c.produced == n;
            return;
        case DeviceOp::verdict:
            if (c.verdict == Verdict::accept) kvmu_command(KvmuCmd::accept);
            else if (c.verdict == Verdict::reject) kvmu_command(KvmuCmd::rollback);
            else kvmu_command(KvmuCmd::initialize, n);
            return;
        case DeviceOp::sync_tokens: record_syncs(n); return;
        case DeviceOp::sync_pass:
            sync_annotated(delay);
            for (int64_t i = 0; i < n; ++i) sync_token();
            return;
        case DeviceOp::prefill:
            sync_annotated(delay);
            prefill_local(n);
            return;
        case DeviceOp::settle: settle_draft(); return;
        case DeviceOp::set_depth: kvmu_write(KvmuRegister::depth, n); return;
        default: trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return;
    }
}

}  // namespace cosim
