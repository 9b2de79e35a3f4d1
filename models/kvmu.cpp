#include "kvmu.hpp"

#include <sstream>

#include "errors.hpp"
#include "kvmu_model.hpp"
#ifdef COSIM_HAVE_RTL_KVMU
#include "rtl/rtl_kvmu.hpp"
#endif

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

MuxSource Kvmu::mux() const {
    return (state_.mode == KvmuMode::speculation || state_.mode == KvmuMode::accept) ? MuxSource::sampler
                                                                                     : MuxSource::pcie;
}

void Kvmu::speculate_tokens(int64_t n) {
    if (n <= 0) return;
    apply_speculate(n);
    changed("speculate_token");
}

void Kvmu::sync_tokens(int64_t n) {
    if (n <= 0) return;
    apply_sync(n);
    changed("sync_token");
}

std::string Kvmu::refusal(const std::string& operation, const std::string& why) const {
    std::ostringstream out;
    out << owner_ << ".kvmu: illegal " << operation << " in mode " << kvmu_mode_name(state_.mode)
        << " (valid=" << state_.ptr.valid << ", curr=" << state_.ptr.curr << ", ahead=" << state_.ptr.ahead;
    for (size_t i = 0; i < state_.marks.size(); ++i) out << (i == 0 ? ", marks=" : ",") << state_.marks[i];
    out << "): " << why;
    return out.str();
}

void Kvmu::illegal(const std::string& operation, const std::string& why) const {
    throw KvmuError(refusal(operation, why));
}

namespace kvmu_why {

std::string depth_full(int32_t depth) {
    if (depth <= 0) return "step-ahead speculation is off (depth 0): nothing may be drafted ahead";
    if (depth == 1) return "step-ahead speculation is one step deep and that step is already drafted";
    if (depth == 2) return "step-ahead speculation is two steps deep and both are already drafted";
    return "step-ahead speculation is " + std::to_string(depth) + " steps deep and all are already drafted";
}

std::string cache_full(int64_t capacity_tokens) {
    return "KV cache full (" + std::to_string(capacity_tokens) + " tokens reserved)";
}

}  // namespace kvmu_why

std::vector<std::string> kvmu_implementations() {
#ifdef COSIM_HAVE_RTL_KVMU
    return {"tlm", "rtl"};
#else
    return {"tlm"};
#endif
}

std::unique_ptr<Kvmu> make_kvmu(const std::string& implementation, std::string owner, int64_t capacity_tokens,
                                const std::string& where) {
    if (implementation == "tlm") return std::make_unique<KvmuModel>(std::move(owner), capacity_tokens);
    if (implementation == "rtl" || implementation == "rtl-faulty") {
#ifdef COSIM_HAVE_RTL_KVMU
        return std::make_unique<RtlKvmu>(std::move(owner), capacity_tokens, implementation == "rtl-faulty");
#else
        throw ConfigError(where + ": rtl needs the Verilated KVMU (rtl/kvmu.v), which this build lacks: Verilator "
                          "was not found when the extension was built");
#endif
    }
    throw ConfigError(where + ": one of tlm, rtl, got '" + implementation + "'");
}

}  // namespace cosim
