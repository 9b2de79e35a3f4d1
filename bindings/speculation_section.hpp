#pragma once
// The engine's speculation section (cosim/engine/_serving_sections.py), as both system runs
// read it: the drafts a pass and their acceptance, the draws' seed, a host lookup's time,
// and the proposer's model on the target's GPU where one drafts there.
#include <memory>

#include <pybind11/pybind11.h>

#include "roofline_timing.hpp"
#include "spec_decode.hpp"

namespace cosim::bindings {

struct SpeculationSection {
    std::shared_ptr<const SpecDecodeSetup> setup;
    // The proposer's model timed on its GPU (null: a host lookup, or a draft device's).
    std::shared_ptr<const GpuTiming> drafter;
};

SpeculationSection read_speculation(const pybind11::dict& section);
// The proposer's model (a drafter section's `model`) timed on its GPU (`gpu`).
std::shared_ptr<const GpuTiming> drafter_timing(const pybind11::dict& gpu, const pybind11::dict& model);

}  // namespace cosim::bindings
