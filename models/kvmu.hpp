#pragma once
// KV-cache management unit of the FPGA draft accelerator (docs/system.md): the
// interface the accelerator and the workflow use, with two implementations: the
// behavioural model (KvmuModel, kvmu_model.hpp) and the RTL of rtl/kvmu.v through
// its transactor (RtlKvmu, models/rtl/rtl_kvmu.hpp). Which one a device gets is its
// `fpga.kvmu` parameter (make_kvmu).
//
// Three pointers into the KV cache, in tokens: valid (end of the verified
// context) <= curr (end of the step under verification) <= ahead (step-ahead
// frontier). Four modes; the input MUX feeds the decoder from the local sampler
// in Speculation/Accept and from PCIe (target tokens) in Initialization/Rollback.
//
// curr marks the end of the step under verification. A step drafted while
// nothing is under verification (curr == valid) becomes that step: curr
// follows ahead token by token until the step's boundary (end_step). A step
// drafted while one is under verification is a step-ahead step; `depth` of
// them may be drafted (default one). With more than one, the boundaries of the
// finished step-ahead steps are kept in order between curr and ahead (the
// marks): accept moves curr to the first mark. Accept while the last step-ahead
// step is still being drafted and no mark is left: curr jumps to ahead and
// then follows it to its boundary, so curr always ends on a step boundary.
// A verdict on a step still being drafted is illegal, as is any operation that
// would break the pointer order. Every violation throws KvmuError and leaves
// the state unchanged.
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sc_core {
class sc_trace_file;
}

namespace cosim {

enum class KvmuMode : int { initialization = 0, speculation = 1, accept = 2, rollback = 3 };
enum class MuxSource : int { sampler = 0, pcie = 1 };
const char* kvmu_mode_name(KvmuMode mode);

struct KvmuPointers {
    int64_t valid = 0;
    int64_t curr = 0;
    int64_t ahead = 0;
};

// Everything the KVMU's registers hold.
struct KvmuState {
    KvmuPointers ptr;
    KvmuMode mode = KvmuMode::initialization;
    bool fresh = true;       // no context held (never initialised, or cleared)
    bool following = false;  // curr follows ahead: the step under verification is being drafted
    bool drafting = false;   // tokens drafted since the last step boundary
    int32_t depth = 1;
    std::deque<int64_t> marks;
};

class Kvmu {
public:
    virtual ~Kvmu() = default;
    Kvmu(const Kvmu&) = delete;
    Kvmu& operator=(const Kvmu&) = delete;

    // "tlm" (the behavioural model) or "rtl" (the Verilated RTL).
    virtual const char* implementation() const = 0;
    // Adds the implementation's own signals (the RTL's pins) to a waveform, under `scope`.
    virtual void trace(sc_core::sc_trace_file* /*file*/, const std::string& /*scope*/) const {}
    // Whether those signals follow the implementation (a waveform's window is open) or keep
    // the values they had when it closed: outside a window the file gains nothing from them.
    virtual void show_trace(bool /*open*/) {}

    // How many step-ahead steps may be drafted beyond the step under verification (0-2);
    // it binds steps started from now on.
    void set_depth(int32_t depth) { apply_depth(depth); }
    int32_t depth() const { return state_.depth; }

    // Initialization: all three pointers to `position` (setup after KV migration,
    // or a backtrack, which may only go back to verified context).
    void initialize(int64_t position) { apply_initialize(position); changed("initialize"); }
    // Leaves Initialization/Rollback/Accept for Speculation: the MUX takes the sampler.
    void begin_speculation() { apply_begin_speculation(); changed("begin_speculation"); }
    // One drafted token written at ahead (Speculation/Accept only).
    void speculate_token() { speculate_tokens(1); }
    // `n` drafted tokens of one step at once, as `n` speculate_token calls would
    // leave the state; the observer hears one "speculate_token" (a step nobody
    // watches token by token).
    void speculate_tokens(int64_t n);
    // One target token from PCIe written at ahead (Initialization/Rollback only):
    // it extends the step under verification, so curr moves with ahead.
    void sync_token() { sync_tokens(1); }
    // `n` target tokens at once, as `n` sync_token calls would leave the state; the
    // observer hears one "sync_token" (passes simulated together).
    void sync_tokens(int64_t n);
    // The step being drafted ends at ahead (Speculation/Accept only).
    void end_step() { apply_end_step(); changed("end_step"); }
    // Verdict "accept" on the step under verification.
    void accept() { apply_accept(); changed("accept"); }
    // Verdict "reject" on a drafted step: discard it and everything drafted after it.
    void rollback() { apply_rollback(); changed("rollback"); }
    // Forgets the context (a new problem); the next initialize may go anywhere.
    void clear() { apply_clear(); changed("clear"); }

