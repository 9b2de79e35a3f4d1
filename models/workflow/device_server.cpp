#include "sim_time.hpp"
#include "device_server.hpp"

namespace cosim {

void await(const TicketPtr& ticket) {
    while (!ticket->finished) sc_core::wait(ticket->done);
}

DeviceServer::DeviceServer(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    SC_HAS_PROCESS(DeviceServer);
    SC_THREAD(run);
}

TicketPtr DeviceServer::submit(Job job) {
    auto ticket = std::make_shared<Ticket>();
    queue_.emplace_back(ticket, std::move(job));
    wake_.notify(sc_core::SC_ZERO_TIME);
    return ticket;
}

void DeviceServer::cancel_pending() {
    for (auto& [ticket, job] : queue_) {
        ticket->finished = true;
        ticket->end_ns = now_ns();
        ticket->done.notify(sc_core::SC_ZERO_TIME);
    }
    queue_.clear();
}

void DeviceServer::drain() {
    while (busy()) sc_core::wait(idle_);
}

void DeviceServer::run() {
    for (;;) {
        while (queue_.empty()) sc_core::wait(wake_);
        auto [ticket, job] = std::move(queue_.front());
        queue_.pop_front();
        running_ = true;
        ticket->started = true;
        try {
            job(*ticket);
        } catch (...) {
            error_ = std::current_exception();
            sc_core::sc_stop();
            return;
        }
        running_ = false;
        ticket->finished = true;
        ticket->end_ns = now_ns();
        ticket->done.notify(sc_core::SC_ZERO_TIME);
        if (queue_.empty()) idle_.notify(sc_core::SC_ZERO_TIME);
    }
}

}  // namespace cosim
