#include "rtl_kvmu.hpp"

#include <sstream>

#include "errors.hpp"

namespace cosim {

RtlKvmu::RtlKvmu(std::string owner, int64_t capacity_tokens, bool faulty)
    : Kvmu(owner, capacity_tokens), transactor_("kvmu_rtl", capacity_tokens, faulty),
      checker_(owner, capacity_tokens) {
    state_ = transactor_.read();
    checker_.set_depth(state_.depth);
}

void RtlKvmu::trace(sc_core::sc_trace_file* file, const std::string& scope) const { transactor_.trace(file, scope); }

std::string RtlKvmu::on_checker(const std::function<void()>& operation) {
    try {
        operation();
    } catch (const KvmuError& e) {
        return e.what();
    }
    return "";
}

std::string RtlKvmu::why(KvmuRefusal refusal, const std::string& operation) const {
    switch (refusal) {
        case KvmuRefusal::mux_pcie: return kvmu_why::mux(MuxSource::pcie);
        case KvmuRefusal::mux_sampler: return kvmu_why::mux(MuxSource::sampler);
        case KvmuRefusal::revert:
            return "a context is held: re-initialisation may only revert to verified context (<= valid)";
        case KvmuRefusal::cache_full: return kvmu_why::cache_full(capacity_tokens());
        case KvmuRefusal::not_initialised: return "not initialised";
        case KvmuRefusal::depth_full: return kvmu_why::depth_full(state_.depth);
        case KvmuRefusal::no_draft: return "no step is being drafted";
        case KvmuRefusal::accept_none: return "no step under verification (curr == valid)";
        case KvmuRefusal::drafting: return "the step under verification is still being drafted";
        case KvmuRefusal::rollback_none: return "no drafted step under verification (curr == valid)";
        default:
            disagree(operation, std::string("the RTL raised err_code ") + kvmu_refusal_name(refusal) +
                                    ", which no KVMU operation should");
    }
}

void RtlKvmu::disagree(const std::string& operation, const std::string& what) const {
    throw SimulationError(owner() + ".kvmu: the RTL and the behavioural model disagree after " + operation +
                          " at RTL cycle " + std::to_string(transactor_.cycles()) + ": " + what);
}

void RtlKvmu::settle(const std::string& operation, KvmuRefusal refusal, const std::string& checker_refusal,
                     bool exact_message) {
    const KvmuState& want = checker_.state();
    if (refusal != KvmuRefusal::none) {
        const std::string text = why(refusal, operation);  // from the state the refusal left
        state_ = transactor_.read();
        const std::string message = Kvmu::refusal(operation, text);
        if (checker_refusal.empty())
            disagree(operation, "the RTL refused it (" + text + "), the behavioural model took it");
        if (exact_message && message != checker_refusal)
            disagree(operation, "the RTL refused it with \"" + message + "\", the behavioural model with \"" +
                                    checker_refusal + "\"");
        throw KvmuError(message);
    }
    state_ = transactor_.read();
    if (!checker_refusal.empty())
        disagree(operation, "the RTL took it, the behavioural model refused it: " + checker_refusal);
    std::ostringstream diff;
    auto pointer = [&](const char* name, int64_t rtl, int64_t tlm) {
        if (rtl != tlm) diff << "; " << name << " rtl=" << rtl << " tlm=" << tlm;
    };
    pointer("valid", state_.ptr.valid, want.ptr.valid);
    pointer("curr", state_.ptr.curr, want.ptr.curr);
    pointer("ahead", state_.ptr.ahead, want.ptr.ahead);
    if (state_.marks != want.marks) diff << "; marks differ";
    if (state_.fresh != want.fresh) diff << "; fresh rtl=" << state_.fresh << " tlm=" << want.fresh;
    if (state_.following != want.following)
        diff << "; following rtl=" << state_.following << " tlm=" << want.following;
    if (state_.drafting != want.drafting) diff << "; drafting rtl=" << state_.drafting << " tlm=" << want.drafting;
    if (state_.depth != want.depth) diff << "; depth rtl=" << state_.depth << " tlm=" << want.depth;
    if (diff.str().empty() && state_.mode == want.mode) return;
    diff << "; mode rtl=" << kvmu_mode_name(state_.mode) << " tlm=" << kvmu_mode_name(want.mode);
    disagree(operation, diff.str().substr(2));
}

void RtlKvmu::apply_depth(int32_t depth) {
    checker_.set_depth(depth);  // a depth out of range is a ConfigError before any pin moves
    const KvmuRefusal refusal = transactor_.command(KvmuCommand::depth, static_cast<uint64_t>(depth));
    settle("set_depth(" + std::to_string(depth) + ")", refusal, "");
}

void RtlKvmu::apply_initialize(int64_t position) {
    const std::string checked = on_checker([&] { checker_.initialize(position); });
    // The position pins are unsigned: the register interface refuses a negative one itself.
    if (position < 0) {
        const std::string message = Kvmu::refusal("initialize(" + std::to_string(position) + ")", "negative position");
        if (message != checked) disagree("initialize", "the behavioural model did not refuse a negative position");
        throw KvmuError(message);
    }
    const KvmuRefusal refusal = transactor_.command(KvmuCommand::initialize, static_cast<uint64_t>(position));
    settle(refusal == KvmuRefusal::revert ? "initialize(" + std::to_string(position) + ")" : "initialize", refusal,
           checked);
}

void RtlKvmu::apply_begin_speculation() {
    const std::string checked = on_checker([&] { checker_.begin_speculation(); });
    settle("begin_speculation", transactor_.command(KvmuCommand::speculate), checked);
}

void RtlKvmu::apply_speculate(int64_t n) {
    const std::string checked = on_checker([&] { checker_.speculate_tokens(n); });
    int64_t written = 0;
    const KvmuRefusal refusal = transactor_.write_tokens(n, false, &written);
    // A burst the block refuses part-way has written its first tokens (one strobe each);
    // the behavioural model refuses the whole burst: only the first token's words agree.
    settle("speculate_token", refusal, checked, written == 0);
}

void RtlKvmu::apply_sync(int64_t n) {
    const std::string checked = on_checker([&] { checker_.sync_tokens(n); });
    int64_t written = 0;
    const KvmuRefusal refusal = transactor_.write_tokens(n, true, &written);
    settle("sync_token", refusal, checked, written == 0);
}

void RtlKvmu::apply_end_step() {
    const std::string checked = on_checker([&] { checker_.end_step(); });
    settle("end_step", transactor_.command(KvmuCommand::end_step), checked);
}

void RtlKvmu::apply_accept() {
    const std::string checked = on_checker([&] { checker_.accept(); });
    settle("accept", transactor_.command(KvmuCommand::accept), checked);
}

void RtlKvmu::apply_rollback() {
    const std::string checked = on_checker([&] { checker_.rollback(); });
    settle("rollback", transactor_.command(KvmuCommand::rollback), checked);
}

void RtlKvmu::apply_clear() {
    checker_.clear();
    settle("clear", transactor_.command(KvmuCommand::clear), "");
}

}  // namespace cosim
