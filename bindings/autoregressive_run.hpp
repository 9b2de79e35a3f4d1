#pragma once
// The facade of the plain autoregressive system (autoregressive_host.hpp): its target
// GPUs and batching in, the trace a chunk of problems at a time as for simulate_workflow
// (`next_chunk(finished)` returns (events, problems) or None; the problems table carries
// prompt_tokens, output_tokens and optionally arrival_ns; events are not read), and the
// finished requests' columns out, in the names simulate_workflow uses plus
// first_token_ns, preemptions, recomputed_tokens and cached_prompt_tokens.
#include <pybind11/pybind11.h>

namespace cosim::bindings {

pybind11::dict simulate_autoregressive(const pybind11::dict& system, const pybind11::function& next_chunk,
                                       bool keep_activities);

}  // namespace cosim::bindings
