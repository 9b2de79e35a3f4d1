#pragma once
// What the host orchestrator replays: the trace as flat arrays, a chunk of
// problems at a time (a trace of any length is streamed, never held whole),
// the system's toggles, and what it reports per problem.
#include <cstdint>
#include <vector>

#include "cosim_params.hpp"
#include "named_enum.hpp"

namespace cosim {

// The trace's event kinds, declared in cosim/schema/_toggles.py (EVENT_KINDS): their codes
// are their places in the list, the trace's `kind` column.
COSIM_NAMED_ENUM(EventKind, COSIM_EVENT_KINDS, kEventKindCount, event_kind_name)

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
    // A lone request's recorded drafts per verification pass: TraceChunk::schedule
    // [first_pass, first_pass + passes) (token-level systems; none: the scenario's schedule).
    int64_t first_pass = 0;
    int64_t passes = 0;
};

// A run of whole problems; each problem's events are [first_event, first_event + events).
struct TraceChunk {
    std::vector<TraceEvent> events;
    std::vector<TraceProblem> problems;
    std::vector<int64_t> arrival_ns;  // per problem, nondecreasing; empty: every problem arrives at 0
    std::vector<int64_t> schedule;    // the problems' recorded drafts per pass (TraceProblem::first_pass)
};
// The host's switches, declared in cosim/schema/_toggles.py (OPTIONS) with the scenario value
// each comes from: sequential (gpu-baseline), the toggles, the serving section's PRM prefix
// cache and PCIe payload sizes, and what the engine sets itself.
#define COSIM_OPTION_FIELD(type, name, init, rule, read) type name = init;
struct WorkflowOptions {
    COSIM_WORKFLOW_OPTIONS(COSIM_OPTION_FIELD)
};
#undef COSIM_OPTION_FIELD

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
