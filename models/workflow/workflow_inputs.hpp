#pragma once
// What the host orchestrator replays: the trace as flat arrays, a chunk of
// problems at a time (a trace of any length is streamed, never held whole),
// the system's toggles, and what it reports per problem.
#include <cstdint>
#include <vector>

namespace cosim {

enum class EventKind : int { draft = 0, refine = 1, backtrack = 2 };
constexpr int kEventKindCount = 3;
inline const char* event_kind_name(EventKind kind) {
    switch (kind) {
        case EventKind::draft: return "draft";
        case EventKind::refine: return "refine";
        case EventKind::backtrack: return "backtrack";
    }
    return "?";
}

struct TraceEvent {
    EventKind kind = EventKind::draft;
    int32_t step = 0;      // draft/refine: the step; backtrack: to_step
    int32_t tokens = 0;
    bool accepted = false; // draft: PRM accepted; refine: kept
    bool scored = false;   // refine: the PRM scored it (backtracking traces)
};

struct TraceProblem {
    int32_t prompt_tokens = 0;
    int64_t first_event = 0;
    int64_t events = 0;
    int64_t output_tokens = 0;  // the final chain's tokens: what the autoregressive system generates
};

// A run of whole problems; each problem's events are [first_event, first_event + events).
struct TraceChunk {
    std::vector<TraceEvent> events;
    std::vector<TraceProblem> problems;
    std::vector<int64_t> arrival_ns;  // per problem, nondecreasing; empty: every problem arrives at 0
};
struct WorkflowOptions {
    bool sequential = false;          // gpu-baseline: every operation waits for the previous one
    int32_t step_ahead_depth = 1;     // steps the draft device may draft ahead of the verdict (0-2)
    bool step_ahead_refine = true;    // the target starts step i once step i-1 is settled
    bool target_ahead_after_refine = true; // ... or, after its own refinement of step i-1, once that ends
    bool prefetch_cache = true;       // interrupted target runs are kept for reuse
    bool shadow_sync = true;          // refined tokens stream into the draft device as decoded
    bool prm_prefix_cache = false;    // the PRM prefills only unseen tokens (else the whole context)
    bool draft_prompt_on_target = false; // the draft model's prompt prefill runs on the target GPU (FPGA drafts)
    int64_t token_bytes = 4;          // a 32-bit token id
    int64_t control_bytes = 64;       // a verdict, command or pointer update
    bool keep_activities = false;     // return every activity (timelines)
};

struct ProblemMetrics {
    int64_t request = 0;       // index in trace order
    // Instants in kernel units, exactly: a start is never before its arrival, an end never
    // before its start, however long the run.
    uint64_t arrival_units = 0;
    int32_t slot = 0;          // the request slot that served it, and the devices it was bound to
    int32_t devices[3] = {0, 0, 0};  // draft, PRM, target
    uint64_t start_units = 0;  // when its slot began serving it
    uint64_t end_units = 0;    // when the verdict that settles its answer reached the host
    int64_t generated_tokens = 0;
    int64_t drafted_tokens = 0;
    int64_t discarded_step_ahead_tokens = 0;
    int64_t target_tokens = 0;
    int64_t reused_tokens = 0;
    int32_t verdicts = 0;          // PRM verdicts (on drafted steps and on scored refinements)
    int32_t stalled_verdicts = 0;  // verdicts the draft device waited for, holding a finished step-ahead step
    int32_t backtracks = 0;
    double stall_ns = 0.0;
    double comm_critical_ns = 0.0;
    double busy_ns[3] = {0.0, 0.0, 0.0};      // draft, prm, target: its activities up to its end
    // Draft, PRM, target: the time its work kept each device computing or transferring,
    // trailing work included (on a batching GPU its share of each iteration it was in).
    // Summed over requests it is each pool's busy time.
    double work_ns[3] = {0.0, 0.0, 0.0};
    double energy_j[3] = {0.0, 0.0, 0.0};     // per device, idle included
    double offchain_energy_j = 0.0;   // energy of work whose tokens never reach the final chain
    double stepahead_waste_j = 0.0;   // energy above idle of step-ahead drafts that were discarded
};

}  // namespace cosim
