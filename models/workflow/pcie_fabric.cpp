#include "sim_time.hpp"
#include "pcie_fabric.hpp"

#include <algorithm>

#include "errors.hpp"

namespace cosim {

namespace {
const Role kLinkRoles[3] = {Role::link_draft, Role::link_prm, Role::link_target};
}  // namespace

PcieFabric::PcieFabric(sc_core::sc_module_name name, const std::vector<PcieLinkParams>& links,
                       const std::vector<std::string>& names)
    : sc_core::sc_module(name), in_flight_(links.size(), 0), collectives_(links.size(), 0) {
    if (names.size() != links.size()) throw SimulationError("internal: a PCIe link without a name");
    for (size_t i = 0; i < links.size(); ++i) {
        links_.push_back(std::make_unique<PcieLink>(names[i].c_str(), links[i]));
        dmas_.push_back(std::make_unique<HostDma>(("dma_" + names[i]).c_str()));
        dmas_[i]->socket.bind(links_[i]->socket);
    }
}

void PcieFabric::watch(bool fine) {
    watching_ = true;
    watch_fine_ = fine;
    for (size_t i = 0; i < links_.size(); ++i) {
        if (!links_[i]->carries_collectives()) continue;
        links_[i]->watch_collectives([this, i](uint64_t start, uint64_t end, int delta) {
            boundaries_.push(Boundary{start, i, delta, true});
            boundaries_.push(Boundary{end, i, -delta, true});
            arm();
        });
    }
}

uint64_t PcieFabric::ready_units(double ready_ns) {
    const uint64_t now = now_units();
    const double ahead = ready_ns - units_to_ns(now);
    return ahead > 0.0 ? now + duration_units(ahead) : now;
}

Delivery PcieFabric::leg(ActivityLog& log, size_t i, Role role, LinkDirection dir, uint64_t bytes,
                         uint64_t ready_units, DepList deps, int32_t step, bool fine) {
    const uint64_t now = now_units();
    const uint64_t ready = std::max(ready_units, now);
    const uint64_t end_units = dmas_[i]->post(dir, bytes, sc_core::sc_time::from_value(ready - now)).value();
    // Booked when posted: it starts when its data is ready, or once the direction has no
    // booked time left at that moment, and keeps that time whatever is posted later.
    const uint64_t start_units = links_[i]->last_start_units(dir);
    const ActivityKind kind =
        dir == LinkDirection::host_to_device ? ActivityKind::transfer_h2d : ActivityKind::transfer_d2h;
    const int64_t id = log.add(role, kind, step, units_to_ns(start_units), units_to_ns(end_units),
                               static_cast<int64_t>(bytes), deps, 0.0);
    log.set_leg(id, static_cast<int32_t>(i), units_to_ns(ready));
    if (watching_ && (watch_fine_ || !fine)) {
        const auto size = static_cast<int64_t>(bytes);
        boundaries_.push(Boundary{start_units, i, size});
        boundaries_.push(Boundary{end_units, i, -size});
        arm();
    }
    return Delivery{units_to_ns(end_units), id, end_units, start_units};
}

void PcieFabric::arm() {
    // An earlier notification replaces a later pending one; a later one is ignored.
    const uint64_t now = now_units();
    if (!boundaries_.empty()) changed.notify(sc_core::sc_time::from_value(boundaries_.top().at - now));
}

void PcieFabric::advance() {
    const uint64_t now = now_units();
    while (!boundaries_.empty() && boundaries_.top().at <= now) {
        const Boundary& b = boundaries_.top();
        if (b.collective) collectives_[b.link] += static_cast<int>(b.bytes);
        else in_flight_[b.link] += b.bytes;
        boundaries_.pop();
    }
    arm();
}

Delivery FabricPort::send_at(Endpoint from, Endpoint to, uint64_t bytes, uint64_t ready_units, DepList deps,
                             int32_t step, bool fine) {
    Delivery d{units_to_ns(ready_units), kNoActivity, ready_units, ready_units};
    auto leg = [&](Endpoint device, LinkDirection dir, DepList after) {
        const auto e = static_cast<size_t>(device);
        const uint64_t ready = d.arrival_units;
        // A verifier on the target's GPUs (SpecReason) sends over the target's link, named so.
        const bool on_target = device == Endpoint::prm && links_[e] == links_[static_cast<size_t>(Endpoint::target)];
        const Role role = kLinkRoles[on_target ? static_cast<size_t>(Endpoint::target) : e];
        Delivery own = fabric_.leg(log_, links_[e], role, dir, bytes, ready, after, step, fine);
        if (device != Endpoint::draft || draft_host_link_ == kNoLink) return own;
        // The switch's shared link carries the same data alongside, from the same moment on.
        Delivery shared = fabric_.leg(log_, draft_host_link_, Role::link_draft, dir, bytes, ready, after, step, fine);
        return shared.arrival_units > own.arrival_units ? shared : own;
    };
    if (from != Endpoint::host) {
        d = leg(from, LinkDirection::device_to_host, deps);
        const int64_t first = d.activity;
        if (to != Endpoint::host) d = leg(to, LinkDirection::host_to_device, DepList(&first, 1));
        return d;
    }
    if (to != Endpoint::host) d = leg(to, LinkDirection::host_to_device, deps);
    return d;
}

}  // namespace cosim
