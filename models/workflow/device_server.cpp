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
    queue_.push_back(Queued{ticket, std::move(job), owner, ready_units});
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
        q.ticket->end_ns = now_ns();
        q.ticket->done.notify(sc_core::SC_ZERO_TIME);
    }
    queue_.swap(kept);
    idle_.notify(sc_core::SC_ZERO_TIME);
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
        // The first job that may start now and has no earlier job of its request still
        // waiting (a request's jobs keep their order); if none, wait for the earliest.
        const uint64_t now = now_units();
        auto pick = queue_.end();
        uint64_t earliest = UINT64_MAX;
        std::vector<int> waiting;  // requests whose first queued job is not ready
        for (auto it = queue_.begin(); it != queue_.end(); ++it) {
            if (std::find(waiting.begin(), waiting.end(), it->owner) != waiting.end()) continue;
            if (it->ready <= now) {
                pick = it;
                break;
            }
            waiting.push_back(it->owner);
            earliest = std::min(earliest, it->ready);
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
        busy_ns_ += now_ns() - start;
        running_ = false;
        running_owner_ = -1;
        q.ticket->finished = true;
        q.ticket->end_ns = now_ns();
        q.ticket->done.notify(sc_core::SC_ZERO_TIME);
        // Whoever drains waits for its own jobs: told when the last of them is done
        // (another request's jobs may still be queued).
        if (!busy(q.owner)) idle_.notify(sc_core::SC_ZERO_TIME);
    }
}

}  // namespace cosim
