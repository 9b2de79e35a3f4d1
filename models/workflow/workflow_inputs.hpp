#pragma once
// What the host orchestrator replays: the trace as flat arrays, a chunk of
// problems at a time (a trace of any length is streamed, never held whole),
// the system's toggles, and what it reports per problem.
#include <cstdint>
#include <vector>

#include "cosim_params.hpp"

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

// A field of ProblemMetrics per declared engine column (cosim/schema/_columns.py, generated
// into cosim_params.hpp): instants in kernel units, exactly (a start is never before its
// arrival, an end never before its start, however long the run); per-role values in the
// order draft, PRM, target.
#define COSIM_METRIC_FIELD(type, field, kind, c0, c1, c2) COSIM_METRIC_FIELD_##kind(type, field)
#define COSIM_METRIC_FIELD_value(type, field) type field = 0;
#define COSIM_METRIC_FIELD_instant(type, field) type field = 0;
#define COSIM_METRIC_FIELD_instant_or_none(type, field) type field = kNoInstant;
#define COSIM_METRIC_FIELD_per_role(type, field) type field[3] = {};

// An instant that never came (exported as -1).
constexpr uint64_t kNoInstant = ~uint64_t{0};

struct ProblemMetrics {
    COSIM_PROBLEM_METRICS(COSIM_METRIC_FIELD)
};

}  // namespace cosim
