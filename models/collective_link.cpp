#include "sim_time.hpp"
#include "collective_link.hpp"

#include <algorithm>
#include <iterator>
#include <string>

#include "errors.hpp"

namespace cosim {

uint64_t compute_units(double pass_ns, uint64_t link_units) {
    const uint64_t pass = duration_units(pass_ns);
    if (link_units > pass)
        throw SimulationError("internal: a pass of " + std::to_string(pass_ns) + " ns shorter than its collectives' " +
                              std::to_string(units_to_ns(link_units)) + " ns on the link");
    return pass - link_units;
}

CollectiveLink::CollectiveLink(sc_core::sc_module_name name, PcieLink& link)
    : sc_core::sc_module(name), port("port"), link_(link), booking_(new CollectiveBooking) {
    port.bind(link.peer);
    link.mark_collectives();
    payload_.set_extension(booking_);
    payload_.set_data_length(0);  // its time is the booking's (a prefill's bytes exceed 32 bits)
}

uint64_t CollectiveLink::send(tlm::tlm_command command, uint64_t duration, uint64_t ready, LinkPieces* pieces,
                              size_t from, bool release) {
    booking_->duration_units = duration;
    booking_->pieces = pieces;
    booking_->from = from;
    booking_->release = release;
    payload_.set_command(command);
    payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const uint64_t now = now_units();
    sc_core::sc_time delay = sc_core::sc_time::from_value(ready - now);
    port->b_transport(payload_, delay);
    if (payload_.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw SimulationError(std::string(name()) + ": the link refused a collective");
    return now + delay.value();
}

uint64_t CollectiveLink::book(const CollectiveTraffic& traffic, const PeerLink& peer, uint64_t ready_units,
                              Held* held, uint64_t* wait) {
    const double ns = traffic.link_ns(peer);
    if (wait != nullptr) *wait = 0;
    if (ns <= 0.0) return ready_units;
    const uint64_t duration = duration_units(ns);
    const uint64_t in = send(tlm::TLM_WRITE_COMMAND, duration, ready_units, held != nullptr ? &held->in : nullptr, 0,
                             false);
    const uint64_t out = send(tlm::TLM_READ_COMMAND, duration, ready_units, held != nullptr ? &held->out : nullptr, 0,
                              false);
    const uint64_t end = std::max(in, out);
    if (wait != nullptr) *wait = end - (ready_units + duration);
    return end;
}

void CollectiveLink::release(Held& held, Mark from) {
    const uint64_t now = now_units();
    if (from.in < held.in.size()) send(tlm::TLM_WRITE_COMMAND, 0, now, &held.in, from.in, true);
    if (from.out < held.out.size()) send(tlm::TLM_READ_COMMAND, 0, now, &held.out, from.out, true);
}

std::vector<double> BookedRun::plan(const std::vector<uint64_t>& compute_units, const CollectiveTraffic& traffic,
                                    const PeerLink& peer) {
    const size_t first = kept_ ? 1 : 0;
    const size_t tokens = std::max(first, compute_units.size());
    tokens_.resize(first);
    std::vector<double> durations;
    durations.reserve(tokens);
    uint64_t t = now_units();
    for (size_t i = 0; i < tokens; ++i) {
        if (i >= first) {
            Token token{CollectiveLink::mark(held_)};
            token.end = link_.book(traffic, peer, t + compute_units[i], &held_, &token.wait);
            tokens_.push_back(token);
        }
        durations.push_back(units_to_ns(tokens_[i].end - t));
        t = tokens_[i].end;
    }
    return durations;
}

void BookedRun::settle(int64_t completed, bool keep_next) {
    const size_t done = std::min(static_cast<size_t>(completed), tokens_.size());
    for (size_t i = 0; i < done; ++i) link_.count_wait(tokens_[i].wait);
    const size_t keep = std::min(tokens_.size(), done + (keep_next ? 1 : 0));
    if (keep < tokens_.size()) link_.release(held_, tokens_[keep].mark);  // frees and forgets them
    kept_ = keep > done;
    if (!kept_) {
        clear();
        return;
    }
    // The token under way becomes the first: the tokens before it have ended.
    Token under_way = tokens_[done];
    held_.in.erase(held_.in.begin(), held_.in.begin() + static_cast<std::ptrdiff_t>(under_way.mark.in));
    held_.out.erase(held_.out.begin(), held_.out.begin() + static_cast<std::ptrdiff_t>(under_way.mark.out));
    under_way.mark = CollectiveLink::Mark();
    tokens_.assign(1, under_way);
}

void BookedRun::release_all() {
    link_.release(held_);
    clear();
}

void BookedRun::clear() {
    held_.in.clear();
    held_.out.clear();
    tokens_.clear();
    kept_ = false;
}

}  // namespace cosim
