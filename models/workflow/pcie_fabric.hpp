#pragma once
// The PCIe links of a system: one link from the host to each device (draft,
// PRM, target). Data between two devices is stored and forwarded through host
// memory: a device -> host leg on the sender's link, then host -> device on
// the receiver's. Transfers are posted as TLM transactions without blocking
// the caller; the receiving job waits for the returned arrival time.
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "host_dma.hpp"
#include "pcie_link.hpp"
#include "power.hpp"

namespace cosim {

enum class Endpoint : int { draft = 0, prm = 1, target = 2, host = 3 };

struct Delivery {
    double arrival_ns = 0.0;
    int64_t activity = kNoActivity;  // the last leg
    uint64_t arrival_units = 0;      // the same instant in kernel units, exactly
};

class PcieFabric : public sc_core::sc_module {
public:
    PcieFabric(sc_core::sc_module_name name, const std::array<PcieLinkParams, 3>& links, ActivityLog& log);

    // Sends `bytes` from `from` to `to`, starting no earlier than `ready_ns`
    // and after the activities in `deps`. Records one activity per leg.
    Delivery send(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns, DepList deps,
                  int32_t step);
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
        return send_fine_at(from, to, bytes, ready_units(ready_ns), deps, step);
    }
    // The same, ready at a kernel time given in units (exact: a schedule's instants).
    Delivery send_fine_at(Endpoint from, Endpoint to, uint64_t bytes, uint64_t ready_units,
                          std::initializer_list<int64_t> deps, int32_t step) {
        fine_ = true;
        const Delivery d = send_at(from, to, bytes, ready_units, DepList(deps.begin(), deps.size()), step);
        fine_ = false;
        return d;
    }

    const PcieLink& link(Endpoint device) const { return *links_[static_cast<int>(device)]; }

    // Waveforms: track the bytes in flight on each link. `changed` fires at every
    // instant a watched leg starts or ends; the watcher then calls advance() and
    // reads bytes_in_flight(). Fine sends (send_fine) count only with `fine`.
    void watch(bool fine) {
        watching_ = true;
        watch_fine_ = fine;
    }
    // Applies the starts and ends up to now and arms `changed` for the next one.
    void advance();
    int64_t bytes_in_flight(Endpoint device) const { return in_flight_[static_cast<int>(device)]; }
    sc_core::sc_event changed;

private:
    // `ready_ns` as an absolute kernel time (now if it has passed).
    static uint64_t ready_units(double ready_ns);
    Delivery send_at(Endpoint from, Endpoint to, uint64_t bytes, uint64_t ready_units, DepList deps, int32_t step);
    Delivery leg(Endpoint device, LinkDirection dir, uint64_t bytes, uint64_t ready_units, DepList deps,
                 int32_t step);
    void arm();

    // A watched leg's start (+bytes) or end (-bytes) on a link, in kernel units.
    struct Boundary {
        uint64_t at;
        int link;
        int64_t bytes;
        bool operator>(const Boundary& other) const { return at > other.at; }
    };
    ActivityLog& log_;
    bool watching_ = false;
    bool watch_fine_ = false;
    bool fine_ = false;  // the leg being posted belongs to a fine send
    // Earliest on top: one timed event for the next boundary, not one queued event each.
    std::priority_queue<Boundary, std::vector<Boundary>, std::greater<Boundary>> boundaries_;
    std::array<int64_t, 3> in_flight_{};
    std::array<std::unique_ptr<PcieLink>, 3> links_;
    std::array<std::unique_ptr<HostDma>, 3> dmas_;
};

}  // namespace cosim
