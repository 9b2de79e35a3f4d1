#include "problem_accounting.hpp"

#include <algorithm>
#include <set>

#include "sim_time.hpp"

namespace cosim {

void ProblemAccounting::begin(uint64_t now_units, const std::array<double, 3>& energy_j) {
    m_ = ProblemMetrics{};
    m_.start_units = now_units;
    energy_start_ = energy_j;
    products_.clear();
    partial_use_.clear();
}

void ProblemAccounting::product(int64_t activity, int64_t event) {
    if (activity != kNoActivity) products_[activity] = event;
}

void ProblemAccounting::reused(const std::vector<int64_t>& activities, double share, int64_t consumer) {
    for (int64_t id : activities) partial_use_[id] = Reuse{share, consumer};
}

ProblemMetrics ProblemAccounting::finish(ActivityLog& log, uint64_t end_units,
                                         const std::vector<int64_t>& chain_events, int64_t settle,
                                         const std::array<double, 3>& energy_j, bool shared) {
    m_.end_units = end_units;
    const double end_ns = units_to_ns(end_units);
    for (int i = 0; i < 3; ++i) m_.energy_j[i] = shared ? 0.0 : energy_j[i] - energy_start_[i];
    m_.generated_tokens = m_.drafted_tokens + m_.target_tokens;

    const std::set<int64_t> final_products(chain_events.begin(), chain_events.end());
    for (const auto& [id, event] : products_) {
        double useful = final_products.count(event) ? 1.0 : 0.0;
        auto reuse = partial_use_.find(id);
        if (reuse != partial_use_.end() && final_products.count(reuse->second.consumer))
            useful = std::max(useful, reuse->second.share);
        if (useful < 1.0) log.mark_wasted(id, 1.0 - useful);
    }
    // Shadow-sync passes are logged pass by pass (watched) or a batch at a time, so where
    // they fall among the other activities differs; each kind is summed apart, in its own
    // order (which does not differ), so the totals agree to the last bit either way.
    double busy_sync_ns = 0.0;
    double offchain_sync_j = 0.0;
    for (const Activity& a : log.activities()) {
        if (shared && static_cast<int>(a.role) < 3) m_.energy_j[static_cast<int>(a.role)] += a.energy_j;
        if (a.end_ns > end_ns + kTimeEpsilonNs) continue;
        const double duration = a.end_ns - a.start_ns;
        if (a.kind == ActivityKind::sync) {
            busy_sync_ns += duration;
            offchain_sync_j += a.energy_j * a.wasted_share;
            continue;
        }
        if (a.role == Role::draft && a.kind != ActivityKind::stall) m_.busy_ns[0] += duration;
        if (a.role == Role::prm) m_.busy_ns[1] += duration;
        if (a.role == Role::target) m_.busy_ns[2] += duration;
        m_.offchain_energy_j += a.energy_j * a.wasted_share;
    }
    m_.busy_ns[0] += busy_sync_ns;
    m_.offchain_energy_j += offchain_sync_j;
    for (int64_t id : log.critical_path(settle)) {
        const Activity& a = log.at(id);
        if (is_pcie_time(a.kind)) m_.comm_critical_ns += a.end_ns - a.start_ns;
    }
    return m_;
}

void ProblemAccounting::add_work(const ActivityLog& log, ProblemMetrics& metrics) {
    for (const Activity& a : log.activities())
        if (a.work_ns > 0.0) metrics.work_ns[static_cast<int>(a.role)] += a.work_ns;
}

}  // namespace cosim
