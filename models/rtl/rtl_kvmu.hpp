#pragma once
// The KVMU as its RTL: rtl/kvmu.v, Verilated into a SystemC module and driven pin by
// pin through KvmuTransactor, in the behavioural model's place (fpga.kvmu: rtl). The
// behavioural model runs alongside as a checker: a refusal only one of them gives, or
// any register that differs after an operation, stops the run with a SimulationError
// naming the RTL cycle, the pointers and the modes.
#include <cstdint>
#include <functional>
#include <string>

#include "kvmu.hpp"
#include "kvmu_model.hpp"
#include "kvmu_transactor.hpp"

namespace cosim {

class RtlKvmu final : public Kvmu {
public:
    // `faulty`: the broken build of the block (KvmuTransactor), for the checker's own test.
    RtlKvmu(std::string owner, int64_t capacity_tokens, bool faulty = false);
    const char* implementation() const override { return "rtl"; }
    void trace(sc_core::sc_trace_file* file, const std::string& scope) const override;
    void show_trace(bool open) override { transactor_.show(open); }
    uint64_t cycles() const { return transactor_.cycles(); }

private:
    void apply_depth(int32_t depth) override;
    void apply_initialize(int64_t position) override;
    void apply_begin_speculation() override;
    void apply_speculate(int64_t n) override;
    void apply_sync(int64_t n) override;
    void apply_end_step() override;
    void apply_accept() override;
    void apply_rollback() override;
    void apply_clear() override;

    // Runs the operation on the checker; its refusal's message, or "" when it took it.
    std::string on_checker(const std::function<void()>& operation);
    // What the RTL did against what the checker did: throws the refusal both gave, or
    // the disagreement; otherwise takes the RTL's new state.
    void settle(const std::string& operation, KvmuRefusal refusal, const std::string& checker_refusal,
                bool exact_message = true);
    std::string why(KvmuRefusal refusal, const std::string& operation) const;
    [[noreturn]] void disagree(const std::string& operation, const std::string& what) const;

    KvmuTransactor transactor_;
    KvmuModel checker_;
};

}  // namespace cosim
