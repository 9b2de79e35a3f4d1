#include "activity_log.hpp"

#include "errors.hpp"
#include "sim_time.hpp"

namespace cosim {

namespace {
// Times are sc_time values (1 ps resolution) converted to ns: a dependency that
// ends "at" an activity's start may differ from it by rounding.
constexpr double kSameInstantNs = 1e-2;
}

const char* role_name(Role role) {
    switch (role) {
        case Role::draft: return "draft";
        case Role::prm: return "prm";
        case Role::target: return "target";
        case Role::link_draft: return "pcie_draft";
        case Role::link_prm: return "pcie_prm";
        case Role::link_target: return "pcie_target";
    }
    return "?";
}

const char* activity_kind_name(ActivityKind kind) {
    switch (kind) {
        case ActivityKind::draft: return "draft";
        case ActivityKind::sync: return "shadow_sync";
        case ActivityKind::draft_prefill: return "draft_prefill";
        case ActivityKind::verify: return "verify";
        case ActivityKind::target_prefill: return "target_prefill";
        case ActivityKind::refine: return "refine";
        case ActivityKind::transfer_h2d: return "transfer_h2d";
        case ActivityKind::transfer_d2h: return "transfer_d2h";
        case ActivityKind::stall: return "stall";
        case ActivityKind::migrate: return "migrate";
        case ActivityKind::prompt_prefill: return "prompt_prefill";
        case ActivityKind::request: return "request";
        case ActivityKind::kv_load: return "kv_load";
    }
    return "?";
}

int64_t ActivityLog::add(Role role, ActivityKind kind, int32_t step, double start_ns, double end_ns, int64_t tokens,
                         DepList deps, double watts) {
    Activity a;
    a.id = base_ + static_cast<int64_t>(items_.size());
    a.problem = problem_;
    a.role = role;
    a.kind = kind;
    a.step = step;
    a.start_ns = start_ns;
    a.end_ns = end_ns;
    a.tokens = tokens;
    a.energy_j = (end_ns - start_ns) * watts * kJoulesPerWattNs;
    if (is_device_work(role, kind)) a.work_ns = end_ns - start_ns;
    a.ready_ns = start_ns;
    double latest = -1.0;
    auto consider = [&](int64_t id) {
        if (id < base_ || id == kNoActivity) return;  // earlier problems are not on this path
        const Activity& d = at(id);
        if (d.end_ns <= start_ns + kSameInstantNs && d.end_ns > latest) {
            latest = d.end_ns;
            a.cause = id;
        }
    };
    consider(last_[static_cast<int>(role)]);
    for (int64_t id : deps) consider(id);
    items_.push_back(a);
    if (kind != ActivityKind::stall) last_[static_cast<int>(role)] = a.id;
    return a.id;
}

void ActivityLog::mark_wasted(int64_t id, double share) {
    if (id < base_ || id == kNoActivity) return;
    items_[static_cast<size_t>(id - base_)].wasted_share = share;
}

void ActivityLog::set_energy(int64_t id, double energy_j) {
    if (id < base_ || id == kNoActivity) return;
    items_[static_cast<size_t>(id - base_)].energy_j = energy_j;
}

void ActivityLog::set_work(int64_t id, double work_ns) {
    if (id < base_ || id == kNoActivity) return;
    Activity& a = items_[static_cast<size_t>(id - base_)];
    if (is_device_work(a.role, a.kind)) a.work_ns = work_ns;
}

void ActivityLog::set_leg(int64_t id, int32_t link, double ready_ns) {
    if (id < base_ || id == kNoActivity) return;
    Activity& a = items_[static_cast<size_t>(id - base_)];
    a.link = link;
    a.ready_ns = ready_ns;
}

void ActivityLog::begin_problem(int32_t problem) {
    base_ += static_cast<int64_t>(items_.size());
    items_.clear();
    problem_ = problem;
}

std::vector<int64_t> ActivityLog::critical_path(int64_t last) const {
    std::vector<int64_t> path;
    for (int64_t id = last; id != kNoActivity && id >= base_; id = at(id).cause) path.push_back(id);
    return path;
}

}  // namespace cosim
