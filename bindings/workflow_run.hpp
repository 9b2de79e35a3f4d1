#pragma once
// The facade of the workflow engine: a system description and a trace in, as
// named columns a chunk of problems at a time (`next_chunk(finished)` returns
// (events, problems), two dicts of int64 arrays: kind (an EVENT_KINDS code), step,
// tokens, accepted, scored; prompt_tokens, first_event, events; or None at the end;
// it is called between kernel slices, on this thread, once per chunk, never per
// token, and is handed the metrics of the problems finished since its last call,
// which the engine then forgets); the remaining problems' metrics and, on request,
// every device activity out, as arrays.
#include <string>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

namespace cosim::bindings {

// Live (`decide` not None): problems come without events; each event is made from
// decide(question)'s answers (decision_calls.hpp), with `max_backtracks` the cap and
// refinements scored by the PRM when `scored_refinements`.
pybind11::dict simulate_workflow(const pybind11::dict& system, const pybind11::function& next_chunk,
                                 bool keep_activities, const std::string& vcd_path, bool vcd_every_token,
                                 const pybind11::object& decide, int max_backtracks, bool scored_refinements);
// The trace event kinds by name: their codes in the `kind` column.
pybind11::dict event_kinds();
// A live run's question kinds by name, as the policy's View.kind names them.
pybind11::dict decision_kinds();

}  // namespace cosim::bindings
