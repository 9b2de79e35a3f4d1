#pragma once
// KV-cache management unit of the FPGA draft accelerator (docs/system.md).
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
#include <string>

namespace cosim {

enum class KvmuMode : int { initialization = 0, speculation = 1, accept = 2, rollback = 3 };
enum class MuxSource : int { sampler = 0, pcie = 1 };
const char* kvmu_mode_name(KvmuMode mode);

struct KvmuPointers {
    int64_t valid = 0;
    int64_t curr = 0;
    int64_t ahead = 0;
};

class Kvmu {
public:
    Kvmu(std::string owner, int64_t capacity_tokens);

    // How many step-ahead steps may be drafted beyond the step under verification (0-2);
    // it binds steps started from now on.
    void set_depth(int32_t depth);
    int32_t depth() const { return depth_; }

    // Initialization: all three pointers to `position` (setup after KV migration,
    // or a backtrack, which may only go back to verified context).
    void initialize(int64_t position);
    // Leaves Initialization/Rollback/Accept for Speculation: the MUX takes the sampler.
    void begin_speculation();
    // One drafted token written at ahead (Speculation/Accept only).
    void speculate_token();
    // `n` drafted tokens of one step at once, as `n` speculate_token calls would
    // leave the state; the observer hears one "speculate_token" (a step nobody
    // watches token by token).
    void speculate_tokens(int64_t n);
    // One target token from PCIe written at ahead (Initialization/Rollback only):
    // it extends the step under verification, so curr moves with ahead.
    void sync_token();
    // `n` target tokens at once, as `n` sync_token calls would leave the state; the
    // observer hears one "sync_token" (passes simulated together).
    void sync_tokens(int64_t n);
    // The step being drafted ends at ahead (Speculation/Accept only).
    void end_step();
    // Verdict "accept" on the step under verification.
    void accept();
    // Verdict "reject" on a drafted step: discard it and everything drafted after it.
    void rollback();
    // Forgets the context (a new problem); the next initialize may go anywhere.
    void clear();

    // Called after every operation that succeeded, with the operation's name. With
    // `every_token` the drafting devices move time token by token so each pointer
    // step is seen at its own time; without, a step may advance its pointers at once.
    using Observer = std::function<void(const char* operation, const Kvmu&)>;
    void set_observer(Observer observer, bool every_token) {
        observer_ = std::move(observer);
        every_token_ = every_token;
    }
    bool observed_per_token() const { return observer_ && every_token_; }

    KvmuPointers pointers() const { return ptr_; }
    KvmuMode mode() const { return mode_; }
    MuxSource mux() const;
    bool curr_follows_ahead() const { return following_; }
    bool drafting() const { return drafting_; }
    // Ends of the finished step-ahead steps, in order, after curr.
    const std::deque<int64_t>& marks() const { return marks_; }
    // Drafted steps beyond the step under verification, finished or not.
    int32_t steps_ahead() const {
        return static_cast<int32_t>(marks_.size()) + (drafting_ && !following_ ? 1 : 0);
    }
    int64_t capacity_tokens() const { return capacity_tokens_; }

private:
    [[noreturn]] void illegal(const std::string& operation, const std::string& why) const;
    void require_mode(const std::string& operation, bool allowed) const;
    void advance(const std::string& operation, int64_t n, bool move_curr);
    void check_order(const std::string& operation, const KvmuPointers& next) const;

    std::string owner_;
    int64_t capacity_tokens_;
    KvmuPointers ptr_;
    KvmuMode mode_ = KvmuMode::initialization;
    bool fresh_ = true;
    bool following_ = false;
    bool drafting_ = false;  // tokens drafted since the last step boundary
    int32_t depth_ = 1;
    std::deque<int64_t> marks_;
    Observer observer_;
    bool every_token_ = false;

    void changed(const char* operation) const {
        if (observer_) observer_(operation, *this);
    }
};

}  // namespace cosim
