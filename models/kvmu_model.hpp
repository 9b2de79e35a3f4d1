#pragma once
// The KVMU's behavioural model: its register transitions in C++ (docs/system.md),
// the reference the RTL (rtl/kvmu.v) is checked against.
#include <cstdint>
#include <string>

#include "kvmu.hpp"

namespace cosim {

class KvmuModel final : public Kvmu {
public:
    KvmuModel(std::string owner, int64_t capacity_tokens) : Kvmu(std::move(owner), capacity_tokens) {}
    const char* implementation() const override { return "tlm"; }

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

    void require_mode(const std::string& operation, bool allowed) const;
    void advance(const std::string& operation, int64_t n, bool move_curr);
    void check_order(const std::string& operation, const KvmuPointers& next) const;
};

}  // namespace cosim
