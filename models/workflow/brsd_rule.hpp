// BRSD's keep-or-backtrack rule for a scored refinement, written once. The live engine
// (live_decisions.cpp) applies it; Python reaches the same functions through cosim._native
// (trace generation and checks, the recorder, the live session). Plain functions: no
// SystemC, nothing to elaborate.
#pragma once

#include <cstdint>

namespace cosim {

// A failed refinement of `step` can go back to the step before it: the problem has used
// fewer than `max_backtracks` backtracks, and there is a step before it.
inline bool can_backtrack(int64_t step, int64_t backtracks, int64_t max_backtracks) {
    return backtracks < max_backtracks && step > 1;
}

// A scored refinement is kept when it passes (its score at or above the backtracking
// threshold, or a policy's verdict), or when it cannot be backtracked over.
inline bool keeps_refinement(bool passes, int64_t step, int64_t backtracks, int64_t max_backtracks) {
    return passes || !can_backtrack(step, backtracks, max_backtracks);
}

}  // namespace cosim
