#include "decision_calls.hpp"

#include <string>

#include <pybind11/stl.h>

#include "errors.hpp"

namespace py = pybind11;

namespace cosim::bindings {

namespace {

py::dict question(const Decision& d) {
    py::dict q;
    q["kind"] = decision_kind_name(d.kind);
    q["slot"] = d.slot;
    q["request"] = d.request;
    q["step"] = d.step;
    q["speculative"] = d.speculative;
    q["of_refinement"] = d.of_refinement;
    q["tokens"] = d.tokens;
    q["time_s"] = d.time_ns * 1e-9;
    q["waited_s"] = d.waited_ns * 1e-9;
    q["chain"] = d.chain;
    q["backtracks"] = d.backtracks;
    q["can_backtrack"] = d.can_backtrack;
    q["kvmu"] = py::make_tuple(d.kvmu.valid, d.kvmu.curr, d.kvmu.ahead);
    q["devices"] = py::make_tuple(power_state_name(d.states[0]), power_state_name(d.states[1]),
                                  power_state_name(d.states[2]));
    if (d.kind == DecisionKind::speculate) {
        q["proposed"] = d.proposed;
        q["most"] = d.most;
        q["output"] = d.output;
        q["last_drafts"] = d.last_drafts;
        q["last_accepted"] = d.last_accepted;
    }
    return q;
}

}  // namespace

bool answer_pending(DecisionBroker& broker, const py::object& decide, py::object& error) {
    for (Decision* d : broker.take()) {
        const py::dict q = question(*d);
        // Through the C API: an exception the policy raises comes back as the Python
        // exception it is, for Python to raise once the simulation has stopped.
        PyObject* raw = PyObject_CallOneArg(decide.ptr(), q.ptr());
        if (raw == nullptr) {
            error = py::error_already_set().value();
            PyErr_Clear();
            return false;
        }
        const py::object answer = py::reinterpret_steal<py::object>(raw);
        if (d->kind == DecisionKind::verdict) d->answer_keep = answer.cast<bool>();
        else d->answer_tokens = answer.cast<int64_t>();
        broker.answered(*d);
    }
    return true;
}

}  // namespace cosim::bindings
