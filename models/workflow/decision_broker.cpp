#include "decision_broker.hpp"

namespace cosim {

const char* decision_kind_name(DecisionKind kind) {
#define COSIM_DECISION_KIND_NAME(name) if (kind == DecisionKind::name) return #name;
    COSIM_DECISION_KINDS(COSIM_DECISION_KIND_NAME)
#undef COSIM_DECISION_KIND_NAME
    return "?";
}

void DecisionBroker::ask(Decision& decision) {
    decision.answered = false;
    pending_.push_back(&decision);
    ++asked_;
    sc_core::sc_pause();  // sc_start returns at the end of this delta cycle; its caller answers
    while (!decision.answered) sc_core::wait(decision.done);
}

}  // namespace cosim
