#include "lockstep_group.hpp"

#include "errors.hpp"

namespace cosim {

LockstepGroup::LockstepGroup(int members) : joined_(static_cast<size_t>(members), false) {
    if (members < 2) throw ConfigError("parallel.data_parallel: a lockstep group needs two engines or more");
}

void LockstepGroup::join(int m) {
    if (!open_) {
        open_ = true;
        ++rounds_;
        joined_.assign(joined_.size(), false);
        finished_ = 0;
        opened_.notify(sc_core::SC_ZERO_TIME);
    }
    if (joined_[static_cast<size_t>(m)]) throw SimulationError("lockstep group: an engine joined a round twice");
    joined_[static_cast<size_t>(m)] = true;
}

void LockstepGroup::finish(int m) {
    if (!open_ || !joined_[static_cast<size_t>(m)])
        throw SimulationError("lockstep group: an engine finished a round it did not join");
    if (++finished_ < members()) {
        sc_core::wait(closed_);
        return;
    }
    // The last pass of the round ended: everyone's step ends now.
    open_ = false;
    closed_.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace cosim
