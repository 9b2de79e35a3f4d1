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

    // One token of a shadow-sync stream: a send like any other, which waveforms
    // without token detail leave out (a few kB every target token).
    Delivery send_stream_token(Endpoint from, Endpoint to, uint64_t bytes, double ready_ns,
                               std::initializer_list<int64_t> deps, int32_t step) {
        streaming_ = true;
        const Delivery d = send(from, to, bytes, ready_ns, deps, step);
        streaming_ = false;
        return d;
    }

    const PcieLink& link(Endpoint device) const { return *links_[static_cast<int>(device)]; }

    // Waveforms: remember each leg so bytes in flight can be read at any time;
    // `changed` fires whenever a leg starts or ends (call next_change() then, to
    // have it fire at the next one). Legs of shadow-sync token streams count only
    // with `stream_tokens`.
    void watch(bool stream_tokens) {
        watching_ = true;
        watch_streams_ = stream_tokens;
    }
    int64_t bytes_in_flight(Endpoint device);
    // After the watcher has read the values of this instant: fire at the next boundary.
    void next_change() { notify_boundary(true); }
    sc_core::sc_event changed;

private:
    void notify_boundary(bool past_now);
    Delivery leg(Endpoint device, LinkDirection dir, uint64_t bytes, double ready_ns,
                 DepList deps, int32_t step);

    struct Leg {
        double start_ns;
        double end_ns;
        int64_t bytes;
    };
    ActivityLog& log_;
    bool watching_ = false;
    bool watch_streams_ = false;
    bool streaming_ = false;  // the leg being posted carries a stream token
    std::array<std::vector<Leg>, 3> legs_;
    // Start and end times (kernel units) of watched legs not yet passed, earliest on top:
    // one timed event for the next of them, rather than one queued event each.
    std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<uint64_t>> boundaries_;
    std::array<std::unique_ptr<PcieLink>, 3> links_;
    std::array<std::unique_ptr<HostDma>, 3> dmas_;
};

}  // namespace cosim
