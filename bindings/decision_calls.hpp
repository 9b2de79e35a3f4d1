#pragma once
// Live co-simulation across the binding: each question a host posted (decision_broker.hpp)
// handed to Python's `decide(question)` as a dict, with the simulation paused, and its
// answer read back. Called between kernel slices with the GIL held.
#include <pybind11/pybind11.h>

#include "decision_broker.hpp"

namespace cosim::bindings {

// Answers every pending question; false if `decide` raised (the exception is kept in
// `error` and the questions stay unanswered: the caller stops the simulation).
bool answer_pending(DecisionBroker& broker, const pybind11::object& decide, pybind11::object& error);

}  // namespace cosim::bindings
