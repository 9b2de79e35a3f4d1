#pragma once
// Fully streaming W8A8 draft-model decoder on an FPGA: weights and KV cache in
// HBM, its KVMU (the behavioural model or the RTL, `kvmu`), its power. Token and prefill times come from
// FpgaDecoderTiming (the design's MAC array, HBM ports and pipeline, or a
// measured profile). The KV cache position is the KVMU's ahead pointer; every
// token decoded, shadow-synced or prefilled is written there.
//
// TLM-2.0 (docs/hardware.md): the host's commands arrive on `host` (DeviceCommand: load
// context, draft a step, a verdict, shadow-sync passes, a local prefill, settle, depth),
// one transaction per command, a drafted step one command whatever its tokens. The decoder
// streams weights and KV through `hbm_port` to its HBM (HbmTarget), one annotated read per
// step or prefill, and writes the KVMU's registers (KvmuRegisters) through `kvmu_port`;
// it reads the KVMU's pointers and MUX select on the block's outputs, as the RTL wires them.
// The step's time is the decoder's timing model (FpgaDecoderTiming overlaps the stream with
// the MAC array token by token); the HBM's annotated time is the stream's share of it.
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "abort_signal.hpp"
#include "device_command.hpp"
#include "fpga_decoder_timing.hpp"
#include "fpga_power.hpp"
#include "hbm.hpp"
#include "hbm_target.hpp"
#include "kvmu.hpp"
#include "kvmu_registers.hpp"
#include "model_spec.hpp"
#include "power.hpp"

namespace cosim {

class FpgaDraftAccelerator : public sc_core::sc_module {
public:
    // The host's commands (any number of initiators may bind).
    tlm_utils::multi_passthrough_target_socket_optional<FpgaDraftAccelerator> host;
    // To the board's HBM, and to the KVMU's register block (both bound inside).
    tlm_utils::simple_initiator_socket<FpgaDraftAccelerator> hbm_port;
    tlm_utils::simple_initiator_socket<FpgaDraftAccelerator> kvmu_port;

    FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params, const HbmParams& hbm,
                         const ModelSpec& model, const PowerParams& power, FpgaProfile profile = FpgaProfile());
    // Another context on a board that already has one: its own KV cache and KVMU, the
    // board's power meter (one board, one energy integral). The board's server runs one
    // context's work at a time.
    FpgaDraftAccelerator(sc_core::sc_module_name name, const FpgaAcceleratorParams& params, const HbmParams& hbm,
                         const ModelSpec& model, Power& board_power, FpgaProfile profile = FpgaProfile());

    const FpgaDecoderTiming& timing() const { return timing_; }
    double token_ns(double context) const { return timing_.token_ns(context); }
    double prefill_ns(int64_t tokens, double context) const { return timing_.prefill_ns(tokens, context); }
    double streamed_weight_bytes() const { return timing_.streamed_weight_bytes(); }
    double kv_bytes_per_token() const { return timing_.kv_bytes_per_token(); }

    // Blocking operations, called from an SC_THREAD.
    // Phase 1: the prompt's KV (migrated over PCIe) now fills positions [0, tokens).
    void load_context(int64_t tokens);
    // Drafts one step of `tokens` tokens from the local sampler, then marks its
    // boundary. An abort stops it at once (the token in flight is lost); returns
    // the tokens written.
    int64_t decode_step(int64_t tokens, AbortSignal* abort = nullptr);
    // A step waited for at once writes its tokens to the KVMU when it ends; this writes
    // those already done now, for a verdict that lands meanwhile (as token by token would).
    void settle_draft() { kvmu_write(KvmuRegister::spec, in_flight_.take_due(std::numeric_limits<int64_t>::max())); }
    // Shadow synchronisation: one forward pass over one target token from PCIe.
    void sync_token();
    // Passes whose time the caller simulated (a batch of passes): their KV entries,
    // counter and token event, at once. A pass lasts token_ns() of the position it extends.
    void record_syncs(int64_t passes);
    // Vanilla alternative: the refined step's `tokens` are prefilled locally in one batch.
    void prefill_local(int64_t tokens);

    // Notified after each token written to the KV cache, once enabled (a delta
    // cycle per token is not free, and most runs have no listener).
    sc_core::sc_event token_done;
    void enable_token_events() { token_events_ = true; }

    // The KVMU behind the register block: its state, and a hook for observers (waveforms).
    // The host changes it with commands on `host`, the decoder through `kvmu_port`.
    Kvmu& kvmu() { return registers_.observed(); }
    const Kvmu& kvmu() const { return registers_.kvmu(); }
    const Hbm& hbm() const { return hbm_; }
    const HbmTarget& hbm_target() const { return hbm_target_; }
    const KvmuRegisters& kvmu_registers() const { return registers_; }
    const Power& power() const { return *power_; }
    Power& power() { return *power_; }
    const FpgaAcceleratorParams& params() const { return timing_.params(); }
    const ModelSpec& model() const { return model_; }
    int64_t tokens_drafted() const { return tokens_drafted_; }
    int64_t tokens_synced() const { return tokens_synced_; }
    int64_t tokens_prefilled() const { return tokens_prefilled_; }
    double kv_used_bytes() const;

private:
    void init(const FpgaAcceleratorParams& params);
    // The HBM payload holds hbm_stream_, which this object owns: take it back first.
    struct ReleaseStream {
        tlm::tlm_generic_payload& payload;
        HbmStream& stream;
        ~ReleaseStream() { payload.clear_extension(&stream); }
    };
    double context() const { return static_cast<double>(kvmu().pointers().ahead); }
    void b_transport(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    void kvmu_write(KvmuRegister reg, int64_t value);
    void kvmu_command(KvmuCmd command, int64_t arg = 0);
    // One annotated HBM read: `passes` weight streams and the KV of each pass from `context` on.
    void stream(int64_t passes, double context);
    void stream_bytes(double bytes);
    void busy(PowerState state, double ns);

    void notify_token();

    FpgaDecoderTiming timing_;
    ModelSpec model_;
    bool token_events_ = false;
    Hbm hbm_;
    HbmTarget hbm_target_;
    KvmuRegisters registers_;  // over the behavioural model or the RTL (params.kvmu)
    HbmStream hbm_stream_;
    // Zero-time accesses reuse one payload each; release_ takes hbm_stream_ back from
    // hbm_payload_ before either is destroyed (a payload frees the extensions it holds).
    tlm::tlm_generic_payload hbm_payload_;
    tlm::tlm_generic_payload kvmu_payload_;
    ReleaseStream release_{hbm_payload_, hbm_stream_};
    std::unique_ptr<Power> own_power_;
    Power* power_;
    int64_t tokens_drafted_ = 0;
    int64_t tokens_synced_ = 0;
    TokensInFlight in_flight_;
    int64_t tokens_prefilled_ = 0;
};

}  // namespace cosim
