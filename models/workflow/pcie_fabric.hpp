#pragma once
// The PCIe links of a system: one link from the host to each device (every
// draft board or GPU of the cluster). Data between two devices is stored and
// forwarded through host memory: a device -> host leg on the sender's link,
// then host -> device on the receiver's. Draft boards behind a PCIe switch also
// cross the switch's link to the host, which they share: the switch forwards as
// the data arrives, so both links carry a leg at once, and the data is through
// when the later of the two ends. Transfers are posted as TLM
// transactions without blocking the caller; the receiving job waits for the
// returned arrival time. Requests reach the fabric through a FabricPort: their
// own draft, PRM and target links, and their own activity log.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "host_dma.hpp"
#include "pcie_link.hpp"

namespace cosim {

enum class Endpoint : int { draft = 0, prm = 1, target = 2, host = 3 };

struct Delivery {
    double arrival_ns = 0.0;
    int64_t activity = kNoActivity;  // the last leg
    uint64_t arrival_units = 0;      // the same instant in kernel units, exactly
    uint64_t start_units = 0;        // when the last leg starts, in kernel units
};

class PcieFabric : public sc_core::sc_module {
public:
    // One link per device, named `names[i]` (the waveform and errors show them).
    PcieFabric(sc_core::sc_module_name name, const std::vector<PcieLinkParams>& links,
               const std::vector<std::string>& names);

    size_t links() const { return links_.size(); }
    const PcieLink& link(size_t index) const { return *links_[index]; }
    // The link as the interconnect the host's device commands cross (PcieLink::attach).
    PcieLink& interconnect(size_t index) { return *links_[index]; }
    // The host's DMA engine on that link: a host of one's own moves data with it
    // (HostDma::transfer waits for the data; the fabric's legs post theirs).
    HostDma& dma(size_t index) { return *dmas_[index]; }

    // Waveforms: track the bytes in flight on each link. `changed` fires at every
    // instant a watched leg starts or ends; the watcher then calls advance() and
    // reads bytes_in_flight(). Fine sends (FabricPort::send_fine) count only with `fine`.
    void watch(bool fine);
    // Applies the starts and ends up to now and arms `changed` for the next one.
    void advance();
    int64_t bytes_in_flight(size_t index) const { return in_flight_[index]; }
    // The directions of the link a parallel group's collectives hold now (0, 1 or 2).
    int collectives_in_flight(size_t index) const { return collectives_[index]; }
    sc_core::sc_event changed;

private:
    friend class FabricPort;
    // `ready_ns` as an absolute kernel time (now if it has passed).
    static uint64_t ready_units(double ready_ns);
    Delivery leg(ActivityLog& log, size_t index, Role role, LinkDirection dir, uint64_t bytes, uint64_t ready_units,
                 DepList deps, int32_t step, bool fine);
    void arm();

    // A watched leg's start (+bytes) or end (-bytes) on a link, in kernel units; or, for
    // `collective`, a piece of a collective's booking (+1, -1 directions held).
    struct Boundary {
        uint64_t at;
        size_t link;
        int64_t bytes;
        bool collective = false;
        bool operator>(const Boundary& other) const { return at > other.at; }
    };
    bool watching_ = false;
    bool watch_fine_ = false;
    // Earliest on top: one timed event for the next boundary, not one queued event each.
    std::priority_queue<Boundary, std::vector<Boundary>, std::greater<Boundary>> boundaries_;
    std::vector<int64_t> in_flight_;
    std::vector<int> collectives_;
    std::vector<std::unique_ptr<PcieLink>> links_;
    std::vector<std::unique_ptr<HostDma>> dmas_;
};

// One request slot's view of the fabric: which link its draft, PRM and target sit on,
// and the log its transfers are recorded in.
class FabricPort {
public:
    static constexpr size_t kNoLink = static_cast<size_t>(-1);
    // `draft_host_link`: the switch link the draft board shares (kNoLink: none).
    FabricPort(PcieFabric& fabric, ActivityLog& log, std::array<size_t, 3> links, size_t draft_host_link = kNoLink)
        : fabric_(fabric), log_(log), links_(links), draft_host_link_(draft_host_link) {}

    // Sends `bytes` from `from` to `to`, starting no earlier than `ready_ns`
    // and after the activities in `deps`. Records one activity per leg.
    Delivery send(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns, DepList deps, int32_t step) {
        return send_at(from, to, bytes, PcieFabric::ready_units(ready_ns), deps, step, false);
    }
    Delivery send(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns, std::initializer_list<int64_t> deps,
                  int32_t step) {
        return send(from, to, bytes, ready_ns, DepList(deps.begin(), deps.size()), step);
    }
    Delivery send(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns, const std::vector<int64_t>& deps,
                  int32_t step) {
        return send(from, to, bytes, ready_ns, DepList(deps), step);
    }
    // A send like any other that waveforms without token detail leave out: a
    // shadow-sync stream's token (a few bytes every target token) or a control
    // message (a verdict, a command: a microsecond blip per step).
    Delivery send_fine(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns,
                       std::initializer_list<int64_t> deps, int32_t step) {
        return send_fine_at(from, to, bytes, PcieFabric::ready_units(ready_ns), deps, step);
    }
    // The same, ready at a kernel time given in units (exact: a schedule's instants).
    Delivery send_fine_at(Endpoint from, Endpoint to, uint64_t bytes, uint64_t ready_units,
                          std::initializer_list<int64_t> deps, int32_t step) {
        return send_at(from, to, bytes, ready_units, DepList(deps.begin(), deps.size()), step, true);
    }
    const PcieLink& link(Endpoint device) const { return fabric_.link(links_[static_cast<size_t>(device)]); }

private:
    Delivery send_at(Endpoint from, Endpoint to, uint64_t bytes, uint64_t ready_units, DepList deps, int32_t step,
                     bool fine);

    PcieFabric& fabric_;
    ActivityLog& log_;
    std::array<size_t, 3> links_;
    size_t draft_host_link_;
};

}  // namespace cosim
