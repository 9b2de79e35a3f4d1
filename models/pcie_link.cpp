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

size_t LinkBookings::after(uint64_t t, size_t from) const {
    // Ends are sorted as the intervals are: the first end past t.
    return static_cast<size_t>(std::upper_bound(busy_.begin() + static_cast<std::ptrdiff_t>(from), busy_.end(), t,
                                                [](uint64_t v, const Interval& b) { return v < b.end; }) -
                               busy_.begin());
}

std::pair<uint64_t, uint64_t> LinkBookings::book(uint64_t ready, uint64_t duration, uint64_t now,
                                                 LinkPieces* pieces) {
    // What has ended by now can no longer hold anything up.
    while (head_ < busy_.size() && busy_[head_].end <= now) ++head_;
    if (head_ > 64 && head_ * 2 > busy_.size()) {
        busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(head_));
        head_ = 0;
    }
    if (head_ == busy_.size() || ready >= busy_.back().end) {  // nothing booked from `ready` on
        if (duration > 0) {
            occupy(busy_.size(), ready, ready + duration);
            if (pieces != nullptr) pieces->emplace_back(ready, ready + duration);
        }
        return {ready, ready + duration};
    }
    uint64_t t = ready;
    uint64_t left = duration;
    uint64_t start = 0;
    bool started = false;
    for (size_t k = after(t, head_);;) {
        while (k < busy_.size() && busy_[k].start <= t) t = busy_[k++].end;  // booked at t: from its end
        if (!started) {
            start = t;
            started = true;
        }
        if (left == 0) break;  // nothing to move: it ends where it starts
        // Free from t until the next booking: take what is needed of it.
        const uint64_t take = k == busy_.size() ? left : std::min(left, busy_[k].start - t);
        occupy(k, t, t + take);  // may merge with its neighbours
        if (pieces != nullptr) pieces->emplace_back(t, t + take);
        left -= take;
        t += take;
        if (left == 0) break;
        k = after(t, head_);
    }
    return {start, t};
}

void LinkBookings::occupy(size_t at, uint64_t start, uint64_t end) {
    // `at`: the first booking after the free time [start, end) lies in.
    const bool joins_next = at < busy_.size() && busy_[at].start == end;
    const bool joins_prev = at > head_ && busy_[at - 1].end == start;
    if (joins_prev && joins_next) {
        busy_[at - 1].end = busy_[at].end;
        busy_.erase(busy_.begin() + static_cast<std::ptrdiff_t>(at));
    } else if (joins_prev) {
        busy_[at - 1].end = end;
    } else if (joins_next) {
        busy_[at].start = start;
    } else {
        busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(at), Interval{start, end});
    }
}

uint64_t LinkBookings::release(const LinkPieces& pieces, uint64_t now, size_t from_piece, LinkPieces* freed) {
    uint64_t total = 0;
    for (size_t i = from_piece; i < pieces.size(); ++i) {
        const auto [start, end] = pieces[i];
        const uint64_t from = std::max(start, now);
        if (from >= end) continue;
        free(from, end);
        if (freed != nullptr) freed->emplace_back(from, end);
        total += end - from;
    }
    return total;
}

void LinkBookings::free(uint64_t start, uint64_t end) {
    // [start, end) lies inside one busy interval: it was booked whole and merging only joins.
    const size_t k = after(start, head_);
    if (k == busy_.size() || busy_[k].start > start || busy_[k].end < end)
        throw SimulationError("internal: a released booking is not booked");
    Interval& b = busy_[k];
    if (b.start == start && b.end == end) {
        busy_.erase(busy_.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (b.start == start) {
        b.start = end;
    } else if (b.end == end) {
        b.end = start;
    } else {
        const Interval tail{end, b.end};
        b.end = start;
        busy_.insert(busy_.begin() + static_cast<std::ptrdiff_t>(k + 1), tail);
    }
}

PcieLink::PcieLink(sc_core::sc_module_name name, const PcieLinkParams& params)
    : sc_core::sc_module(name), socket("socket"), upstream("upstream"), downstream("downstream"), peer("peer"),
      params_(params) {
    upstream.register_b_transport(this, &PcieLink::forward);
    peer.register_b_transport(this, &PcieLink::collective);
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
    if (carries_collectives_) {
        // A group's collectives share the link: what the transfer would have waited without them.
        const uint64_t alone = without_collectives_[d].book(now + delay.value(), duration_units(duration_ns), now).second;
        transfer_wait_units_ += end > alone ? end - alone : 0;
    }
    last_start_[d] = start;
    bytes_[d] += length;
    transfers_[d] += 1;
    busy_ns_[d] += duration_ns;
    delay = sc_core::sc_time::from_value(end - now);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void PcieLink::collective(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    CollectiveBooking* booking = nullptr;
    trans.get_extension(booking);
    if (booking == nullptr || (booking->release && booking->pieces == nullptr)) {
        trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    const int d = trans.get_command() == tlm::TLM_WRITE_COMMAND ? index(LinkDirection::host_to_device)
                                                                 : index(LinkDirection::device_to_host);
    const uint64_t now = now_units();
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    LinkPieces changed;  // what the waveform is told of
    LinkPieces* watched = collective_observer_ ? &changed : nullptr;
    if (booking->release) {
        const size_t from = std::min(booking->from, booking->pieces->size());
        collective_units_[d] -= booked_[d].release(*booking->pieces, now, from, watched);
        booking->pieces->resize(from);
        for (const auto& [start, end] : changed) collective_observer_(start, end, -1);
        return;
    }
    LinkPieces* pieces = booking->pieces != nullptr ? booking->pieces : watched;
    const size_t before = pieces != nullptr ? pieces->size() : 0;
    const uint64_t end = booked_[d].book(now + delay.value(), booking->duration_units, now, pieces).second;
    if (watched != nullptr)
        for (size_t i = before; i < pieces->size(); ++i) collective_observer_((*pieces)[i].first, (*pieces)[i].second, 1);
    collective_units_[d] += booking->duration_units;
    delay = sc_core::sc_time::from_value(end - now);
}

double PcieLink::collective_ns(LinkDirection dir) const {
    return units_to_ns(collective_units_[index(dir)]);
}

double PcieLink::collective_wait_ns() const { return units_to_ns(collective_wait_units_); }

double PcieLink::transfer_wait_ns() const { return units_to_ns(transfer_wait_units_); }

void PcieLink::forward(int /*initiator*/, tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    const uint64_t address = trans.get_address();
    const auto port = static_cast<int>(address >> kPcieRouteShift);
    if (port >= attached_) {
        trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    ++commands_;
    trans.set_address(address & (pcie_route(1) - 1));
    downstream[port]->b_transport(trans, delay);
    trans.set_address(address);
}

}  // namespace cosim
