#pragma once
// Requests over time: the trace's problems, each arriving at its time, handed in
// trace order to request slots as they free up (the lowest-numbered idle slot
// first, so requests spread over the devices slots are bound to), and the metrics
// of finished requests collected. A request that arrives while every slot is busy
// waits: its start is later than its arrival by its queueing delay. Without
// arrival times every request arrives at 0 and starts once a slot is free (a
// closed loop; with one slot, problem after problem).
//
// The trace arrives a chunk of problems at a time: when the dispatcher needs a
// request and has none, it pauses the kernel (sc_pause) until wants_chunk() is
// answered by supply(), from outside the simulation (the caller of sc_start, so
// reading the trace never runs on a SystemC thread's stack).
#include <cstdint>
#include <exception>
#include <memory>
#include <set>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

struct Request {
    std::shared_ptr<const TraceChunk> chunk;  // holds the problem's events while it runs
    const TraceProblem* problem = nullptr;
    int64_t index = 0;  // in trace order
    uint64_t arrival_units = 0;  // kernel time, exactly the trace's whole ns
};

class RequestDispatcher : public sc_core::sc_module {
public:
    RequestDispatcher(sc_core::sc_module_name name, int slots);

    bool wants_chunk() const { return wants_chunk_; }
    // The next problems (and their arrival times, if any); an empty chunk ends the trace.
    void supply(TraceChunk chunk);

    // Called by slot `slot`'s thread: blocks until a request is its to serve; false
    // once the trace is done.
    bool next(int slot, Request& out);
    // A slot's request is done.
    void finished(ProblemMetrics metrics) { metrics_.push_back(metrics); }
    std::vector<Activity>& kept() { return kept_; }

    const std::vector<ProblemMetrics>& metrics() const { return metrics_; }
    // The finished requests' metrics, handed over and forgotten here (so a run of any
    // length holds only the requests not yet taken); taken() counts them.
    std::vector<ProblemMetrics> take_metrics() {
        taken_ += metrics_.size();
        std::vector<ProblemMetrics> out;
        out.swap(metrics_);
        return out;
    }
    size_t taken() const { return taken_; }
    // Requests handed to slots so far.
    int64_t assigned() const { return next_index_; }
    std::exception_ptr error() const { return error_; }

private:
    void run();
    void dispatch();
    bool fetch_chunk();

    const int slots_;
    bool wants_chunk_ = false;
    bool done_ = false;
    sc_core::sc_event chunk_ready_;
    std::shared_ptr<TraceChunk> incoming_;
    std::shared_ptr<const TraceChunk> chunk_;
    size_t next_in_chunk_ = 0;
    int64_t next_index_ = 0;
    int64_t last_arrival_ns_ = 0;
    std::set<int> idle_;
    sc_core::sc_event slot_freed_;
    std::vector<Request> assigned_;
    std::vector<bool> has_;
    std::vector<std::unique_ptr<sc_core::sc_event>> wake_;
    int running_ = 0;  // slot threads that have not yet seen the end
    sc_core::sc_event all_done_;
    std::vector<ProblemMetrics> metrics_;
    size_t taken_ = 0;
    std::vector<Activity> kept_;
    std::exception_ptr error_;
};

}  // namespace cosim
