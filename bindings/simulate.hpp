#pragma once
// The one entry that runs a system: its description in, its top elaborated (the family's
// SystemRun, system_run.hpp), the kernel run with the trace streamed in, its results out.
// `next_chunk(finished)` returns (events, problems), two dicts of int64 arrays (events:
// kind, an EVENT_KINDS code, step, tokens, accepted, scored; problems: prompt_tokens and
// first_event, events, or output_tokens, with arrival_ns where arrivals are timed), or None
// at the end. It is called between kernel slices, on this thread, once per chunk, never per
// token, and is handed the columns of the problems finished since its last call, which the
// engine then forgets. Out: wall_s, feed_s, sim_ns, kernel_deltas, the remaining problems,
// each device's totals and, on request, every activity; or trace_error, the exception the
// feed raised, which ends the trace.
#include <pybind11/pybind11.h>

namespace cosim::bindings {

// `options`: keep_activities, vcd_path, vcd_every_token, decide, max_backtracks,
// scored_refinements, shared_prefix_tokens (RunOptions; each may be left out).
pybind11::dict simulate(const std::string& top, const pybind11::dict& system, const pybind11::function& next_chunk,
                        const pybind11::dict& options);

// The trace event kinds by name: their codes in the `kind` column.
pybind11::dict event_kinds();
// A live run's question kinds by name, as the policy's View.kind names them.
pybind11::dict decision_kinds();

}  // namespace cosim::bindings
