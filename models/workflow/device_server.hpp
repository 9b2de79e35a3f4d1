#pragma once
// One SystemC thread per device that runs submitted jobs in order. The host
// orchestrator submits work and waits on tickets; long jobs watch their
// ticket's abort signal; queued jobs can be dropped (a backtrack cancels
// shadow-sync work on tokens that no longer exist). Requests served at once
// share a device's server: each job carries its request slot (`owner`), and
// cancelling or draining concerns one slot's jobs only.
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

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
    uint64_t end_units = 0;          // the same instant in kernel units, exactly
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

    // A job is ready at `ready_units` (kernel time; when its input has arrived) or when
    // it is submitted, whichever is later. Whenever the device is free, it starts, of each
    // request's first queued job (a request's jobs run in the order it submitted them),
    // the one that became ready first; ties in the order submitted. Work waiting for its
    // data does not hold the device, and the device is FIFO in the order work is ready.
    TicketPtr submit(Job job, int owner = 0, uint64_t ready_units = 0);
    // Drops every job of `owner` not yet started; their tickets finish with nothing produced.
    void cancel_pending(int owner = 0);
    // Drops the job of `ticket` if it has not started (its ticket finishes with nothing
    // produced) and returns true; false if it runs or ran. Aborted work leaves the queue at
    // once instead of waiting for its turn to do nothing.
    bool withdraw(const TicketPtr& ticket);
    // Whether a job of `owner` runs or waits.
    bool busy(int owner = 0) const;
    // The exception a job threw, if any; the simulation was stopped there.
    std::exception_ptr error() const { return error_; }
    // Blocks the calling thread until this server has nothing of `owner` running or queued.
    void drain(int owner = 0);
    // Time spent running jobs: the time jobs held the device, whether it computed or
    // waited within them (a request's serving overhead, a shadow-sync stream between tokens).
    double held_ns() const { return held_ns_; }

private:
    struct Queued {
        TicketPtr ticket;
        Job job;
        int owner;
        uint64_t ready;
    };
    void run();
    std::deque<Queued> queue_;
    std::vector<int> seen_;  // scratch: requests whose first queued job has been looked at
    sc_core::sc_event wake_;
    sc_core::sc_event idle_;
    bool running_ = false;
    int running_owner_ = -1;
    double held_ns_ = 0.0;
    std::exception_ptr error_;
};

}  // namespace cosim
