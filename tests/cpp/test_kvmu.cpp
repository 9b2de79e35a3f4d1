// The KVMU's four modes, its input MUX, its pointers and depth-2 marks, and its refusals,
// on every implementation this build has (the behavioural model, and the Verilated RTL
// when the library was built with it): the expected registers follow docs/hardware.md.
#include <memory>
#include <string>
#include <vector>

#include <heteroreason/errors.hpp>
#include <heteroreason/kvmu.hpp>

#include "run_in_thread.hpp"

namespace {

using cosim::Kvmu;
using cosim::KvmuMode;
using cosim::MuxSource;

void expect(const Kvmu& k, int64_t valid, int64_t curr, int64_t ahead, KvmuMode mode, const char* where) {
    const cosim::KvmuPointers p = k.pointers();
    if (p.valid != valid || p.curr != curr || p.ahead != ahead || k.mode() != mode)
        ::check::fail(__FILE__, __LINE__,
                      std::string(k.implementation()) + " after " + where + ": " + std::to_string(p.valid) + "/" +
                          std::to_string(p.curr) + "/" + std::to_string(p.ahead) + " " + cosim::kvmu_mode_name(k.mode()) +
                          ", expected " + std::to_string(valid) + "/" + std::to_string(curr) + "/" +
                          std::to_string(ahead) + " " + cosim::kvmu_mode_name(mode));
}

void modes_and_verdicts(Kvmu* k) {
    CHECK_THROWS(cosim::KvmuError, "not initialised", k->begin_speculation());
    k->initialize(10);
    expect(*k, 10, 10, 10, KvmuMode::initialization, "initialize");
    CHECK(k->mux() == MuxSource::pcie);
    // Initialization takes target tokens from PCIe, not drafted ones.
    CHECK_THROWS(cosim::KvmuError, "MUX selects PCIe", k->speculate_token());
    k->sync_tokens(2);
    expect(*k, 10, 12, 12, KvmuMode::initialization, "sync_tokens(2)");
    k->accept();
    expect(*k, 12, 12, 12, KvmuMode::accept, "accept of the synced tokens");
    CHECK(k->mux() == MuxSource::sampler);
    CHECK_THROWS(cosim::KvmuError, "MUX selects the local sampler", k->sync_token());

    // A step drafted with nothing under verification: curr follows ahead.
    k->speculate_tokens(5);
    expect(*k, 12, 17, 17, KvmuMode::accept, "speculate_tokens(5)");
    CHECK(k->curr_follows_ahead());
    CHECK_THROWS(cosim::KvmuError, "still being drafted", k->accept());
    k->end_step();
    CHECK(!k->curr_follows_ahead());
    // With depth 1, one step-ahead step may be drafted, not a second.
    k->speculate_tokens(3);
    expect(*k, 12, 17, 20, KvmuMode::accept, "a step-ahead step");
    k->end_step();
    CHECK(k->steps_ahead() == 1);
    CHECK(k->marks().size() == 1 && k->marks().front() == 20);
    CHECK_THROWS(cosim::KvmuError, "test", k->speculate_token());
    expect(*k, 12, 17, 20, KvmuMode::accept, "a refused second step-ahead step");
    // Accept: the step-ahead step is now under verification.
    k->accept();
    expect(*k, 17, 20, 20, KvmuMode::accept, "accept with a mark");
    // Reject: rollback to verified context.
    k->rollback();
    expect(*k, 17, 17, 17, KvmuMode::rollback, "rollback");
    CHECK(k->mux() == MuxSource::pcie);
    CHECK_THROWS(cosim::KvmuError, "MUX selects PCIe", k->rollback());
    // The refinement arrives over PCIe and is kept.
    k->sync_tokens(4);
    expect(*k, 17, 21, 21, KvmuMode::rollback, "the refinement synced");
    k->accept();
    expect(*k, 21, 21, 21, KvmuMode::accept, "the refinement kept");
    // A backtrack may only go back to verified context.
    CHECK_THROWS(cosim::KvmuError, "verified context", k->initialize(22));
    k->initialize(12);
    expect(*k, 12, 12, 12, KvmuMode::initialization, "backtrack to 12");
    k->begin_speculation();
    CHECK(k->mode() == KvmuMode::speculation && k->mux() == MuxSource::sampler);
    // The cache holds 100 tokens: one more is refused and changes nothing.
    k->speculate_tokens(88);
    expect(*k, 12, 100, 100, KvmuMode::speculation, "a full cache");
    CHECK_THROWS(cosim::KvmuError, "100 tokens", k->speculate_token());
    expect(*k, 12, 100, 100, KvmuMode::speculation, "a refused overflow");
    k->clear();
    k->initialize(50);  // cleared: any position again
    expect(*k, 50, 50, 50, KvmuMode::initialization, "clear and initialize");
}

void depth_two(Kvmu* k) {
    k->set_depth(2);
    CHECK(k->depth() == 2);
    CHECK_THROWS(cosim::ConfigError, "step_ahead_depth", k->set_depth(3));
    k->initialize(0);
    k->begin_speculation();
    k->speculate_tokens(10);  // the step under verification: 0..10
    k->end_step();
    k->speculate_tokens(10);  // step-ahead 1: 10..20, its mark kept
    k->end_step();
    k->speculate_tokens(10);  // step-ahead 2: 20..30
    k->end_step();
    CHECK(k->marks().size() == 2 && k->marks()[0] == 20 && k->marks()[1] == 30);
    expect(*k, 0, 10, 30, KvmuMode::speculation, "two step-ahead steps");
    k->accept();
    expect(*k, 10, 20, 30, KvmuMode::accept, "accept moves curr to the first mark");
    k->accept();
    expect(*k, 20, 30, 30, KvmuMode::accept, "and then to the second");
    CHECK(k->marks().empty());
    // Accept while the last step-ahead step is still being drafted: curr jumps to ahead and follows.
    k->speculate_tokens(5);  // a new step under verification 30..35 (curr == valid? no: curr 30 > valid 20)
    k->accept();
    CHECK(k->pointers().valid == 30);
    CHECK(k->pointers().curr == 35 && k->curr_follows_ahead());
    k->speculate_tokens(2);
    expect(*k, 30, 37, 37, KvmuMode::accept, "curr follows ahead to the boundary");
    k->end_step();
    CHECK(!k->curr_follows_ahead());
}

}  // namespace

int sc_main(int, char*[]) {
    const std::vector<std::string> impls = cosim::kvmu_implementations();
    CHECK(!impls.empty() && impls.front() == "tlm");
    CHECK_THROWS(cosim::ConfigError, "one of tlm, rtl", cosim::make_kvmu("verilog", "test", 10));
    // The RTL is a SystemC module: each is built during elaboration, before the kernel runs.
    std::vector<std::unique_ptr<Kvmu>> kvmus;
    for (const std::string& impl : impls) kvmus.push_back(cosim::make_kvmu(impl, "test_" + impl, 100));
    return run_in_thread([&] {
        for (size_t i = 0; i < impls.size(); ++i) {
            std::printf("kvmu %s\n", impls[i].c_str());
            modes_and_verdicts(kvmus[i].get());
            kvmus[i]->clear();
            depth_two(kvmus[i].get());
        }
    });
}
