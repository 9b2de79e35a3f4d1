#pragma once
// What one problem cost: counters the workflow adds to as it goes, which trace event
// produced each activity's tokens, and at the end the busy times, the energy of work
// that missed the final chain and the PCIe time on the critical path, from the log.
#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "activity_log.hpp"
#include "workflow_inputs.hpp"

namespace cosim {

class ProblemAccounting {
public:
    // Starts a problem at kernel time `now_units` with each device's energy so far (draft, PRM, target).
    void begin(uint64_t now_units, const std::array<double, 3>& energy_j);
    ProblemMetrics& metrics() { return m_; }
    const ProblemMetrics& metrics_view() const { return m_; }

    // The trace event whose tokens `activity` produced (-1: speculative work, dropped).
    void product(int64_t activity, int64_t event);
    // A run reused `share` of the tokens of the cached run's `activities`, for `consumer`.
    void reused(const std::vector<int64_t>& activities, double share, int64_t consumer);

    // Closes the problem at kernel time `end_units`: the final chain is made of `chain_events`' tokens,
    // `settle` is the activity that settled the answer. Marks off-chain work in `log`.
    // Its energy is what the devices' meters (`energy_j`, idle included) gained since it
    // began, or, when other requests share the devices (`shared`), what its own
    // activities drew.
    ProblemMetrics finish(ActivityLog& log, uint64_t end_units, const std::vector<int64_t>& chain_events,
                          int64_t settle, const std::array<double, 3>& energy_j, bool shared = false);
    // The busy time its work gave each device (ProblemMetrics::work_ns), from every activity
    // in `log`: called once the work still running when its answer settled has ended.
    static void add_work(const ActivityLog& log, ProblemMetrics& metrics);

private:
    struct Reuse {
        double share = 0.0;
        int64_t consumer = -1;  // trace event of the run that reused the tokens
    };
    ProblemMetrics m_;
    std::array<double, 3> energy_start_{};
    std::unordered_map<int64_t, int64_t> products_;  // generating activity -> trace event (-1: speculative)
    std::unordered_map<int64_t, Reuse> partial_use_;  // cached run activity -> its later reuse
};

}  // namespace cosim
