#pragma once
// One SystemC thread per device that runs submitted jobs in order. The host
// orchestrator submits work and waits on tickets; long jobs watch their
// ticket's abort signal; queued jobs can be dropped (a backtrack cancels
// shadow-sync work on tokens that no longer exist).
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>

#include <systemc>

#include "abort_signal.hpp"
#include "activity_log.hpp"

namespace cosim {

struct Ticket {
    sc_core::sc_event done;
    AbortSignal abort;
    bool finished = false;
    bool started = false;
    double end_ns = 0.0;
    int64_t activity = kNoActivity;  // the job's last activity: what waits on this ticket depends on it
    int64_t produced = 0;            // tokens the job wrote or decoded
    double above_idle_j = 0.0;       // energy the device drew above idle for this job
};
using TicketPtr = std::shared_ptr<Ticket>;

// Blocks the calling thread until the ticket's job has finished (or was dropped).
void await(const TicketPtr& ticket);

class DeviceServer : public sc_core::sc_module {
public:
    using Job = std::function<void(Ticket&)>;

    explicit DeviceServer(sc_core::sc_module_name name);

    TicketPtr submit(Job job);
    // Drops every job not yet started; their tickets finish with nothing produced.
    void cancel_pending();
    bool busy() const { return running_ || !queue_.empty(); }
    // The exception a job threw, if any; the simulation was stopped there.
    std::exception_ptr error() const { return error_; }
    // Blocks the calling thread until this server has nothing running or queued.
    void drain();

private:
    void run();
    std::deque<std::pair<TicketPtr, Job>> queue_;
    sc_core::sc_event wake_;
    sc_core::sc_event idle_;
    bool running_ = false;
    std::exception_ptr error_;
};

}  // namespace cosim
