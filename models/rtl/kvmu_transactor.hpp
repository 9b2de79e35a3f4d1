#pragma once
// Pin-level driver of the KVMU's RTL (rtl/kvmu.v, Verilated as a C++ model):
// each KVMU operation becomes the clock cycles of the block's interface, and the
// answer is read back from its output ports.
//
// The block is clocked on demand: one rising edge per command or written token,
// evaluated at once through Verilator's public API (write the input ports, eval(),
// read the output ports), in zero simulated time, so that the operation's result is
// there when it returns, as the behavioural model's is. (A KVMU update is one
// kernel clock cycle, a few nanoseconds, against the milliseconds of a token;
// the timing model keeps it off the timing path either way.) trace() puts the
// ports in a VCD, sampled at the end of each simulated instant.
//
// RtlKvmu wraps it as a Kvmu, and the accelerator's KvmuRegisters target socket sits
// in front of that: register writes map onto command() and write_tokens().
#include <cstdint>
#include <memory>
#include <string>

#include <systemc>

#include "kvmu.hpp"

namespace cosim {

// The command pins' encoding (rtl/kvmu.v, CMD_*).
enum class KvmuCommand : uint32_t {
    nop = 0, initialize = 1, speculate = 2, end_step = 3, accept = 4, rollback = 5, clear = 6, depth = 7
};

// The refusal codes on err_code (rtl/kvmu.v, ERR_*).
enum class KvmuRefusal : uint32_t {
    none = 0, mux_pcie = 1, mux_sampler = 2, revert = 3, cache_full = 4, not_initialised = 5, depth_full = 6,
    no_draft = 7, accept_none = 8, drafting = 9, rollback_none = 10, collision = 11, bad_depth = 12
};
const char* kvmu_refusal_name(KvmuRefusal refusal);

class KvmuTransactor : public sc_core::sc_module {
public:
    // The build's parameters of the block (CMakeLists.txt verilates it with these).
    static constexpr int pointer_bits = 32;
    static constexpr int max_depth = 2;

    // `faulty`: the block built with KVMU_FAULT_ACCEPT_KEEPS_VALID (an accept that leaves
    // valid in place), to show a wrong RTL being caught. The block starts out of reset.
    KvmuTransactor(sc_core::sc_module_name name, int64_t capacity_tokens, bool faulty = false);
    ~KvmuTransactor() override;

    // One clock cycle with `command` on the command pins (`arg`: INIT's position or
    // DEPTH's depth, saturated to the pins' width); returns what err_code says after it.
    KvmuRefusal command(KvmuCommand command, uint64_t arg = 0);
    // Up to `n` cycles with the token-written strobe (a target token from PCIe or a
    // drafted one from the sampler); stops at the first write the block refuses and
    // returns that refusal. `written`: the writes it took.
    KvmuRefusal write_tokens(int64_t n, bool from_pcie, int64_t* written = nullptr);
    // Holds rst_n low for one cycle.
    void reset();

    // The registers, as the output pins show them.
    KvmuState read() const;
    // Rising clock edges so far, reset included.
    uint64_t cycles() const { return cycles_; }
    // Every pin, under `scope` (e.g. "kvmu_rtl.valid_ptr"), and the cycle count, as the
    // pins stood at the last cycle while shown (the default).
    void trace(sc_core::sc_trace_file* file, const std::string& scope) const;
    // Shown, the traced pins follow the block at every cycle; hidden, they keep their values,
    // so a waveform's window bounds what the block adds to the file.
    void show(bool open);

    struct Pins;  // the Verilated block and its ports (the .cpp defines it)

private:
    KvmuRefusal cycle(uint32_t command, uint64_t arg, bool tok_we, bool tok_pcie);

    std::unique_ptr<Pins> pins_;
    uint64_t cycles_ = 0;
    uint64_t shown_cycles_ = 0;  // what the waveform shows of cycles_
    bool shown_ = true;
    bool rst_n_ = true;
};

}  // namespace cosim
