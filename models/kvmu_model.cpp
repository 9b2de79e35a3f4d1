#include "kvmu_model.hpp"

#include "errors.hpp"

namespace cosim {

void KvmuModel::apply_depth(int32_t depth) {
    if (depth < 0 || depth > 2)
        throw ConfigError(owner() + ".kvmu: step_ahead_depth must be 0, 1 or 2, got " + std::to_string(depth));
    state_.depth = depth;
}

void KvmuModel::require_mode(const std::string& operation, bool allowed) const {
    if (!allowed) illegal(operation, kvmu_why::mux(mux()));
}

void KvmuModel::check_order(const std::string& operation, const KvmuPointers& next) const {
    if (next.valid < 0 || next.valid > next.curr || next.curr > next.ahead)
        illegal(operation, "would break valid <= curr <= ahead");
    if (next.ahead > capacity_tokens()) illegal(operation, kvmu_why::cache_full(capacity_tokens()));
}

void KvmuModel::advance(const std::string& operation, int64_t n, bool move_curr) {
    // Order and capacity only grow more binding token by token, so checking the last suffices.
    KvmuPointers next = state_.ptr;
    next.ahead += n;
    if (move_curr) next.curr += n;
    check_order(operation, next);
    state_.ptr = next;
}

void KvmuModel::apply_initialize(int64_t position) {
    if (position < 0) illegal("initialize(" + std::to_string(position) + ")", "negative position");
    if (!state_.fresh && position > state_.ptr.valid)
        illegal("initialize(" + std::to_string(position) + ")",
                "a context is held: re-initialisation may only revert to verified context (<= valid)");
    check_order("initialize", KvmuPointers{position, position, position});
    state_.ptr = KvmuPointers{position, position, position};
    state_.mode = KvmuMode::initialization;
    state_.fresh = false;
    state_.following = false;
    state_.drafting = false;
    state_.marks.clear();
}

void KvmuModel::apply_begin_speculation() {
    if (state_.fresh) illegal("begin_speculation", "not initialised");
    state_.mode = KvmuMode::speculation;
}

void KvmuModel::apply_speculate(int64_t n) {
    require_mode("speculate_token", mux() == MuxSource::sampler);
    bool follow = state_.following;
    if (!state_.drafting) {
        // A new step starts at ahead. With nothing under verification it becomes
        // the step under verification (curr follows it); otherwise it is a
        // step-ahead step, and there are at most `depth` of them.
        follow = state_.ptr.curr == state_.ptr.valid;
        if (!follow && steps_ahead() >= state_.depth) illegal("speculate_token", kvmu_why::depth_full(state_.depth));
    }
    advance("speculate_token", n, follow);
    state_.following = follow;
    state_.drafting = true;
}

void KvmuModel::apply_sync(int64_t n) {
    require_mode("sync_token", mux() == MuxSource::pcie && !state_.fresh);
    advance("sync_token", n, true);
}

void KvmuModel::apply_end_step() {
    require_mode("end_step", mux() == MuxSource::sampler);
    if (!state_.drafting) illegal("end_step", "no step is being drafted");
    // A step-ahead step's boundary is kept; the step under verification's is curr.
    if (!state_.following) state_.marks.push_back(state_.ptr.ahead);
    state_.following = false;
    state_.drafting = false;
}

void KvmuModel::apply_accept() {
    if (state_.ptr.curr == state_.ptr.valid) illegal("accept", "no step under verification (curr == valid)");
    if (state_.following) illegal("accept", "the step under verification is still being drafted");
    state_.ptr.valid = state_.ptr.curr;
    if (!state_.marks.empty()) {
        // The first finished step-ahead step is now under verification.
        state_.ptr.curr = state_.marks.front();
        state_.marks.pop_front();
    } else {
        // A step-ahead step still being drafted is now the step under verification.
        state_.ptr.curr = state_.ptr.ahead;
        state_.following = state_.drafting;
    }
    state_.mode = KvmuMode::accept;
}

void KvmuModel::apply_rollback() {
    require_mode("rollback", mux() == MuxSource::sampler);
    if (state_.ptr.curr == state_.ptr.valid) illegal("rollback", "no drafted step under verification (curr == valid)");
    if (state_.following) illegal("rollback", "the step under verification is still being drafted");
    state_.ptr.curr = state_.ptr.valid;
    state_.ptr.ahead = state_.ptr.valid;
    state_.following = false;
    state_.drafting = false;
    state_.marks.clear();
    state_.mode = KvmuMode::rollback;
}

void KvmuModel::apply_clear() {
    const int32_t depth = state_.depth;  // a configuration, not context
    state_ = KvmuState{};
    state_.depth = depth;
}

}  // namespace cosim
