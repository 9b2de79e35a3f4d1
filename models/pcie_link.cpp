#include "sim_time.hpp"
#include "pcie_link.hpp"

#include <algorithm>
#include <iterator>

#include "errors.hpp"

namespace cosim {

void PcieLinkParams::validate(const std::string& where) const {
    COSIM_PCIE_LINK_PARAMS(COSIM_CHECK_PARAM)
}

double PcieLinkParams::transfer_ns(uint64_t bytes) const {
    // 1 GB/s moves one byte per nanosecond.
    return latency_ns + static_cast<double>(bytes) / effective_gbps();
}

std::pair<uint64_t, uint64_t> LinkBookings::book(uint64_t ready, uint64_t duration, uint64_t now) {
    // What has ended by now can no longer hold anything up.
    while (!busy_.empty() && busy_.begin()->second <= now) busy_.erase(busy_.begin());
    // The first booking that ends after `t`.
    auto after = [this](uint64_t t) {
        auto it = busy_.upper_bound(t);
        if (it != busy_.begin() && std::prev(it)->second > t) --it;
        return it;
    };
    uint64_t t = ready;
    uint64_t left = duration;
    uint64_t start = 0;
    bool started = false;
    for (auto it = after(t);;) {
        while (it != busy_.end() && it->first <= t) {  // booked at t: go on from its end
            t = std::max(t, it->second);
            ++it;
        }
        if (!started) {
            start = t;
            started = true;
        }
        if (left == 0) break;  // nothing to move: it ends where it starts
        // Free from t until the next booking: take what is needed of it.
        const uint64_t take = it == busy_.end() ? left : std::min(left, it->first - t);
        occupy(t, t + take);  // may merge with the booking it runs into
        left -= take;
        t += take;
        if (left == 0) break;
        it = after(t);
    }
    return {start, t};
}

void LinkBookings::occupy(uint64_t from, uint64_t to) {
    auto next = busy_.lower_bound(from);
    if (next != busy_.end() && next->first == to) {  // joins the booking it runs into
        to = next->second;
        next = busy_.erase(next);
    }
    if (next != busy_.begin()) {
        auto prev = std::prev(next);
        if (prev->second == from) {  // continues the booking before it
            prev->second = to;
            return;
        }
    }
    busy_.emplace_hint(next, from, to);
}

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieLinkParams& params)
    : sc_core::sc_module(name), socket("socket"), params_(params) {
    params_.validate(std::string(this->name()));
    socket.register_b_transport(this, &PcieLink::b_transport);
}

void PcieLink::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    LinkDirection dir;
    switch (trans.get_command()) {
        case tlm::TLM_WRITE_COMMAND: dir = LinkDirection::host_to_device; break;
        case tlm::TLM_READ_COMMAND: dir = LinkDirection::device_to_host; break;
        default: trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); return;
    }
    const int d = index(dir);
    const uint64_t length = trans.get_data_length();
    const double duration_ns = params_.transfer_ns(length);
    const uint64_t now = now_units();
    const auto [start, end] = booked_[d].book(now + delay.value(), duration_units(duration_ns), now);
    last_start_[d] = start;
    bytes_[d] += length;
    transfers_[d] += 1;
    busy_ns_[d] += duration_ns;
    delay = sc_core::sc_time::from_value(end - now);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace cosim
