// The Verilated models first: included after SystemC, Verilator's headers would take the
// kernel's time for their own, and these models keep none.
// Verilator's own headers are not written for -Wextra.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "Vkvmu.h"
#include "Vkvmu_faulty.h"
#include "verilated.h"
#pragma GCC diagnostic pop

#include "kvmu_transactor.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "errors.hpp"

namespace cosim {

namespace {
constexpr uint64_t kPinMax = (uint64_t{1} << KvmuTransactor::pointer_bits) - 1;
}  // namespace

// The block, Verilated as a C++ model: its ports are public members and eval() is
// Verilator's public entry point; nothing of SystemC's kernel or of the model's private
// parts is touched. The transactor writes the inputs, evaluates, and reads the outputs.
struct KvmuTransactor::Pins {
    virtual ~Pins() = default;
    virtual void eval() = 0;
    virtual void trace(sc_core::sc_trace_file* file, const std::string& scope) const = 0;
    // The traced copy of the ports takes their values now.
    virtual void snapshot() = 0;
    // Inputs
    virtual void set(bool clk, bool rst_n, uint32_t cmd, uint32_t cmd_arg, bool tok_we, bool tok_pcie) = 0;
    virtual void set_capacity(uint32_t capacity) = 0;
    // Outputs
    virtual KvmuState read(int max_depth) const = 0;
    virtual uint32_t err_code() const = 0;
    virtual bool err() const = 0;
};

namespace {

template <typename Model>
struct PinsOf final : KvmuTransactor::Pins {
    VerilatedContext context;
    Model m{&context, "kvmu"};

    void eval() override { m.eval(); }
    void set(bool clk, bool rst_n, uint32_t cmd, uint32_t cmd_arg, bool tok_we, bool tok_pcie) override {
        m.clk = clk;
        m.rst_n = rst_n;
        m.cmd = static_cast<uint8_t>(cmd);
        m.cmd_arg = cmd_arg;
        m.tok_we = tok_we;
        m.tok_pcie = tok_pcie;
    }
    void set_capacity(uint32_t capacity) override { m.capacity = capacity; }
    uint32_t err_code() const override { return m.err_code; }
    bool err() const override { return m.err != 0; }
    KvmuState read(int max_depth) const override {
        KvmuState s;
        s.ptr = KvmuPointers{m.valid_ptr, m.curr_ptr, m.ahead_ptr};
        s.mode = static_cast<KvmuMode>(m.mode);
        s.fresh = m.fresh != 0;
        s.following = m.following != 0;
        s.drafting = m.drafting != 0;
        s.depth = static_cast<int32_t>(m.depth);
        const uint64_t flat = m.marks;
        for (uint32_t i = 0; i < m.n_marks && i < static_cast<uint32_t>(max_depth); ++i)
            s.marks.push_back(static_cast<int64_t>((flat >> (KvmuTransactor::pointer_bits * i)) & kPinMax));
        return s;
    }
    // A copy of the ports, the traced variables: a VCD samples them at the end of each time
    // step, and the copy changes only while the waveform's window is open.
    struct Ports {
        CData clk, rst_n, cmd, tok_we, tok_pcie, n_marks, steps_ahead, mode, mux_pcie, fresh, following, drafting,
            depth, err, err_code;
        IData cmd_arg, capacity, valid_ptr, curr_ptr, ahead_ptr, mark;
        std::remove_cv_t<std::remove_reference_t<decltype(Model::marks)>> marks;
    } shown{};

    void snapshot() override {
        shown = Ports{m.clk, m.rst_n, m.cmd, m.tok_we, m.tok_pcie, m.n_marks, m.steps_ahead, m.mode, m.mux_pcie,
                      m.fresh, m.following, m.drafting, m.depth, m.err, m.err_code, m.cmd_arg, m.capacity,
                      m.valid_ptr, m.curr_ptr, m.ahead_ptr, m.mark, m.marks};
    }
    void trace(sc_core::sc_trace_file* file, const std::string& scope) const override {
        const Ports& m = shown;
        auto bit = [&](const CData& pin, const char* name) { sc_core::sc_trace(file, pin, scope + "." + name, 1); };
        auto bits = [&](const CData& pin, const char* name, int width) {
            sc_core::sc_trace(file, pin, scope + "." + name, width);
        };
        auto word = [&](const IData& pin, const char* name) { sc_core::sc_trace(file, pin, scope + "." + name, 32); };
        bit(m.clk, "clk");
        bit(m.rst_n, "rst_n");
        bits(m.cmd, "cmd", 3);
        word(m.cmd_arg, "cmd_arg");
        bit(m.tok_we, "tok_we");
        bit(m.tok_pcie, "tok_pcie");
        word(m.capacity, "capacity");
        word(m.valid_ptr, "valid_ptr");
        word(m.curr_ptr, "curr_ptr");
        word(m.ahead_ptr, "ahead_ptr");
        word(m.mark, "mark");
        sc_core::sc_trace(file, m.marks, scope + ".marks", 64);
        bits(m.n_marks, "n_marks", 2);
        bits(m.steps_ahead, "steps_ahead", 2);
        bits(m.mode, "mode", 2);
        bit(m.mux_pcie, "mux_pcie");
        bit(m.fresh, "fresh");
        bit(m.following, "following");
        bit(m.drafting, "drafting");
        bits(m.depth, "depth", 2);
        bit(m.err, "err");
        bits(m.err_code, "err_code", 4);
    }
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
    pins_->set_capacity(static_cast<uint32_t>(capacity_tokens));
    pins_->set(false, true, 0, 0, false, false);
    pins_->eval();  // the block's initial evaluation, with the clock low
    reset();
}

KvmuTransactor::~KvmuTransactor() = default;

KvmuRefusal KvmuTransactor::cycle(uint32_t command, uint64_t arg, bool tok_we, bool tok_pcie) {
    Pins& p = *pins_;
    const auto word = static_cast<uint32_t>(std::min(arg, kPinMax));
    p.set(true, rst_n_, command, word, tok_we, tok_pcie);
    p.eval();  // the rising edge applies the operation
    ++cycles_;
    p.set(false, rst_n_, static_cast<uint32_t>(KvmuCommand::nop), word, false, tok_pcie);
    p.eval();  // the clock back low, the inputs idle: what a waveform shows between operations
    if (shown_) {
        p.snapshot();
        shown_cycles_ = cycles_;
    }
    return p.err() ? static_cast<KvmuRefusal>(p.err_code()) : KvmuRefusal::none;
}

void KvmuTransactor::reset() {
    rst_n_ = false;
    cycle(static_cast<uint32_t>(KvmuCommand::nop), 0, false, false);
    rst_n_ = true;
    pins_->set(false, rst_n_, static_cast<uint32_t>(KvmuCommand::nop), 0, false, false);
    pins_->eval();
    if (shown_) pins_->snapshot();
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

KvmuState KvmuTransactor::read() const { return pins_->read(max_depth); }

void KvmuTransactor::trace(sc_core::sc_trace_file* file, const std::string& scope) const {
    pins_->trace(file, scope);
    sc_core::sc_trace(file, shown_cycles_, scope + ".cycles");
}

void KvmuTransactor::show(bool open) {
    shown_ = open;
    if (open) {
        pins_->snapshot();
        shown_cycles_ = cycles_;
    }
}

}  // namespace cosim
