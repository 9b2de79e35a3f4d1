#pragma once
// What each device did and why: every activity records the activity whose end
// let it start (its cause), so the critical path of a problem can be walked
// back from its last settlement, and the energy of work whose tokens never
// reach the final chain can be counted as wasted.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace cosim {

enum class Role : int { draft = 0, prm = 1, target = 2, link_draft = 3, link_prm = 4, link_target = 5 };
constexpr int kRoleCount = 6;
const char* role_name(Role role);

enum class ActivityKind : int {
    draft = 0,           // the draft device decodes a step
    sync = 1,            // shadow synchronisation: one forward pass over a target token
    draft_prefill = 2,   // the draft device prefills context locally (prompt, refined step)
    verify = 3,          // the PRM scores a step in one prefill
    target_prefill = 4,  // the target prefills context it has not seen
    refine = 5,          // the target decodes
    transfer_h2d = 6,    // one PCIe leg, host -> device
    stall = 7,           // the draft device holds a finished step-ahead step, waiting for a verdict
    migrate = 8,         // the draft model's prompt prefill on a GPU before KV migration
    prompt_prefill = 9,  // the PRM or target prefills the prompt (phase 1)
    request = 10,        // a GPU's serving stack handles a request (HTTP, tokenisation, scheduling); the GPU idles
    transfer_d2h = 11,   // one PCIe leg, device -> host
    kv_load = 12,        // the draft device takes in the prompt's KV from PCIe (phase 1), at transfer power
};
constexpr int kActivityKindCount = 13;
inline bool is_transfer(ActivityKind kind) {
    return kind == ActivityKind::transfer_h2d || kind == ActivityKind::transfer_d2h;
}
// Time spent moving data over PCIe: a leg, or a device receiving one (its side of the leg).
inline bool is_pcie_time(ActivityKind kind) { return is_transfer(kind) || kind == ActivityKind::kv_load; }
const char* activity_kind_name(ActivityKind kind);

constexpr int64_t kNoActivity = -1;

// The activities something waited for, viewed without a copy (logging runs once
// per simulated token on some paths, so it should not allocate). Functions take
// a vector or a braced list ({a, b}) and view it for the call.
class DepList {
public:
    DepList() = default;
    DepList(const int64_t* begin, size_t size) : begin_(begin), size_(size) {}
    explicit DepList(const std::vector<int64_t>& ids) : begin_(ids.data()), size_(ids.size()) {}
    const int64_t* begin() const { return begin_; }
    const int64_t* end() const { return begin_ + size_; }

private:
    const int64_t* begin_ = nullptr;
    size_t size_ = 0;
};

struct Activity {
    int64_t id = kNoActivity;
    int32_t problem = 0;
    Role role = Role::draft;
    ActivityKind kind = ActivityKind::draft;
    int32_t step = 0;
    double start_ns = 0.0;
    double end_ns = 0.0;
    int64_t tokens = 0;
    int64_t cause = kNoActivity;  // the activity whose end released this one
    double energy_j = 0.0;        // the device's power in this activity's state x duration
    double wasted_share = 0.0;    // share of this activity's work whose tokens were discarded
    // The time it kept its device computing or transferring (busy time): its duration for
    // work on a device (not a request's serving overhead, not a stall, not a PCIe leg),
    // its share of the iterations it was in on a batching GPU.
    double work_ns = 0.0;
    // A PCIe leg: the link it crossed (the fabric's index) and when its data was ready to
    // go (it may start later, when its direction is free).
    int32_t link = -1;
    double ready_ns = 0.0;
};
// Whether an activity of `kind` on a device (not a link) is work that keeps it busy.
inline bool is_device_work(Role role, ActivityKind kind) {
    return static_cast<int>(role) < 3 && kind != ActivityKind::request && kind != ActivityKind::stall;
}

class ActivityLog {
public:
    // Records an activity; `deps` are the activities it waited for. Its cause is
    // the latest-ending of those and of the previous activity on the same role.
    int64_t add(Role role, ActivityKind kind, int32_t step, double start_ns, double end_ns, int64_t tokens,
                DepList deps, double watts);
    int64_t add(Role role, ActivityKind kind, int32_t step, double start_ns, double end_ns, int64_t tokens,
                const std::vector<int64_t>& deps, double watts) {
        return add(role, kind, step, start_ns, end_ns, tokens, DepList(deps), watts);
    }
    int64_t add(Role role, ActivityKind kind, int32_t step, double start_ns, double end_ns, int64_t tokens,
                std::initializer_list<int64_t> deps, double watts) {
        return add(role, kind, step, start_ns, end_ns, tokens, DepList(deps.begin(), deps.size()), watts);
    }
    void mark_wasted(int64_t id, double share);
    // An activity whose energy is not its power x its time: its share of batched work.
    void set_energy(int64_t id, double energy_j);
    // An activity whose busy time is not its duration: its share of batched iterations.
    void set_work(int64_t id, double work_ns);
    // A PCIe leg's link and ready time.
    void set_leg(int64_t id, int32_t link, double ready_ns);

    const std::vector<Activity>& activities() const { return items_; }
    const Activity& at(int64_t id) const { return items_[static_cast<size_t>(id - base_)]; }
    int64_t last_on(Role role) const { return last_[static_cast<int>(role)]; }

    // Starts a new problem: earlier activities are dropped (they were reported).
    void begin_problem(int32_t problem);
    int32_t problem() const { return problem_; }

    // Activities on the critical path ending at `last`, back to the problem start.
    std::vector<int64_t> critical_path(int64_t last) const;

private:
    std::vector<Activity> items_;
    int64_t base_ = 0;  // id of items_[0]
    int64_t last_[kRoleCount] = {kNoActivity, kNoActivity, kNoActivity, kNoActivity, kNoActivity, kNoActivity};
    int32_t problem_ = 0;
};

}  // namespace cosim
