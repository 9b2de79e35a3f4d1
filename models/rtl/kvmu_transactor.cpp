#include "kvmu_transactor.hpp"

#include <algorithm>
#include <limits>

// Verilator's own headers are not written for -Wextra.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vkvmu.h"
#include "Vkvmu_faulty.h"
#pragma GCC diagnostic pop
#include "errors.hpp"

namespace cosim {

namespace {

// A pin: a signal whose writes take effect at once. The transactor evaluates the block
// between its own writes, inside the caller's operation, so neither side may wait for a
// delta cycle; nothing notifies the kernel, which never schedules the block itself.
template <typename T>
class Pin : public sc_core::sc_signal<T> {
public:
    explicit Pin(const char* name) : sc_core::sc_signal<T>(name) {}
    void write(const T& value) override {
        this->m_cur_val = value;
        this->m_new_val = value;
    }
};

// A Verilated SystemC module's evaluation is private: the kernel calls it as a process.
// An explicit instantiation may name a member whatever its access, so this exposes it.
template <typename Model>
struct EvalTag {
    using type = void (Model::*)();
};
template <typename Tag, typename Tag::type Member>
struct ExposeEval {
    friend typename Tag::type eval_of(Tag) { return Member; }
};
EvalTag<Vkvmu>::type eval_of(EvalTag<Vkvmu>);
EvalTag<Vkvmu_faulty>::type eval_of(EvalTag<Vkvmu_faulty>);
template struct ExposeEval<EvalTag<Vkvmu>, &Vkvmu::eval_step>;
template struct ExposeEval<EvalTag<Vkvmu_faulty>, &Vkvmu_faulty::eval_step>;

constexpr uint64_t kPinMax = (uint64_t{1} << KvmuTransactor::pointer_bits) - 1;

}  // namespace

struct KvmuTransactor::Pins {
    Pin<bool> clk{"clk"}, rst_n{"rst_n"}, tok_we{"tok_we"}, tok_pcie{"tok_pcie"};
    Pin<uint32_t> cmd{"cmd"}, cmd_arg{"cmd_arg"}, capacity{"capacity"};
    Pin<uint32_t> valid_ptr{"valid_ptr"}, curr_ptr{"curr_ptr"}, ahead_ptr{"ahead_ptr"}, mark{"mark"};
    Pin<uint64_t> marks{"marks"};
    Pin<uint32_t> mode{"mode"}, depth{"depth"}, n_marks{"n_marks"}, steps_ahead{"steps_ahead"}, err_code{"err_code"};
    Pin<bool> mux_pcie{"mux_pcie"}, fresh{"fresh"}, following{"following"}, drafting{"drafting"}, err{"err"};

    virtual ~Pins() = default;
    virtual void eval() = 0;

