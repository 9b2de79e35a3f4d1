#include "kvmu.hpp"

#include <sstream>

#include "errors.hpp"

namespace cosim {

const char* kvmu_mode_name(KvmuMode mode) {
    switch (mode) {
        case KvmuMode::initialization: return "initialization";
        case KvmuMode::speculation: return "speculation";
        case KvmuMode::accept: return "accept";
        case KvmuMode::rollback: return "rollback";
    }
    return "?";
}

Kvmu::Kvmu(std::string owner, int64_t capacity_tokens)
    : owner_(std::move(owner)), capacity_tokens_(capacity_tokens) {
    require_positive(owner_ + ".kvmu capacity_tokens", static_cast<double>(capacity_tokens));
}

void Kvmu::set_depth(int32_t depth) {
    if (depth < 0 || depth > 2)
        throw ConfigError(owner_ + ".kvmu: step_ahead_depth must be 0, 1 or 2, got " + std::to_string(depth));
    depth_ = depth;
}

MuxSource Kvmu::mux() const {
    return (mode_ == KvmuMode::speculation || mode_ == KvmuMode::accept) ? MuxSource::sampler : MuxSource::pcie;
}

void Kvmu::illegal(const std::string& operation, const std::string& why) const {
    std::ostringstream out;
    out << owner_ << ".kvmu: illegal " << operation << " in mode " << kvmu_mode_name(mode_) << " (valid=" << ptr_.valid
        << ", curr=" << ptr_.curr << ", ahead=" << ptr_.ahead;
    for (size_t i = 0; i < marks_.size(); ++i) out << (i == 0 ? ", marks=" : ",") << marks_[i];
    out << "): " << why;
    throw KvmuError(out.str());
}

void Kvmu::require_mode(const std::string& operation, bool allowed) const {
    if (!allowed) {
        illegal(operation, mux() == MuxSource::pcie ? "the input MUX selects PCIe"
                                                     : "the input MUX selects the local sampler");
    }
}

void Kvmu::check_order(const std::string& operation, const KvmuPointers& next) const {
    if (next.valid < 0 || next.valid > next.curr || next.curr > next.ahead)
        illegal(operation, "would break valid <= curr <= ahead");
    if (next.ahead > capacity_tokens_)
        illegal(operation, "KV cache full (" + std::to_string(capacity_tokens_) + " tokens reserved)");
}

void Kvmu::advance(const std::string& operation, int64_t n, bool move_curr) {
    // Order and capacity only grow more binding token by token, so checking the last suffices.
    KvmuPointers next = ptr_;
    next.ahead += n;
    if (move_curr) next.curr += n;
    check_order(operation, next);
    ptr_ = next;
}

void Kvmu::initialize(int64_t position) {
    if (position < 0) illegal("initialize(" + std::to_string(position) + ")", "negative position");
    if (!fresh_ && position > ptr_.valid)
        illegal("initialize(" + std::to_string(position) + ")",
                "a context is held: re-initialisation may only revert to verified context (<= valid)");
    check_order("initialize", KvmuPointers{position, position, position});
    ptr_ = KvmuPointers{position, position, position};
    mode_ = KvmuMode::initialization;
    fresh_ = false;
    following_ = false;
    drafting_ = false;
    marks_.clear();
    changed("initialize");
}

void Kvmu::begin_speculation() {
    if (fresh_) illegal("begin_speculation", "not initialised");
    mode_ = KvmuMode::speculation;
    changed("begin_speculation");
}

void Kvmu::speculate_token() { speculate_tokens(1); }

void Kvmu::speculate_tokens(int64_t n) {
    if (n <= 0) return;
    require_mode("speculate_token", mux() == MuxSource::sampler);
    bool follow = following_;
    if (!drafting_) {
        // A new step starts at ahead. With nothing under verification it becomes
        // the step under verification (curr follows it); otherwise it is a
        // step-ahead step, and there are at most `depth` of them.
        follow = ptr_.curr == ptr_.valid;
        if (!follow && steps_ahead() >= depth_) {
            static const char* const why[] = {
                "step-ahead speculation is off (depth 0): nothing may be drafted ahead",
                "step-ahead speculation is one step deep and that step is already drafted",
                "step-ahead speculation is two steps deep and both are already drafted"};
            illegal("speculate_token", why[depth_]);
        }
    }
    advance("speculate_token", n, follow);
    following_ = follow;
    drafting_ = true;
    changed("speculate_token");
}

void Kvmu::sync_token() { sync_tokens(1); }

void Kvmu::sync_tokens(int64_t n) {
    if (n <= 0) return;
    require_mode("sync_token", mux() == MuxSource::pcie && !fresh_);
    advance("sync_token", n, true);
    changed("sync_token");
}

void Kvmu::end_step() {
    require_mode("end_step", mux() == MuxSource::sampler);
    if (!drafting_) illegal("end_step", "no step is being drafted");
    // A step-ahead step's boundary is kept; the step under verification's is curr.
    if (!following_) marks_.push_back(ptr_.ahead);
    following_ = false;
    drafting_ = false;
    changed("end_step");
}

void Kvmu::accept() {
    if (ptr_.curr == ptr_.valid) illegal("accept", "no step under verification (curr == valid)");
    if (following_) illegal("accept", "the step under verification is still being drafted");
    ptr_.valid = ptr_.curr;
    if (!marks_.empty()) {
        // The first finished step-ahead step is now under verification.
        ptr_.curr = marks_.front();
        marks_.pop_front();
    } else {
        // A step-ahead step still being drafted is now the step under verification.
        ptr_.curr = ptr_.ahead;
        following_ = drafting_;
    }
    mode_ = KvmuMode::accept;
    changed("accept");
}

void Kvmu::rollback() {
    require_mode("rollback", mux() == MuxSource::sampler);
    if (ptr_.curr == ptr_.valid) illegal("rollback", "no drafted step under verification (curr == valid)");
    if (following_) illegal("rollback", "the step under verification is still being drafted");
    ptr_.curr = ptr_.valid;
    ptr_.ahead = ptr_.valid;
    following_ = false;
    drafting_ = false;
    marks_.clear();
    mode_ = KvmuMode::rollback;
    changed("rollback");
}

void Kvmu::clear() {
    ptr_ = KvmuPointers{};
    mode_ = KvmuMode::initialization;
    fresh_ = true;
    following_ = false;
    drafting_ = false;
    marks_.clear();
    changed("clear");
}

}  // namespace cosim
