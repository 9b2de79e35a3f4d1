#include "sim_time.hpp"
#include "request_dispatcher.hpp"

#include <string>

#include "errors.hpp"

namespace cosim {

RequestDispatcher::RequestDispatcher(sc_core::sc_module_name name, int slots)
    : sc_core::sc_module(name), slots_(slots), assigned_(static_cast<size_t>(slots)),
      has_(static_cast<size_t>(slots), false), running_(slots) {
    if (slots < 1) throw ConfigError("cluster: at least one request slot");
    for (int i = 0; i < slots; ++i) wake_.push_back(std::make_unique<sc_core::sc_event>());
    SC_HAS_PROCESS(RequestDispatcher);
    SC_THREAD(run);
}

void RequestDispatcher::supply(TraceChunk chunk) {
    incoming_ = std::make_shared<TraceChunk>(std::move(chunk));
    wants_chunk_ = false;
    chunk_ready_.notify(sc_core::SC_ZERO_TIME);
}

bool RequestDispatcher::fetch_chunk() {
    wants_chunk_ = true;
    sc_core::sc_pause();  // sc_start returns at the end of this delta cycle; its caller supplies
    while (wants_chunk_) sc_core::wait(chunk_ready_);
    chunk_ = std::move(incoming_);
    next_in_chunk_ = 0;
    const TraceChunk& c = *chunk_;
    if (!c.arrival_ns.empty() && c.arrival_ns.size() != c.problems.size())
        throw ConfigError("trace chunk: arrival_ns is not one value per problem");
    return !c.problems.empty();
}

bool RequestDispatcher::next(int slot, Request& out) {
    const auto s = static_cast<size_t>(slot);
    has_[s] = false;
    idle_.insert(slot);
    slot_freed_.notify(sc_core::SC_ZERO_TIME);
    while (!has_[s] && !done_) sc_core::wait(*wake_[s]);
    if (!has_[s]) {
        if (--running_ == 0) all_done_.notify(sc_core::SC_ZERO_TIME);
        return false;
    }
    out = assigned_[s];
    return true;
}

void RequestDispatcher::run() {
    try {
        dispatch();
    } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
    }
}

void RequestDispatcher::dispatch() {
    for (;;) {
        // A request is taken from the trace only when a slot can take it: with one
        // slot, the next chunk is read once the last problem of this one is done.
        while (idle_.empty()) sc_core::wait(slot_freed_);
        if (!chunk_ || next_in_chunk_ >= chunk_->problems.size()) {
            if (!fetch_chunk()) break;
        }
        Request r;
        r.chunk = chunk_;
        r.problem = &chunk_->problems[next_in_chunk_];
        r.index = next_index_;
        const int64_t arrival_ns = chunk_->arrival_ns.empty() ? 0 : chunk_->arrival_ns[next_in_chunk_];
        if (arrival_ns < last_arrival_ns_)
            throw ConfigError("request " + std::to_string(r.index) + ": arrives before the request before it");
        last_arrival_ns_ = arrival_ns;
        r.arrival_units = instant_units(arrival_ns);
        ++next_in_chunk_;
        ++next_index_;
        at_least_units(r.arrival_units);
        while (idle_.empty()) sc_core::wait(slot_freed_);
        const int slot = *idle_.begin();
        idle_.erase(idle_.begin());
        assigned_[static_cast<size_t>(slot)] = std::move(r);
        has_[static_cast<size_t>(slot)] = true;
        wake_[static_cast<size_t>(slot)]->notify(sc_core::SC_ZERO_TIME);
    }
    chunk_.reset();
    done_ = true;
    for (auto& w : wake_) w->notify(sc_core::SC_ZERO_TIME);
    while (running_ > 0) sc_core::wait(all_done_);
    // One resolution step more, so a waveform file holds the last time stamp.
    sc_core::wait(sc_core::sc_get_time_resolution());
}

}  // namespace cosim
