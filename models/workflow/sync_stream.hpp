#pragma once
// Shadow synchronisation on the draft device (docs/system.md): the target's
// refined tokens reach the draft device over PCIe one by one, and it runs one
// forward pass over each, in order, as soon as it holds the token and has
// finished the previous pass. One stream is one job on the draft device's
// server for a whole refinement: the host pushes each token's arrival as soon as
// it knows it (the target decodes on a known schedule, so mostly ahead of time),
// and a cut (a backtrack, the answer settled) drops every pass not yet begun;
// the pass under way finishes.
//
// Watched token by token (token-detail waveforms), the job waits once per pass
// and enters each power state at its instant. Otherwise it computes the passes'
// times and waits once for all the passes it knows of, booking their decode
// time in one piece. Both follow the same schedule, so results do not depend on
// which ran; only the waveform differs (a summary state with the mean power).
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <systemc>

#include "activity_log.hpp"
#include "draft_unit.hpp"

namespace cosim {

class SyncStream {
public:
    // Told each pass's activity once it is done (in order, at or after its end).
    using OnSynced = std::function<void(int64_t activity)>;
    // Waveforms without token detail: the passes and the gaps between them from now
    // on, summarised as one state with their mean power (active), or over (not active).
    using OnSummary = std::function<void(bool active, double watts)>;

    SyncStream(DraftUnit& draft, ActivityLog& log, int32_t step, OnSynced on_synced, OnSummary on_summary);

    // The host: one more token, arriving at kernel time `arrival_units` (not before
    // now) over the transfer `leg`.
    void push(uint64_t arrival_units, int64_t leg);
    // The host: no more tokens will come.
    void close();
    // The host: drop every pass not begun by now; no more tokens will come.
    void cut();
    // Anyone: account for the passes that have ended by now (KV entries, log, power).
    void settle();
    // The job on the draft device's server: returns once every kept pass is done.
    void run(bool per_pass);
    bool finished() const { return finished_; }

private:
    struct Pass {
        uint64_t arrival = 0;  // kernel units
        int64_t leg = kNoActivity;
        uint64_t start = 0;
        uint64_t end = 0;
    };
    size_t kept() const { return std::min(passes_.size(), kept_); }
    void schedule();
    void apply_ended();
    void book_power();
    uint64_t busy_between(uint64_t from, uint64_t to) const;
    // Waits until kernel time `until`, or less if the host pushes, closes or cuts.
    void wait_or_change(uint64_t until);

    DraftUnit& draft_;
    ActivityLog& log_;
    int32_t step_;
    OnSynced on_synced_;
    OnSummary on_summary_;
    std::vector<Pass> passes_;
    size_t scheduled_ = 0;  // passes with start and end known
    size_t applied_ = 0;    // passes accounted for
    size_t kept_ = std::numeric_limits<size_t>::max();
    bool closed_ = false;
    bool started_ = false;  // the server has picked up the job: its passes can be scheduled
    bool per_pass_ = false;
    bool finished_ = false;
    bool summarised_ = false;  // a summary state is shown
    int64_t base_position_ = 0;  // the draft device's KV position when the job began
    uint64_t free_at_ = 0;       // when the device finishes the last scheduled pass
    uint64_t booked_ = 0;        // power booked up to here (one-piece passes)
    sc_core::sc_event changed_;
};

}  // namespace cosim