    template <typename Model>
    void bind(Model& m) {
        m.clk(clk);
        m.rst_n(rst_n);
        m.cmd(cmd);
        m.cmd_arg(cmd_arg);
        m.tok_we(tok_we);
        m.tok_pcie(tok_pcie);
        m.capacity(capacity);
        m.valid_ptr(valid_ptr);
        m.curr_ptr(curr_ptr);
        m.ahead_ptr(ahead_ptr);
        m.mark(mark);
        m.marks(marks);
        m.mode(mode);
        m.mux_pcie(mux_pcie);
        m.fresh(fresh);
        m.following(following);
        m.drafting(drafting);
        m.depth(depth);
        m.n_marks(n_marks);
        m.steps_ahead(steps_ahead);
        m.err(err);
        m.err_code(err_code);
    }
};

namespace {

template <typename Model>
struct PinsOf final : KvmuTransactor::Pins {
    Model model{"kvmu"};
    PinsOf() { bind(model); }
    void eval() override { (model.*eval_of(EvalTag<Model>{}))(); }
};

}  // namespace

const char* kvmu_refusal_name(KvmuRefusal refusal) {
    static const char* const names[] = {"none", "mux_pcie", "mux_sampler", "revert", "cache_full",
                                        "not_initialised", "depth_full", "no_draft", "accept_none", "drafting",
                                        "rollback_none", "collision", "bad_depth"};
    const auto i = static_cast<size_t>(refusal);
    return i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

KvmuTransactor::KvmuTransactor(sc_core::sc_module_name name, int64_t capacity_tokens, bool faulty)
    : sc_core::sc_module(name) {
    // The block's capacity check (ahead < capacity) and a saturated INIT position (all
    // ones, always beyond capacity) need the capacity strictly below the pins' top.
    if (capacity_tokens < 1 || static_cast<uint64_t>(capacity_tokens) >= kPinMax)
        throw ConfigError(std::string(this->name()) + ": a KV cache of " + std::to_string(capacity_tokens) +
                          " tokens does not fit the RTL's " + std::to_string(pointer_bits) + "-bit pointers");
    if (faulty) pins_ = std::make_unique<PinsOf<Vkvmu_faulty>>();
    else pins_ = std::make_unique<PinsOf<Vkvmu>>();
    pins_->capacity.write(static_cast<uint32_t>(capacity_tokens));
    pins_->clk.write(false);
    pins_->eval();  // the block's initial evaluation, with the clock low
    reset();
}

KvmuTransactor::~KvmuTransactor() = default;

KvmuRefusal KvmuTransactor::cycle(uint32_t command, uint64_t arg, bool tok_we, bool tok_pcie) {
    Pins& p = *pins_;
    p.cmd.write(command);
    p.cmd_arg.write(static_cast<uint32_t>(std::min(arg, kPinMax)));
    p.tok_we.write(tok_we);
    p.tok_pcie.write(tok_pcie);
    p.clk.write(true);
    p.eval();  // the rising edge applies the operation
    ++cycles_;
    p.clk.write(false);
    p.cmd.write(static_cast<uint32_t>(KvmuCommand::nop));
    p.tok_we.write(false);
    p.eval();  // the clock back low, the inputs idle: what a waveform shows between operations
    return p.err.read() ? static_cast<KvmuRefusal>(p.err_code.read()) : KvmuRefusal::none;
}

void KvmuTransactor::reset() {
    pins_->rst_n.write(false);
    cycle(static_cast<uint32_t>(KvmuCommand::nop), 0, false, false);
    pins_->rst_n.write(true);
}

KvmuRefusal KvmuTransactor::command(KvmuCommand command, uint64_t arg) {
    return cycle(static_cast<uint32_t>(command), arg, false, false);
}

KvmuRefusal KvmuTransactor::write_tokens(int64_t n, bool from_pcie, int64_t* written) {
    int64_t done = 0;
    KvmuRefusal refusal = KvmuRefusal::none;
    for (; done < n; ++done) {
        refusal = cycle(static_cast<uint32_t>(KvmuCommand::nop), 0, true, from_pcie);
        if (refusal != KvmuRefusal::none) break;
    }
    if (written) *written = done;
    return refusal;
}

KvmuState KvmuTransactor::read() const {
    const Pins& p = *pins_;
    KvmuState s;
    s.ptr = KvmuPointers{p.valid_ptr.read(), p.curr_ptr.read(), p.ahead_ptr.read()};
    s.mode = static_cast<KvmuMode>(p.mode.read());
    s.fresh = p.fresh.read();
    s.following = p.following.read();
    s.drafting = p.drafting.read();
    s.depth = static_cast<int32_t>(p.depth.read());
    const uint64_t flat = p.marks.read();
    for (uint32_t i = 0; i < p.n_marks.read() && i < static_cast<uint32_t>(max_depth); ++i)
        s.marks.push_back(static_cast<int64_t>((flat >> (pointer_bits * i)) & kPinMax));
    return s;
}

void KvmuTransactor::trace(sc_core::sc_trace_file* file, const std::string& scope) const {
    const Pins& p = *pins_;
    auto put = [&](const auto& pin, const char* name) { sc_core::sc_trace(file, pin, scope + "." + name); };
    put(p.clk, "clk");
    put(p.rst_n, "rst_n");
    put(p.cmd, "cmd");
    put(p.cmd_arg, "cmd_arg");
    put(p.tok_we, "tok_we");
    put(p.tok_pcie, "tok_pcie");
    put(p.capacity, "capacity");
    put(p.valid_ptr, "valid_ptr");
    put(p.curr_ptr, "curr_ptr");
    put(p.ahead_ptr, "ahead_ptr");
    put(p.mark, "mark");
    put(p.marks, "marks");
    put(p.n_marks, "n_marks");
    put(p.steps_ahead, "steps_ahead");
    put(p.mode, "mode");
    put(p.mux_pcie, "mux_pcie");
    put(p.fresh, "fresh");
    put(p.following, "following");
    put(p.drafting, "drafting");
    put(p.depth, "depth");
    put(p.err, "err");
    put(p.err_code, "err_code");
    sc_core::sc_trace(file, cycles_, scope + ".cycles");
}

}  // namespace cosim
