#include "sim_time.hpp"
#include "device_server.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace cosim {

void await(const TicketPtr& ticket) {
    while (!ticket->finished) sc_core::wait(ticket->done);
}

DeviceServer::DeviceServer(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_HAS_PROCESS(DeviceServer);
    SC_THREAD(run);
}

TicketPtr DeviceServer::submit(Job job, int owner, uint64_t ready_units) {
    auto ticket = std::make_shared<Ticket>();
    queue_.push_back(Queued{ticket, std::move(job), owner, std::max(ready_units, now_units())});
    wake_.notify(sc_core::SC_ZERO_TIME);
    return ticket;
}

void DeviceServer::cancel_pending(int owner) {
    std::deque<Queued> kept;
    for (Queued& q : queue_) {
        if (q.owner != owner) {
            kept.push_back(std::move(q));
            continue;
        }
        q.ticket->finished = true;
        q.ticket->end_units = now_units();
        q.ticket->end_ns = units_to_ns(q.ticket->end_units);
        q.ticket->done.notify(sc_core::SC_ZERO_TIME);
    }
    queue_.swap(kept);
    idle_.notify(sc_core::SC_ZERO_TIME);
}

bool DeviceServer::withdraw(const TicketPtr& ticket) {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (it->ticket != ticket) continue;
        const int owner = it->owner;
        queue_.erase(it);
        ticket->finished = true;
        ticket->end_units = now_units();
        ticket->end_ns = units_to_ns(ticket->end_units);
        ticket->done.notify(sc_core::SC_ZERO_TIME);
        wake_.notify(sc_core::SC_ZERO_TIME);  // the request's next job may now be first
        if (!busy(owner)) idle_.notify(sc_core::SC_ZERO_TIME);
        return true;
    }
    return false;
}

bool DeviceServer::busy(int owner) const {
    if (running_ && running_owner_ == owner) return true;
    for (const Queued& q : queue_)
        if (q.owner == owner) return true;
    return false;
}

void DeviceServer::drain(int owner) {
    while (busy(owner)) sc_core::wait(idle_);
}

void DeviceServer::run() {
    for (;;) {
        while (queue_.empty()) sc_core::wait(wake_);
        // Of each request's first queued job, the one ready earliest (ties: queued first);
        // if none is ready, wait for the earliest.
        const uint64_t now = now_units();
        auto pick = queue_.end();
        uint64_t earliest = UINT64_MAX;
        seen_.clear();
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
            if (std::find(seen_.begin(), seen_.end(), it->owner) != seen_.end()) continue;
            seen_.push_back(it->owner);
            if (it->ready > now) earliest = std::min(earliest, it->ready);
            else if (pick == queue_.end() || it->ready < pick->ready) pick = it;
        }
        if (pick == queue_.end()) {
            sc_core::wait(sc_core::sc_time::from_value(earliest - now), wake_);
            continue;
        }
        Queued q = std::move(*pick);
        queue_.erase(pick);
        running_ = true;
        running_owner_ = q.owner;
        q.ticket->started = true;
        const double start = now_ns();
        try {
            q.job(*q.ticket);
        } catch (...) {
            error_ = std::current_exception();
            sc_core::sc_stop();
            return;
        }
        held_ns_ += now_ns() - start;
        running_ = false;
        running_owner_ = -1;
        q.ticket->finished = true;
        q.ticket->end_units = now_units();
        q.ticket->end_ns = units_to_ns(q.ticket->end_units);
        q.ticket->done.notify(sc_core::SC_ZERO_TIME);
        // Whoever drains waits for its own jobs: told when the last of them is done
        // (another request's jobs may still be queued).
        if (!busy(q.owner)) idle_.notify(sc_core::SC_ZERO_TIME);
    }
}

}  // namespace cosim
