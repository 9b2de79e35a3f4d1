#pragma once
// Live co-simulation: where the host asks the outside world (a Python policy) what
// happens next in a problem, instead of reading it from a trace. A host thread posts a
// question and pauses the kernel (sc_pause); the caller of sc_start answers every
// pending question with the simulation stopped, on its own stack, and the hosts go on
// at the same simulated instant. One question per decision, never per token:
//   draft   - how many tokens the draft model's step has (0: the answer is complete);
//             asked ahead of the verdict too (`speculative`), for step-ahead drafting
//   refine  - how many tokens the target's step has (ahead too, for step-ahead runs)
//   verdict - whether the PRM's verdict keeps the drafted step or the refinement
//   speculate - how many tokens a lone request's next verification pass drafts (token-level
//             systems: asked before each pass that can draft, where the policy sets it)
// In the target-alone and token-level systems `draft` (step 1) asks a request's output length.
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "cosim_params.hpp"
#include "named_enum.hpp"

#include <systemc>

#include "kvmu.hpp"
#include "power.hpp"

namespace cosim {

// A live run's questions, declared in cosim/schema/_toggles.py (DECISION_KINDS).
COSIM_NAMED_ENUM(DecisionKind, COSIM_DECISION_KINDS, kDecisionKindCount, decision_kind_name)

struct Decision {
    // The question.
    DecisionKind kind = DecisionKind::draft;
    int slot = 0;
    int64_t request = 0;
    int32_t step = 0;
    bool speculative = false;     // asked ahead, for work started before the step is due
    bool of_refinement = false;   // verdict: on a refinement (else on a drafted step)
    int64_t tokens = 0;           // verdict: the step's tokens; draft: tokens a step-ahead draft already has (0: none)
    double time_ns = 0.0;
    double waited_ns = 0.0;       // verdict: since the step was sent to the PRM
    std::vector<int64_t> chain;   // tokens of each step of the chain so far
    int32_t backtracks = 0;
    bool can_backtrack = false;
    KvmuPointers kvmu;
    std::array<PowerState, 3> states{};  // draft, PRM, target
    // speculate: the scenario's drafts for the pass, the most a pass drafts, the request's
    // output length, and the pass before's drafts and the drafts it kept.
    int64_t proposed = 0;
    int64_t most = 0;
    int64_t output = 0;
    int64_t last_drafts = 0;
    int64_t last_accepted = 0;
    // The answer.
    int64_t answer_tokens = 0;
    bool answer_keep = false;
    bool answered = false;
    sc_core::sc_event done;
};

class DecisionBroker {
public:
    // From a host thread: posts the question, pauses the kernel and waits for the answer.
    void ask(Decision& decision);
    bool pending() const { return !pending_.empty(); }
    // From the caller of sc_start: the questions waiting, taken; answer each, then call answered().
    std::vector<Decision*> take() {
        std::vector<Decision*> out;
        out.swap(pending_);
        return out;
    }
    void answered(Decision& decision) {
        decision.answered = true;
        decision.done.notify(sc_core::SC_ZERO_TIME);
    }
    int64_t asked() const { return asked_; }

private:
    std::vector<Decision*> pending_;
    int64_t asked_ = 0;
};

}  // namespace cosim
