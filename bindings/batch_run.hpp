#pragma once
// One GPU serving sequences with iteration-level batching, alone: each sequence
// (a prefill of n tokens or a decode of n tokens after a context) arrives at its
// time and is served by the GPU's batcher; when each started and ended, the
// iterations run and the batch sizes come back. What the serving cluster's GPUs
// do, seen without the workflow around them.
#include <pybind11/pybind11.h>

namespace cosim::bindings {

pybind11::dict gpu_batch_run(const pybind11::dict& gpu, const pybind11::dict& model, const pybind11::dict& power,
                             const pybind11::list& sequences, int max_batch, int64_t token_budget,
                             bool verify_first, double kv_budget_bytes, const pybind11::object& profile,
                             bool promised = false);

}  // namespace cosim::bindings