    // Called after every operation that succeeded, with the operation's name. With
    // `every_token` the drafting devices move time token by token so each pointer
    // step is seen at its own time; without, a step may advance its pointers at once.
    using Observer = std::function<void(const char* operation, const Kvmu&)>;
    void set_observer(Observer observer, bool every_token) {
        observer_ = std::move(observer);
        every_token_ = every_token;
    }
    bool observed_per_token() const { return observer_ && every_token_; }

    const KvmuState& state() const { return state_; }
    KvmuPointers pointers() const { return state_.ptr; }
    KvmuMode mode() const { return state_.mode; }
    MuxSource mux() const;
    bool curr_follows_ahead() const { return state_.following; }
    bool drafting() const { return state_.drafting; }
    // Ends of the finished step-ahead steps, in order, after curr.
    const std::deque<int64_t>& marks() const { return state_.marks; }
    // Drafted steps beyond the step under verification, finished or not.
    int32_t steps_ahead() const {
        return static_cast<int32_t>(state_.marks.size()) + (state_.drafting && !state_.following ? 1 : 0);
    }
    int64_t capacity_tokens() const { return capacity_tokens_; }
    const std::string& owner() const { return owner_; }

protected:
    Kvmu(std::string owner, int64_t capacity_tokens);

    // The register transitions. Each throws KvmuError (ConfigError for a depth out of
    // range) and leaves the state unchanged when the operation is illegal.
    virtual void apply_depth(int32_t depth) = 0;
    virtual void apply_initialize(int64_t position) = 0;
    virtual void apply_begin_speculation() = 0;
    virtual void apply_speculate(int64_t n) = 0;  // n > 0
    virtual void apply_sync(int64_t n) = 0;       // n > 0
    virtual void apply_end_step() = 0;
    virtual void apply_accept() = 0;
    virtual void apply_rollback() = 0;
    virtual void apply_clear() = 0;

    // The message of a refused operation: the owner, the operation, the mode and the
    // state it leaves unchanged, then why.
    std::string refusal(const std::string& operation, const std::string& why) const;
    [[noreturn]] void illegal(const std::string& operation, const std::string& why) const;

    KvmuState state_;

private:
    void changed(const char* operation) const {
        if (observer_) observer_(operation, *this);
    }

    std::string owner_;
    int64_t capacity_tokens_;
    Observer observer_;
    bool every_token_ = false;
};

// Why each refusal is refused, in the words both implementations use.
namespace kvmu_why {
inline const char* mux(MuxSource selected) {
    return selected == MuxSource::pcie ? "the input MUX selects PCIe" : "the input MUX selects the local sampler";
}
std::string depth_full(int32_t depth);
std::string cache_full(int64_t capacity_tokens);
}  // namespace kvmu_why

// The KVMU implementations this build has: "tlm", and "rtl" when it was built with Verilator.
std::vector<std::string> kvmu_implementations();
// A KVMU of the named implementation ("tlm" or "rtl"); ConfigError naming `where` for
// another name or for "rtl" in a build without the Verilated RTL.
std::unique_ptr<Kvmu> make_kvmu(const std::string& implementation, std::string owner, int64_t capacity_tokens,
                                const std::string& where = "fpga.kvmu");

}  // namespace cosim
