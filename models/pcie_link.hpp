#pragma once
// PCIe link between host, GPUs and the FPGA, as a loosely-timed TLM-2.0 target.
// A write moves data towards the device (host -> device), a read back to the host.
// Each direction is a separate serial resource that a transfer occupies for
// latency + bytes / effective bandwidth. A transfer is posted with the time its data
// is ready (the TLM delay), which may lie in the future: a stream whose tokens will be
// decoded on a known schedule is posted at once. Its time is booked when it is posted
// and never moves, so the arrival time returned stays true: from its ready time on it
// takes the direction's free time, first come first served in posting order, around
// the time earlier postings booked. A transfer ready while the direction is idle
// starts at once; if a transfer posted earlier for later is due while it is under way,
// that one goes at its booked time and this one resumes after it (a transfer posted
// for the future holds the direction only from its booked start, never before).
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "param_rules.hpp"

namespace cosim {

// bandwidth_gbps (raw per direction, GB/s = bytes/ns), efficiency, latency_ns per transfer.
struct PcieLinkParams {
    COSIM_PCIE_LINK_PARAMS(COSIM_DECLARE_PARAM)

    void validate(const std::string& where) const;
    double effective_gbps() const { return bandwidth_gbps * efficiency; }
    double transfer_ns(uint64_t bytes) const;
};

enum class LinkDirection : int { host_to_device = 0, device_to_host = 1 };
constexpr int kLinkDirectionCount = 2;

// One booking's pieces of a direction's time, [start, end) in kernel units.
using LinkPieces = std::vector<std::pair<uint64_t, uint64_t>>;

// One direction's booked time, in kernel units: disjoint busy intervals from now on.
class LinkBookings {
public:
    // Books `duration` units of the free time from `ready` on (`ready` >= `now`):
    // returns the first instant it occupies and the end of its last piece. `pieces`, if
    // given, gains the intervals it took.
    std::pair<uint64_t, uint64_t> book(uint64_t ready, uint64_t duration, uint64_t now, LinkPieces* pieces = nullptr);
    // Frees what is left from `now` on of a booking's pieces (as book() gave them) from
    // index `from` on: exact, since no other booking holds any of that time. Returns the
    // units freed; `freed`, if given, gains the intervals freed.
    uint64_t release(const LinkPieces& pieces, uint64_t now, size_t from = 0, LinkPieces* freed = nullptr);
    size_t intervals() const { return busy_.size() - head_; }

private:
    struct Interval {
        uint64_t start;
        uint64_t end;
    };
    // The first booking from `from` on that ends after `t`.
    size_t after(uint64_t t, size_t from) const;
    void occupy(size_t at, uint64_t start, uint64_t end);
    void free(uint64_t start, uint64_t end);
    // Sorted, disjoint, adjacent ones merged; those before `head_` have ended. Most postings
    // add at the end, so a vector beats a tree here.
    std::vector<Interval> busy_;
    size_t head_ = 0;
};

// The interconnect's routing: a device command's address carries the port of its device
// on the link in its top byte (pcie_route), its offset in the device's map below.
constexpr int kPcieRouteShift = 56;
constexpr uint64_t pcie_route(int port) { return static_cast<uint64_t>(port) << kPcieRouteShift; }

// A parallel group's collectives on the GPUs' PCIe links (CollectiveLink): a transaction on
// PcieLink::peer carrying this books `duration_units` of the direction's time (the group's
// ring steps, timed by its peer link), appending its pieces to `pieces` if given; with
// `release`, it frees what is left of `pieces` from index `from` on and drops them there.
struct CollectiveBooking : tlm::tlm_extension<CollectiveBooking> {
    uint64_t duration_units = 0;
    LinkPieces* pieces = nullptr;
    size_t from = 0;
    bool release = false;

    tlm::tlm_extension_base* clone() const override { return new CollectiveBooking(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        *this = static_cast<const CollectiveBooking&>(other);
    }
};

class PcieLink : public sc_core::sc_module {
public:
    // Data transfers (the host's HostDma): booked per direction as above.
    tlm_utils::simple_target_socket<PcieLink> socket;
    // The interconnect: the host's device commands arrive on `upstream` and go on through
    // `downstream` to the device whose port their address's top byte names, the route
    // stripped on the way (as a bus decodes an address). A forwarded command adds no
    // time of its own: its bytes on the wire are the control transfer the host posts on
    // `socket`, booked with the link's serialisation like any transfer.
    tlm_utils::multi_passthrough_target_socket_optional<PcieLink> upstream;
    tlm_utils::multi_passthrough_initiator_socket_optional<PcieLink> downstream;
    // The collectives of the GPU groups behind the link (CollectiveBooking): a write books
    // the host -> device direction (what each GPU receives), a read the other (what it
    // sends), first come first served with the host's transfers.
    tlm_utils::multi_passthrough_target_socket_optional<PcieLink> peer;

    PcieLink(sc_core::sc_module_name name, const PcieLinkParams& params);

    // Puts a device behind the link (binds `device` to `downstream`); returns its route.
    template <typename TargetSocket>
    uint64_t attach(TargetSocket& device) {
        downstream.bind(device);
        return pcie_route(attached_++);
    }
    uint64_t commands() const { return commands_; }

    const PcieLinkParams& params() const { return params_; }
    uint64_t bytes(LinkDirection dir) const { return bytes_[index(dir)]; }
    uint64_t transfers(LinkDirection dir) const { return transfers_[index(dir)]; }
    double busy_ns(LinkDirection dir) const { return busy_ns_[index(dir)]; }
    // The kernel time at which the last transfer posted in `dir` starts.
    uint64_t last_start_units(LinkDirection dir) const { return last_start_[index(dir)]; }
    // The collectives' booked time in `dir`, less what was released.
    double collective_ns(LinkDirection dir) const;
    // Whether a group's collectives may take the link (a CollectiveLink is bound to `peer`).
    bool carries_collectives() const { return carries_collectives_; }
    void mark_collectives() { carries_collectives_ = true; }
    // The waveform's view: told of each piece of a direction's time a collective takes
    // (delta +1) or gives back (-1), [start, end) in kernel units.
    void watch_collectives(std::function<void(uint64_t start, uint64_t end, int delta)> observer) {
        collective_observer_ = std::move(observer);
    }
    // The time passes that ran waited for their collectives past the collectives' own time
    // (other transfers in the way), as the groups behind the link count it.
    void add_collective_wait(uint64_t units) { collective_wait_units_ += units; }
    double collective_wait_ns() const;
    // The time the host's transfers waited for the collectives: each transfer's end against
    // its end on the link without them (booked a second time, on links that carry collectives).
    double transfer_wait_ns() const;

private:
    static int index(LinkDirection dir) { return static_cast<int>(dir); }
    void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    void forward(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
    void collective(int initiator, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);

    PcieLinkParams params_;
    int attached_ = 0;
    uint64_t commands_ = 0;
    std::array<LinkBookings, kLinkDirectionCount> booked_{};
    std::array<uint64_t, kLinkDirectionCount> last_start_{};
    std::array<uint64_t, kLinkDirectionCount> bytes_{};
    std::array<uint64_t, kLinkDirectionCount> transfers_{};
    std::array<double, kLinkDirectionCount> busy_ns_{};
    std::array<uint64_t, kLinkDirectionCount> collective_units_{};
    uint64_t collective_wait_units_ = 0;
    bool carries_collectives_ = false;
    std::function<void(uint64_t, uint64_t, int)> collective_observer_;
    std::array<LinkBookings, kLinkDirectionCount> without_collectives_{};
    uint64_t transfer_wait_units_ = 0;
};

}  // namespace cosim
