#pragma once
// vLLM's data-parallel engines that share a MoE model's experts step in lockstep: every MoE
// layer exchanges tokens between all of them (a gather and a reduce-scatter), so no
// engine's forward pass ends before the slowest one's, and an engine with nothing to run
// runs a dummy pass of one token while any other has work (vLLM's execute_dummy_batch), or
// the others' collectives would wait for it forever. A LockstepGroup is that barrier: a
// round opens when a member with work joins it, every member joins it (with its own work or
// a dummy pass), and it closes when the last one's pass ends, releasing them all then.
#include <cstdint>
#include <vector>

#include <systemc>

namespace cosim {

class LockstepGroup {
public:
    explicit LockstepGroup(int members);

    int members() const { return static_cast<int>(joined_.size()); }
    // Member `m` takes part in the open round, opening one if none is (it has work).
    void join(int m);
    // A round is open that member `m` has not joined: it must run a pass, a dummy if idle.
    bool pending(int m) const { return open_ && !joined_[static_cast<size_t>(m)]; }
    // Notified when a round opens (members waiting idle wake to join it).
    const sc_core::sc_event& opened() const { return opened_; }
    // Member `m`'s pass is over; returns when every member's is (the round's end).
    void finish(int m);
    int64_t rounds() const { return rounds_; }

private:
    std::vector<bool> joined_;
    int finished_ = 0;
    bool open_ = false;
    int64_t rounds_ = 0;
    sc_core::sc_event opened_, closed_;
};

}  // namespace cosim
