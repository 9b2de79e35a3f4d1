#pragma once
// A parallel group's collectives on its GPUs' PCIe links (docs/hardware.md, "Collectives on
// shared links"). Where a group's peer link is PCIe (ParallelLayout::on_pcie), its GPUs reach
// each other over the same x16 links that carry the host's transfers to them: each pass's
// collectives are booked there as TLM transactions (PcieLink::peer), after the pass's
// compute, both directions at once (each GPU sends and receives as much in a ring), first
// come first served with the draft's and the host's traffic. The system's link of the group
// stands for each of its GPUs' links, as the group's proxy stands for each GPU's shard.
// A pass's collectives are booked as one span of the link's time per direction (their ring
// steps back to back, timed by the peer link: CollectiveTraffic::link_ns): the link's busy
// time per pass is exact; its place within the pass is at the pass's end rather than after
// each layer. With the link to itself the span ends where the closed form says.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "pcie_link.hpp"
#include "parallel_layout.hpp"

namespace cosim {

// The time bookings took, each direction, in booking order (what CollectiveLink::release
// frees), and a place in it (a booking's first piece).
struct HeldLinkTime {
    LinkPieces in;
    LinkPieces out;
};
struct HeldLinkMark {
    size_t in = 0;
    size_t out = 0;
};

// A pass's compute in kernel units: its closed-form time less its collectives' link time
// (`link_units`, each collective's time rounded as its booking rounds it), so that with the
// link to itself it ends at the very instant one wait of `pass_ns` would. (The pass holds
// its collectives' time: less is a model's error, reported as one.)
uint64_t compute_units(double pass_ns, uint64_t link_units);

class CollectiveLink : public sc_core::sc_module {
public:
    using Held = HeldLinkTime;
    using Mark = HeldLinkMark;

    tlm_utils::simple_initiator_socket<CollectiveLink> port;

    // Bound to `link`'s collective socket.
    CollectiveLink(sc_core::sc_module_name name, PcieLink& link);

    // Books `traffic` (timed by `peer`) from `ready_units` on, both directions; returns the
    // instant both are through (ready_units itself when there is nothing to move). `held`,
    // if given, gains the time it took; `wait`, if given, is set to how much later than with
    // the link to itself it ends.
    uint64_t book(const CollectiveTraffic& traffic, const PeerLink& peer, uint64_t ready_units, Held* held = nullptr,
                  uint64_t* wait = nullptr);
    // A pass that ran waited `units` for the link (book's `wait`): counted on the link.
    void count_wait(uint64_t units) { link_.add_collective_wait(units); }
    static Mark mark(const Held& held) { return {held.in.size(), held.out.size()}; }
    // Frees what is left, from now on, of the time `held` took from `from` on, and forgets it.
    void release(Held& held, Mark from = Mark());

private:
    // One transaction on the link's collective socket; returns the instant it is through.
    uint64_t send(tlm::tlm_command command, uint64_t duration, uint64_t ready, LinkPieces* pieces, size_t from,
                  bool release);

    PcieLink& link_;  // for its counters; the bookings go through `port`
    tlm::tlm_generic_payload payload_;
    CollectiveBooking* booking_;  // owned by payload_
};

// The tokens of a decode run with their collectives booked before the run's one wait:
// token i computes from the end of token i - 1, then its collectives take the link. A run
// cut short frees the bookings of the tokens it will not decode; the token under way keeps
// its own and is the first of the next plan.
class BookedRun {
public:
    explicit BookedRun(CollectiveLink& link) : link_(link) {}
    // Plans tokens whose compute takes `compute_units[i]` and whose collectives are `traffic`
    // each, from now on (after the kept token under way, whose entry is not read): returns
    // each token's time, for wait_tokens with no head start.
    std::vector<double> plan(const std::vector<uint64_t>& compute_units, const CollectiveTraffic& traffic,
                             const PeerLink& peer);
    // After the wait: `completed` tokens ran; `keep_next`: the one under way goes on (the host
    // retuned the run), else it stops too (an abort). Frees the rest.
    void settle(int64_t completed, bool keep_next);
    // Frees everything still held (the run is over).
    void release_all();

private:
    // A planned token: where its pieces begin in held_, when it ends, and how long it waited
    // for the link (counted when it is decoded).
    struct Token {
        CollectiveLink::Mark mark;
        uint64_t end = 0;
        uint64_t wait = 0;
    };
    void clear();

    CollectiveLink& link_;
    CollectiveLink::Held held_;  // every planned token's pieces, in order
    std::vector<Token> tokens_;
    bool kept_ = false;  // token 0: under way before the plan
};

}  // namespace cosim
