#include "sync_stream.hpp"

#include <algorithm>

#include "errors.hpp"
#include "sim_time.hpp"

namespace cosim {

SyncStream::SyncStream(DraftUnit& draft, ActivityLog& log, int32_t step, OnSynced on_synced, OnSummary on_summary)
    : draft_(draft), log_(log), step_(step), on_synced_(std::move(on_synced)), on_summary_(std::move(on_summary)) {}

void SyncStream::push(uint64_t arrival_units, int64_t leg) {
    if (closed_) throw SimulationError("internal: a shadow-sync token pushed after its stream was closed");
    Pass p;
    // A pass cannot begin before the host knows of its token; both ways of waiting rely on it.
    p.arrival = std::max(arrival_units, now_units());
    p.leg = leg;
    passes_.push_back(p);
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void SyncStream::close() {
    closed_ = true;
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void SyncStream::cut() {
    if (finished_) return;
    if (!started_) {
        kept_ = 0;  // still queued behind other work: nothing has begun
    } else {
        schedule();
        const uint64_t now = now_units();
        size_t k = applied_;
        while (k < scheduled_ && passes_[k].start <= now) ++k;
        kept_ = std::min(kept_, k);
    }
    closed_ = true;
    settle();
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void SyncStream::settle() {
    if (!started_ || finished_) return;
    schedule();
    if (!per_pass_) book_power();
    apply_ended();
}

void SyncStream::schedule() {
    if (!started_) return;
    for (; scheduled_ < passes_.size(); ++scheduled_) {
        Pass& p = passes_[scheduled_];
        // The pass's length from the KV position it extends, rounded as a wait of it alone.
        const double ns = draft_.token_ns(base_position_ + static_cast<int64_t>(scheduled_));
        p.start = std::max(p.arrival, free_at_);
        p.end = p.start + duration_units(ns);
        free_at_ = p.end;
    }
}

uint64_t SyncStream::busy_between(uint64_t from, uint64_t to) const {
    uint64_t busy = 0;
    for (size_t i = applied_; i < std::min(kept(), scheduled_); ++i) {
        const Pass& p = passes_[i];
        if (p.start >= to) break;
        const uint64_t a = std::max(p.start, from);
        const uint64_t b = std::min(p.end, to);
        if (b > a) busy += b - a;
    }
    return busy;
}

void SyncStream::book_power() {
    const uint64_t now = now_units();
    if (now <= booked_) return;
    const uint64_t busy = busy_between(booked_, now);
    if (busy > 0) draft_.power().book(PowerState::decode, busy);
    booked_ = now;
}

void SyncStream::apply_ended() {
    const uint64_t now = now_units();
    size_t ended = applied_;
    while (ended < std::min(kept(), scheduled_) && passes_[ended].end <= now) ++ended;
    if (ended == applied_) return;
    // Their KV entries at once (one pointer move for the waveform), then each pass's record.
    draft_.record_syncs(static_cast<int64_t>(ended - applied_));
    const double decode_w = draft_.power().params().decode_w;
    for (; applied_ < ended; ++applied_) {
        const Pass& p = passes_[applied_];
        const int64_t id = log_.add(Role::draft, ActivityKind::sync, step_, units_to_ns(p.start), units_to_ns(p.end),
                                    1, {p.leg}, decode_w);
        on_synced_(id);
    }
}

void SyncStream::wait_or_change(uint64_t until) {
    const uint64_t now = now_units();
    if (until > now) sc_core::wait(sc_core::sc_time::from_value(until - now), changed_);
    else sc_core::wait(changed_);
}

void SyncStream::run(bool per_pass) {
    started_ = true;
    per_pass_ = per_pass;
    base_position_ = draft_.position();
    free_at_ = booked_ = now_units();
    Power& power = draft_.power();
    if (!per_pass_ && power.state() != PowerState::idle) power.set_state(PowerState::idle);
    for (;;) {
        settle();
        const size_t kept_now = std::min(kept(), scheduled_);
        if (applied_ >= kept_now) {
            if (summarised_) {
                on_summary_(false, power.params().idle_w);
                summarised_ = false;
            }
            if (closed_ && applied_ >= kept()) break;
            sc_core::wait(changed_);
            continue;
        }
        const Pass& next = passes_[applied_];
        const uint64_t now = now_units();
        if (per_pass_) {
            if (now < next.start) {
                wait_or_change(next.start);  // a cut meanwhile may drop it
                continue;
            }
            // Begun: it runs to its end whatever the host decides meanwhile.
            power.set_state(PowerState::decode);
            sc_core::wait(sc_core::sc_time::from_value(next.end - now));
            power.set_state(PowerState::idle);
            continue;
        }
        const uint64_t last_end = passes_[kept_now - 1].end;
        if (on_summary_) {
            if (now < next.start) {
                wait_or_change(next.start);
                continue;
            }
            const double span = static_cast<double>(last_end - now);
            const double busy = static_cast<double>(busy_between(now, last_end));
            const PowerParams& w = power.params();
            on_summary_(true, (busy * w.decode_w + (span - busy) * w.idle_w) / span);
            summarised_ = true;
        }
        wait_or_change(last_end);
    }
    finished_ = true;
}

}  // namespace cosim
